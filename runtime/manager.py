"""The manager: the process around any controller, with probes, metrics, leader election or
sharding, and one graceful-shutdown budget.

controller-runtime twin: ``pkg/manager`` (``manager.New``, ``mgr.Add``, ``mgr.Start``,
``AddHealthzCheck``/``AddReadyzCheck``, ``GetEventRecorderFor``,
``Options.GracefulShutdownTimeout``) with the part of ``pkg/cluster`` a controller reads through
it (the client and the informer cache). A controller's main builds one ``Manager`` from the
process flags (``runtime.flags``), hands it the controllers (``add``), and calls ``start``:

- ``start`` serves ``/metrics`` and the probes for the whole process, then runs the runnables:
  at once, only while leading (``--leader-elect``), or on every replica with the objects split
  between them (``--sharding``, ``runtime.sharding``);
- ``run_runnables`` is that run without endpoints or election: the informers (the cache), the
  event recorders, the runnables, until the stop; then the drain, the Event flush and the
  Lease release, within the one budget (``runtime.shutdown.ShutdownBudget``);
- ``run_process`` is a whole ``main`` once the flags are parsed: logging, the client, the
  start-up checks, the signal handlers, and ``start`` on a thread, so that the main thread
  stays free to run the signal handlers and to end the process if the shutdown overruns.

What a controller asks of it: informer factories with the process's cache settings
(``new_informer_factory``), its informers scoped to this replica (``informer``), the sharding
gate (``gate``), a rate-limited queue and reconcile metrics counted where ``/metrics`` reads
(``new_queue``, ``reconcile_metrics``), an Event recorder (``event_recorder``); and, for
controllers written the kubebuilder way (``runtime.builder``), the cache, the cached Client and
the REST mapper (``get_cache``, ``get_client``, ``get_rest_mapper``).

Deliberate differences from controller-runtime:

- the informers start when the runnables do, i.e. once leading: controller-runtime starts its
  cache before the election, so a standby lists and watches everything for nothing;
- a runnable is an object with ``start(stop, budget)``, the Go ``Start(ctx)`` with the shutdown
  budget beside the stop (a Python thread cannot be cancelled, so each runnable keeps to it);
- a lost lease ends the process (exit 1), as there; so does a runnable that returns on its own
  while the process is not stopping, so that a standby takes over.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import signal
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from client import headers
from client.config import ConfigError, load_rest_config
from client.errors import APIError, TransportError
from client.rest import RESTClient
from informer.factory import SharedInformerFactory
from informer.listwatch import TweakListOptionsFunc
from informer.shared_informer import SharedIndexInformer, wait_for_cache_sync
from informer.transforms import (
    chain_transforms,
    transform_intern_strings,
    transform_strip_managed_fields,
)
from runtime.cache import Cache
from runtime.certwatcher import CertificateError
from runtime.client import Client
from runtime.log import configure_logging
from runtime.options import Options
from runtime.restmapper import RESTMapper
from runtime.sharding.assignment import bucket_of
from runtime.sharding.gate import EVERY_OBJECT, Gate
from runtime.shutdown import EXIT_MARGIN, ShutdownBudget
from tools.record import EventRecorder
from workqueue import MetricsProvider, NoopMetricsProvider, RateLimiter, RateLimitingQueue

if TYPE_CHECKING:
    # Imported where they are used, not here: what a mode or an endpoint needs is loaded only
    # when it is turned on (prometheus_client, with the http.server it brings, is about 1.3 MiB
    # after the controller's other imports: docs/benchmarks.md).
    from prometheus_client import CollectorRegistry

    from informer.metrics import InformerMetricsProvider
    from runtime.healthz import Check, Checks, EndpointServer
    from runtime.metrics.reconcile import ReconcileMetrics
    from runtime.metrics.server import MetricsServer
    from runtime.sharding.sharder import Sharder
    from runtime.webhook.server import WebhookServer
    from tools.leaderelection import LeaderElector

__all__ = [
    "GVR",
    "USER_AGENT",
    "POD_NAMESPACE_FILE",
    "RELEASE_MIN_TIMEOUT",
    "STUCK_SYNC_SECONDS",
    "Manager",
    "Metrics",
    "Runnable",
    "StartupError",
    "check_api",
    "connect",
    "default_identity",
    "identity_of",
    "install_signal_handlers",
    "pod_namespace",
    "run_process",
    "tune_gc",
    "user_agent",
]

log = logging.getLogger("runtime.manager")

# (group, version, resource): what a controller reads and writes
GVR = tuple[str, str, str]

# this project's distribution and version: the default User-Agent, before " (<identity>)"
USER_AGENT = "sample-controller-py/0.1.0"

POD_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

# A reconcile running this long is wedged (a hung connection, a deadlock): /healthz fails so
# the kubelet restarts the pod. Far above any sane sync, which takes milliseconds.
STUCK_SYNC_SECONDS = 300.0

# The Lease release is tried even when the budget is spent (a drain of 0 s): a standby then
# takes over at once instead of after a lease duration. It stays inside EXIT_MARGIN.
RELEASE_MIN_TIMEOUT = 0.25


class StartupError(Exception):
    """The process cannot start; the message is the one line the user sees (no client-go
    twin: sample-controller logs the error and exits 1)."""


@runtime_checkable
class Runnable(Protocol):
    """What the manager runs (controller-runtime ``manager.Runnable``'s ``Start(ctx)``): run
    until ``stop`` is set, then stop within ``budget``. A runnable that also has
    ``has_synced()`` is waited for by ``/readyz``, and one with ``workers`` (``Workers``) is
    watched by ``/healthz``."""

    def start(self, stop: threading.Event, budget: ShutdownBudget) -> None: ...


@runtime_checkable
class _Syncing(Protocol):
    def has_synced(self) -> bool: ...


@runtime_checkable
class _WorkerPool(Protocol):
    """What /healthz reads of a runnable's ``workers`` (``runtime.worker.Workers``)."""

    def started(self) -> int: ...

    def alive(self) -> int: ...

    def longest_running_sync(self) -> float: ...


# -- start-up ------------------------------------------------------------------------------------


def identity_of(options: Options) -> str:
    """This replica's name: ``--identity``, else the hostname (a pod's name), lowercased so
    that it can name a Lease, and a suffix random to this process (``default_identity``)."""
    return options.identity or default_identity()


@functools.cache
def default_identity() -> str:
    """``<hostname>-<8 hex digits>``, the same for the whole process. The suffix keeps two
    replicas on one machine (or two pods given one hostname) apart, as leader election's
    ``<hostname>_<uuid>`` does: sharing a name, they would share one member Lease and both act
    on every bucket."""
    return f"{socket.gethostname().lower()}-{uuid.uuid4().hex[:8]}"


def user_agent(options: Options, agent: str = USER_AGENT) -> str:
    """``<agent>/<version> (<identity>)``: a server's audit log tells the replicas apart by it
    (client-go's default names the binary, OS and commit; ours names the replica)."""
    return f"{agent} ({identity_of(options)})"


def connect(options: Options, agent: str = USER_AGENT) -> tuple[RESTClient, str]:
    """The process's client and the server's address, from ``--kubeconfig``/``--master`` or
    in-cluster config (sample-controller: ``clientcmd.BuildConfigFromFlags``).

    Raises ``ConfigError`` when no configuration can be loaded.
    """
    cfg = load_rest_config(options.kubeconfig, options.master)
    rest = RESTClient(
        cfg,
        qps=options.kube_api_qps,
        burst=options.kube_api_burst,
        user_agent=user_agent(options, agent),
    )
    return rest, str(cfg.host)


def check_api(rest: RESTClient, host: str, gvr: GVR, hint: str = "") -> None:
    """Fail fast with one clear line when the server is unreachable or does not serve ``gvr``
    (``hint``: how to install it, e.g. the CRD's file)."""
    group, version, resource = gvr
    where = f"/apis/{group}/{version}" if group else f"/api/{version}"
    install = f": {hint}" if hint else ""
    try:
        found = rest.request("GET", where, timeout=15)
    except TransportError as err:
        raise StartupError(f"cannot reach the API server at {host}: {err}") from err
    except APIError as err:
        if err.code == 404:
            raise StartupError(
                f"the CRD {resource}.{group} is not installed on {host}{install}"
            ) from err
        if err.code in (401, 403):
            raise StartupError(
                f"the API server at {host} refused our credentials: {err.code} {err.reason}"
            ) from err
        raise StartupError(f"discovery of {group}/{version} failed on {host}: {err}") from err
    names = {r.get("name") for r in found.get("resources") or []}
    if resource not in names:
        raise StartupError(
            f"the API server at {host} serves {group}/{version} but not {resource}{install}"
        )


def tune_gc() -> None:
    """Collect young objects less often: a controller decodes many long-lived JSON objects.

    CPython starts a generation-0 collection every 700 net container allocations, and every
    tenth of those scans generation 1, so decoding a 3 KB Deployment into the cache triggers
    collections that keep re-walking the young objects just made; the informer benchmark
    measured json.loads of a cached Deployment at 60-95 us with the default thresholds
    against ~20 us without. Nothing here makes reference cycles in bulk, so larger
    thresholds cost little memory. (A known server technique; Instagram's gc tuning is the
    usual reference.)
    """
    gc.set_threshold(100_000, 50, 100)


def install_signal_handlers(stop: threading.Event, budget: ShutdownBudget | None = None) -> None:
    """First SIGTERM/SIGINT: graceful stop. Second: exit 1 at once (SetupSignalHandler).

    The first signal also starts the shutdown ``budget``: it runs from the signal, not from
    when each part of the process notices the stop.
    """

    def handler(signum: int, _frame: Any) -> None:
        if stop.is_set():
            log.warning("second signal, exiting immediately", extra={"signal": signum})
            os._exit(1)
        if budget is not None:
            budget.begin()
        log.info("signal received, shutting down gracefully", extra={"signal": signum})
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def pod_namespace(environ: Mapping[str, str] | None = None, path: str = POD_NAMESPACE_FILE) -> str:
    """The namespace this pod runs in (downward API env, then the ServiceAccount file)."""
    environ = os.environ if environ is None else environ
    if environ.get("POD_NAMESPACE"):
        return environ["POD_NAMESPACE"]
    try:
        with open(path) as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


# -- metrics -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metrics:
    """What the process counts into: the informers', the workqueues' and the reconciles'
    metrics, all in one registry, or nowhere.

    client-go's default is the nowhere: its workqueue and informer metrics are no-ops until a
    provider is registered, and sample-controller registers none. Here they are collected when
    something serves them (a registry is given: /metrics is on, or a test reads them), and
    otherwise not even imported: no counter is updated on the hot path, no thread reports
    unfinished work, and prometheus_client stays out of the process. (``--sharding`` is the
    exception: its sharder keeps its metrics in the global registry either way.)
    """

    registry: CollectorRegistry | None = None
    informers: InformerMetricsProvider | None = None
    queue: MetricsProvider = NoopMetricsProvider()

    @classmethod
    def into(cls, registry: CollectorRegistry | None) -> Metrics:
        """The metrics registered in ``registry``; None: none at all."""
        if registry is None:
            return cls()
        from prometheus_client import REGISTRY

        from informer.metrics import InformerMetricsProvider, default_metrics_provider
        from workqueue import PrometheusMetricsProvider

        return cls(
            registry,
            # the global registry's families are made once per process
            default_metrics_provider()
            if registry is REGISTRY
            else InformerMetricsProvider(registry),
            PrometheusMetricsProvider(registry),
        )

    def reconcile(self, controller: str) -> ReconcileMetrics | None:
        """The reconcile metrics of one controller (None: not collected)."""
        if self.registry is None:
            return None
        from runtime.metrics.reconcile import ReconcileMetrics

        return ReconcileMetrics(controller, self.registry)


def _default_registry(options: Options) -> CollectorRegistry | None:
    """prometheus_client's global registry when ``--metrics-bind-address`` serves it, else
    None: nothing is collected that nobody reads."""
    if options.metrics_bind_address is None:
        return None
    from prometheus_client import REGISTRY

    return REGISTRY


@contextlib.contextmanager
def _naming_the_flag(flag: str, address: tuple[str, int]) -> Iterator[None]:
    """An address that cannot be bound names its flag and address, so that the one line the
    user sees says what to change (``--metrics-bind-address: cannot listen on 0.0.0.0:8080:
    Address already in use``), as kubesim's ``--listen`` does."""
    try:
        yield
    except OSError as err:
        host, port = address
        where = f"[{host}]:{port}" if ":" in host else f"{host or '0.0.0.0'}:{port}"
        raise OSError(f"{flag}: cannot listen on {where}: {err.strerror or err}") from err


class _Idle:
    """A manager with no runnable still runs until stopped (its endpoints serve)."""

    def start(self, stop: threading.Event, budget: ShutdownBudget) -> None:
        stop.wait()


def _relay_stop(stop: threading.Event, leading_stop: threading.Event) -> None:
    """Set ``leading_stop`` once ``stop`` is set (a daemon: ends with the process)."""
    stop.wait()
    leading_stop.set()


# -- the manager ---------------------------------------------------------------------------------


class Manager:
    """Runs runnables with the process around them (controller-runtime's ``manager.Manager``;
    ``start`` is its ``Start``). Build it, build the controllers on it, ``add`` them, ``start``.

    One ``Manager`` serves one ``start``. The probe and metrics servers run for the whole
    process, the runnables only while leading (with ``--leader-elect``).
    """

    def __init__(
        self,
        options: Options,
        rest: RESTClient,
        registry: CollectorRegistry | None = None,
        budget: ShutdownBudget | None = None,
    ) -> None:
        self.options = options
        # the process's client (its QPS, its user agent)
        self.rest = rest
        # Where /metrics reads and what the controllers count into: by default the global
        # registry when /metrics is served, and none when it is not (``Metrics``); code that
        # embeds the manager and serves a registry itself passes it here.
        self.registry = registry if registry is not None else _default_registry(options)
        # The one deadline of the graceful shutdown: drain, Event flush, Lease release.
        self.budget = (
            budget if budget is not None else ShutdownBudget(options.graceful_shutdown_timeout)
        )
        # with --sharding: membership, assignment and handovers (runtime.sharding)
        self.sharder: Sharder | None = self._new_sharder() if options.sharding else None
        # what run_runnables starts, in order: informer factories, recorders, runnables
        self._factories: list[SharedInformerFactory] = []
        self._recorders: list[EventRecorder] = []
        self._runnables: list[Runnable] = []
        # sharding: the informers to relist on a re-scope, and the enqueue of objects taken over
        self._scoped_informers: list[SharedIndexInformer] = []
        self._takeovers: list[tuple[SharedIndexInformer, Callable[[Any], None]]] = []
        # checks added by the controllers (AddHealthzCheck / AddReadyzCheck)
        self._healthz: list[tuple[str, Check]] = []
        self._readyz: list[tuple[str, Check]] = []
        # set once run_runnables has started the runnables (what the probes look at)
        self.running = threading.Event()
        # with --leader-elect, once start() built it
        self.elector: LeaderElector | None = None
        # The process-wide stop event (SIGTERM), given to start(): set = draining. Readiness
        # fails from that moment, not only once the drain is over, so no new traffic is counted
        # on a pod that is going away.
        self.stop: threading.Event | None = None
        # set once the work has ended
        self.shutting_down = threading.Event()
        # what Builder-made controllers read and write through, made on first use
        self._cache: Cache | None = None
        self._client: Client | None = None
        self._mapper: RESTMapper | None = None

    # -- what controllers are built from ------------------------------------------------------

    @functools.cached_property
    def webhook_server(self) -> WebhookServer | None:
        """The admission webhook server of ``--webhook-bind-address`` (``GetWebhookServer``),
        None when off: controllers ``register`` their webhooks on it, and ``start`` serves it
        with the endpoints, on every replica (``runtime.webhook.server``)."""
        if self.options.webhook_bind_address is None:
            return None
        from runtime.webhook.options import new_webhook_server

        return new_webhook_server(self.options, self.rest, self.registry)

    @functools.cached_property
    def metrics(self) -> Metrics:
        """What the controllers count into (``Metrics``), made when the first one is built: a
        manager that only serves endpoints registers no families."""
        return Metrics.into(self.registry)

    def new_informer_factory(
        self, name: str, tweak_list_options: TweakListOptionsFunc | None = None
    ) -> SharedInformerFactory:
        """A shared informer factory with the process's cache settings (``--namespace``,
        ``--resync-period``, ``--fifo``, ``--watch-list``, ``--strip-managed-fields``, the
        informer metrics), started by ``run_runnables`` (controller-runtime's cache)."""
        options = self.options
        # Strip managedFields (unless told not to), then share repeated strings: together they
        # halve what the cache holds (docs/benchmarks.md, Cache memory).
        transform = (
            chain_transforms(transform_strip_managed_fields, transform_intern_strings)
            if options.strip_managed_fields
            else transform_intern_strings
        )
        factory = SharedInformerFactory(
            self.rest,
            options.resync_period,
            namespace=options.namespace or None,
            tweak_list_options=tweak_list_options,
            fifo=options.fifo,
            name=name,
            metrics=self.metrics.informers,
            transform=transform,
            # Sharded, the informers list and watch (no WatchList): a re-scope is one list,
            # whose answer says whether the server applied the shardSelector.
            use_watch_list=False if self.sharder is not None else options.watch_list,
        )
        self._factories.append(factory)
        return factory

    def informer(
        self, factory: SharedInformerFactory, gvr: GVR, primary: bool = False
    ) -> SharedIndexInformer:
        """``factory``'s informer of ``gvr``, scoped to this replica's buckets when sharded:
        ``primary`` for the controller's own kind (the Foos; a Builder's ``for_``), by
        ``shardSelector``; otherwise an owned kind (the Deployments), by bucket label."""
        sharder = self.sharder
        if sharder is None:
            return factory.for_resource(*gvr)
        wrap = sharder.wrap_primary if primary else sharder.wrap_owned
        informer = factory.for_resource(*gvr, wrap=wrap)
        self._scoped_informers.append(informer)
        return informer

    def on_buckets_taken(
        self, informer: SharedIndexInformer, enqueue: Callable[[Any], None]
    ) -> None:
        """Sharded: when this replica takes buckets over, hand every cached object of
        ``informer`` in them to ``enqueue`` (their events may have come and gone while another
        replica acted on them). Without sharding, nothing."""
        self._takeovers.append((informer, enqueue))

    @property
    def gate(self) -> Gate:
        """Which objects this replica may sync now (``runtime.sharding.gate``)."""
        return self.sharder.gate if self.sharder is not None else EVERY_OBJECT

    def new_queue(self, name: str, rate_limiter: RateLimiter) -> RateLimitingQueue:
        """A rate-limited queue named ``name``, counted where ``/metrics`` reads."""
        return RateLimitingQueue(rate_limiter, name=name, metrics_provider=self.metrics.queue)

    def reconcile_metrics(self, controller: str) -> ReconcileMetrics | None:
        """``controller_runtime_reconcile_*`` of one controller, or None when not collected."""
        return self.metrics.reconcile(controller)

    def event_recorder(self, component: str) -> EventRecorder:
        """An Event recorder writing as ``component`` (``GetEventRecorderFor``), started with
        the runnables and flushed within the shutdown budget."""
        recorder = EventRecorder(self.rest, component=component)
        self._recorders.append(recorder)
        return recorder

    def get_cache(self) -> Cache:
        """The informer cache of the Builder's controllers and of the Client (``GetCache``),
        made on first use and run with the runnables: first used in ``setup``, before the start
        (a RuntimeError after it; controller-runtime makes it in ``manager.New``)."""
        if self._cache is None:
            if self.running.is_set():
                raise RuntimeError("get_cache() after the manager started: call it in setup")
            self._cache = Cache(self)
            self.add(self._cache)
        return self._cache

    def get_client(self) -> Client:
        """The client that reads from the cache and writes through REST (``GetClient``)."""
        if self._client is None:
            self._client = Client(self.rest, self.get_cache(), self.gate)
        return self._client

    def get_rest_mapper(self) -> RESTMapper:
        """Resources to kinds, from discovery (``GetRESTMapper``)."""
        if self._mapper is None:
            self._mapper = RESTMapper(self.rest)
        return self._mapper

    def add(self, runnable: Runnable) -> None:
        """Run ``runnable`` with the others (``mgr.Add``)."""
        self._runnables.append(runnable)

    def add_healthz_check(self, name: str, check: Check) -> None:
        """One more liveness check: None when healthy, else why not (``AddHealthzCheck``)."""
        self._healthz.append((name, check))

    def add_readyz_check(self, name: str, check: Check) -> None:
        """One more readiness check (``AddReadyzCheck``)."""
        self._readyz.append((name, check))

    def _new_sharder(self) -> Sharder:
        """The sharder of ``--sharding``: its Lease in the leader election namespace, on leader
        election's timings. Its metrics go to the registry (None: prometheus_client's global
        one)."""
        from runtime.sharding.sharder import Sharder

        options = self.options
        return Sharder(
            self.rest,
            options.leader_elect_namespace or pod_namespace(),
            identity_of(options),
            options.sharding_ring,
            options.sharding_buckets,
            lease_duration=options.leader_elect_lease_duration,
            renew_deadline=options.leader_elect_renew_deadline,
            retry_period=options.leader_elect_retry_period,
            registry=self.registry,
        )

    # -- probes -------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """Every runnable that has a cache has synced it."""
        return all(r.has_synced() for r in self._runnables if isinstance(r, _Syncing))

    def stopping(self) -> bool:
        return self.shutting_down.is_set() or (self.stop is not None and self.stop.is_set())

    def healthz_checks(self) -> Checks:
        from runtime.healthz import Checks

        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("workers", self._workers_check)
        for name, check in self._healthz:
            checks.add(name, check)
        return checks

    def readyz_checks(self) -> Checks:
        from runtime.healthz import Checks

        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("shutdown", lambda: "shutting down" if self.stopping() else None)
        checks.add("informer-sync", self._synced_check)
        if self.sharder is not None:
            sharder = self.sharder
            # ready once the first assignment is known, while the members agree on the bucket
            # count, and while our Lease is renewed (runtime.sharding.sharder)
            checks.add("sharding", sharder.readiness)
        webhooks = self.webhook_server
        if webhooks is not None:
            checks.add("webhook", webhooks.started_check)
        for name, check in self._readyz:
            checks.add(name, check)
        return checks

    def _workers_check(self) -> str | None:
        if not self.running.is_set() or self.stopping():
            return None  # not started (standby) or stopping on purpose
        for runnable in self._runnables:
            workers = getattr(runnable, "workers", None)
            if not isinstance(workers, _WorkerPool):
                continue
            started, alive = workers.started(), workers.alive()
            if alive < started:
                return f"{started - alive} of {started} worker threads have died"
            stuck = workers.longest_running_sync()
            if stuck > STUCK_SYNC_SECONDS:
                return f"a reconcile has been running for {stuck:.0f}s"
        return None

    def _synced_check(self) -> str | None:
        if not self.running.is_set():
            # A standby replica is ready: it is healthy and waiting for the lease. Were it not,
            # a rolling update would wait forever for the new pods (which stand by while the old
            # leader holds the lease) to become ready.
            if (
                self.options.leader_elect
                and self.elector is not None
                and not self.elector.is_leader()
            ):
                return None
            return "controller not started"
        if not self.has_synced():
            return "informer caches not synced"
        # Synced once is not up to date now: a resource no longer served (its CRD deleted)
        # leaves the cache as it was, and the process must not be counted as up until a list
        # brings it back (informer.reflector: last_sync_error; no client-go twin).
        for factory in self._factories:
            for gvr, informer in sorted(factory.informers().items(), key=lambda kv: str(kv[0])):
                err = informer.last_sync_error()
                if err is not None:
                    return f"informer {gvr} cannot sync: {err}"
        return None

    # -- running ------------------------------------------------------------------------------

    def start_endpoints(self) -> list[EndpointServer | MetricsServer | WebhookServer]:
        """Bind and start /metrics, the webhooks and the probes (those not turned off); OSError
        if one cannot bind, CertificateError if a certificate cannot be served (the servers
        already started are stopped again)."""
        servers: list[EndpointServer | MetricsServer | WebhookServer] = []
        try:
            # Before the probes (whose /readyz asks whether it serves), and before any
            # election: every replica answers the API server (runtime.webhook.server).
            webhooks = self.webhook_server
            if webhooks is not None and self.options.webhook_bind_address is not None:
                address = self.options.webhook_bind_address
                with _naming_the_flag("--webhook-bind-address", address):
                    servers.append(webhooks.start())
            # HTTPS behind a TokenReview and a SubjectAccessReview made with the process's own
            # client, unless --metrics-secure=false (runtime.metrics.server). There is a
            # registry whenever --metrics-bind-address asks for one.
            if self.registry is not None and self.options.metrics_bind_address is not None:
                from runtime.metrics.server import new_metrics_server

                address = self.options.metrics_bind_address
                with _naming_the_flag("--metrics-bind-address", address):
                    metrics = new_metrics_server(self.options, self.rest, self.registry)
                if metrics is not None:
                    servers.append(metrics.start())
            if self.options.health_probe_bind_address is not None:
                from runtime.healthz import EndpointServer

                address = self.options.health_probe_bind_address
                with _naming_the_flag("--health-probe-bind-address", address):
                    server = EndpointServer(address, "health-probes")
                server.add_checks("/healthz", self.healthz_checks())
                server.add_checks("/readyz", self.readyz_checks())
                servers.append(server.start())
        except (OSError, CertificateError):
            for started in servers:
                started.stop()
            raise
        return servers

    def start(self, stop: threading.Event) -> int:
        """Serve the endpoints and run the runnables (while leading) until ``stop`` is set.

        Returns 0 after a clean stop, 1 when the lease was lost (so the pod restarts), when a
        runnable failed, or when an endpoint cannot bind.
        """
        self.stop = stop
        try:
            servers = self.start_endpoints()
        # the port is taken, the address is not ours, or the certificate went bad since the
        # flags were read
        except (OSError, CertificateError) as err:
            log.error("cannot serve endpoints", extra={"error": str(err)})
            return 1
        try:
            if not self.options.leader_elect:
                return self.run_runnables(stop)
            if self.webhook_server is not None and self.webhook_server.paths:
                # A standby answers webhooks too, from its cache: the informers start now, as
                # controller-runtime starts its cache before the election (run_runnables'
                # start of the factories then finds them running).
                for factory in self._factories:
                    factory.start(stop)
            return self._lead_while_elected(stop)
        finally:
            self.shutting_down.set()
            # together: each waits up to its poll interval (0.2 s) for its serving thread
            stoppers = [threading.Thread(target=server.stop, daemon=True) for server in servers]
            for t in stoppers:
                t.start()
            for t in stoppers:
                t.join()

    def run_runnables(self, stop: threading.Event, ready: threading.Event | None = None) -> int:
        """Start the informers, the recorders and the runnables, run them until ``stop`` is
        set, and stop them within the budget; the exit status (0 clean, 1 a runnable failed).

        ``ready`` is set once every runnable's cache has synced.
        """
        budget = self.budget
        sharder = self.sharder
        for recorder in self._recorders:
            recorder.start()
        if sharder is not None:
            sharder.attach(self._scoped_informers, self._enqueue_buckets)
            sharder.start(stop)
            # the informers' first lists are of our buckets only
            sharder.wait_ready(stop)
        for factory in self._factories:
            factory.start(stop)
        failed: list[Runnable] = []
        # Every runnable on a thread of its own but the last, which runs on the caller's (with
        # one controller, as sample-controller's Run runs on main's goroutine).
        *others, last = self._runnables or [_Idle()]
        threads = [
            threading.Thread(
                target=self._run_one,
                args=(runnable, stop, failed),
                name=getattr(runnable, "name", f"runnable-{i}"),
                daemon=True,
            )
            for i, runnable in enumerate(others)
        ]
        for t in threads:
            t.start()
        self.running.set()
        if ready is not None:
            threading.Thread(
                target=self._signal_when_synced, args=(stop, ready), name="ready", daemon=True
            ).start()
        try:
            # Returns once stopped and drained, or on its own (which stops the others too).
            self._run_one(last, stop, failed)
            # the budget runs from the stop; each other runnable drains within it
            budget.begin()
            for t in threads:
                t.join(budget.left())
        finally:
            budget.begin()  # (already begun, unless a runnable failed)
            stop.set()  # stops the informers when the runnables end for any reason
            if sharder is not None:
                # drained: hand every bucket over at once (the others need not wait for expiry)
                sharder.release(
                    timeout=max(RELEASE_MIN_TIMEOUT, budget.left(budget.flush_deadline))
                )
            for recorder in self._recorders:
                if not recorder.shutdown(timeout=budget.left(budget.flush_deadline)):
                    log.warning("some events were not written before exit")
        log.info("controllers stopped")
        return 1 if failed else 0

    def _run_one(self, runnable: Runnable, stop: threading.Event, failed: list[Runnable]) -> None:
        try:
            runnable.start(stop, self.budget)
        except Exception:
            log.exception("a runnable failed", extra={"runnable": type(runnable).__name__})
            failed.append(runnable)
        if not stop.is_set():
            # one ended on its own: the process stops (its work would be left undone)
            log.error("a runnable stopped on its own; shutting down")
            if not failed:
                failed.append(runnable)
            stop.set()

    def _signal_when_synced(self, stop: threading.Event, ready: threading.Event) -> None:
        if wait_for_cache_sync(stop, self):
            ready.set()

    def _enqueue_buckets(self, buckets: frozenset[int]) -> None:
        """Enqueue every cached object of the buckets just taken over."""
        assert self.sharder is not None
        count = self.sharder.bucket_count
        for informer, enqueue in self._takeovers:
            for obj in informer.get_store().list():
                if bucket_of(obj, count) in buckets:
                    enqueue(obj)

    def _lead_while_elected(self, stop: threading.Event) -> int:
        options = self.options
        namespace = options.leader_elect_namespace or pod_namespace()
        identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        result: dict[str, int] = {}

        def lead(leading_stop: threading.Event) -> None:
            # The process stop reaches the runnables at once, also while the elector is in the
            # middle of a renewal (which may take up to the renew deadline): the shutdown
            # budget runs from the signal.
            threading.Thread(
                target=_relay_stop, args=(stop, leading_stop), name="stop-relay", daemon=True
            ).start()
            try:
                result["code"] = self.run_runnables(leading_stop)
            except Exception:
                # reported, then the process exits non-zero
                log.exception("the controllers failed")
                result["code"] = 1
            if not leading_stop.is_set() or (result.get("code") and not stop.is_set()):
                # The work ended while we still lead: holding the lease with nobody working
                # would starve the standby. Stop the process (which releases the lease).
                log.error("the controllers stopped on their own; shutting down")
                result["code"] = result.get("code") or 1
                stop.set()

        from tools.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock

        self.elector = LeaderElector(
            LeaderElectionConfig(
                lock=LeaseLock(self.rest, namespace, options.leader_elect_lease_name, identity),
                lease_duration=options.leader_elect_lease_duration,
                renew_deadline=options.leader_elect_renew_deadline,
                retry_period=options.leader_elect_retry_period,
                # released below, within what is left of the shutdown budget
                release_on_cancel=False,
                on_started_leading=lead,
            ),
            registry=self.registry,
        )
        log.info(
            "leader election on",
            extra={"lease": f"{namespace}/{options.leader_elect_lease_name}", "identity": identity},
        )
        clean = self.elector.run(stop)
        if clean:
            # Hand over at once: the work has returned (drained or abandoned). The release
            # gets what is left of the budget, and at least RELEASE_MIN_TIMEOUT to be tried.
            self.budget.begin()
            self.elector.release(timeout=max(RELEASE_MIN_TIMEOUT, self.budget.left()))
        self.shutting_down.set()
        if not clean:
            # Even during a graceful stop: the work was abandoned, not drained.
            log.error("leader election lost; exiting so that the pod restarts")
            return 1
        return result.get("code", 0)


# -- the process ---------------------------------------------------------------------------------


def run_process(
    options: Options,
    setup: Callable[[Manager], object],
    requires: Iterable[tuple[GVR, str]] = (),
    agent: str = USER_AGENT,
) -> int:
    """A controller's ``main`` once its flags are parsed; returns the exit status.

    ``setup`` builds the controllers on the manager and adds them. ``requires`` lists the
    resources the process cannot work without, each with how to install it (a hint for the
    user): a start-up problem (no kubeconfig, server unreachable, a CRD missing) is logged
    once, as one line, and ends the process with status 1 before anything is started.
    """
    configure_logging(options.log_format, options.verbosity)
    tune_gc()
    headers.install()  # response headers without the email parser (client/headers.py)
    try:
        rest, host = connect(options, agent)
        for gvr, hint in requires:
            check_api(rest, host, gvr, hint)
    except (ConfigError, StartupError, ValueError) as err:
        log.error("cannot start", extra={"error": str(err)})
        return 1
    stop = threading.Event()
    budget = ShutdownBudget(options.graceful_shutdown_timeout)
    install_signal_handlers(stop, budget)
    manager = Manager(options, rest, budget=budget)
    setup(manager)
    # The work runs in a thread; the main thread only waits, in short slices, so that it stays
    # responsive to signals (Python runs signal handlers on the main thread only). Once the
    # shutdown has begun it waits until the budget's deadline and half the exit margin at
    # most: whatever still runs then (a request to a hung server) is abandoned with the
    # process, whose threads are all daemons.
    result: dict[str, int] = {}
    runner = threading.Thread(
        target=lambda: result.update(code=manager.start(stop)), name="manager", daemon=True
    )
    runner.start()
    while runner.is_alive():
        if budget.started:
            left = budget.left(budget.deadline + EXIT_MARGIN / 2)
            if left <= 0:
                break
            runner.join(min(0.5, left))
        else:
            runner.join(0.5)
    if runner.is_alive():
        log.error(
            "the graceful shutdown overran its budget; exiting now",
            extra={"timeout": options.graceful_shutdown_timeout},
        )
        result.setdefault("code", 1)
    code = result.get("code", 1)
    log.info("exiting", extra={"code": code})
    return code
