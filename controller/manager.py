"""The process around the Foo controller: start-up checks, endpoints, signals, leader election.

controller-runtime twin: the manager (``manager.New`` + ``mgr.Start``): it serves ``/metrics``
and the health probes, runs the controller (only while leading, with ``--leader-elect``), and
stops it gracefully on SIGTERM; sample-controller's main.go does the same by hand. Here:

- ``run_process`` is all of ``sample-controller`` after the flags are parsed: logging, client,
  ``check_api``, signal handlers, then ``Manager.start`` on a thread, so the main thread stays
  free to run the signal handlers (Python runs them on the main thread only), and to end the
  process if the graceful shutdown overruns its budget;
- ``Manager`` holds what the probes look at and runs the endpoints and leader election;
- ``run`` builds one controller with its informers and runs it until stopped: once per process,
  or once per leadership term. With ``--sharding`` every replica works, each on the buckets
  its own Lease claims (``controller.sharding``): ``run`` then also builds the sharder, scopes
  the informers to its buckets, and releases the Lease once the controller has drained.

A graceful shutdown keeps to one budget, ``--graceful-shutdown-timeout``, shared by the drain,
the Event flush and the Lease release (``controller.shutdown.ShutdownBudget``); the process
exits within it plus ``EXIT_MARGIN``.

Tests and the demo use these directly: ``Manager(options, rest, registry).start(stop)`` is the
whole process without signals, and ``run`` the controller alone.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from client import headers
from client.config import ConfigError, load_client_configuration
from client.errors import APIError, TransportError
from client.official import LightApiClient
from client.rest import RESTClient
from controller.certificates import CertificateError
from controller.foo_controller import CONTROLLER_AGENT_NAME, DEPLOYMENT_GVR, FOO_GVR, Controller
from controller.logs import configure_logging
from controller.options import Options
from controller.sharding.assignment import bucket_of
from controller.sharding.gate import EVERY_FOO
from controller.shutdown import EXIT_MARGIN, ShutdownBudget
from controller.trace import install_trace
from informer.factory import SharedInformerFactory
from informer.shared_informer import SharedIndexInformer, wait_for_cache_sync
from informer.transforms import (
    chain_transforms,
    transform_intern_strings,
    transform_strip_managed_fields,
)
from tools.record import EventRecorder
from workqueue import (
    MetricsProvider,
    NoopMetricsProvider,
    RateLimitingQueue,
    sample_controller_rate_limiter,
)

if TYPE_CHECKING:
    # Imported where they are used, not here: what a mode or an endpoint needs is loaded only
    # when it is turned on (prometheus_client, with the http.server it brings, is about 1.3 MiB
    # after the controller's other imports: docs/benchmarks.md).
    from prometheus_client import CollectorRegistry

    from controller.health import Checks, EndpointServer
    from controller.metrics import ReconcileMetrics
    from controller.metricsserver import MetricsServer
    from controller.sharding.sharder import Sharder
    from informer.metrics import InformerMetricsProvider
    from tools.leaderelection import LeaderElector

__all__ = [
    "POD_NAMESPACE_FILE",
    "RELEASE_MIN_TIMEOUT",
    "STUCK_SYNC_SECONDS",
    "USER_AGENT",
    "Components",
    "identity_of",
    "user_agent",
    "Manager",
    "StartupError",
    "check_api",
    "connect",
    "install_signal_handlers",
    "pod_namespace",
    "run",
    "run_process",
    "tune_gc",
]

log = logging.getLogger("controller")

USER_AGENT = "sample-controller-py/0.1.0"

POD_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

# A reconcile running this long is wedged (a hung connection, a deadlock): /healthz fails so
# the kubelet restarts the pod. Far above any sane sync, which takes milliseconds.
STUCK_SYNC_SECONDS = 300.0

# The Lease release is tried even when the budget is spent (a drain of 0 s): a standby then
# takes over at once instead of after a lease duration. It stays inside EXIT_MARGIN.
RELEASE_MIN_TIMEOUT = 0.25


class StartupError(Exception):
    """The controller cannot start; the message is the one line the user sees (no client-go
    twin: sample-controller logs the error and exits 1)."""


# -- start-up ------------------------------------------------------------------------------------


def identity_of(options: Options) -> str:
    """This replica's name: ``--identity``, else the hostname (a pod's name), lowercased so
    that it can name a Lease."""
    return options.identity or socket.gethostname().lower()


def user_agent(options: Options) -> str:
    """``sample-controller-py/<version> (<identity>)``: a server's audit log tells the replicas
    apart by it (client-go's default names the binary, OS and commit; ours names the replica)."""
    return f"{USER_AGENT} ({identity_of(options)})"


def connect(options: Options) -> tuple[RESTClient, str]:
    """The controller's client and the server's address, from ``--kubeconfig``/``--master``
    or in-cluster config (sample-controller: ``clientcmd.BuildConfigFromFlags``).

    Raises ``ConfigError`` when no configuration can be loaded.
    """
    cfg = load_client_configuration(options.kubeconfig, options.master)
    rest = RESTClient(
        LightApiClient(cfg),
        qps=options.kube_api_qps,
        burst=options.kube_api_burst,
        user_agent=user_agent(options),
    )
    return rest, str(cfg.host)


def check_api(rest: RESTClient, host: str) -> None:
    """Fail fast with one clear line when the server is unreachable or does not serve Foos."""
    group, version, resource = FOO_GVR
    try:
        found = rest.request("GET", f"/apis/{group}/{version}", timeout=15)
    except TransportError as err:
        raise StartupError(f"cannot reach the API server at {host}: {err}") from err
    except APIError as err:
        if err.code == 404:
            raise StartupError(
                f"the Foo CRD (foos.{group}) is not installed on {host}: "
                f"apply crds/foo-crd.yaml (make install-crd)"
            ) from err
        if err.code in (401, 403):
            raise StartupError(
                f"the API server at {host} refused our credentials: {err.code} {err.reason}"
            ) from err
        raise StartupError(f"discovery of {group}/{version} failed on {host}: {err}") from err
    names = {r.get("name") for r in found.get("resources") or []}
    if resource not in names:
        raise StartupError(
            f"the API server at {host} serves {group}/{version} but not "
            f"{resource}: is crds/foo-crd.yaml applied?"
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


# -- one controller ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Components:
    """What ``run`` built for one term: the two shared informers and the controller (no
    client-go twin: controller-runtime's manager keeps its cache and controllers the same way).
    """

    foo_informer: SharedIndexInformer
    deployment_informer: SharedIndexInformer
    controller: Controller
    # with --sharding: membership, assignment and handovers (controller.sharding)
    sharder: Sharder | None = None


@dataclass(frozen=True)
class Metrics:
    """What one run of the controller counts into: the informers', the workqueue's and the
    reconciles' metrics, all in one registry, or nowhere.

    client-go's default is the nowhere: its workqueue and informer metrics are no-ops until a
    provider is registered, and sample-controller registers none. Here they are collected when
    something serves them (a registry is given: /metrics is on, or a test reads them), and
    otherwise not even imported: no counter is updated on the hot path, no thread reports
    unfinished work, and prometheus_client stays out of the process. (``--sharding`` is the
    exception: its sharder keeps its metrics in the global registry either way, ``new_sharder``.)
    """

    informers: InformerMetricsProvider | None = None
    queue: MetricsProvider = NoopMetricsProvider()
    reconcile: ReconcileMetrics | None = None

    @classmethod
    def into(cls, registry: CollectorRegistry | None) -> Metrics:
        """The metrics registered in ``registry``; None: none at all."""
        if registry is None:
            return cls()
        from prometheus_client import REGISTRY

        from controller.metrics import ReconcileMetrics
        from informer.metrics import InformerMetricsProvider, default_metrics_provider
        from workqueue import PrometheusMetricsProvider

        return cls(
            # the global registry's families are made once per process (a new leadership term
            # makes a new controller, whose informers must not register them twice)
            default_metrics_provider()
            if registry is REGISTRY
            else InformerMetricsProvider(registry),
            PrometheusMetricsProvider(registry),
            ReconcileMetrics("foo", registry),
        )


def _default_registry(options: Options) -> CollectorRegistry | None:
    """prometheus_client's global registry when ``--metrics-bind-address`` serves it, else
    None: nothing is collected that nobody reads."""
    if options.metrics_bind_address is None:
        return None
    from prometheus_client import REGISTRY

    return REGISTRY


def run(
    options: Options,
    rest: RESTClient,
    stop: threading.Event,
    registry: CollectorRegistry | None = None,
    ready: threading.Event | None = None,
    on_start: Callable[[Components], None] | None = None,
    budget: ShutdownBudget | None = None,
) -> int:
    """Run the controller until ``stop`` is set; return the exit status.

    Kept apart from the manager so tests can run a whole controller in a thread with their own
    stop event and metrics registry (None: no metrics are collected, ``Metrics``). ``ready`` is
    set once the caches have synced; ``on_start`` receives the shared informers and the
    controller before anything starts (the manager's probes look at them; the demo taps them
    to narrate what happens). ``budget`` bounds the shutdown (default:
    ``--graceful-shutdown-timeout`` from when the stop is noticed): the drain ends by its drain
    deadline and the Event flush by its flush deadline.
    """
    if budget is None:
        budget = ShutdownBudget(options.graceful_shutdown_timeout)
    metrics = Metrics.into(registry)
    namespace = options.namespace or None
    foo_selector = options.foo_selector
    sharder = new_sharder(options, rest, registry) if options.sharding else None
    # Sharded, the two informers list and watch (no WatchList): a re-scope is one list, whose
    # answer says whether the server applied the shardSelector (controller.sharding.scope).
    watch_list = False if sharder is not None else options.watch_list

    def only_selected_foos(list_options: dict[str, Any]) -> None:
        if foo_selector:
            list_options["labelSelector"] = foo_selector

    # Two factories, as sample-controller has: the Foo selector (sharding) must narrow the Foo
    # informer only; Deployments of Foos outside the shard are ignored by handle_object.
    # Strip managedFields (unless told not to), then share repeated strings: together they
    # halve what the cache holds (docs/benchmarks.md, Cache memory).
    transform = (
        chain_transforms(transform_strip_managed_fields, transform_intern_strings)
        if options.strip_managed_fields
        else transform_intern_strings
    )
    kube_factory = SharedInformerFactory(
        rest,
        options.resync_period,
        namespace=namespace,
        fifo=options.fifo,
        name="kube",
        metrics=metrics.informers,
        transform=transform,
        use_watch_list=watch_list,
    )
    foo_factory = SharedInformerFactory(
        rest,
        options.resync_period,
        namespace=namespace,
        tweak_list_options=only_selected_foos,
        fifo=options.fifo,
        name="samplecontroller",
        metrics=metrics.informers,
        transform=transform,
        use_watch_list=watch_list,
    )
    if sharder is None:
        deployment_informer = kube_factory.for_resource(*DEPLOYMENT_GVR)
        foo_informer = foo_factory.for_resource(*FOO_GVR)
    else:
        # each replica reads its buckets only (controller.sharding.scope)
        deployment_informer = kube_factory.for_resource(
            *DEPLOYMENT_GVR, wrap=sharder.wrap_deployments
        )
        foo_informer = foo_factory.for_resource(*FOO_GVR, wrap=sharder.wrap_foos)
    if options.trace:  # before the controller's handlers: the trace's listener comes first
        install_trace(foo_informer, "Foo")
        install_trace(deployment_informer, "Deployment")

    recorder = EventRecorder(rest, component=CONTROLLER_AGENT_NAME)
    queue = RateLimitingQueue(
        sample_controller_rate_limiter(),
        name="foo",
        metrics_provider=metrics.queue,
    )
    controller = Controller(
        rest,
        foo_informer,
        deployment_informer,
        recorder,
        queue=queue,
        metrics=metrics.reconcile,
        gate=sharder.gate if sharder is not None else EVERY_FOO,
    )

    if on_start is not None:
        on_start(Components(foo_informer, deployment_informer, controller, sharder))
    recorder.start()
    if sharder is not None:
        sharder.attach(
            [foo_informer, deployment_informer], _enqueue_buckets(foo_informer, controller, sharder)
        )
        sharder.start(stop)
        # the informers' first lists are of our buckets only
        sharder.wait_ready(stop)
    kube_factory.start(stop)
    foo_factory.start(stop)
    if ready is not None:
        threading.Thread(
            target=_signal_when_synced,
            args=(controller, stop, ready),
            name="ready-signal",
            daemon=True,
        ).start()
    try:
        controller.run(options.workers, stop, budget=budget)
    finally:
        budget.begin()  # (already begun, unless the controller failed)
        stop.set()  # stops the informers when run() ends for any reason
        if sharder is not None:
            # drained: hand every bucket over at once (the others need not wait for expiry)
            sharder.release(timeout=max(RELEASE_MIN_TIMEOUT, budget.left(budget.flush_deadline)))
        if not recorder.shutdown(timeout=budget.left(budget.flush_deadline)):
            log.warning("some events were not written before exit")
    log.info("controller stopped")
    return 0


def new_sharder(options: Options, rest: RESTClient, registry: CollectorRegistry | None) -> Sharder:
    """The sharder of ``--sharding``: its Lease in the leader election namespace, on leader
    election's timings. Its metrics go to ``registry`` (None: prometheus_client's global one)."""
    from controller.sharding.sharder import Sharder

    return Sharder(
        rest,
        options.leader_elect_namespace or pod_namespace(),
        identity_of(options),
        options.sharding_ring,
        options.sharding_buckets,
        lease_duration=options.leader_elect_lease_duration,
        renew_deadline=options.leader_elect_renew_deadline,
        retry_period=options.leader_elect_retry_period,
        registry=registry,
    )


def _enqueue_buckets(
    foo_informer: SharedIndexInformer, controller: Controller, sharder: Sharder
) -> Callable[[frozenset[int]], None]:
    """Enqueue every cached Foo of the buckets just taken over (their events may have come
    and been forgotten while another replica still acted on them)."""

    def enqueue(buckets: frozenset[int]) -> None:
        for foo in foo_informer.get_store().list():
            if bucket_of(foo, sharder.bucket_count) in buckets:
                controller.enqueue_foo(foo)

    return enqueue


def _relay_stop(stop: threading.Event, leading_stop: threading.Event) -> None:
    """Set ``leading_stop`` once ``stop`` is set (a daemon: ends with the process)."""
    stop.wait()
    leading_stop.set()


def _signal_when_synced(
    controller: Controller, stop: threading.Event, ready: threading.Event
) -> None:
    if wait_for_cache_sync(stop, controller):
        ready.set()


# -- the manager ---------------------------------------------------------------------------------


class Manager:
    """The process: endpoints, leader election and the controller, and what the probes
    conclude from them (controller-runtime's manager; ``start`` is its ``Start``).

    One ``Manager`` serves one ``start``. The probe servers run for the whole process, while the
    controller (``components``) changes with each leadership term and is None between terms.
    """

    def __init__(
        self,
        options: Options,
        rest: RESTClient,
        registry: CollectorRegistry | None = None,
        budget: ShutdownBudget | None = None,
    ) -> None:
        self.options = options
        # the controller's client (its QPS, its user agent)
        self.rest = rest
        # Where /metrics reads and what the controller counts into: by default the global
        # registry when /metrics is served, and none when it is not (``Metrics``); code that
        # embeds the manager and serves a registry itself passes it here.
        self.registry = registry if registry is not None else _default_registry(options)
        # the current term's; set by run()
        self.components: Components | None = None
        # with --leader-elect, once start() built it
        self.elector: LeaderElector | None = None
        # The process-wide stop event (SIGTERM), given to start(): set = draining. Readiness
        # fails from that moment, not only once the drain is over, so no new traffic is counted
        # on a pod that is going away.
        self.stop: threading.Event | None = None
        # set once the work has ended
        self.shutting_down = threading.Event()
        # The one deadline of the graceful shutdown: drain, Event flush, Lease release.
        self.budget = (
            budget if budget is not None else ShutdownBudget(options.graceful_shutdown_timeout)
        )

    @property
    def controller(self) -> Controller | None:
        """The running controller, or None (not started yet, or a standby replica)."""
        return self.components.controller if self.components is not None else None

    def _started(self, components: Components) -> None:
        self.components = components

    # -- probes -----------------------------------------------------------------------------

    def stopping(self) -> bool:
        return self.shutting_down.is_set() or (self.stop is not None and self.stop.is_set())

    def healthz_checks(self) -> Checks:
        from controller.health import Checks

        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("workers", self._workers_check)
        return checks

    def readyz_checks(self) -> Checks:
        from controller.health import Checks

        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("shutdown", lambda: "shutting down" if self.stopping() else None)
        checks.add("informer-sync", self._synced_check)
        if self.options.sharding:
            checks.add("sharding", self._sharding_check)
        return checks

    def _sharding_check(self) -> str | None:
        """Ready once the first assignment is known, while the members agree on the bucket
        count, and while our Lease is renewed (controller.sharding.sharder)."""
        sharder = self.components.sharder if self.components is not None else None
        return "sharding not started" if sharder is None else sharder.readiness()

    def _workers_check(self) -> str | None:
        controller = self.controller
        if controller is None or self.stopping():
            return None  # not started (standby) or stopping on purpose
        workers = controller.workers
        started, alive = workers.started(), workers.alive()
        if alive < started:
            return f"{started - alive} of {started} worker threads have died"
        stuck = workers.longest_running_sync()
        if stuck > STUCK_SYNC_SECONDS:
            return f"a reconcile has been running for {stuck:.0f}s"
        return None

    def _synced_check(self) -> str | None:
        controller = self.controller
        if controller is None:
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
        return None if controller.has_synced() else "informer caches not synced"

    # -- running ----------------------------------------------------------------------------

    def start_endpoints(self) -> list[EndpointServer | MetricsServer]:
        """Bind and start /metrics and the probes (those not turned off); OSError if one
        cannot bind, CertificateError if the metrics certificate cannot be served (the
        servers already started are stopped again)."""
        servers: list[EndpointServer | MetricsServer] = []
        try:
            # HTTPS behind a TokenReview and a SubjectAccessReview made with the controller's
            # own client, unless --metrics-secure=false (controller.metricsserver). There is a
            # registry whenever --metrics-bind-address asks for one.
            if self.registry is not None and self.options.metrics_bind_address is not None:
                from controller.metricsserver import new_metrics_server

                metrics = new_metrics_server(self.options, self.rest, self.registry)
                if metrics is not None:
                    servers.append(metrics.start())
            if self.options.health_probe_bind_address is not None:
                from controller.health import EndpointServer

                server = EndpointServer(self.options.health_probe_bind_address, "health-probes")
                server.add_checks("/healthz", self.healthz_checks())
                server.add_checks("/readyz", self.readyz_checks())
                servers.append(server.start())
        except (OSError, CertificateError):
            for started in servers:
                started.stop()
            raise
        return servers

    def start(self, stop: threading.Event) -> int:
        """Serve the endpoints and run the controller (while leading) until ``stop`` is set.

        Returns 0 after a clean stop, 1 when the lease was lost (so the pod restarts), when the
        controller failed, or when an endpoint cannot bind.
        """
        self.stop = stop
        try:
            servers = self.start_endpoints()
        # the port is taken, the address is not ours, or the certificate went bad since the
        # CLI read it
        except (OSError, CertificateError) as err:
            log.error("cannot serve endpoints", extra={"error": str(err)})
            return 1
        try:
            if not self.options.leader_elect:
                return run(
                    self.options,
                    self.rest,
                    stop,
                    self.registry,
                    on_start=self._started,
                    budget=self.budget,
                )
            return self._lead_while_elected(stop)
        finally:
            self.shutting_down.set()
            # together: each waits up to its poll interval (0.2 s) for its serving thread
            stoppers = [threading.Thread(target=server.stop, daemon=True) for server in servers]
            for t in stoppers:
                t.start()
            for t in stoppers:
                t.join()

    def _lead_while_elected(self, stop: threading.Event) -> int:
        options = self.options
        namespace = options.leader_elect_namespace or pod_namespace()
        identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        result: dict[str, int] = {}

        def lead(leading_stop: threading.Event) -> None:
            # The process stop reaches the controller at once, also while the elector is in
            # the middle of a renewal (which may take up to the renew deadline): the shutdown
            # budget runs from the signal.
            threading.Thread(
                target=_relay_stop, args=(stop, leading_stop), name="stop-relay", daemon=True
            ).start()
            try:
                result["code"] = run(
                    options,
                    self.rest,
                    leading_stop,
                    self.registry,
                    on_start=self._started,
                    budget=self.budget,
                )
            except Exception:
                # reported, then the process exits non-zero
                log.exception("the controller failed")
                result["code"] = 1
            if not leading_stop.is_set():
                # The controller ended while we still lead: holding the lease with nobody
                # working would starve the standby. Stop the process (which releases the lease).
                log.error("the controller stopped on its own; shutting down")
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


def run_process(options: Options) -> int:
    """``sample-controller`` once its flags are parsed; returns the exit status.

    A start-up problem (no kubeconfig, server unreachable, CRD missing) is logged once, as one
    line, and ends the process with status 1 before anything is started.
    """
    configure_logging(options.log_format, options.verbosity)
    tune_gc()
    headers.install()  # response headers without the email parser (client/headers.py)
    try:
        rest, host = connect(options)
        check_api(rest, host)
    except (ConfigError, StartupError, ValueError) as err:
        log.error("cannot start", extra={"error": str(err)})
        return 1
    stop = threading.Event()
    budget = ShutdownBudget(options.graceful_shutdown_timeout)
    install_signal_handlers(stop, budget)
    manager = Manager(options, rest, budget=budget)
    # The work runs in a thread; the main thread only waits, in short slices, so that it stays
    # responsive to signals (Python runs signal handlers on the main thread only). Once the
    # shutdown has begun it waits until the budget's deadline and half the exit margin at
    # most: whatever still runs then (a request to a hung server) is abandoned with the
    # process, whose threads are all daemons.
    result: dict[str, int] = {}
    runner = threading.Thread(
        target=lambda: result.update(code=manager.start(stop)), name="controller", daemon=True
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
