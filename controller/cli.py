"""The command line: sample-controller's flags, turned into ``Options``.

sample-controller twin: the ``flag`` definitions of main.go (``-kubeconfig``, ``-master``),
with controller-runtime's and component-base's flags beside them (``--metrics-bind-address``,
``--health-probe-bind-address``, ``--leader-elect*``, ``--kube-api-qps``/``burst``, ``-v``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import fields

from client.labels import SelectorParseError, parse_selector
from controller.durations import parse_duration
from controller.health import parse_bind_address
from controller.options import BindAddress, Options

__all__ = ["build_parser", "options_from_args", "parse_options"]

PROG = "sample-controller"


def duration(text: str) -> float:
    """A Go duration (``30s``, ``1m30s``, ``500ms``) in seconds."""
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def selector(text: str) -> str:
    """A label selector, checked by parsing it; kept as text for the LIST requests."""
    try:
        parse_selector(text)
    except SelectorParseError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def bind_address(text: str) -> BindAddress | None:
    """``host:port``, ``:port`` or ``0`` (off)."""
    try:
        return parse_bind_address(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def build_parser() -> argparse.ArgumentParser:
    """Every flag with its default and help."""
    p = argparse.ArgumentParser(
        prog=PROG,
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
        type=selector,
        help="Label selector for the Foos this instance handles, to shard Foos "
        "across several controllers (e.g. 'shard=a').",
    )
    p.add_argument("--workers", type=int, default=2, help="Worker threads (default 2).")
    p.add_argument(
        "--resync-period",
        type=duration,
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
        "--kube-api-burst",
        type=int,
        default=30,
        help="Client-side burst of requests (default 30).",
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
        type=duration,
        default=30.0,
        metavar="DURATION",
        help="How long in-flight work may take after SIGTERM (default 30s).",
    )
    p.add_argument(
        "--metrics-bind-address",
        type=bind_address,
        default=":8080",
        help="Address of the /metrics endpoint, host:port or :port; 0 disables it (default :8080).",
    )
    p.add_argument(
        "--health-probe-bind-address",
        type=bind_address,
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
        type=duration,
        default=15.0,
        metavar="DURATION",
        help="How long a lease holds without renewal (default 15s).",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=duration,
        default=10.0,
        metavar="DURATION",
        help="How long the leader retries renewing before giving up (default 10s).",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=duration,
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


def options_from_args(args: argparse.Namespace) -> Options:
    """The typed ``Options`` of parsed flags (each flag's ``dest`` is the field's name)."""
    return Options(**{f.name: getattr(args, f.name) for f in fields(Options)})


def parse_options(argv: Sequence[str] | None = None) -> Options:
    """Parse ``argv`` (default ``sys.argv[1:]``); argparse exits with status 2 on a bad flag."""
    return options_from_args(build_parser().parse_args(argv))
