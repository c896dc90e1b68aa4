"""The Bar controller: your own resource, written the kubebuilder way on the runtime.

controller-runtime twin: a kubebuilder controller, ``BarReconciler`` with its ``Reconcile`` and
``SetupWithManager``, and the ``main.go`` around it. A Bar (examples/bar/crd.yaml) names a
ConfigMap and its data; the controller creates that ConfigMap, owned by the Bar, puts back what
someone changes, and leaves the deletion to the garbage collector. The Builder
(``runtime.builder``) makes the informers, the queue, the event handlers and the workers from
``for_(Bar)`` and ``owns(ConfigMap)``; the reconciler reads through the cached Client
(``runtime.client``), and the manager (``runtime.manager``) gives the process its flags,
metrics, probes, leader election, sharding and graceful shutdown. docs/your-own-controller.md
builds it step by step and lists what it leaves out of ``controller.foo_controller``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from client.errors import APIError, is_already_exists, is_conflict, is_not_found
from runtime.builder import Builder
from runtime.client import Client
from runtime.context import Context
from runtime.controllerutil import set_controller_reference
from runtime.flags import build_parser, parse_options
from runtime.manager import Manager, run_process
from runtime.options import Options
from runtime.reconcile import Request, Result

log = logging.getLogger(__name__)

BAR_GVR = ("tutorial.example.com", "v1", "bars")
CONFIGMAP_GVR = ("", "v1", "configmaps")
# every write says who made it (managedFields)
FIELD_MANAGER = "bar-controller"
# what the process cannot start without, and how to install it
REQUIRES = [(BAR_GVR, "kubectl apply -f examples/bar/crd.yaml")]


def new_configmap(bar: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap a Bar asks for, with the ownerReference that makes it the Bar's."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": bar["spec"]["configMapName"],
            "namespace": bar["metadata"]["namespace"],
        },
        "data": bar["spec"].get("data") or {},
    }
    set_controller_reference(bar, configmap)
    return configmap


def is_controlled_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    """The controller ownerReference of ``obj`` is ``owner`` (``metav1.IsControlledBy``)."""
    refs = obj["metadata"].get("ownerReferences") or []
    return any(r.get("controller") and r.get("uid") == owner["metadata"]["uid"] for r in refs)


class ResourceExistsError(Exception):
    """The ConfigMap a Bar names is someone else's: retried with backoff, never written
    (sample-controller's ``ErrResourceExists``)."""


class BarReconciler:
    """Keeps each Bar's ConfigMap as the Bar says (a kubebuilder ``BarReconciler``, on
    controller-runtime)."""

    def __init__(self, client: Client) -> None:
        # reads come from the cache, writes go to the API as FIELD_MANAGER
        self.client = client.with_field_owner(FIELD_MANAGER)

    def setup_with_manager(self, manager: Manager) -> None:
        """Reconcile a Bar when it changes, or when a ConfigMap it controls does."""
        Builder(manager).for_(BAR_GVR).owns(CONFIGMAP_GVR).complete(self)

    def reconcile(self, ctx: Context, request: Request) -> Result:
        try:
            self.sync(ctx, request)
        except APIError as err:
            # our cache was behind (409, or 404: deleted meanwhile): its event comes next
            if is_conflict(err) or is_already_exists(err) or is_not_found(err):
                return Result(requeue=True, cause=str(err))
            return Result(error=err)
        except ResourceExistsError as err:
            return Result(error=err)
        return Result()

    def sync(self, ctx: Context, request: Request) -> None:
        try:
            bar = self.client.get(ctx, BAR_GVR, request.namespace, request.name)
        except APIError as err:
            if is_not_found(err):
                # the Bar is gone: the garbage collector deletes its ConfigMap
                return
            raise
        want = new_configmap(bar)
        name = want["metadata"]["name"]
        try:
            current = self.client.get(ctx, CONFIGMAP_GVR, request.namespace, name)
        except APIError as err:
            if not is_not_found(err):
                raise
            log.info("creating configmap", extra={"bar": request, "configmap": name})
            self.client.create(ctx, CONFIGMAP_GVR, want)
            return
        if not is_controlled_by(current, bar):
            # someone else's: never write it (sample-controller's ErrResourceExists)
            message = f'ConfigMap "{name}" already exists and is not managed by Bar'
            raise ResourceExistsError(message)
        if current.get("data") != want["data"]:
            log.info("updating configmap", extra={"bar": request, "configmap": name})
            # the client handed us a copy, with the resourceVersion read: a 409 if someone
            # wrote in between
            current["data"] = want["data"]
            self.client.update(ctx, CONFIGMAP_GVR, current)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the process flags, set the controller up on a manager, run until a signal."""
    parser = build_parser("bar-controller", "Keeps a ConfigMap for every Bar.")
    options = parse_options(argv, parser, Options)

    def setup(manager: Manager) -> None:
        BarReconciler(manager.get_client()).setup_with_manager(manager)

    return run_process(options, setup, REQUIRES)
