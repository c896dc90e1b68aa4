"""``make sim`` / ``python -m demo.sim``: a cluster to run the controller against, in one command.

No client-go twin: a convenience of this repository, as ``make demo``. It starts kubesim with
what a local run needs and nothing to paste first:

- the CRDs installed: ``crds/foo-crd.yaml``, and ``examples/bar/crd.yaml`` when it is there;
- the workload chain and a simulated node (kubesim's ``pods`` mode with ``simulated_node``):
  a Deployment owns a ReplicaSet, which owns Pods; a scheduler binds them to the node and its
  kubelet reports them Running ``--status-delay`` seconds later, so ``kubectl get pods`` shows
  them and a Foo's status reaches READY True as on a real cluster;
- a kubeconfig written to a path of its own (``--kubeconfig``, default
  ``.kubesim/kubeconfig`` under the repository), and the line to paste into another terminal:
  ``export KUBECONFIG=...``.

It serves in the foreground until Ctrl-C or SIGTERM, then stops, **removes the kubeconfig** (a
file that names a server no longer there would only turn the next command's mistake into
"connection refused") and exits 0. A kubeconfig left by a sim that is still serving is not
overwritten: that is one line naming it, exit status 1. Start-up mistakes are one line naming the
flag, as kubesim's own command line (``python -m kubesim``) does.
"""

from __future__ import annotations

import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import yaml

from demo.cli import OneLineParser, seconds

ROOT = Path(__file__).resolve().parents[1]
PROG = "make sim"
DEFAULT_KUBECONFIG = ROOT / ".kubesim" / "kubeconfig"
CRD_FILES = (ROOT / "crds" / "foo-crd.yaml", ROOT / "examples" / "bar" / "crd.yaml")

# What stands in for the rest of a cluster, here and in `make demo` and `make demo-ui`: the real
# workload chain (Deployments -> ReplicaSets -> Pods) and one simulated node that runs the Pods,
# so that `kubectl get pods` shows the Foo's pods. {"deployment_controller": "full"} instead:
# Deployment status only, no Pods.
SIM_OPTIONS: dict[str, Any] = {"deployment_controller": "pods", "simulated_node": True}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(PROG, __doc__.split("\n")[0])
    parser.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where kubesim listens (default: a free port on 127.0.0.1)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=DEFAULT_KUBECONFIG,
        metavar="PATH",
        help=f"where to write the kubeconfig (default {DEFAULT_KUBECONFIG.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--status-delay",
        type=seconds,
        default=1.0,
        help="seconds a Pod takes to run on the simulated node (default 1)",
    )
    opts = parser.parse_args(argv)

    def fail(message: str, status: int = 2) -> NoReturn:
        parser.exit(status, f"{PROG}: error: {message}\n")

    host, sep, port = opts.listen.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        fail(f"argument --listen: expected HOST:PORT, e.g. 127.0.0.1:0 (got {opts.listen!r})")
    kubeconfig: Path = opts.kubeconfig.expanduser().resolve()
    serving = _still_serving(kubeconfig)
    if serving:
        fail(
            f"{kubeconfig} belongs to a sim still serving at {serving}: stop it (Ctrl-C in its "
            "terminal) or choose another file with --kubeconfig",
            status=1,
        )
    crds = [doc for path in CRD_FILES if path.exists() for doc in _documents(path)]

    from kubesim import KubeSim  # the embedded API server

    sim = KubeSim(
        host or "127.0.0.1",
        int(port),
        crds=crds,
        deployment_status_delay=opts.status_delay,
        **SIM_OPTIONS,
    )
    stop = threading.Event()
    try:
        try:
            sim.start()
        except OSError as err:
            fail(f"argument --listen: cannot listen on {opts.listen}: {err.strerror or err}")
        try:
            kubeconfig.parent.mkdir(parents=True, exist_ok=True)
            sim.write_kubeconfig(kubeconfig)
        except OSError as err:
            fail(f"argument --kubeconfig: cannot write {kubeconfig}: {err.strerror or err}")
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        installed = ", ".join(str(p.relative_to(ROOT)) for p in CRD_FILES if p.exists())
        print(f"kubesim serving at {sim.url}, with {installed} installed", flush=True)
        print("in another terminal, paste:", flush=True)
        print(f"    export KUBECONFIG={kubeconfig}", flush=True)
        print("Ctrl-C stops it and removes that file.", flush=True)
        stop.wait()
    finally:
        sim.close()
        if stop.is_set():
            kubeconfig.unlink(missing_ok=True)
    print(f"kubesim stopped; removed {kubeconfig}", flush=True)
    return 0


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _still_serving(kubeconfig: Path) -> str | None:
    """The server a kubeconfig from an earlier sim names, if something still answers there."""
    try:
        config = yaml.safe_load(kubeconfig.read_text())
        server = str(config["clusters"][0]["cluster"]["server"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None
    url = urlsplit(server)
    if not url.hostname or not url.port:
        return None
    try:
        with socket.create_connection((url.hostname, url.port), timeout=0.5):
            return server
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
