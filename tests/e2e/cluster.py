"""The cluster an e2e run talks to, seen only through a kubeconfig.

Three targets, one interface (``Cluster``), so every scenario is written once:

- ``kubeconfig`` (``E2E_KUBECONFIG=path``): an existing cluster: a full one (kind, say), a
  control plane whose nodes cannot run pods, or a bare API server. The kubeconfig must be an
  admin's: the suite installs the CRD, the controller's namespace, ServiceAccount and RBAC from
  manifests/, and creates a namespace per test;
- ``envtest`` (``KUBEBUILDER_ASSETS=dir``): etcd and kube-apiserver started by the suite
  (tests/e2e/envtest.py). No kube-controller-manager: no garbage collection, no Deployment
  status;
- ``kubesim`` (the default suite, or ``E2E_KUBESIM=1``): the project's in-process API server,
  with TLS and a bearer token so the kubeconfig path is the same as for a cluster, once in each
  of its deployment controller modes (full, no-nodes, none: the kinds capabilities.py tells
  apart), and with RBAC enforced (``authorization_mode="RBAC"``), so the controller runs as its
  ServiceAccount there too.

What a target can do is not assumed from its name: tests/e2e/capabilities.py probes it once per
session (a deployment controller? a garbage collector? Ready, schedulable nodes?), and the
scenarios make the strongest assertions that allows.

On every target the controller never uses the admin's credentials: it gets a token for the
``sample-controller`` ServiceAccount from the TokenRequest API
(``POST .../serviceaccounts/sample-controller/token``) and a kubeconfig built from it, so a
permission missing from manifests/base/rbac.yaml fails the scenarios.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import yaml
from kubernetes import client

from client.config import load_client_configuration
from client.errors import APIError, TransportError, is_not_found
from client.objects import Object
from client.rest import Params, RESTClient, Timeout, resource_path
from controller.foo_controller import FOO_GVR
from tests import helpers
from tests.e2e.budget import BUDGET

if TYPE_CHECKING:
    from tests.e2e.capabilities import Capabilities

T = TypeVar("T")

MANIFESTS = helpers.ROOT / "manifests" / "base"
# the objects that give the controller its identity and permissions, in apply order
RBAC_FILES = ("namespace.yaml", "service-account.yaml", "rbac.yaml")

EVENTS = ("", "v1", "events")
LEASES = ("coordination.k8s.io", "v1", "leases")
NAMESPACES = ("", "v1", "namespaces")

USER_AGENT = "sample-controller-e2e/0.1.0"


def not_yet_on_a_cluster(err: Exception) -> bool:
    """A 404 or a dropped connection counts as "not yet" while waiting on a real cluster: it has
    both in normal operation (an object not created yet, a load balancer in front of the API
    server)."""
    return is_not_found(err) or isinstance(err, TransportError)


REQUEST_TIMEOUT = 20.0  # seconds for one request of the suite's own (a healthy server: < 1 s)


def wait_for(
    predicate: Callable[[], T | bool | None],
    timeout: float = 30.0,
    interval: float = 0.1,
    message: str | Callable[[], str] = "",
    not_yet: Callable[[Exception], bool] = not_yet_on_a_cluster,
) -> T:
    """The one wait_for (tests/helpers.py) with a real cluster's pace, cut to the test's budget.

    Slower to converge than kubesim, and polled less often, so the waits do not load a shared
    API server. A timeout longer than what is left of the test's pytest-timeout is cut to it
    (tests/e2e/budget.py), and the failure says so: the wait fails with its own message rather
    than the test being killed.
    """
    seconds, note = BUDGET.clamp(timeout)
    if note:
        what = message

        def message() -> str:
            text = what() if callable(what) else what
            return (text or getattr(predicate, "__qualname__", repr(predicate))) + note

    return cast(T, helpers.wait_for(predicate, seconds, interval, message, not_yet))


class SuiteClient(RESTClient):
    """The suite's own RESTClient: a request's timeout is REQUEST_TIMEOUT, cut to the budget,
    so a stalled server fails the request (TransportError) instead of outliving the test."""

    def request(
        self,
        method: str,
        path: str,
        params: Params = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Timeout = REQUEST_TIMEOUT,
        *,
        decode: bool = True,
    ) -> Object:
        if isinstance(timeout, int | float):
            timeout = max(BUDGET.clamp(timeout)[0], 1.0)
        return super().request(method, path, params, body, content_type, timeout, decode=decode)


# -- manifests ----------------------------------------------------------------------------------


def load_manifests(*names: str) -> list[dict]:
    """The YAML documents of manifests/base/<name>, in order."""
    docs: list[dict] = []
    for name in names:
        with open(MANIFESTS / name) as f:
            docs.extend(d for d in yaml.safe_load_all(f) if d)
    return docs


def object_path(obj: dict, collection: bool = False) -> str:
    """The REST path of a manifest object (namespaced or not) from its apiVersion and kind."""
    group, _, version = obj["apiVersion"].rpartition("/")
    plural = _PLURALS[obj["kind"]]
    namespace = obj["metadata"].get("namespace") if plural not in _CLUSTER_SCOPED else None
    return resource_path(
        group, version, plural, namespace, None if collection else obj["metadata"]["name"]
    )


_PLURALS = {
    "Namespace": "namespaces",
    "ServiceAccount": "serviceaccounts",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "CustomResourceDefinition": "customresourcedefinitions",
    "Deployment": "deployments",
    "Service": "services",
    "Foo": "foos",
}
_CLUSTER_SCOPED = {"namespaces", "clusterroles", "clusterrolebindings", "customresourcedefinitions"}


# -- the cluster --------------------------------------------------------------------------------


@dataclass
class Cluster:
    """An API server reached through an admin kubeconfig, plus what it can and cannot do."""

    target: str  # "kubeconfig", "envtest" or "kubesim"
    kubeconfig: str  # path of the admin kubeconfig
    workdir: Path  # where this run writes kubeconfigs
    has_rbac: bool  # ServiceAccounts, TokenRequest and RBAC are served and enforced
    name: str = ""  # for reports: the target, and kubesim's mode ("kubesim:no-nodes")
    # what its controllers and nodes do, as probed once per session (capabilities.py)
    capabilities: Capabilities | None = None
    admin: RESTClient = field(init=False)  # the test's own client
    created: list[dict] = field(default_factory=list)  # objects this run created, to delete

    def __post_init__(self) -> None:
        self.name = self.name or self.target
        self.admin = self.client_for(self.kubeconfig)

    @staticmethod
    def client_for(kubeconfig: str) -> RESTClient:
        cfg = load_client_configuration(kubeconfig, "")
        return SuiteClient(client.ApiClient(cfg), user_agent=USER_AGENT)

    @property
    def can(self) -> Capabilities:
        """The probed capabilities (set by the session fixture before any test runs)."""
        assert self.capabilities is not None, "the cluster's capabilities were not probed"
        return self.capabilities

    # -- set-up ---------------------------------------------------------------------------------

    def apply(self, obj: dict, *, remember: bool = True) -> dict:
        """Create obj, or replace the existing one (kubectl apply, roughly); return the result."""
        try:
            out = self.admin.request("POST", object_path(obj, collection=True), body=obj)
        except APIError as err:
            if err.code != 409:
                raise
            current = self.admin.request("GET", object_path(obj))
            body = copy.deepcopy(obj)
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            return self.admin.request("PUT", object_path(obj), body=body)
        if remember:
            self.created.append(obj)
        return out

    def install_crd(self) -> None:
        """Apply crds/foo-crd.yaml and wait until Foos are served (the CRD is Established)."""
        with open(helpers.CRD) as f:
            crd = yaml.safe_load(f)
        # The CRD stays after the run: removing it would delete every Foo in the cluster.
        self.apply(crd, remember=False)
        group, version, plural = FOO_GVR
        wait_for(
            lambda: (
                plural
                in {
                    r["name"]
                    for r in self.admin.request("GET", f"/apis/{group}/{version}").get(
                        "resources", []
                    )
                }
            ),
            timeout=60,
            message="the Foo CRD to be served",
        )

    def install_rbac(self) -> dict[str, Any]:
        """Apply the controller's namespace, ServiceAccount and RBAC from manifests/.

        Returns the ServiceAccount (its namespace is where the leader-election Role lives).
        """
        docs = load_manifests(*RBAC_FILES)
        for doc in docs:
            self.apply(doc)
        return next(d for d in docs if d["kind"] == "ServiceAccount")

    def mint_token(self, namespace: str, service_account: str, seconds: int = 3600) -> str:
        """A bound token for the ServiceAccount (TokenRequest API, as kubelet projects one)."""
        review = self.admin.request(
            "POST",
            resource_path("", "v1", "serviceaccounts", namespace, service_account, "token"),
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds},
            },
        )
        return review["status"]["token"]

    def _admin_context(self) -> tuple[dict, dict]:
        """(cluster, user) entries of the admin kubeconfig's current context."""
        with open(self.kubeconfig) as f:
            admin = yaml.safe_load(f)
        context_name = admin.get("current-context")
        context = next(c["context"] for c in admin["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in admin["clusters"] if c["name"] == context["cluster"])
        user: dict = next(
            (u["user"] for u in admin.get("users") or [] if u["name"] == context.get("user")), {}
        )
        return cluster, user

    def admin_token(self) -> str:
        """The admin kubeconfig's bearer token (kubesim's fallback for the controller)."""
        return self._admin_context()[1]["token"]

    def kubeconfig_with_token(self, token: str, name: str) -> str:
        """A kubeconfig for the same server and CA as the admin's, authenticating with token."""
        cluster, _ = self._admin_context()
        cluster = dict(cluster)
        ca = cluster.get("certificate-authority")
        if ca and not Path(ca).is_absolute():  # relative to the admin kubeconfig's directory
            cluster["certificate-authority"] = str(Path(self.kubeconfig).resolve().parent / ca)
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": cluster}],
            "users": [{"name": name, "user": {"token": token}}],
            "contexts": [{"name": name, "context": {"cluster": "e2e", "user": name}}],
            "current-context": name,
        }
        path = self.workdir / f"{name}.kubeconfig"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        path.chmod(0o600)
        return str(path)

    # -- namespaces -----------------------------------------------------------------------------

    def create_namespace(self, prefix: str) -> str:
        name = f"{prefix[:40].rstrip('-')}-{uuid.uuid4().hex[:6]}"
        self.admin.request(
            "POST",
            resource_path(*NAMESPACES),
            body={
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {"e2e": "sample-controller"}},
            },
        )
        return name

    def delete_namespace(self, name: str) -> None:
        """Delete a test namespace; on envtest it stays Terminating (no namespace controller)."""
        try:
            self.admin.request("DELETE", resource_path(*NAMESPACES, None, name))
        except APIError as err:
            if err.code != 404:
                raise

    def cleanup(self) -> None:
        """Delete what this run created (newest first), except the CRD and shared namespaces."""
        for obj in reversed(self.created):
            try:
                self.admin.request("DELETE", object_path(obj))
            except (APIError, TransportError):
                pass  # best effort: the cluster may already be gone (envtest teardown)
        self.created.clear()

    # -- reading --------------------------------------------------------------------------------

    def get(self, gvr: tuple[str, str, str], namespace: str, name: str) -> dict:
        return self.admin.request("GET", resource_path(*gvr, namespace, name))

    def get_or_none(self, gvr: tuple[str, str, str], namespace: str, name: str) -> dict | None:
        try:
            return self.get(gvr, namespace, name)
        except APIError as err:
            if err.code == 404:
                return None
            raise

    def events(self, namespace: str, involved: str) -> list[dict]:
        return self.admin.request(
            "GET",
            resource_path(*EVENTS, namespace),
            params={"fieldSelector": f"involvedObject.name={involved}"},
        )["items"]
