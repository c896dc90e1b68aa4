"""``sample-controller`` / ``python -m controller``: sample-controller's main.go.

It parses the flags, builds the client, checks that the API server answers and serves Foos,
sets up informers, the event recorder and the controller, then runs until SIGTERM or SIGINT.
The first signal starts a graceful shutdown (finish in-flight work, drain the queue, flush
Events); a second one exits at once with status 1, as sample-controller's signal handler does.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from kubernetes import client

from controller.config import ConfigError, load_client_configuration
from controller.durations import parse_duration
from controller.events import EventRecorder
from controller.foo_controller import CONTROLLER_AGENT_NAME, DEPLOYMENT_GVR, FOO_GVR, Controller
from controller.logs import configure_logging
from controller.metrics import ReconcileMetrics
from informer.factory import SharedInformerFactory
from informer.labels import SelectorParseError, parse_selector
from informer.metrics import InformerMetricsProvider, default_metrics_provider
from informer.rest import APIError, RESTClient, TransportError
from workqueue import PrometheusMetricsProvider, RateLimitingQueue, sample_controller_rate_limiter

__all__ = ["StartupError", "build_parser", "check_api", "main", "run"]

log = logging.getLogger("controller")

USER_AGENT = "sample-controller-py/0.1.0"


class StartupError(Exception):
    """The controller cannot start; the message is the one line the user sees."""


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
    p.add_argument("--kubeconfig", "-kubeconfig", default="",
                   help="Path to a kubeconfig. Only required if out-of-cluster.")
    p.add_argument("--master", "-master", default="",
                   help="The address of the Kubernetes API server. Overrides any value in "
                        "kubeconfig. Only required if out-of-cluster.")
    p.add_argument("--namespace", default="",
                   help="Only watch Foos and Deployments in this namespace (default: all).")
    p.add_argument("--foo-selector", default="", type=_selector,
                   help="Label selector for the Foos this instance handles, to shard Foos "
                        "across several controllers (e.g. 'shard=a').")
    p.add_argument("--workers", type=int, default=2, help="Worker threads (default 2).")
    p.add_argument("--resync-period", type=_duration, default=30.0, metavar="DURATION",
                   help="Informer resync period, Go syntax (default 30s).")
    p.add_argument("--fifo", choices=("real", "delta"), default="real",
                   help="Informer queue: client-go's RealFIFO (default) or the classic DeltaFIFO.")
    p.add_argument("--kube-api-qps", type=float, default=20.0,
                   help="Client-side requests per second to the API server; 0 disables the "
                        "limit (default 20).")
    p.add_argument("--kube-api-burst", type=int, default=30,
                   help="Client-side burst of requests (default 30).")
    p.add_argument("--graceful-shutdown-timeout", type=_duration, default=30.0, metavar="DURATION",
                   help="How long in-flight work may take after SIGTERM (default 30s).")
    p.add_argument("--log-format", choices=("text", "json"), default="text")
    p.add_argument("-v", "--v", dest="verbosity", type=int, default=0,
                   help="Log verbosity: 0 default, 4 debug (every event and key).")
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
                f"apply crds/foo-crd.yaml (make install-crd)") from err
        if err.code in (401, 403):
            raise StartupError(f"the API server at {host} refused our credentials: "
                               f"{err.code} {err.reason}") from err
        raise StartupError(f"discovery of {group}/{version} failed on {host}: {err}") from err
    names = {r.get("name") for r in found.get("resources") or []}
    if resource not in names:
        raise StartupError(f"the API server at {host} serves {group}/{version} but not "
                           f"{resource}: is crds/foo-crd.yaml applied?")


def run(args: argparse.Namespace, rest: RESTClient, stop: threading.Event,
        registry: Any = None, ready: threading.Event | None = None,
        on_start: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Run the controller until ``stop`` is set; return the exit status.

    Kept apart from ``main`` so tests can run a whole controller in a thread with their own
    stop event and metrics registry (signal handlers can only be installed on the main thread).
    ``ready`` is set once the caches have synced; ``on_start`` receives the shared informers
    and the controller before anything starts (the demo taps them to narrate what happens).
    """
    from prometheus_client import REGISTRY

    registry = REGISTRY if registry is None else registry
    informer_metrics = (default_metrics_provider() if registry is REGISTRY
                        else InformerMetricsProvider(registry))
    namespace = args.namespace or None
    foo_selector = args.foo_selector

    def only_selected_foos(options: dict) -> None:
        if foo_selector:
            options["labelSelector"] = foo_selector

    # Two factories, as sample-controller has: the Foo selector (sharding) must narrow the Foo
    # informer only; Deployments of Foos outside the shard are ignored by handle_object.
    kube_factory = SharedInformerFactory(rest, args.resync_period, namespace=namespace,
                                         fifo=args.fifo, name="kube", metrics=informer_metrics)
    foo_factory = SharedInformerFactory(rest, args.resync_period, namespace=namespace,
                                        tweak_list_options=only_selected_foos, fifo=args.fifo,
                                        name="samplecontroller", metrics=informer_metrics)
    deployment_informer = kube_factory.for_resource(*DEPLOYMENT_GVR)
    foo_informer = foo_factory.for_resource(*FOO_GVR)

    recorder = EventRecorder(rest, component=CONTROLLER_AGENT_NAME)
    queue = RateLimitingQueue(sample_controller_rate_limiter(), name="foo",
                              metrics_provider=PrometheusMetricsProvider(registry))
    controller = Controller(rest, foo_informer, deployment_informer, recorder, queue=queue,
                            metrics=ReconcileMetrics("foo", registry))

    if on_start is not None:
        on_start({"foo_informer": foo_informer, "deployment_informer": deployment_informer,
                  "controller": controller})
    recorder.start()
    kube_factory.start(stop)
    foo_factory.start(stop)
    if ready is not None:
        threading.Thread(target=_signal_when_synced, args=(controller, stop, ready),
                         name="ready-signal", daemon=True).start()
    try:
        controller.run(args.workers, stop, drain_timeout=args.graceful_shutdown_timeout)
    finally:
        stop.set()  # stops the informers when run() ends for any reason
        if not recorder.shutdown(timeout=5.0):
            log.warning("some events were not written before exit")
    log.info("controller stopped")
    return 0


def _signal_when_synced(controller: Controller, stop: threading.Event, ready: threading.Event) -> None:
    while not stop.is_set():
        if controller.has_synced():
            ready.set()
            return
        stop.wait(0.1)


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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_format, args.verbosity)
    try:
        cfg = load_client_configuration(args.kubeconfig, args.master)
        api_client = client.ApiClient(cfg)
        rest = RESTClient(api_client, qps=args.kube_api_qps, burst=args.kube_api_burst,
                          user_agent=USER_AGENT)
        check_api(rest, cfg.host)
    except (ConfigError, StartupError) as err:
        log.error("cannot start", extra={"error": str(err)})
        print(f"sample-controller: {err}", file=sys.stderr)
        return 1
    stop = threading.Event()
    install_signal_handlers(stop)
    # Wait in short slices so the main thread stays responsive to signals.
    result: dict[str, int] = {}
    runner = threading.Thread(target=lambda: result.update(code=run(args, rest, stop)),
                              name="controller", daemon=True)
    runner.start()
    while runner.is_alive():
        runner.join(0.5)
    return result.get("code", 1)


if __name__ == "__main__":
    sys.exit(main())
