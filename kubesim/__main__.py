"""CLI: serve kubesim until SIGINT/SIGTERM.

    python -m kubesim --listen 127.0.0.1:0 --kubeconfig /tmp/kubesim.kubeconfig \
        [--crd crds/foo.yaml ...] [--deployment-status-delay 1] [--tls] [--token T]
        [--deployment-controller full|no-nodes|none|pods] [--simulated-node]
        [--tls-cert-file cert.pem --tls-private-key-file key.pem] [--version]
        [--client-ca-file ca.pem] [--admin-client-certificate]
        [--emulate 1.24] [--no-watch-list] [--feature-gates ShardedListAndWatch=true]
        [--authorization-mode RBAC] [--webhook-service NAMESPACE/NAME[:PORT]=HOST:PORT ...]

Prints the server URL on the first line of stdout (then flushes), so a parent process can read
it, and writes a kubeconfig for the server when --kubeconfig is given.

Anything that keeps it from serving (a bad flag, a CRD file that is missing or not a valid CRD,
a port in use, a certificate or key that does not load, a kubeconfig that cannot be written) ends
it before it prints the URL, with one line on stderr naming the flag and the problem, and exit
status 2.
"""

from __future__ import annotations

import argparse
import math
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

from kubesim.api.errors import ApiError
from kubesim.api.version import DEFAULT_SERVER_VERSION, SUPPORTED_SERVER_VERSIONS
from kubesim.auth.filters import ALWAYS_ALLOW, AUTHORIZATION_MODES
from kubesim.controllers.manager import DEPLOYMENT_CONTROLLER_MODES
from kubesim.sim import KubeSim
from kubesim.storage.store import WATCH_CACHE_UPPER_BOUND

PROG = "kubesim"
# kubesim's own distribution (kubesim/pyproject.toml); --version names it
DISTRIBUTION = "kubesim"


def version_line() -> str:
    """``kubesim 0.1.0``: the distribution and its version, or "unknown" when run from a tree
    that is not installed (no distribution metadata to read)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version(DISTRIBUTION)
    except PackageNotFoundError:
        number = "unknown"
    return f"{DISTRIBUTION} {number}"


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage block): the flag and the problem."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, e.g. 127.0.0.1:0 (got {value!r})")
    if int(port) > 65535:
        raise argparse.ArgumentTypeError(f"the port must be 0-65535 (got {port})")
    return host or "127.0.0.1", int(port)


def crd_file(value: str) -> list[dict[str, Any]]:
    """The CRDs in a YAML/JSON file, read now so that a missing or malformed file is a flag
    error, not a traceback from deep inside the server's start."""
    import yaml

    try:
        text = Path(value).read_text()
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot read {value}: {err.strerror or err}") from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError as err:
        problem = str(err).splitlines()[0]
        raise argparse.ArgumentTypeError(f"{value} is not YAML: {problem}") from None
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            raise argparse.ArgumentTypeError(
                f"{value}: document {i + 1} is not a CustomResourceDefinition"
            )
        if not isinstance(doc.get("metadata"), dict) or not doc["metadata"].get("name"):
            raise argparse.ArgumentTypeError(f"{value}: document {i + 1} has no metadata.name")
    if not docs:
        raise argparse.ArgumentTypeError(f"{value} holds no CustomResourceDefinition")
    return docs


def seconds(value: str) -> float:
    delay = float(value)
    if not math.isfinite(delay) or delay < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds (got {value})")
    return delay


def at_least_one(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return number


def token(value: str) -> str:
    if not value:
        raise argparse.ArgumentTypeError("must not be empty (omit it to turn authentication off)")
    return value


def webhook_service(value: str) -> tuple[str, str]:
    """NAMESPACE/NAME[:PORT]=HOST:PORT: where a webhook's service reference is dialled."""
    service, sep, target = value.partition("=")
    namespace, slash, name = service.partition("/")
    name, colon, port = name.partition(":")
    host, target_colon, target_port = target.rpartition(":")
    if not (sep and slash and namespace and name and target_colon and host):
        raise argparse.ArgumentTypeError(
            f"expected NAMESPACE/NAME[:PORT]=HOST:PORT (got {value!r})"
        )
    if (colon and not port.isdigit()) or not target_port.isdigit():
        raise argparse.ArgumentTypeError(f"ports must be numbers (got {value!r})")
    return service, target


# The feature gates kubesim models, with their defaults (those of kube-apiserver v1.36).
FEATURE_GATES = {"ShardedListAndWatch": False}


def feature_gates(value: str) -> dict[str, bool]:
    """kube-apiserver's --feature-gates syntax: comma-separated Name=bool pairs (component-base
    featuregate.Set, with strconv.ParseBool's spellings); a gate kubesim does not model is an
    error, as an unknown gate is to the real server."""
    gates: dict[str, bool] = {}
    for pair in value.split(","):
        pair = pair.strip()
        if not pair:
            continue
        name, sep, flag = pair.partition("=")
        name, flag = name.strip(), flag.strip()
        if not sep:
            raise argparse.ArgumentTypeError(f"missing bool value for {name}")
        if name not in FEATURE_GATES:
            known = ", ".join(sorted(FEATURE_GATES))
            raise argparse.ArgumentTypeError(
                f"unrecognized feature gate: {name} (kubesim models: {known})"
            )
        if flag in ("1", "t", "T", "true", "TRUE", "True"):
            gates[name] = True
        elif flag in ("0", "f", "F", "false", "FALSE", "False"):
            gates[name] = False
        else:
            raise argparse.ArgumentTypeError(f"invalid value of {name}={flag}, expected a bool")
    return gates


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="A small Kubernetes API server for tests and demos.")
    p.add_argument(
        "--listen", type=listen, default=("127.0.0.1", 0), help="HOST:PORT (port 0: any free port)"
    )
    p.add_argument("--kubeconfig", help="write a kubeconfig for this server to PATH")
    p.add_argument(
        "--crd",
        type=crd_file,
        action="append",
        default=[],
        metavar="FILE",
        help="CRD YAML/JSON to preload (repeatable)",
    )
    p.add_argument(
        "--deployment-status-delay",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="mark Deployments' replicas ready/available this long after a spec change "
        "(default: off)",
    )
    p.add_argument(
        "--deployment-controller",
        choices=DEPLOYMENT_CONTROLLER_MODES,
        default=None,
        help="what stands in for kube-controller-manager's deployment controller: full, "
        "no-nodes and none make Deployment status up; pods runs the real chain (ReplicaSets, "
        "Pods) (default: full with --deployment-status-delay, else none)",
    )
    p.add_argument(
        "--simulated-node",
        action="store_true",
        help="register one Node that runs Pods, as KWOK simulates one: a scheduler binds them, "
        "a kubelet reports them Running and Ready (with --deployment-controller pods, "
        "Deployments become available through real Pods)",
    )
    p.add_argument("--version", action="version", version=version_line())
    p.add_argument("--tls", action="store_true", help="serve HTTPS with a self-signed certificate")
    p.add_argument(
        "--tls-cert-file",
        metavar="FILE",
        help="kube-apiserver's flag: serve HTTPS with this PEM certificate (with "
        "--tls-private-key-file; the kubeconfig written trusts it as its CA)",
    )
    p.add_argument("--tls-private-key-file", metavar="FILE", help="the PEM key of --tls-cert-file")
    p.add_argument("--token", type=token, help="require this bearer token")
    p.add_argument(
        "--client-ca-file",
        metavar="FILE",
        help="kube-apiserver's flag: a client whose certificate this PEM CA signed is the user "
        "its Subject names (CN; groups: O); implies --tls",
    )
    p.add_argument(
        "--admin-client-certificate",
        action="store_true",
        help="make a client CA and log the admin in with a certificate it signs, as kind does "
        "(user kubernetes-admin, group kubeadm:cluster-admins, bound to cluster-admin under "
        "RBAC); the --kubeconfig written uses it instead of the token; implies --tls",
    )
    p.add_argument(
        "--authorization-mode",
        choices=AUTHORIZATION_MODES,
        default=ALWAYS_ALLOW,
        help="kube-apiserver's flag: AlwaysAllow (default) lets every authenticated request "
        "through; RBAC enforces Roles, ClusterRoles and their bindings",
    )
    p.add_argument(
        "--history-size",
        type=at_least_one,
        default=WATCH_CACHE_UPPER_BOUND,
        help="largest watch window per resource, in events (older RVs get 410); "
        "sized by load between 100 and this, as kube-apiserver's watch cache",
    )
    p.add_argument(
        "--emulate",
        choices=SUPPORTED_SERVER_VERSIONS,
        default=DEFAULT_SERVER_VERSION,
        metavar="VERSION",
        help="answer as this kube-apiserver release: "
        + " or ".join(SUPPORTED_SERVER_VERSIONS)
        + f" (default {DEFAULT_SERVER_VERSION})",
    )
    p.add_argument(
        "--watch-list",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve WatchList (sendInitialEvents) as kube-apiserver v1.34+ does; "
        "--no-watch-list refuses it with v1.24's 422 (default: as --emulate says)",
    )
    p.add_argument(
        "--feature-gates",
        type=feature_gates,
        action="append",
        default=[],
        metavar="NAME=BOOL,...",
        help="kube-apiserver's flag: ShardedListAndWatch=true serves shardSelector on list and "
        "watch (KEP-5866; default false, as in v1.36); repeatable, later values win",
    )
    p.add_argument(
        "--webhook-service",
        type=webhook_service,
        action="append",
        default=[],
        metavar="NAMESPACE/NAME[:PORT]=HOST:PORT",
        help="where an admission webhook's clientConfig.service is reached (kubesim has no "
        "service network; the certificate is still checked for NAME.NAMESPACE.svc); "
        "repeatable",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)

    def fail(message: str) -> NoReturn:
        parser.exit(2, f"{PROG}: error: {message}\n")

    host, port = args.listen
    if (args.tls_cert_file is None) != (args.tls_private_key_file is None):
        fail("--tls-cert-file and --tls-private-key-file must be given together")
    if args.tls_cert_file is not None:
        from kubesim.server.tls import check_key_pair

        try:
            check_key_pair(args.tls_cert_file, args.tls_private_key_file)
        except ValueError as err:
            fail(str(err))
    if args.client_ca_file is not None:
        from kubesim.server.tls import check_ca_file

        try:
            check_ca_file(args.client_ca_file)
        except ValueError as err:
            fail(str(err))
    gates = dict(FEATURE_GATES)
    for given in args.feature_gates:
        gates.update(given)
    try:
        sim = KubeSim(
            host,
            port,
            crds=[doc for docs in args.crd for doc in docs],
            deployment_status_delay=args.deployment_status_delay,
            deployment_controller=args.deployment_controller,
            simulated_node=args.simulated_node,
            tls=args.tls,
            tls_cert_file=args.tls_cert_file,
            tls_private_key_file=args.tls_private_key_file,
            token=args.token,
            client_ca_file=args.client_ca_file,
            admin_client_certificate=args.admin_client_certificate,
            history_size=args.history_size,
            server_version=args.emulate,
            watch_list=args.watch_list,
            sharded_list_and_watch=gates["ShardedListAndWatch"],
            authorization_mode=args.authorization_mode,
            webhook_services=dict(args.webhook_service),
        )
    except ApiError as err:  # the server's own validation refused a CRD
        fail(f"argument --crd: {err}")
    except ValueError as err:  # modes that do not go together (sim.py says which)
        named = args.simulated_node and "simulated_node" in str(err)
        fail(f"argument {'--simulated-node' if named else '--deployment-controller'}: {err}")
    try:
        try:
            sim.start()
        except OSError as err:  # the port is taken, or the address is not ours
            fail(f"argument --listen: cannot listen on {host}:{port}: {err.strerror or err}")
        except RuntimeError as err:  # no openssl on PATH to make --tls's certificate
            flag = "--admin-client-certificate" if "client certificates" in str(err) else "--tls"
            fail(f"argument {flag}: {err}")
        except subprocess.CalledProcessError as err:
            lines = (err.stderr or b"").decode(errors="replace").strip().splitlines()
            detail = lines[-1] if lines else f"exit status {err.returncode}"
            fail(f"argument --tls: openssl could not make a certificate: {detail}")
        if args.kubeconfig:
            try:
                sim.write_kubeconfig(args.kubeconfig)
            except OSError as err:
                fail(
                    f"argument --kubeconfig: cannot write {args.kubeconfig}: {err.strerror or err}"
                )
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        print(sim.url, flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        sim.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
