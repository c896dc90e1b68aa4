"""CLI: serve kubesim until SIGINT/SIGTERM.

    python -m kubesim --listen 127.0.0.1:0 --kubeconfig /tmp/kubesim.kubeconfig \
        [--crd crds/foo.yaml ...] [--deployment-status-delay 1] [--tls] [--token T]

Prints the server URL on the first line of stdout (then flushes), so a parent process can read
it, and writes a kubeconfig for the server when --kubeconfig is given.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .sim import KubeSim
from .storage import WATCH_CACHE_UPPER_BOUND


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:0")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="kubesim", description="A small Kubernetes API server for tests and demos."
    )
    p.add_argument(
        "--listen", type=_listen, default=("127.0.0.1", 0), help="HOST:PORT (port 0: any free port)"
    )
    p.add_argument("--kubeconfig", help="write a kubeconfig for this server to PATH")
    p.add_argument(
        "--crd",
        action="append",
        default=[],
        metavar="FILE",
        help="CRD YAML/JSON to preload (repeatable)",
    )
    p.add_argument(
        "--deployment-status-delay",
        type=float,
        default=None,
        metavar="SECONDS",
        help="mark Deployments' replicas ready/available this long after a spec change "
        "(default: off)",
    )
    p.add_argument("--tls", action="store_true", help="serve HTTPS with a self-signed certificate")
    p.add_argument("--token", help="require this bearer token")
    p.add_argument(
        "--history-size",
        type=int,
        default=WATCH_CACHE_UPPER_BOUND,
        help="largest watch window per resource, in events (older RVs get 410); "
        "sized by load between 100 and this, as kube-apiserver's watch cache",
    )
    args = p.parse_args(argv)

    host, port = args.listen
    sim = KubeSim(
        host,
        port,
        crds=args.crd,
        deployment_status_delay=args.deployment_status_delay,
        tls=args.tls,
        token=args.token,
        history_size=args.history_size,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    sim.start()
    try:
        if args.kubeconfig:
            sim.write_kubeconfig(args.kubeconfig)
        print(sim.url, flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        sim.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
