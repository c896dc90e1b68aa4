"""``sample-controller`` / ``python -m controller``: sample-controller's main.go.

It parses the flags, builds the client, checks that the API server answers and serves Foos,
sets up informers, the event recorder and the controller, then runs until SIGTERM or SIGINT.
The first signal starts a graceful shutdown (finish in-flight work, drain the queue, flush
Events); a second one exits at once with status 1, as sample-controller's signal handler does.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from kubernetes import client

from client.config import ConfigError, load_client_configuration
from client.errors import APIError, TransportError
from client.labels import SelectorParseError, parse_selector
from client.rest import RESTClient
from controller.durations import parse_duration
from controller.foo_controller import (
    CONTROLLER_AGENT_NAME,
    DEPLOYMENT_GVR,
    FOO_GVR,
    TRACE_LOGGER,
    Controller,
)
from controller.health import Checks, EndpointServer, parse_bind_address
from controller.logs import configure_logging
from controller.metrics import ReconcileMetrics
from informer.factory import SharedInformerFactory
from informer.metrics import InformerMetricsProvider, default_metrics_provider
from informer.shared_informer import ResourceEventHandlerFuncs, wait_for_cache_sync
from informer.transforms import transform_strip_managed_fields
from tools.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock
from tools.record import EventRecorder
from workqueue import PrometheusMetricsProvider, RateLimitingQueue, sample_controller_rate_limiter

__all__ = [
    "Process",
    "StartupError",
    "build_parser",
    "check_api",
    "install_trace",
    "main",
    "run",
    "serve",
]

log = logging.getLogger("controller")

USER_AGENT = "sample-controller-py/0.1.0"


class StartupError(Exception):
    """The controller cannot start; the message is the one line the user sees (no client-go
    twin: sample-controller logs the error and exits 1)."""


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _selector(text: str) -> str:
    try:
        parse_selector(text)
    except SelectorParseError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sample-controller",
        description="Keeps a Deployment for every Foo (samplecontroller.k8s.io/v1alpha1).",
    )
    p.add_argument(
        "--kubeconfig",
        "-kubeconfig",
        default="",
        help="Path to a kubeconfig. Only required if out-of-cluster.",
    )
    p.add_argument(
        "--master",
        "-master",
        default="",
        help="The address of the Kubernetes API server. Overrides any value in "
        "kubeconfig. Only required if out-of-cluster.",
    )
    p.add_argument(
        "--namespace",
        default="",
        help="Only watch Foos and Deployments in this namespace (default: all).",
    )
    p.add_argument(
        "--foo-selector",
        default="",
        type=_selector,
        help="Label selector for the Foos this instance handles, to shard Foos "
        "across several controllers (e.g. 'shard=a').",
    )
    p.add_argument("--workers", type=int, default=2, help="Worker threads (default 2).")
    p.add_argument(
        "--resync-period",
        type=_duration,
        default=30.0,
        metavar="DURATION",
        help="Informer resync period, Go syntax (default 30s).",
    )
    p.add_argument(
        "--fifo",
        choices=("real", "delta"),
        default="real",
        help="Informer queue: client-go's RealFIFO (default) or the classic DeltaFIFO.",
    )
    p.add_argument(
        "--kube-api-qps",
        type=float,
        default=20.0,
        help="Client-side requests per second to the API server; 0 disables the "
        "limit (default 20).",
    )
    p.add_argument(
        "--kube-api-burst", type=int, default=30, help="Client-side burst of requests (default 30)."
    )
    p.add_argument(
        "--strip-managed-fields",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Drop metadata.managedFields before objects are cached: the controller "
        "never reads them and they are most of a cached object's memory "
        "(default on).",
    )
    p.add_argument(
        "--graceful-shutdown-timeout",
        type=_duration,
        default=30.0,
        metavar="DURATION",
        help="How long in-flight work may take after SIGTERM (default 30s).",
    )
    p.add_argument(
        "--metrics-bind-address",
        default=":8080",
        help="Address of the /metrics endpoint, host:port or :port; 0 disables it (default :8080).",
    )
    p.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        help="Address of /healthz and /readyz; 0 disables them (default :8081).",
    )
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="Run only while holding a Lease, so several replicas can run with one "
        "active (off by default for local runs; on in manifests/).",
    )
    p.add_argument(
        "--leader-elect-lease-name",
        default="sample-controller",
        help="Name of the Lease (default sample-controller).",
    )
    p.add_argument(
        "--leader-elect-namespace",
        default="",
        help="Namespace of the Lease (default: the pod's namespace, else default).",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        type=_duration,
        default=15.0,
        metavar="DURATION",
        help="How long a lease holds without renewal (default 15s).",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=_duration,
        default=10.0,
        metavar="DURATION",
        help="How long the leader retries renewing before giving up (default 10s).",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=_duration,
        default=2.0,
        metavar="DURATION",
        help="Time between leader election attempts (default 2s).",
    )
    p.add_argument("--log-format", choices=("text", "json"), default="text")
    p.add_argument(
        "--trace",
        action="store_true",
        help="Log the path of every change, one line per step: informer "
        "notification, owner lookup, enqueue, dequeue, writes, result "
        "(for learning; see docs/walkthrough.md).",
    )
    p.add_argument(
        "-v",
        "--v",
        dest="verbosity",
        type=int,
        default=0,
        help="Log verbosity: 0 default, 4 debug (every event and key).",
    )
    return p


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


def run(
    args: argparse.Namespace,
    rest: RESTClient,
    stop: threading.Event,
    registry: Any = None,
    ready: threading.Event | None = None,
    on_start: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Run the controller until ``stop`` is set; return the exit status.

    Kept apart from ``main`` so tests can run a whole controller in a thread with their own
    stop event and metrics registry (signal handlers can only be installed on the main thread).
    ``ready`` is set once the caches have synced; ``on_start`` receives the shared informers
    and the controller before anything starts (the demo taps them to narrate what happens).
    """
    from prometheus_client import REGISTRY

    registry = REGISTRY if registry is None else registry
    informer_metrics = (
        default_metrics_provider() if registry is REGISTRY else InformerMetricsProvider(registry)
    )
    namespace = args.namespace or None
    foo_selector = args.foo_selector

    def only_selected_foos(options: dict) -> None:
        if foo_selector:
            options["labelSelector"] = foo_selector

    # Two factories, as sample-controller has: the Foo selector (sharding) must narrow the Foo
    # informer only; Deployments of Foos outside the shard are ignored by handle_object.
    transform = transform_strip_managed_fields if args.strip_managed_fields else None
    kube_factory = SharedInformerFactory(
        rest,
        args.resync_period,
        namespace=namespace,
        fifo=args.fifo,
        name="kube",
        metrics=informer_metrics,
        transform=transform,
    )
    foo_factory = SharedInformerFactory(
        rest,
        args.resync_period,
        namespace=namespace,
        tweak_list_options=only_selected_foos,
        fifo=args.fifo,
        name="samplecontroller",
        metrics=informer_metrics,
        transform=transform,
    )
    deployment_informer = kube_factory.for_resource(*DEPLOYMENT_GVR)
    foo_informer = foo_factory.for_resource(*FOO_GVR)
    if getattr(args, "trace", False):
        install_trace(foo_informer, "Foo")
        install_trace(deployment_informer, "Deployment")

    recorder = EventRecorder(rest, component=CONTROLLER_AGENT_NAME)
    queue = RateLimitingQueue(
        sample_controller_rate_limiter(),
        name="foo",
        metrics_provider=PrometheusMetricsProvider(registry),
    )
    controller = Controller(
        rest,
        foo_informer,
        deployment_informer,
        recorder,
        queue=queue,
        metrics=ReconcileMetrics("foo", registry),
    )

    if on_start is not None:
        on_start(
            {
                "foo_informer": foo_informer,
                "deployment_informer": deployment_informer,
                "controller": controller,
            }
        )
    recorder.start()
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
        controller.run(args.workers, stop, drain_timeout=args.graceful_shutdown_timeout)
    finally:
        stop.set()  # stops the informers when run() ends for any reason
        if not recorder.shutdown(timeout=5.0):
            log.warning("some events were not written before exit")
    log.info("controller stopped")
    return 0


def install_trace(informer: Any, kind: str) -> None:
    """``--trace``: turn the trace logger on and log every notification of ``informer``.

    The handler is one more listener on the controller's own shared informer (its own thread,
    its own buffer), so it sees each change right after the cache has applied it, next to the
    controller's handler; updates with an unchanged resourceVersion are resyncs.
    """
    trace = logging.getLogger(TRACE_LOGGER)
    trace.setLevel(logging.INFO)

    def show(event: str, obj: Any, old: Any = None) -> None:
        obj = getattr(obj, "obj", obj)  # a tombstone carries the last known state
        meta = (obj.get("metadata") or {}) if isinstance(obj, dict) else {}
        rv = meta.get("resourceVersion")
        if old is not None and (old.get("metadata") or {}).get("resourceVersion") == rv:
            event = "resync"
        trace.info(
            "informer",
            extra={
                "kind": kind,
                "event": event,
                "object": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                "rv": rv,
            },
        )

    informer.add_event_handler(
        ResourceEventHandlerFuncs(
            add_func=lambda obj: show("add", obj),
            update_func=lambda old, new: show("update", new, old),
            delete_func=lambda obj: show("delete", obj),
        )
    )


def _signal_when_synced(
    controller: Controller, stop: threading.Event, ready: threading.Event
) -> None:
    if wait_for_cache_sync(stop, controller):
        ready.set()


def install_signal_handlers(stop: threading.Event) -> None:
    """First SIGTERM/SIGINT: graceful stop. Second: exit 1 at once (SetupSignalHandler)."""

    def handler(signum: int, _frame: Any) -> None:
        if stop.is_set():
            log.warning("second signal, exiting immediately", extra={"signal": signum})
            os._exit(1)
        log.info("signal received, shutting down gracefully", extra={"signal": signum})
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


POD_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

# A reconcile running this long is wedged (a hung connection, a deadlock): /healthz fails so
# the kubelet restarts the pod. Far above any sane sync, which takes milliseconds.
STUCK_SYNC_SECONDS = 300.0


def pod_namespace(environ: Any = None, path: str = POD_NAMESPACE_FILE) -> str:
    """The namespace this pod runs in (downward API env, then the ServiceAccount file)."""
    environ = os.environ if environ is None else environ
    if environ.get("POD_NAMESPACE"):
        return environ["POD_NAMESPACE"]
    try:
        with open(path) as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


class Process:
    """What the probes look at: the current controller (one per leadership term) and phase
    (no client-go twin; controller-runtime's manager keeps the same state)."""

    def __init__(self, leader_elect: bool, stop: threading.Event | None = None) -> None:
        self.leader_elect = leader_elect
        self.parts: dict[str, Any] = {}  # from run()'s on_start: informers and controller
        self.shutting_down = threading.Event()  # set once the work has ended
        # The process-wide stop event (SIGTERM): set = draining. Readiness fails from that
        # moment, not only once the drain is over, so no new traffic is counted on a pod that
        # is going away.
        self.stop = stop
        self.elector: Any = None  # LeaderElector when --leader-elect

    def stopping(self) -> bool:
        return self.shutting_down.is_set() or (self.stop is not None and self.stop.is_set())

    def healthz_checks(self) -> Checks:
        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("workers", self._workers_check)
        return checks

    def readyz_checks(self) -> Checks:
        checks = Checks()
        checks.add("ping", lambda: None)
        checks.add("shutdown", lambda: "shutting down" if self.stopping() else None)
        checks.add("informer-sync", self._synced_check)
        return checks

    def _workers_check(self) -> str | None:
        controller = self.parts.get("controller")
        if controller is None or self.stopping():
            return None  # not started (standby) or stopping on purpose
        started, alive = controller.workers_started(), controller.workers_alive()
        if alive < started:
            return f"{started - alive} of {started} worker threads have died"
        stuck = controller.longest_running_sync()
        if stuck > STUCK_SYNC_SECONDS:
            return f"a reconcile has been running for {stuck:.0f}s"
        return None

    def _synced_check(self) -> str | None:
        controller = self.parts.get("controller")
        if controller is None:
            # A standby replica is ready: it is healthy and waiting for the lease. Were it not,
            # a rolling update would wait forever for the new pods (which stand by while the old
            # leader holds the lease) to become ready.
            if self.leader_elect and self.elector is not None and not self.elector.is_leader():
                return None
            return "controller not started"
        return None if controller.has_synced() else "informer caches not synced"


def start_endpoints(
    args: argparse.Namespace, process: Process, registry: Any
) -> list[EndpointServer]:
    servers = []
    metrics_address = parse_bind_address(args.metrics_bind_address)
    probe_address = parse_bind_address(args.health_probe_bind_address)
    if metrics_address is not None:
        server = EndpointServer(metrics_address, "metrics")
        server.add_metrics(registry=registry)
        servers.append(server.start())
    if probe_address is not None:
        server = EndpointServer(probe_address, "health-probes")
        server.add_checks("/healthz", process.healthz_checks())
        server.add_checks("/readyz", process.readyz_checks())
        servers.append(server.start())
    return servers


def serve(
    args: argparse.Namespace,
    rest: RESTClient,
    stop: threading.Event,
    registry: Any = None,
    process: Process | None = None,
) -> int:
    """Everything main() does after start-up checks: endpoints, leader election, the controller.

    Returns 0 after a clean stop, 1 when the lease was lost (so the pod restarts), when the
    controller failed, or when an endpoint cannot bind.
    """
    from prometheus_client import REGISTRY

    registry = REGISTRY if registry is None else registry
    process = process or Process(args.leader_elect)
    process.stop = stop
    try:
        servers = start_endpoints(args, process, registry)
    except OSError as err:  # the port is taken, or the address is not ours
        log.error("cannot serve endpoints", extra={"error": str(err)})
        print(f"sample-controller: cannot serve endpoints: {err}", file=sys.stderr)
        return 1
    try:
        if not args.leader_elect:
            code = run(args, rest, stop, registry=registry, on_start=process.parts.update)
            process.shutting_down.set()
            return code

        namespace = args.leader_elect_namespace or pod_namespace()
        identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        result: dict[str, int] = {}

        def lead(leading_stop: threading.Event) -> None:
            try:
                result["code"] = run(
                    args, rest, leading_stop, registry=registry, on_start=process.parts.update
                )
            except Exception:  # noqa: BLE001 - reported, then the process exits non-zero
                log.exception("the controller failed")
                result["code"] = 1
            if not leading_stop.is_set():
                # The controller ended while we still lead: holding the lease with nobody
                # working would starve the standby. Stop the process (which releases the lease).
                log.error("the controller stopped on its own; shutting down")
                result["code"] = result.get("code") or 1
                stop.set()

        elector = LeaderElector(
            LeaderElectionConfig(
                lock=LeaseLock(rest, namespace, args.leader_elect_lease_name, identity),
                lease_duration=args.leader_elect_lease_duration,
                renew_deadline=args.leader_elect_renew_deadline,
                retry_period=args.leader_elect_retry_period,
                release_on_cancel=True,
                on_started_leading=lead,
            ),
            registry=registry,
        )
        process.elector = elector
        log.info(
            "leader election on",
            extra={"lease": f"{namespace}/{args.leader_elect_lease_name}", "identity": identity},
        )
        clean = elector.run(stop)
        process.shutting_down.set()
        if not clean:
            # Even during a graceful stop: the work was abandoned, not drained.
            log.error("leader election lost; exiting so that the pod restarts")
            return 1
        return result.get("code", 0)
    finally:
        process.shutting_down.set()
        for server in servers:
            server.stop()


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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_format, args.verbosity)
    tune_gc()
    try:
        parse_bind_address(args.metrics_bind_address)
        parse_bind_address(args.health_probe_bind_address)
        cfg = load_client_configuration(args.kubeconfig, args.master)
        api_client = client.ApiClient(cfg)
        rest = RESTClient(
            api_client, qps=args.kube_api_qps, burst=args.kube_api_burst, user_agent=USER_AGENT
        )
        check_api(rest, cfg.host)
    except (ConfigError, StartupError, ValueError) as err:
        log.error("cannot start", extra={"error": str(err)})
        print(f"sample-controller: {err}", file=sys.stderr)
        return 1
    stop = threading.Event()
    install_signal_handlers(stop)
    # The work runs in a thread; the main thread only waits, in short slices, so that it stays
    # responsive to signals (Python runs signal handlers on the main thread only).
    result: dict[str, int] = {}
    runner = threading.Thread(
        target=lambda: result.update(code=serve(args, rest, stop)), name="controller", daemon=True
    )
    runner.start()
    while runner.is_alive():
        runner.join(0.5)
    code = result.get("code", 1)
    log.info("exiting", extra={"code": code})
    return code


if __name__ == "__main__":
    sys.exit(main())
