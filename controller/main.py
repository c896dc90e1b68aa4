"""``sample-controller``: sample-controller's main.go, on the runtime's manager.

main.go parses two flags, builds the clients, a shared informer factory per API group, the
controller, and runs them until a signal. Here the flags are the runtime's process flags
(``runtime.flags``) plus the Foo controller's own ``--foo-selector``; the clients, the signal
handlers, ``/metrics``, the probes, leader election or sharding and the graceful shutdown are
the manager's (``runtime.manager``). What is left is what main.go itself does: two informer
factories, the controller on their informers, and ``Run`` with the worker count; and, with
``--webhook-bind-address``, what kubebuilder's main adds: Foo's admission webhooks
(``controller.webhooks``) on the manager's webhook server.

``run`` is the controller alone, without endpoints, election or signals: tests, the demo and
the benchmarks run it in a thread with their own stop event and metrics registry.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.apis import DEPLOYMENT_GVR, FOO_GVR
from controller.foo_controller import CONTROLLER_AGENT_NAME, Controller
from informer.shared_informer import SharedIndexInformer
from runtime.flags import build_parser, parse_options, selector
from runtime.manager import Manager, run_process
from runtime.options import Options
from runtime.shutdown import ShutdownBudget
from runtime.trace import install_trace
from workqueue import sample_controller_rate_limiter

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from client.rest import RESTClient
    from runtime.sharding.sharder import Sharder

__all__ = ["Components", "FooOptions", "main", "parse_foo_options", "run", "setup"]

# what the process cannot start without, and how to install it
REQUIRES = [(FOO_GVR, "apply crds/foo-crd.yaml (make install-crd)")]


@dataclass(frozen=True)
class FooOptions(Options):
    """The process flags and the Foo controller's own (no client-go twin: main.go's flag
    variables, typed)."""

    foo_selector: str = ""
    """Label selector narrowing the Foo informer (``--foo-selector``), to split Foos between
    controllers by label."""


@dataclass(frozen=True)
class Components:
    """What ``setup`` built: the two shared informers and the controller (no client-go twin:
    main.go's local variables; the demo taps them to narrate what happens)."""

    foo_informer: SharedIndexInformer
    deployment_informer: SharedIndexInformer
    controller: Controller
    # with --sharding: membership, assignment and handovers (runtime.sharding)
    sharder: Sharder | None = None


class _Run:
    """The controller as the manager's runnable: main.go's ``controller.Run(ctx, workers)``."""

    def __init__(self, controller: Controller, workers: int) -> None:
        self.controller = controller
        self.count = workers
        # what /healthz watches
        self.workers = controller.workers

    def start(self, stop: threading.Event, budget: ShutdownBudget) -> None:
        self.controller.run(self.count, stop, budget=budget)

    def has_synced(self) -> bool:
        return self.controller.has_synced()


def setup(manager: Manager, options: FooOptions) -> Components:
    """Build the Foo controller on ``manager`` and add it (main.go, between the flags and
    ``Run``)."""

    def only_selected_foos(list_options: dict[str, Any]) -> None:
        if options.foo_selector:
            list_options["labelSelector"] = options.foo_selector

    # Two factories, as main.go has (kubeInformerFactory, exampleInformerFactory): the Foo
    # selector narrows the Foo informer only; Deployments of other Foos are ignored by
    # handle_object.
    kube_factory = manager.new_informer_factory("kube")
    foo_factory = manager.new_informer_factory("samplecontroller", only_selected_foos)
    deployment_informer = manager.informer(kube_factory, DEPLOYMENT_GVR)
    foo_informer = manager.informer(foo_factory, FOO_GVR, primary=True)
    if options.trace:  # before the controller's handlers: the trace's listener comes first
        install_trace(foo_informer, "Foo")
        install_trace(deployment_informer, "Deployment")
    controller = Controller(
        manager.rest,
        foo_informer,
        deployment_informer,
        manager.event_recorder(CONTROLLER_AGENT_NAME),
        queue=manager.new_queue("foo", sample_controller_rate_limiter()),
        metrics=manager.reconcile_metrics("foo"),
        gate=manager.gate,
    )
    manager.on_buckets_taken(foo_informer, controller.enqueue_foo)
    manager.add(_Run(controller, options.workers))
    webhooks = manager.webhook_server
    if webhooks is not None:
        # Foo's webhooks read the controller's cache (controller.webhooks); with leader
        # election the standby serves them too, so its cache must be ready before traffic.
        from controller.webhooks import register

        register(webhooks, controller)
        manager.add_readyz_check(
            "webhook-cache",
            lambda: None if controller.has_synced() else "Foo and Deployment caches not synced",
        )
    return Components(foo_informer, deployment_informer, controller, manager.sharder)


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

    ``registry``: where the metrics go (None: none collected). ``ready`` is set once the caches
    have synced; ``on_start`` receives what was built before anything starts. ``budget``
    bounds the shutdown (default: ``--graceful-shutdown-timeout`` from when the stop is
    noticed).
    """
    foo_options = options if isinstance(options, FooOptions) else FooOptions(**vars(options))
    manager = Manager(foo_options, rest, registry=registry, budget=budget)
    components = setup(manager, foo_options)
    if on_start is not None:
        on_start(components)
    return manager.run_runnables(stop, ready)


def build_foo_parser() -> argparse.ArgumentParser:
    """The process flags and ``--foo-selector``."""
    parser = build_parser()
    parser.add_argument(
        "--foo-selector",
        default="",
        type=selector,
        help="Label selector for the Foos this instance handles, to split Foos "
        "across several controllers (e.g. 'shard=a').",
    )
    return parser


def parse_foo_options(argv: Sequence[str] | None = None) -> FooOptions:
    """Parse and check ``argv``; one line and exit status 2 on a bad flag."""
    parser = build_foo_parser()
    options = parse_options(argv, parser, FooOptions)
    if options.webhook_bind_address is not None and options.sharding:
        # A sharded replica caches its share of the Foos; the webhook would miss a collision
        # with a Foo of another share (controller.webhooks).
        parser.error(
            "--webhook-bind-address cannot be used with --sharding: Foo's webhooks read every "
            "Foo of a namespace from the cache, and a sharded replica caches a share"
        )
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, build the controller on the manager, run until a signal."""
    options = parse_foo_options(argv)
    return run_process(options, lambda manager: setup(manager, options), REQUIRES)
