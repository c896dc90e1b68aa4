"""The ServiceAccounts controller of the "pods" mode: a ``default`` ServiceAccount per namespace.

Twin of kube-controller-manager's pkg/controller/serviceaccount/serviceaccounts_controller.go:
every active namespace gets the ServiceAccount named ``default``, created again when deleted.
The Pods a ReplicaSet creates need it: the ServiceAccount admission plugin refuses a pod whose
ServiceAccount does not exist (registry/admission.py).

Namespaces that exist when kubesim starts get theirs at once (``bootstrap``), so that a pod
created right after start-up is not refused; later ones, as the controller would, shortly after
the namespace appears.
"""

from __future__ import annotations

from kubesim.api import errors
from kubesim.controllers.manager import ControllerManager
from kubesim.storage.store import DELETED, Event, Storage

__all__ = ["ServiceAccountsController"]

NAMESPACES = ("", "namespaces")
SERVICE_ACCOUNTS = ("", "serviceaccounts")
DEFAULT = "default"


class ServiceAccountsController:
    """Ensures each active namespace has its ``default`` ServiceAccount."""

    def __init__(self, storage: Storage, rest, controllers: ControllerManager):
        self.storage = storage  # read under its lock
        self.rest = rest  # creates go through the REST rules
        self.controllers = controllers  # runs the tasks
        self.accounts = rest.registry.lookup("", "v1", "serviceaccounts")
        controllers.register("serviceaccounts", self._sync, self._on_event)

    def bootstrap(self) -> None:
        with self.storage.lock:
            for stored in self.storage.items(NAMESPACES):
                self._sync(("serviceaccounts", "", stored.obj["metadata"]["name"]))

    def _on_event(self, ev: Event) -> None:
        if ev.key == NAMESPACES and ev.type != DELETED:
            self.controllers.schedule(("serviceaccounts", "", ev.name))
        elif ev.key == SERVICE_ACCOUNTS and ev.type == DELETED and ev.name == DEFAULT:
            self.controllers.schedule(("serviceaccounts", "", ev.ns))

    def _sync(self, key: tuple) -> float | None:
        name = key[2]
        with self.storage.lock:
            ns = self.storage.get(NAMESPACES, "", name)
            if ns is None or ns.obj["metadata"].get("deletionTimestamp"):
                return None
            if self.storage.get(SERVICE_ACCOUNTS, name, DEFAULT) is not None:
                return None
            try:
                self.rest.create(self.accounts, name, {"metadata": {"name": DEFAULT}}, {})
            except errors.ApiError as err:
                if err.code != 409:  # created meanwhile by another hand: nothing to do
                    raise
        return None
