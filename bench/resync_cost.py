"""What informer resyncs cost the controller once every Foo has converged.

    python -m bench.resync_cost [--foos 500] [--resync 2s] [--seconds 20] [--rounds 2]

sample-controller's informer factories resync every 30 s: every cached Foo is handed to the
update handler again and enqueued, and every Deployment's handler runs (client-go's
``resyncPeriod``; ours is ``--resync-period``). A converged Foo costs no write then, but its
reconcile still runs. In a burst that lasts minutes (20,000 Foos), several resyncs fall inside
it, each over the Foos created so far: that is CPU per Foo that grows with N while the floor's
does not (docs/benchmarks.md, "How cost grows with N").

Each round starts kubesim (Deployments made available at once) and the controller
(``python -m controller``, 2 workers, unlimited QPS) with ``--resync`` and, as the same-run
baseline, with resync off; creates ``--foos`` Foos and waits until all are available, then
reads the controller's CPU time over ``--seconds``. The figure is the CPU of one Foo's resync
(its Foo and its Deployment handled again): (CPU with resync - CPU without) / (Foos x resyncs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from client.config import load_rest_config
from client.rest import RESTClient

ROOT = Path(__file__).resolve().parents[1]
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(check, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"resync_cost: {what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)


def one_run(foos: int, resync: str, seconds: float, workdir: Path) -> float:
    """The controller's CPU seconds over ``seconds`` once ``foos`` Foos have converged."""
    kubeconfig = workdir / "kubeconfig"
    kubeconfig.unlink(missing_ok=True)  # a fresh server writes a fresh one
    sim = subprocess.Popen(
        [sys.executable, "-m", "kubesim", "--listen", "127.0.0.1:0", "--kubeconfig",
         str(kubeconfig), "--crd", str(ROOT / "crds/foo-crd.yaml"),
         "--deployment-status-delay", "0"],
        cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    ctl = None
    try:
        _wait_for(kubeconfig.exists, "kubesim's kubeconfig", 30)
        rest = RESTClient(load_rest_config(str(kubeconfig)))
        _wait_for(lambda: _answers(rest), "kubesim answering", 30)
        ctl = subprocess.Popen(
            [sys.executable, "-m", "controller", "--kubeconfig", str(kubeconfig),
             "--resync-period", resync, "--health-probe-bind-address", "0"],
            cwd=ROOT, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for i in range(foos):
            foo = {
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "metadata": {"name": f"foo-{i}"},
                "spec": {"deploymentName": f"foo-{i}", "replicas": 1},
            }
            rest.request("POST", FOOS, body=foo)

        def converged() -> bool:
            items = rest.request("GET", FOOS)["items"]
            ready = [f for f in items if f.get("status", {}).get("availableReplicas") == 1]
            return len(ready) == foos

        _wait_for(converged, f"{foos} Foos available", 600)
        before = _cpu_seconds(ctl.pid)
        time.sleep(seconds)  # the measured window: resyncs come on their own clock
        return _cpu_seconds(ctl.pid) - before
    finally:
        for proc in (ctl, sim):
            if proc is not None:
                proc.terminate()
                proc.wait(10)


def _answers(rest: RESTClient) -> bool:
    try:
        rest.request("GET", "/version", timeout=2)
        return True
    except Exception:
        return False


def _seconds(go: str) -> float:
    return float(go[:-1]) * (60 if go.endswith("m") else 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.resync_cost", description=__doc__)
    parser.add_argument("--foos", type=int, default=500)
    parser.add_argument("--resync", default="2s", help="Go syntax, seconds or minutes")
    parser.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    resyncs = args.seconds / _seconds(args.resync)
    per_foo: list[float] = []
    with tempfile.TemporaryDirectory(prefix="resync-cost-") as tmp:
        for r in range(args.rounds):
            # alternate which goes first, so that a drift of the machine's load hits both
            order = [args.resync, "0"] if r % 2 == 0 else ["0", args.resync]
            cpu = {mode: one_run(args.foos, mode, args.seconds, Path(tmp)) for mode in order}
            cost = (cpu[args.resync] - cpu["0"]) / (args.foos * resyncs)
            per_foo.append(cost)
            print(
                f"round {r + 1}/{args.rounds}: {args.foos} Foos, {args.seconds:g} s: "
                f"CPU {cpu[args.resync]:.2f} s with --resync-period {args.resync}, "
                f"{cpu['0']:.2f} s without (baseline): {cost * 1e3:.3f} ms per Foo per resync",
                flush=True,
            )
    print(f"median: {statistics.median(per_foo) * 1e3:.3f} ms per Foo per resync")
    return 0


if __name__ == "__main__":
    sys.exit(main())
