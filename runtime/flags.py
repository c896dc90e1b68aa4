"""The process flags every controller's main shares, checked, and turned into ``Options``.

sample-controller twin: the ``flag`` definitions of main.go (``-kubeconfig``, ``-master``),
with controller-runtime's and component-base's flags beside them (``--metrics-bind-address``,
``--health-probe-bind-address``, ``--leader-elect*``, ``--kube-api-qps``/``burst``, ``-v``), and
kubebuilder v4's scaffold's for secure metrics (``--metrics-secure``, ``--enable-http2``,
``--metrics-cert-path``/``-name``/``-key``).

Flags fail fast. A value the process could not run with, or a combination of values that
cannot work together, ends the process before it does anything, with exit status 2 and one
line that names the flag and the rule::

    sample-controller: error: argument --workers: must be at least 1 (got 0)

The rules are client-go's where it has them: ``NewLeaderElector``'s ordering of lease duration,
renew deadline and retry period, the clientset's "burst is required to be greater than 0 when
QPS is above 0", and apimachinery's DNS-1123 names for namespaces and the Lease. The metrics
certificate files are read here too: a path that does not exist or a key that does not match
its certificate is a wrong flag, found before anything starts (kubebuilder's scaffold exits 1
after setting up; here it is the flag's one line and 2). Whether the kubeconfig exists or the
server answers is not a flag's syntax: the manager reports those at start-up (exit status 1),
as sample-controller does.

A controller's main calls ``build_parser`` with its name, adds its own flags to the parser, and
parses with ``parse_options`` into its own subclass of ``Options`` (``controller.main`` adds
``--foo-selector``; ``examples.bar`` adds nothing).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import NoReturn, TypeVar

from client.features import parse_bool
from client.labels import SelectorParseError, parse_selector
from runtime.durations import format_duration, parse_duration
from runtime.options import BindAddress, Options, parse_bind_address
from tools.leaderelection.leaderelection import JITTER_FACTOR

__all__ = ["build_parser", "options_from_args", "parse_options"]

PROG = "sample-controller"
# this project's version, what --version prints
VERSION = "0.1.0"

T = TypeVar("T")

# apimachinery's validation.IsDNS1123Label / IsDNS1123Subdomain
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(rf"^{_DNS1123_LABEL}$")
_DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")


class _Parser(argparse.ArgumentParser):
    """argparse, with errors on one line: the flag and the rule, no usage block (the usage is
    one ``--help`` away, and a log collector keeps one line together)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


# -- values: each type function checks one flag's value on its own ---------------------------


def _checked(
    convert: Callable[[str], T], rule: Callable[[T], bool], says: str
) -> Callable[[str], T]:
    """An argparse type: ``convert`` the text, then require ``rule`` ("must ``says``")."""

    def parse(text: str) -> T:
        value = convert(text)
        if not rule(value):
            raise argparse.ArgumentTypeError(f"must {says} (got {text})")
        return value

    parse.__name__ = convert.__name__  # argparse names the type in "invalid <type> value"
    return parse


def duration(text: str) -> float:
    """A Go duration (``30s``, ``1m30s``, ``500ms``) in seconds."""
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def boolean(text: str) -> bool:
    """A bool as Go's flag package reads ``--flag=value`` (``strconv.ParseBool``)."""
    try:
        return parse_bool(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be true or false (1, t, true, 0, f, false), got {text!r}"
        ) from None


def number(text: str) -> float:
    """A finite float (``nan`` and ``inf`` are not a rate)."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text})")
    return value


def selector(text: str) -> str:
    """A label selector, checked by parsing it; kept as text for the LIST requests."""
    try:
        parse_selector(text)
    except SelectorParseError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def bind_address(text: str) -> BindAddress | None:
    """``host:port``, ``:port`` or ``0`` (off), with the port in 0-65535."""
    try:
        return parse_bind_address(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def file_name(text: str) -> str:
    """A file name inside a directory flag's directory: no path separator, not empty."""
    if not text or "/" in text or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"must be a file name, without '/' (got {text!r})")
    return text


def identity_name(text: str) -> str:
    """A replica's name, which names its Lease: an object name, or empty (the default)."""
    return dns_subdomain(text) if text else text


def optional_name(text: str) -> str:
    """An object name, or empty (none)."""
    return dns_subdomain(text) if text else text


def host_list(text: str) -> tuple[str, ...]:
    """Comma-separated DNS names (apimachinery ``IsDNS1123Subdomain``) and IP addresses, at
    least one: the names a certificate is for."""
    import ipaddress

    hosts = tuple(h.strip() for h in text.split(",") if h.strip())
    if not hosts:
        raise argparse.ArgumentTypeError("must name at least one DNS name or IP address")
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if len(host) > 253 or not _DNS1123_SUBDOMAIN_RE.match(host):
                raise argparse.ArgumentTypeError(
                    f"{host!r} is neither a DNS name (lowercase letters, digits, '-' and '.') "
                    "nor an IP address"
                ) from None
    return hosts


def power_of_two(text: str) -> int:
    """A power of two from 1 to 2**16: a bucket count."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1 or value > 1 << 16 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a power of two from 1 to 65536")
    return value


def dns_label(text: str) -> str:
    """A namespace name, or empty (apimachinery ``IsDNS1123Label``)."""
    if text and (len(text) > 63 or not _DNS1123_LABEL_RE.match(text)):
        raise argparse.ArgumentTypeError(
            f"must be a namespace name (at most 63 lowercase letters, digits and '-', "
            f"starting and ending with a letter or digit), got {text!r}"
        )
    return text


def dns_subdomain(text: str) -> str:
    """An object name such as a Lease's (apimachinery ``IsDNS1123Subdomain``)."""
    if not text or len(text) > 253 or not _DNS1123_SUBDOMAIN_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"must be an object name (lowercase letters, digits, '-' and '.', at most 253, "
            f"starting and ending with a letter or digit), got {text!r}"
        )
    return text


at_least_one = _checked(int, lambda v: v >= 1, "be at least 1")
not_negative_int = _checked(int, lambda v: v >= 0, "not be negative")
not_negative_number = _checked(number, lambda v: v >= 0, "not be negative")
not_negative_duration = _checked(duration, lambda v: v >= 0, "not be negative")
positive_duration = _checked(duration, lambda v: v > 0, "be greater than zero")


def build_parser(
    prog: str = PROG,
    description: str = "Keeps a Deployment for every Foo (samplecontroller.k8s.io/v1alpha1).",
    version: str = VERSION,
) -> argparse.ArgumentParser:
    """Every process flag with its default and help; the values are checked one by one here,
    the combinations in ``parse_options``. ``prog`` also names the default Lease and ring."""
    p = _Parser(prog=prog, description=description)
    p.add_argument("--version", action="version", version=f"{prog} {version}")
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
        type=dns_label,
        help="Only watch objects in this namespace (default: all).",
    )
    p.add_argument(
        "--workers",
        type=at_least_one,
        default=2,
        help="Worker threads per controller (default 2): objects synced at once, each by one "
        "thread from start to end; more for a slow API server (sample-controller's "
        "controller.Run(ctx, 2), controller-runtime's MaxConcurrentReconciles).",
    )
    p.add_argument(
        "--resync-period",
        type=not_negative_duration,
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
        type=not_negative_number,
        default=20.0,
        help="Client-side requests per second to the API server; 0 disables the "
        "limit (default 20).",
    )
    p.add_argument(
        "--kube-api-burst",
        type=not_negative_int,
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
        "--watch-list",
        type=boolean,
        nargs="?",
        const=True,
        default=None,
        metavar="BOOL",
        help="List with a streaming watch (WatchList: sendInitialEvents, then a bookmark), "
        "falling back to a paged LIST where the server refuses or ignores it; "
        "--watch-list=false always lists (default: client-go's WatchListClient gate, "
        "on unless KUBE_FEATURE_WatchListClient=false).",
    )
    p.add_argument(
        "--graceful-shutdown-timeout",
        type=not_negative_duration,
        default=30.0,
        metavar="DURATION",
        help="How long the whole graceful shutdown may take after SIGTERM: the drain of "
        "in-flight and queued work, the Event flush and the Lease release; the process "
        "exits within it plus 1s (default 30s).",
    )
    p.add_argument(
        "--metrics-bind-address",
        type=bind_address,
        default="0",
        help="Address of the /metrics endpoint, host:port or :port; 0 disables it (default 0, "
        "as kubebuilder's; :8443 for HTTPS, :8080 for HTTP are the usual ports).",
    )
    p.add_argument(
        "--metrics-secure",
        type=boolean,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="Serve /metrics over HTTPS to readers the API server authenticates (TokenReview) "
        "and authorizes (SubjectAccessReview of get /metrics); --metrics-secure=false serves "
        "plain HTTP to anyone (default true).",
    )
    p.add_argument(
        "--enable-http2",
        type=boolean,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="kubebuilder's flag; the metrics server speaks HTTP/1.1 only, so HTTP/2 stays off "
        "(default false).",
    )
    p.add_argument(
        "--metrics-cert-path",
        default="",
        metavar="DIR",
        help="Directory with the metrics server's certificate and key, re-read when they "
        "change; empty: a self-signed certificate made at start-up (default empty).",
    )
    p.add_argument(
        "--metrics-cert-name",
        type=file_name,
        default="tls.crt",
        help="The certificate's file name in --metrics-cert-path (default tls.crt).",
    )
    p.add_argument(
        "--metrics-cert-key",
        type=file_name,
        default="tls.key",
        help="The key's file name in --metrics-cert-path (default tls.key).",
    )
    p.add_argument(
        "--health-probe-bind-address",
        type=bind_address,
        default=":8081",
        help="Address of /healthz and /readyz; 0 disables them (default :8081).",
    )
    _add_webhook_flags(p, prog)
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="Run only while holding a Lease, so several replicas can run with one "
        "active (off by default for local runs; on in manifests/).",
    )
    p.add_argument(
        "--leader-elect-lease-name",
        type=dns_subdomain,
        default=prog,
        help=f"Name of the Lease (default {prog}).",
    )
    p.add_argument(
        "--leader-elect-namespace",
        type=dns_label,
        default="",
        help="Namespace of the Lease (default: the pod's namespace, else default).",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        type=positive_duration,
        default=15.0,
        metavar="DURATION",
        help="How long a lease holds without renewal (default 15s).",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=positive_duration,
        default=10.0,
        metavar="DURATION",
        help="How long the leader retries renewing before giving up (default 10s).",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=positive_duration,
        default=2.0,
        metavar="DURATION",
        help="Time between leader election attempts (default 2s).",
    )
    p.add_argument(
        "--sharding",
        action="store_true",
        help="Share the objects among all replicas, each holding a Lease of its own "
        "(timings and namespace: the --leader-elect-* flags); not with --leader-elect.",
    )
    p.add_argument(
        "--sharding-ring",
        type=dns_label,
        default=prog,
        help=f"The ring of replicas that share the objects (default {prog}).",
    )
    p.add_argument(
        "--sharding-buckets",
        type=power_of_two,
        default=64,
        help="Buckets the objects are hashed into, a power of two; the same on every "
        "replica of a ring (default 64).",
    )
    p.add_argument(
        "--identity",
        type=identity_name,
        default="",
        help="This replica's name: its Lease with --sharding, and in the User-Agent of "
        "every request (default: the hostname and a suffix random to the process, so that "
        "two replicas on one host never share a Lease).",
    )
    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help='text: klog-style lines (I1203 12:00:00.000000 ... "msg" key=value); json: one '
        "JSON object per line, for a log collector (default text).",
    )
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
        type=not_negative_int,
        default=0,
        help="Log verbosity: 0 default, 4 debug (every event and key).",
    )
    return p


def _add_webhook_flags(p: argparse.ArgumentParser, prog: str) -> None:
    """The webhook server's flags (kubebuilder's scaffold's ``--webhook-cert-path``/``-name``/
    ``-key``, and this project's address and self-managed mode)."""
    p.add_argument(
        "--webhook-bind-address",
        type=bind_address,
        default="0",
        help="Address of the admission webhooks (HTTPS), host:port or :port; 0 disables them "
        "(default 0: a webhook needs a certificate the API server trusts; :9443 is "
        "kubebuilder's port, and manifests/components/webhooks/ sets it).",
    )
    p.add_argument(
        "--webhook-cert-path",
        default="",
        metavar="DIR",
        help="Directory with the webhook server's certificate and key (cert-manager's Secret, "
        "mounted), re-read when they change.",
    )
    p.add_argument(
        "--webhook-cert-name",
        type=file_name,
        default="tls.crt",
        help="The certificate's file name in --webhook-cert-path (default tls.crt).",
    )
    p.add_argument(
        "--webhook-cert-key",
        type=file_name,
        default="tls.key",
        help="The key's file name in --webhook-cert-path (default tls.key).",
    )
    p.add_argument(
        "--webhook-self-managed-certs",
        type=boolean,
        nargs="?",
        const=True,
        default=False,
        metavar="BOOL",
        help="Make the webhook CA and certificate in the process, renew them before they "
        "expire, and write the CA into the two webhook configurations named below, instead of "
        "--webhook-cert-path (default false).",
    )
    p.add_argument(
        "--webhook-cert-hosts",
        type=host_list,
        default=("localhost", "127.0.0.1"),
        metavar="HOSTS",
        help="Comma-separated DNS names and IPs of the self-managed certificate, e.g. the "
        "Service's NAME.NAMESPACE.svc (default localhost,127.0.0.1).",
    )
    p.add_argument(
        "--webhook-mutating-configuration",
        type=optional_name,
        default=f"{prog}-mutating-webhook-configuration",
        metavar="NAME",
        help="The MutatingWebhookConfiguration the self-managed CA is written into; empty: "
        f"none (default {prog}-mutating-webhook-configuration).",
    )
    p.add_argument(
        "--webhook-validating-configuration",
        type=optional_name,
        default=f"{prog}-validating-webhook-configuration",
        metavar="NAME",
        help="The ValidatingWebhookConfiguration the self-managed CA is written into; empty: "
        f"none (default {prog}-validating-webhook-configuration).",
    )


# -- combinations: rules between flags, checked once every value is valid on its own ----------


def combination_errors(options: Options) -> list[str]:
    """What is wrong between flags, one sentence each (empty when they fit together)."""
    o = options
    errors = []
    if o.sharding and o.leader_elect:
        # both decide who works: every replica (sharding) or one (leader election)
        errors.append("--sharding and --leader-elect cannot be used together")
    # client-go NewLeaderElector: the leader must give up renewing before the lease runs out
    # (else two leaders), and must be able to retry at least once within the deadline. Checked
    # without --leader-elect too: the values are wrong either way, and turning leader election
    # on later must not be the moment they fail.
    if o.leader_elect_lease_duration <= o.leader_elect_renew_deadline:
        errors.append(
            f"--leader-elect-lease-duration ({format_duration(o.leader_elect_lease_duration)}) "
            f"must be greater than --leader-elect-renew-deadline "
            f"({format_duration(o.leader_elect_renew_deadline)})"
        )
    elif o.leader_elect_renew_deadline <= JITTER_FACTOR * o.leader_elect_retry_period:
        errors.append(
            f"--leader-elect-renew-deadline ({format_duration(o.leader_elect_renew_deadline)}) "
            f"must be greater than {JITTER_FACTOR:g} x --leader-elect-retry-period "
            f"({format_duration(o.leader_elect_retry_period)})"
        )
    # client-go's clientset: a token bucket of size 0 would never let a request through.
    if o.kube_api_qps > 0 and o.kube_api_burst < 1:
        errors.append(
            f"--kube-api-burst must be at least 1 when --kube-api-qps is above 0 "
            f"(got burst {o.kube_api_burst}, qps {o.kube_api_qps:g})"
        )
    metrics, probes = o.metrics_bind_address, o.health_probe_bind_address
    if metrics is not None and probes is not None and _same_listener(metrics, probes):
        errors.append(
            "--metrics-bind-address and --health-probe-bind-address must differ "
            f"(both {_render(metrics)}): two servers cannot listen on one port"
        )
    if o.metrics_cert_path:
        if not o.metrics_secure:
            errors.append(
                "--metrics-cert-path needs --metrics-secure: with --metrics-secure=false the "
                "certificate would not be used"
            )
        else:
            # imported only when there is a certificate to check
            from runtime.certwatcher import certificate_error

            problem = certificate_error(
                o.metrics_cert_path, o.metrics_cert_name, o.metrics_cert_key
            )
            if problem is not None:
                errors.append(problem)
    errors.extend(webhook_errors(o))
    return errors


def webhook_errors(o: Options) -> list[str]:
    """What is wrong with the webhook flags: a server needs exactly one source of certificate,
    and that certificate must load (one line and exit 2, as for the metrics certificate)."""
    errors = []
    address = o.webhook_bind_address
    if address is None:
        if o.webhook_cert_path or o.webhook_self_managed_certs:
            which = "--webhook-cert-path" if o.webhook_cert_path else "--webhook-self-managed-certs"
            errors.append(f"{which} needs --webhook-bind-address: no webhook server is started")
        return errors
    for other, flag in (
        (o.metrics_bind_address, "--metrics-bind-address"),
        (o.health_probe_bind_address, "--health-probe-bind-address"),
    ):
        if other is not None and _same_listener(address, other):
            errors.append(
                f"--webhook-bind-address and {flag} must differ (both {_render(address)}): "
                "two servers cannot listen on one port"
            )
    if o.webhook_cert_path and o.webhook_self_managed_certs:
        errors.append(
            "--webhook-cert-path and --webhook-self-managed-certs cannot be used together: "
            "the certificate comes from the files or from the process, not both"
        )
    elif o.webhook_cert_path:
        from runtime.certwatcher import certificate_error

        problem = certificate_error(
            o.webhook_cert_path, o.webhook_cert_name, o.webhook_cert_key, "--webhook-cert"
        )
        if problem is not None:
            errors.append(problem)
    elif not o.webhook_self_managed_certs:
        errors.append(
            "--webhook-bind-address needs a certificate the API server trusts: "
            "--webhook-cert-path (e.g. cert-manager's, mounted) or --webhook-self-managed-certs"
        )
    return errors


def _same_listener(a: BindAddress, b: BindAddress) -> bool:
    """Two addresses that cannot both be bound: one port (not 0: any free port), and hosts
    that overlap (equal, or one of them every interface)."""
    (host_a, port_a), (host_b, port_b) = a, b
    wildcard = ("", "0.0.0.0", "::")
    return port_a == port_b != 0 and (host_a == host_b or host_a in wildcard or host_b in wildcard)


def _render(address: BindAddress) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


OptionsT = TypeVar("OptionsT", bound=Options)


def options_from_args(args: argparse.Namespace, cls: type[OptionsT] = Options) -> OptionsT:  # type: ignore[assignment]
    """The typed options of parsed flags (each flag's ``dest`` is the field's name)."""
    return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


def parse_options(
    argv: Sequence[str] | None = None,
    parser: argparse.ArgumentParser | None = None,
    cls: type[OptionsT] = Options,  # type: ignore[assignment]
) -> OptionsT:
    """Parse and check ``argv`` (default ``sys.argv[1:]``) with ``parser`` (default: the
    process flags alone) into ``cls``; on any invalid value or combination, print one line and
    exit with status 2 (``SystemExit``), as argparse does."""
    parser = parser if parser is not None else build_parser()
    options = options_from_args(parser.parse_args(argv), cls)
    errors = combination_errors(options)
    if errors:
        parser.error(errors[0])  # one line; the next one shows once this one is fixed
    return options
