"""KubeSim: the in-process Kubernetes API server that tests, benchmarks and the demo start.

    with KubeSim() as sim:
        apps = kubernetes.client.AppsV1Api(sim.api_client)
        sim.write_kubeconfig(path)   # for kubectl, or for code that loads kubeconfig itself

It wires the parts together: storage (objects, resourceVersion, history, watchers), the
resource registry (built-ins + CRDs), the REST verbs, authentication and authorization
(kubesim/auth/), the HTTP server, the background controllers (deployment status, namespace and
CRD finalizers, garbage collector) and fault injection. State lives in this object, not in the
HTTP server, so ``restart()`` keeps it.
"""

from __future__ import annotations

import copy
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubesim.admission.dispatcher import WebhookAdmission
from kubesim.api.resources import Registry
from kubesim.api.version import DEFAULT_SERVER_VERSION, ServerVersion
from kubesim.auth import bootstrap
from kubesim.auth.bootstrap import CLUSTER_ADMINS_GROUP, KUBEADM_ADMIN_USER
from kubesim.auth.filters import ALWAYS_ALLOW, RBAC, Auth
from kubesim.controllers.bootstrap import NamespaceDefaults, ensure_kubernetes_service
from kubesim.controllers.deployments import DeploymentController
from kubesim.controllers.gc import GarbageCollector
from kubesim.controllers.kwok import SimulatedNode
from kubesim.controllers.manager import ControllerManager
from kubesim.controllers.replicasets import ReplicaSetController
from kubesim.faults import FaultInjector
from kubesim.registry.fieldmanager import FieldManager
from kubesim.registry.rest import Rest
from kubesim.registry.service import SERVICE_CIDR
from kubesim.server.apiserver import ApiServer
from kubesim.server.request import RequestRecord
from kubesim.storage.store import COMPACTION_INTERVAL, WATCH_CACHE_UPPER_BOUND, Storage
from kubesim.validation.fields import UnknownFields
from kubesim.validation.schema import SchemaValidator
from kubesim.views.openapi import builtin_schemas

__all__ = ["KubeSim"]

# the namespaces kube-apiserver makes at start: default (its bootstrap controller), and
# kube-system, kube-public and kube-node-lease (its system namespaces controller)
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class KubeSim:
    """A Kubernetes API server on 127.0.0.1 for tests; see kubesim/README.md.

    Args:
        host, port: where to listen; port 0 picks a free port (kept across ``restart()``).
        crds: CRDs to create at start: dicts, or paths of YAML/JSON files (multi-document ok).
        deployment_status_delay: seconds after a Deployment's spec changes until its status
            reports every replica ready and available; None disables the loop. In the "pods"
            mode: how long a bound Pod takes to run on the simulated node.
        deployment_controller: "full", "no-nodes", "none" or "pods" (controllers/manager.py): a
            cluster whose pods run (one Ready Node, replicas become available), a control plane
            without schedulable nodes (status written, no replica ever available, no Node), a
            bare API server (no Deployment status), or the real workload chain (Deployments
            own ReplicaSets, which own Pods; a ``default`` ServiceAccount per namespace).
            None: "full" with a deployment_status_delay, else "none".
        simulated_node: register one Node that runs Pods, as KWOK simulates one
            (controllers/kwok.py): a scheduler binds pending Pods to it and a kubelet reports
            them Running and Ready. With the "pods" mode, Deployments become available through
            real Pods. Not with "full" (which has its own Node) or "no-nodes".
        garbage_collector: False leaves dependents of deleted owners in place, as an API server
            without kube-controller-manager (envtest) does.
        history_size: the largest a resource's watch window grows (default 102,400 events, the
            real watch cache's bound); it starts at 100 and is sized by load as the real one
            is, and a watch from an RV below it gets 410 Expired.
        compaction_interval: seconds between etcd compactions, as kube-apiserver's
            --etcd-compaction-interval (5 min): continue tokens and Exact lists live 5 to 10
            minutes. 0 disables them (``faults.compact()`` still compacts on demand).
        watch_queue_size: events a watcher may have pending before it is closed as too slow.
        bookmark_interval: seconds between periodic BOOKMARKs (the real server: 60 s); one is
            also sent 2 s before a watch's timeoutSeconds ends.
        tls: serve HTTPS with a fresh self-signed certificate (``ca_file`` holds it).
        tls_cert_file, tls_private_key_file: serve HTTPS with this certificate and key instead
            (kube-apiserver's flags of the same names; implies tls). The kubeconfig written
            names the certificate as its certificate-authority, so it suits a self-signed one.
        token: require this bearer token (no token -> 403 on resources, wrong token -> 401).
            Whoever presents it (or, with no token set, sends no credentials) is the admin, in
            group system:masters.
        client_ca_file: kube-apiserver's --client-ca-file (implies tls): a client whose
            certificate this CA signed is the user its Subject names (CN; groups: O), before
            any token is looked at (auth/x509.py).
        admin_client_certificate: make a client CA (implies tls), trust it beside
            client_ca_file, and log the admin in with a certificate it signs, as kind's and
            kubeadm's admin.conf do: user kubernetes-admin in group kubeadm:cluster-admins,
            which kubeadm's ClusterRoleBinding of that name makes cluster-admin under RBAC.
            ``kubeconfig()`` and ``api_client`` then use the certificate (no token), and
            ``client_certificate()`` mints certificates for other users.
        authorization_mode: kube-apiserver's --authorization-mode: "AlwaysAllow" (default)
            lets every authenticated request through; "RBAC" enforces the Roles, ClusterRoles
            and bindings in storage (with the default ClusterRoles a cluster has), and
            ServiceAccount tokens (``token_for``) get only what is bound to them.
        request_log_size: how many requests ``request_log`` keeps (oldest dropped first).
        gc_delay: seconds the garbage collector waits before acting (the real one: well under 1 s).
        server_version: the kube-apiserver release to answer as, "1.36" (default) or "1.24"
            (api/version.py lists what differs), so a client's handling of the older server's
            answers stays tested.
        watch_list: serve WatchList (sendInitialEvents) as v1.34+ do; False answers such a watch
            as v1.24 did, 422 Invalid on resourceVersionMatch, to test a client's fallback.
            None (default): as server_version says (served by 1.36, refused by 1.24).
        namespace_defaults: kube-controller-manager's serviceaccounts and root CA publisher
            controllers: a ``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap
            in every namespace, made again when deleted (controllers/bootstrap.py). False:
            none, as under envtest, which runs no kube-controller-manager.
        sharded_list_and_watch: the ShardedListAndWatch feature gate (KEP-5866; alpha in v1.36
            and off by default there, as here). On, list and watch honour ``shardSelector``
            (registry/sharding.py) and a filtered list carries ``metadata.shardInfo``; off, the
            parameter is ignored, as by a v1.36 server without the gate or an older one.
        webhook_services: where a webhook's ``clientConfig.service`` is reached, since kubesim
            has no service network: ``{"namespace/name:port": "host:port"}`` (``namespace/name``
            alone stands for port 443). The certificate is still verified for the service's
            DNS name, ``name.namespace.svc``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        crds: Iterable[dict | str | os.PathLike] = (),
        deployment_status_delay: float | None = None,
        deployment_controller: str | None = None,
        simulated_node: bool = False,
        garbage_collector: bool = True,
        history_size: int = WATCH_CACHE_UPPER_BOUND,
        compaction_interval: float = COMPACTION_INTERVAL,
        watch_queue_size: int = 100_000,
        bookmark_interval: float = 60.0,
        tls: bool = False,
        tls_cert_file: str | None = None,
        tls_private_key_file: str | None = None,
        token: str | None = None,
        client_ca_file: str | None = None,
        admin_client_certificate: bool = False,
        request_log_size: int = 100_000,
        gc_delay: float = 0.0,
        server_version: str = DEFAULT_SERVER_VERSION,
        watch_list: bool | None = None,
        sharded_list_and_watch: bool = False,
        authorization_mode: str = ALWAYS_ALLOW,
        webhook_services: Mapping[str, str] | None = None,
        namespace_defaults: bool = True,
    ):
        # the release answered as; every behaviour that differs reads it (ValueError if unknown)
        self.server_version = ServerVersion.parse(server_version)
        self.host = host  # listen address
        self.port = port  # 0 until started; then fixed, so restart() reuses it
        # serve HTTPS (client certificates, too, are only presented over TLS)
        self.tls = (
            tls
            or tls_cert_file is not None
            or client_ca_file is not None
            or admin_client_certificate
        )
        # --client-ca-file: the certificates it signed log their Subject in
        self.client_ca_file = client_ca_file
        # the admin logs in with a certificate of kubesim's own client CA (process-wide)
        self.admin_client_certificate = admin_client_certificate
        self.token = token  # required bearer token, or None for no authentication
        self.storage = Storage(
            history_size, watch_queue_size, compaction_interval=compaction_interval
        )  # objects, RV, etcd history, watch windows, watchers
        # served resources and discovery, as the emulated release serves them
        self.registry = Registry(self.server_version.minor)
        # the verbs, with managedFields typed by the built-in kinds' schemas
        self.rest = Rest(
            self.storage,
            self.registry,
            SchemaValidator(self.server_version),
            self.server_version,
            UnknownFields(builtin_schemas()),
            FieldManager(builtin_schemas()),
        )
        # WatchList is one of the release's differences, unless asked for on its own
        self.rest.watch_list = (
            self.server_version.serves_watch_list if watch_list is None else watch_list
        )
        self.rest.sharded_list_and_watch = sharded_list_and_watch
        # admission webhooks: the stored configurations' webhooks are called on every write
        # through the API (kubesim/admission/); services resolve through webhook_services
        self.admission = WebhookAdmission(self.storage, self.registry, webhook_services)
        self.rest.admission = self.admission
        self.faults = FaultInjector(self)  # fault injection (see faults.py)
        # authentication and authorization; ValueError for an unknown authorization_mode
        self.auth = Auth(self.storage, token, authorization_mode)
        self.server = ApiServer(
            self.rest,
            self.registry,
            token=token,
            faults=self.faults,
            request_log_size=request_log_size,
            bookmark_interval=bookmark_interval,
            auth=self.auth,
        )  # HTTP front end; replaced socket on restart, same state
        self.server.admin_handler = self.faults.handle_admin
        self.controllers = ControllerManager(
            self.storage, self.rest, deployment_status_delay, deployment_controller
        )
        self.gc = (
            GarbageCollector(self.storage, self.rest, self.registry, self.controllers, gc_delay)
            if garbage_collector
            else None
        )
        # the default ServiceAccount and kube-root-ca.crt of every namespace, or None
        self.namespace_defaults = (
            NamespaceDefaults(self.storage, self.rest, self.controllers, self._root_ca)
            if namespace_defaults
            else None
        )
        self._wire_workloads(simulated_node)
        self._tmpdir = tempfile.TemporaryDirectory(prefix="kubesim-")  # cert, kubeconfig
        # PEM of the serving certificate when tls (made at start unless given) and its key
        self.ca_file: str | None = tls_cert_file
        self._key_file: str | None = tls_private_key_file
        self._api_client = None  # created on first use of api_client
        self._lock = threading.Lock()  # serialises start/stop/restart
        self._started = False
        self._bootstrap(crds)

    def _wire_workloads(self, simulated_node: bool) -> None:
        """The "pods" mode's controllers and the simulated node (ValueError where a mode has a
        Node of its own, or none by definition)."""
        mode = self.controllers.deployment_controller
        if simulated_node and mode in ("full", "no-nodes"):
            raise ValueError(
                f'simulated_node does not go with deployment_controller="{mode}": '
                '"full" registers its own Node, "no-nodes" has none'
            )
        if mode == "pods":
            if self.namespace_defaults is None:
                # the ServiceAccount admission refuses a pod without its ServiceAccount
                raise ValueError(
                    'deployment_controller="pods" runs kube-controller-manager, whose '
                    "serviceaccounts controller its pods need: not with namespace_defaults=False"
                )
            DeploymentController(self.storage, self.rest, self.controllers)
            ReplicaSetController(self.storage, self.rest, self.controllers)
        self.node: SimulatedNode | None = None
        if simulated_node:
            delay = self.controllers.deployment_status_delay if mode == "pods" else 0.0
            self.node = SimulatedNode(self.storage, self.rest, self.controllers, delay or 0.0)

    # ---- bootstrap -----------------------------------------------------------------------------

    def _bootstrap(self, crds: Iterable[Any]) -> None:
        ns_info = self.registry.lookup("", "v1", "namespaces")
        assert ns_info is not None  # built in
        for name in DEFAULT_NAMESPACES:
            # (created by the API server itself, as its bootstrap controller does)
            self.rest.create(ns_info, "", {"metadata": {"name": name}}, {}, "kube-apiserver")
        self._default_service_cidr()
        if self.auth.mode == RBAC:
            # the default policy a cluster reconciles at start-up (bootstrappolicy)
            for group_plural, docs in (
                ("clusterroles", bootstrap.cluster_roles()),
                ("clusterrolebindings", bootstrap.cluster_role_bindings()),
            ):
                info = self.registry.lookup("rbac.authorization.k8s.io", "v1", group_plural)
                assert info is not None  # built in
                for doc in docs:
                    self.rest.create(info, "", doc, {}, "kube-apiserver")
            if self.admin_client_certificate:
                # written by kubeadm through the API, once the server is up
                info = self.registry.lookup(
                    "rbac.authorization.k8s.io", "v1", "clusterrolebindings"
                )
                assert info is not None  # built in
                self.rest.create(info, "", bootstrap.kubeadm_cluster_admins(), {}, "kubeadm")
        if self.namespace_defaults is not None:
            # at once, so that what a new kubesim holds does not depend on a thread's timing
            self.namespace_defaults.sync_all()
        self.controllers.bootstrap()
        if self.node is not None:
            self.node.bootstrap()
        for crd in crds:
            for doc in _load_docs(crd):
                self.create_crd(doc)

    def _root_ca(self) -> str:
        """The CA bundle kube-root-ca.crt publishes: the serving certificate (self-signed, so
        its own CA) when TLS is on and started; "" otherwise (kubesim has no CA)."""
        if self.ca_file is None:
            return ""
        return Path(self.ca_file).read_text()

    def _default_service_cidr(self) -> None:
        """The ServiceCIDR "kubernetes" of --service-cluster-ip-range, which kube-apiserver's
        default-servicecidr controller creates and marks Ready (pkg/controlplane/controller/
        defaultservicecidr); Services are allocated from it."""
        info = self.registry.lookup("networking.k8s.io", "v1", "servicecidrs")
        if info is None:
            return  # not served by the emulated release (before 1.33)
        body = {"metadata": {"name": "kubernetes"}, "spec": {"cidrs": [str(SERVICE_CIDR)]}}
        _, stored = self.rest.create(info, "", body, {}, "kube-apiserver")
        ready = {
            "type": "Ready",
            "status": "True",
            "lastTransitionTime": stored.obj["metadata"]["creationTimestamp"],
            "reason": "",
            "message": "Kubernetes Service CIDR is ready",
        }
        status = dict(stored.obj, status={"conditions": [ready]})
        self.rest.update(info, "", "kubernetes", status, {}, "status", "kube-apiserver")

    def create_crd(self, crd: dict | str | os.PathLike) -> dict:
        """Create (or replace) a CRD directly in storage and make its resources servable."""
        docs = _load_docs(crd)
        info = self.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert info is not None  # built in
        out = {}
        for doc in docs:
            doc = copy.deepcopy(doc)  # Rest takes ownership of the bodies it is given
            name = doc["metadata"]["name"]
            existing = self.storage.get(info.storage_key, "", name)
            if existing is None:
                _, stored = self.rest.create(info, "", doc, {})
            else:
                doc = dict(
                    doc,
                    metadata=dict(
                        doc["metadata"], resourceVersion=existing.obj["metadata"]["resourceVersion"]
                    ),
                )
                _, stored = self.rest.update(info, "", name, doc, {})
            out = stored.obj
        return out

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self) -> KubeSim:
        with self._lock:
            if self._started:
                return self
            ctx = None
            if self.tls:
                from kubesim.server.tls import make_server_context

                ctx, self.ca_file, self._key_file = make_server_context(
                    self._tmpdir.name, self.host, self.ca_file, self._key_file, self._client_cas()
                )
            self.port = self.server.start(self.host, self.port, ctx)
            # the bootstrap controller's post-start hook: the Service points at our port
            ensure_kubernetes_service(self.rest, self.port)
            if self.tls and self.namespace_defaults is not None:
                self.namespace_defaults.sync_all()  # kube-root-ca.crt carries the new CA
            self.controllers.start()
            self._started = True
            return self

    def _client_cas(self) -> list[str]:
        """The CA files whose client certificates log in (--client-ca-file's bundle)."""
        cas = [self.client_ca_file] if self.client_ca_file is not None else []
        if self.admin_client_certificate:
            from kubesim.server.pki import process_ca

            cas.append(process_ca().cert_file)
        return cas

    def stop(self) -> None:
        """Stop serving: close watches and connections; state is kept for restart()."""
        with self._lock:
            if not self._started:
                return
            self._started = False
            self.server.stop()
            self.controllers.stop()

    def restart(self) -> None:
        """Stop, then serve again on the same port with the same objects and history.

        (A restart with fresh state is a new KubeSim on the same port: its resourceVersions
        start above this one's, so clients that kept an old RV get 410 and relist.)
        """
        self.stop()
        self.start()

    def close(self) -> None:
        """stop() and release the temporary files and the api_client."""
        self.stop()
        if self._api_client is not None:
            self._api_client.close()
            self._api_client = None
        self._tmpdir.cleanup()

    def __enter__(self) -> KubeSim:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- client side ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:41234 (https when tls=True)."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def configuration(self):
        """A fresh kubernetes.client.Configuration pointing at this server."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        if self.admin_client_certificate:
            admin = self.client_certificate(KUBEADM_ADMIN_USER, [CLUSTER_ADMINS_GROUP])
            cfg.cert_file, cfg.key_file = admin
        elif self.token is not None:
            cfg.api_key = {"authorization": self.token}
            cfg.api_key_prefix = {"authorization": "Bearer"}
        if self.tls:
            cfg.ssl_ca_cert = self.ca_file
            cfg.verify_ssl = True
        return cfg

    def new_api_client(self):
        """A new kubernetes.client.ApiClient (own connection pool) for this server."""
        from kubernetes import client

        return client.ApiClient(self.configuration())

    @property
    def api_client(self):
        """A shared, preconfigured kubernetes.client.ApiClient (created on first use)."""
        if self._api_client is None:
            self._api_client = self.new_api_client()
        return self._api_client

    def kubeconfig(self, namespace: str = "default", token: str | None = None) -> dict:
        """The kubeconfig document (context "kubesim") for this server: the admin's (its
        client certificate with ``admin_client_certificate``, else its token), or one that
        authenticates with ``token`` (a ServiceAccount's, from ``token_for``)."""
        cluster: dict[str, Any] = {"server": self.url}
        if self.tls:
            cluster["certificate-authority"] = self.ca_file
        user: dict[str, Any] = {}
        if token is None and self.admin_client_certificate:
            admin = self.client_certificate(KUBEADM_ADMIN_USER, [CLUSTER_ADMINS_GROUP])
            user = {"client-certificate": admin[0], "client-key": admin[1]}
        else:
            token = token if token is not None else self.token
            user = {"token": token} if token is not None else {}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kubesim", "cluster": cluster}],
            "users": [{"name": "kubesim", "user": user}],
            "contexts": [
                {
                    "name": "kubesim",
                    "context": {"cluster": "kubesim", "user": "kubesim", "namespace": namespace},
                }
            ],
            "current-context": "kubesim",
            "preferences": {},
        }

    def write_kubeconfig(
        self, path: str | os.PathLike, namespace: str = "default", token: str | None = None
    ) -> str:
        """Write a kubeconfig for this server (for kubectl and config.load_kube_config); with
        ``token``, one for that token's user instead of the admin. Readable by its owner
        only, since it holds a credential."""
        import yaml

        path = str(path)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            yaml.safe_dump(self.kubeconfig(namespace, token), f, sort_keys=False)
        return path

    def client_certificate(
        self, user: str, groups: Iterable[str] = (), uid: str = ""
    ) -> tuple[str, str]:
        """(certificate file, key file) of a client certificate for ``user`` in ``groups``
        (with the UID attribute when ``uid`` is given), signed by kubesim's client CA, as
        ``kubeadm kubeconfig user`` or a CertificateSigningRequest would give one. Needs
        ``admin_client_certificate`` (the CA this server trusts); RuntimeError without
        openssl."""
        if not self.admin_client_certificate:
            raise ValueError("kubesim signs client certificates only with admin_client_certificate")
        from kubesim.server.pki import process_ca

        return process_ca().client_certificate(user, tuple(groups), uid)

    def token_for(self, namespace: str, service_account: str, seconds: int = 3600) -> str:
        """A token for the ServiceAccount, minted over HTTP by the TokenRequest API
        (``POST .../serviceaccounts/<name>/token``) as the admin, as ``kubectl create token``
        mints one. The ServiceAccount must exist; the server must be started."""
        from kubernetes import client

        # no audiences: the server's own (the API's), as kubectl create token asks
        body = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
        )
        answer = client.CoreV1Api(self.api_client).create_namespaced_service_account_token(
            service_account, namespace, body
        )
        assert answer.status is not None  # a TokenRequest is answered with its status
        return str(answer.status.token)

    # ---- observation and control for tests -----------------------------------------------------

    @property
    def request_log(self) -> list[RequestRecord]:
        """Every request served so far (oldest first; bounded by request_log_size)."""
        return list(self.server.request_log)

    def clear_request_log(self) -> None:
        self.server.request_log.clear()

    @property
    def resource_version(self) -> int:
        """The current global resourceVersion."""
        return self.storage.rv

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the background controllers (GC, namespace, CRD cleanup) have nothing due."""
        return self.controllers.wait_idle(timeout)

    def send_bookmarks(self) -> None:
        """Make every bookmark-enabled watch send a BOOKMARK now (if its RV advanced)."""
        self.storage.request_bookmarks()


def _load_docs(src: Any) -> list[dict]:
    if isinstance(src, dict):
        return [src]
    import yaml

    with open(src) as f:
        return [d for d in yaml.safe_load_all(f) if d]
