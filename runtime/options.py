"""What a controller process is asked to do: the process flags, parsed, checked and typed.

controller-runtime twin: ``manager.Options``, with the flags every controller's main shares
(client-go's, component-base's and kubebuilder's scaffold's). The flags (``runtime.flags``)
are the only place that turns text into these values: durations are float seconds, bind
addresses are ``(host, port)`` or ``None`` for "off", and every value here has passed the
checks the flags make, so the manager (``runtime.manager``) never validates. A controller with
flags of its own subclasses it (the Foo controller's ``FooOptions`` adds ``--foo-selector``).

``Options()`` with no arguments is the process as it runs with no flags, which is also what
tests start from (``dataclasses.replace(Options(), workers=1)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BindAddress", "FifoKind", "LogFormat", "Options", "parse_bind_address"]

BindAddress = tuple[str, int]
"""``(host, port)`` to listen on; host ``""`` is every interface, port 0 any free port."""

FifoKind = Literal["real", "delta"]
"""The informers' queue: client-go's ``RealFIFO`` (default) or the classic ``DeltaFIFO``."""

LogFormat = Literal["text", "json"]
"""klog-style text lines, or one JSON object per line (``runtime.log``)."""


def parse_bind_address(value: str) -> BindAddress | None:
    """``":8080"`` -> ("", 8080) (all interfaces), ``"127.0.0.1:0"`` -> any free port,
    ``"0"`` -> None (off). ValueError when it is none of these, or the port is above 65535."""
    if value in ("0", ""):
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address {value!r} is not host:port, :port or 0")
    if int(port) > 65535:  # else the bind fails later, with an OverflowError
        raise ValueError(f"bind address {value!r}: the port must be 0-65535")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class Options:
    """The process's settings, one field per flag (controller-runtime ``manager.Options``).

    Frozen: the process reads them from many threads and nothing may change them once running.
    """

    kubeconfig: str = ""
    """Path to a kubeconfig (``--kubeconfig``); empty: in-cluster, then the default rules."""

    master: str = ""
    """API server address overriding the kubeconfig's (``--master``); empty: the kubeconfig's."""

    namespace: str = ""
    """The one namespace to watch (``--namespace``); empty: all (``metav1.NamespaceAll``)."""

    workers: int = 2
    """Worker threads syncing Foos in parallel (``--workers``); at least 1."""

    resync_period: float = 30.0
    """Seconds between informer resyncs (``--resync-period``); 0 turns resync off."""

    fifo: FifoKind = "real"
    """The informers' queue implementation (``--fifo``)."""

    kube_api_qps: float = 20.0
    """Client-side requests per second to the API server (``--kube-api-qps``); 0: no limit."""

    kube_api_burst: int = 30
    """Requests allowed at once above the QPS (``--kube-api-burst``)."""

    strip_managed_fields: bool = True
    """Drop ``metadata.managedFields`` before objects are cached (``--strip-managed-fields``)."""

    watch_list: bool | None = None
    """Stream each informer's initial state (WatchList) instead of a paged LIST
    (``--watch-list``); None: client-go's ``WatchListClient`` gate decides, which is on unless
    ``KUBE_FEATURE_WatchListClient`` says false (``client.features``)."""

    graceful_shutdown_timeout: float = 30.0
    """Seconds the graceful shutdown may take after SIGTERM, drain, Event flush and Lease release
    together (``--graceful-shutdown-timeout``; ``runtime.shutdown.ShutdownBudget``)."""

    metrics_bind_address: BindAddress | None = None
    """Where ``/metrics`` listens (``--metrics-bind-address``); None: not served (the default,
    as kubebuilder's; manifests/ serve it on :8443)."""

    metrics_secure: bool = True
    """Serve ``/metrics`` over HTTPS, to readers a TokenReview and a SubjectAccessReview let in
    (``--metrics-secure``); False: plain HTTP to anyone (``runtime.metrics.server``)."""

    enable_http2: bool = False
    """Accepted as kubebuilder's ``--enable-http2``; the metrics server speaks HTTP/1.1 only."""

    metrics_cert_path: str = ""
    """Directory of the metrics serving certificate (``--metrics-cert-path``), watched for
    changes; empty: a self-signed certificate made at start-up."""

    metrics_cert_name: str = "tls.crt"
    """The certificate's file name in ``metrics_cert_path`` (``--metrics-cert-name``)."""

    metrics_cert_key: str = "tls.key"
    """The key's file name in ``metrics_cert_path`` (``--metrics-cert-key``)."""

    health_probe_bind_address: BindAddress | None = ("", 8081)
    """Where ``/healthz`` and ``/readyz`` listen (``--health-probe-bind-address``); None: off."""

    webhook_bind_address: BindAddress | None = None
    """Where the admission webhooks listen (``--webhook-bind-address``, HTTPS); None: not
    served (the default: a webhook needs a certificate the API server trusts, and
    configurations that point at it; manifests/components/webhooks/ serve it on :9443)."""

    webhook_cert_path: str = ""
    """Directory of the webhook serving certificate (``--webhook-cert-path``), watched for
    changes: cert-manager's Secret, mounted. Empty: ``webhook_self_managed_certs``."""

    webhook_cert_name: str = "tls.crt"
    """The certificate's file name in ``webhook_cert_path`` (``--webhook-cert-name``)."""

    webhook_cert_key: str = "tls.key"
    """The key's file name in ``webhook_cert_path`` (``--webhook-cert-key``)."""

    webhook_self_managed_certs: bool = False
    """Make the CA and serving certificate in the process, renew them before expiry, and write
    the CA into the two webhook configurations below (``--webhook-self-managed-certs``,
    ``runtime.webhook.selfmanaged``)."""

    webhook_cert_hosts: tuple[str, ...] = ("localhost", "127.0.0.1")
    """DNS names and IPs of the self-managed serving certificate (``--webhook-cert-hosts``):
    the webhook Service's ``<name>.<namespace>.svc``, or the host of a ``url``."""

    webhook_mutating_configuration: str = "sample-controller-mutating-webhook-configuration"
    """The MutatingWebhookConfiguration whose ``caBundle`` the self-managed mode writes
    (``--webhook-mutating-configuration``); empty: none."""

    webhook_validating_configuration: str = "sample-controller-validating-webhook-configuration"
    """The ValidatingWebhookConfiguration whose ``caBundle`` the self-managed mode writes
    (``--webhook-validating-configuration``); empty: none."""

    leader_elect: bool = False
    """Work only while holding the Lease (``--leader-elect``)."""

    leader_elect_lease_name: str = "sample-controller"
    """Name of the Lease (``--leader-elect-lease-name``)."""

    leader_elect_namespace: str = ""
    """Namespace of the Lease (``--leader-elect-namespace``); empty: the pod's namespace."""

    leader_elect_lease_duration: float = 15.0
    """Seconds a Lease holds without renewal (``--leader-elect-lease-duration``)."""

    leader_elect_renew_deadline: float = 10.0
    """Seconds the leader keeps retrying to renew before it gives up
    (``--leader-elect-renew-deadline``); below the lease duration."""

    leader_elect_retry_period: float = 2.0
    """Seconds between leader election attempts (``--leader-elect-retry-period``)."""

    sharding: bool = False
    """Share the Foos among every replica, each on a Lease of its own (``--sharding``,
    ``runtime.sharding``); exclusive with ``leader_elect``. The Lease timings and namespace
    are leader election's flags."""

    sharding_ring: str = "sample-controller"
    """The ring the replica's Lease joins (``--sharding-ring``): replicas of one ring share."""

    sharding_buckets: int = 64
    """Buckets the hash space is cut into (``--sharding-buckets``), a power of two; every
    replica of a ring must use the same."""

    identity: str = ""
    """This replica's name (``--identity``): its member Lease with ``--sharding``, and in
    every request's User-Agent; empty: the hostname (a pod's name) and a suffix random to the
    process (``runtime.manager.default_identity``)."""

    log_format: LogFormat = "text"
    """How log lines are written (``--log-format``)."""

    trace: bool = False
    """Log the path of every change, one line per step (``--trace``, ``runtime.trace``)."""

    verbosity: int = 0
    """Log verbosity as klog's ``-v``: 0 default, 4 debug (``-v``/``--v``)."""
