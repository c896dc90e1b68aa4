"""The objects a fresh control plane has without anyone asking: what clients wait for.

Twins:

- kube-apiserver's bootstrap controller (``pkg/controlplane/controller/kubernetesservice``,
  ``CreateOrUpdateMasterServiceIfNeeded``): the ``kubernetes`` Service in ``default``, a
  ClusterIP Service on the service CIDR's first address, port 443 named ``https`` with the
  API server's own port as targetPort, labels ``component: apiserver`` and
  ``provider: kubernetes``, written once the server listens (a post-start hook upstream);
- kube-controller-manager's serviceaccounts controller
  (``pkg/controller/serviceaccount/serviceaccounts_controller.go``): a ``default``
  ServiceAccount in every active namespace, made again when deleted;
- kube-controller-manager's root-ca-cert-publisher
  (``pkg/controller/certificates/rootcacertpublisher/publisher.go``): the ``kube-root-ca.crt``
  ConfigMap in every active namespace, ``data["ca.crt"]`` the cluster's CA and the one
  ``kubernetes.io/description`` annotation, made again when deleted and reset when changed.

The namespaces themselves (``default``, ``kube-system``, ``kube-public``,
``kube-node-lease``) are created by sim.py, as kube-apiserver's system namespaces controller
creates them.

Deliberate differences:

- The namespaces a kubesim starts with get their ServiceAccount and ConfigMap at once, in the
  constructor, so a test that counts objects never races the controllers; a namespace
  created later gets them from the controllers' thread a moment after, as on a cluster.
- Without TLS kubesim has no CA: ``ca.crt`` is then empty. With TLS it is kubesim's
  self-signed certificate, which is its own CA.
- The Service's ClusterIP is 10.96.0.1, the first address of the service CIDR kubesim
  allocates from (10.96.0.0/12, kubeadm's and kind's default), whether or not Services are
  allocated; no Endpoints or EndpointSlice is written for it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from kubesim.api import errors
from kubesim.storage.store import DELETED, Event, Storage

__all__ = [
    "KUBERNETES_SERVICE_IP",
    "ROOT_CA_CONFIGMAP",
    "ROOT_CA_DESCRIPTION",
    "NamespaceDefaults",
    "ensure_kubernetes_service",
    "kubernetes_service",
]

NAMESPACES = ("", "namespaces")
SERVICE_ACCOUNTS = ("", "serviceaccounts")
CONFIGMAPS = ("", "configmaps")

# the first address of kubesim's service CIDR, 10.96.0.0/12 (the bootstrap controller's
# ServiceIP: the first IP of --service-cluster-ip-range)
KUBERNETES_SERVICE_IP = "10.96.0.1"
# the apiserver's own writes are managed by it (its bootstrap controller's client)
APISERVER_MANAGER = "kube-apiserver"

DEFAULT_SERVICE_ACCOUNT = "default"  # serviceAccountsToEnsure in kube-controller-manager
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"  # RootCACertConfigMapName
ROOT_CA_KEY = "ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"  # DescriptionAnnotation
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. "
    "No other usage is guaranteed across distributions of Kubernetes clusters."
)
_TASK = "namespace-defaults"


def kubernetes_service(target_port: int) -> dict:
    """The ``kubernetes`` Service as the bootstrap controller writes it, with the fields
    v1.36's defaulting and allocation give a single-stack IPv4 ClusterIP Service."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": target_port}],
            "clusterIP": KUBERNETES_SERVICE_IP,
            "clusterIPs": [KUBERNETES_SERVICE_IP],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    }


def ensure_kubernetes_service(rest, target_port: int) -> None:
    """Create the ``kubernetes`` Service, or put its ports back (the reconciler's
    ``CreateOrUpdateMasterServiceIfNeeded`` updates only a Service whose ports differ)."""
    info = rest.registry.lookup("", "v1", "services")
    assert info is not None  # built in
    want = kubernetes_service(target_port)
    with rest.storage.lock:
        stored = rest.storage.get(info.storage_key, "default", "kubernetes")
        if stored is None:
            rest.create(info, "default", want, {}, APISERVER_MANAGER)
            return
        if stored.obj.get("spec", {}).get("ports") == want["spec"]["ports"]:
            return
        new = copy.deepcopy(stored.obj)
        new["spec"]["ports"] = want["spec"]["ports"]
        rest.update(info, "default", "kubernetes", new, {}, user_agent=APISERVER_MANAGER)


class NamespaceDefaults:
    """The serviceaccounts controller and the root CA publisher, on the controllers' thread.

    Both watch Namespaces (added, or updated while Active) and their own object (deleted, or
    for the ConfigMap changed) and make one namespace right per task, as their workqueues
    hold one key per namespace.
    """

    def __init__(self, storage: Storage, rest, controllers, root_ca: Callable[[], str]):
        self.storage = storage  # the objects; a sync runs under its lock
        self.rest = rest  # creates and updates go through the REST rules
        self.root_ca = root_ca  # the CA bundle in PEM ("" without one), read at each sync
        controllers.register(_TASK, self._sync_task, self._on_event)
        self.controllers = controllers  # runs the tasks

    # ---- triggers (storage listener: runs under the storage lock) ----------------------------

    def _on_event(self, ev: Event) -> None:
        if ev.key == NAMESPACES and ev.type != DELETED:
            self.controllers.schedule((_TASK, "", ev.name))
        elif ev.key == SERVICE_ACCOUNTS and ev.type == DELETED:
            if ev.name == DEFAULT_SERVICE_ACCOUNT:
                self.controllers.schedule((_TASK, "", ev.ns))
        elif ev.key == CONFIGMAPS and ev.name == ROOT_CA_CONFIGMAP:
            # deleted, or changed by someone: the publisher puts it back
            self.controllers.schedule((_TASK, "", ev.ns))

    # ---- the sync ------------------------------------------------------------------------------

    def _sync_task(self, key: tuple) -> None:
        self.sync(key[2])

    def sync_all(self) -> None:
        """Make every active namespace right now (at start-up, and when the CA changes)."""
        with self.storage.lock:
            names = [s.obj["metadata"]["name"] for s in self.storage.items(NAMESPACES)]
            for name in names:
                self.sync(name)

    def sync(self, namespace: str) -> None:
        """One namespace: its ``default`` ServiceAccount and its ``kube-root-ca.crt``. A
        namespace that is gone or terminating is left alone (both controllers skip a
        namespace whose phase is not Active, and drop a create refused for it)."""
        with self.storage.lock:
            ns = self.storage.get(NAMESPACES, "", namespace)
            if ns is None or (ns.obj.get("status") or {}).get("phase", "Active") != "Active":
                return
            try:
                self._ensure_service_account(namespace)
                self._ensure_root_ca(namespace)
            except errors.ApiError as e:
                # NotFound / NamespaceTerminating: the namespace went meanwhile
                if e.code not in (403, 404):
                    raise

    def _ensure_service_account(self, namespace: str) -> None:
        if self.storage.get(SERVICE_ACCOUNTS, namespace, DEFAULT_SERVICE_ACCOUNT) is not None:
            return
        info = self.rest.registry.lookup("", "v1", "serviceaccounts")
        body = {"metadata": {"name": DEFAULT_SERVICE_ACCOUNT}}
        self.rest.create(info, namespace, body, {})

    def _ensure_root_ca(self, namespace: str) -> None:
        info = self.rest.registry.lookup("", "v1", "configmaps")
        data = {ROOT_CA_KEY: self.root_ca()}
        stored = self.storage.get(CONFIGMAPS, namespace, ROOT_CA_CONFIGMAP)
        if stored is None:
            body = {
                "metadata": {
                    "name": ROOT_CA_CONFIGMAP,
                    "annotations": {DESCRIPTION_ANNOTATION: ROOT_CA_DESCRIPTION},
                },
                "data": data,
            }
            self.rest.create(info, namespace, body, {})
            return
        meta = stored.obj["metadata"]
        if stored.obj.get("data") == data and (meta.get("annotations") or {}).get(
            DESCRIPTION_ANNOTATION
        ):
            return
        new = copy.deepcopy(stored.obj)
        new["data"] = data
        annotations = dict(new["metadata"].get("annotations") or {})
        annotations[DESCRIPTION_ANNOTATION] = ROOT_CA_DESCRIPTION
        new["metadata"]["annotations"] = annotations
        self.rest.update(info, namespace, ROOT_CA_CONFIGMAP, new, {})
