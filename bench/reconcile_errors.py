"""Reconcile errors of a converging run: N Foos created, scaled and deleted, nothing wrong.

``python -m bench.reconcile_errors [--foos 500] [--workers 2]``

The controller runs as ``sample-controller`` (the real CLI, in its own process, metrics on)
against a fresh in-process kubesim whose deployment status loop marks replicas available at
once, so the controller's writes race kubesim's own Deployment status writes and their watch
events, as on a busy cluster. The run:

1. creates N Foos (replicas 1, 2, 3 in turn) and waits until every one is available;
2. patches every Foo to one more replica and waits again;
3. deletes every Foo and waits until the garbage collector has removed every Deployment.

It then reads ``controller_runtime_reconcile_errors_total`` and the reconcile results from the
controller's ``/metrics``, and the 409 answers the controller received from kubesim's request
log. Nothing here is wrong, so every error would be one the controller made for itself; docs/
benchmarks.md ("Reconcile errors") records a run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bench.e2e import harness
from bench.e2e.harness import FOO_GVR, NAMESPACE, Launch, Variant
from client.rest import RESTClient, resource_path
from kubesim import KubeSim

__all__ = ["main", "run"]

DEPLOYMENTS = ("apps", "v1", "deployments")
USER_AGENT = "sample-controller-py/0.1.0"  # runtime.manager.USER_AGENT
STEP_TIMEOUT = 600.0  # seconds each step may take to converge


def wait(what: str, done: Callable[[], bool], timeout: float = STEP_TIMEOUT) -> float:
    """Poll ``done`` every 0.2 s; the seconds it took. Raises on timeout."""
    start = time.monotonic()
    while not done():
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.2)
    return time.monotonic() - start


def all_available(api: RESTClient, names: set[str]) -> bool:
    foos = api.request("GET", resource_path(*FOO_GVR, NAMESPACE))["items"]
    good = {
        f["metadata"]["name"]
        for f in foos
        if (f.get("status") or {}).get("availableReplicas") == f["spec"]["replicas"]
        and (f.get("status") or {}).get("observedGeneration") == f["metadata"]["generation"]
    }
    return names <= good


def quiet(sim: KubeSim, seconds: float) -> bool:
    ends = [r.time + r.duration for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]
    return not ends or max(ends) < time.time() - seconds


def metrics(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@contextlib.contextmanager
def stage(workers: int, status_delay: float, workdir: Path) -> Iterator[tuple[KubeSim, int]]:
    """kubesim (its deployment status loop ``status_delay`` behind) and the controller, with
    one Foo converged (start-up done before anything is counted); yields the metrics port."""
    sim = KubeSim(
        crds=[harness.CRD],
        deployment_status_delay=status_delay,
        history_size=500_000,
        request_log_size=2_000_000,
    )
    sim.start()
    port = harness.free_port()
    ctl = harness.Controller(
        Variant("ours", workers=workers),
        sim.write_kubeconfig(workdir / "kubeconfig"),
        workdir / "controller.log",
        Launch(resync="30s", metrics_port=port),
    )
    try:
        api = RESTClient(sim.new_api_client())
        harness.create_foos(sim, ["warmup"])
        wait("the warm-up Foo", lambda: all_available(api, {"warmup"}), timeout=90)
        yield sim, port
    finally:
        ctl.stop()
        sim.close()


class Pace:
    """Spaces calls ``1/rate`` seconds apart (no wait for a rate of 0: as fast as possible)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if self.next > now:
            time.sleep(self.next - now)
        self.next = max(now, self.next) + self.interval


def run(n: int, workers: int, status_delay: float, rate: float, workdir: Path) -> dict[str, object]:
    with stage(workers, status_delay, workdir) as (sim, port):
        wait("the warm-up's last writes", lambda: quiet(sim, 1.0))
        sim.clear_request_log()
        api = RESTClient(sim.new_api_client())
        names = [f"calm-{i:04d}" for i in range(n)]
        pace = Pace(rate)
        start = time.monotonic()
        for i, name in enumerate(names):
            pace()
            api.request(
                "POST", resource_path(*FOO_GVR, NAMESPACE), body=harness.foo_body(name, 1 + i % 3)
            )
        wait("every Foo available", lambda: all_available(api, set(names)))
        created, start = time.monotonic() - start, time.monotonic()
        for i, name in enumerate(names):
            pace()
            api.request(
                "PATCH",
                resource_path(*FOO_GVR, NAMESPACE, name),
                body={"spec": {"replicas": 2 + i % 3}},
                content_type="application/merge-patch+json",
            )
        wait("every Foo scaled", lambda: all_available(api, set(names)))
        scaled, start = time.monotonic() - start, time.monotonic()
        for name in names:
            pace()
            api.request("DELETE", resource_path(*FOO_GVR, NAMESPACE, name))
        wait(
            "every Deployment collected",
            lambda: (
                not [
                    d
                    for d in api.request("GET", resource_path(*DEPLOYMENTS, NAMESPACE))["items"]
                    if d["metadata"]["name"] != "warmup"
                ]
            ),
        )
        deleted = time.monotonic() - start
        # the last syncs (of Foos found gone) and the last Events: a second without a write
        wait("the controller to go quiet", lambda: quiet(sim, 1.0))
        m = metrics(port)
        ours = [r for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]
        conflicts: dict[str, int] = {}
        for r in ours:
            if r.code == 409:
                conflicts[f"{r.verb} {r.resource}"] = conflicts.get(f"{r.verb} {r.resource}", 0) + 1
        label = (("controller", "foo"),)
        return {
            "foos": n,
            "workers": workers,
            "seconds": {"create": created, "scale": scaled, "delete": deleted},
            "errors_total": m.get(("controller_runtime_reconcile_errors_total", label), -1),
            "results": {
                result: m.get(
                    (
                        "controller_runtime_reconcile_total",
                        (("controller", "foo"), ("result", result)),
                    ),
                    -1,
                )
                for result in ("success", "error", "requeue")
            },
            "writes": sum(r.verb in ("create", "update", "patch", "delete") for r in ours),
            "conflicts": dict(sorted(conflicts.items())),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile_errors", description=__doc__)
    parser.add_argument("--foos", type=int, default=500, help="Foos to create (default 500)")
    parser.add_argument("--workers", type=int, default=2, help="controller workers (default 2)")
    parser.add_argument(
        "--status-delay",
        type=float,
        default=1.0,
        help="seconds kubesim's deployment status loop takes to mark replicas available "
        "(default 1, as README's kubesim command)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=50.0,
        help="creates, patches and deletes per second, as users applying manifests send them; "
        "0 for as fast as possible (default 50)",
    )
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reconcile-errors-") as tmp:
        out = run(opts.foos, opts.workers, opts.status_delay, opts.rate, Path(tmp))
    seconds = out["seconds"]
    results = out["results"]
    assert isinstance(seconds, dict) and isinstance(results, dict)
    print(
        f"{out['foos']} Foos at {opts.rate:g}/s, {out['workers']} workers, "
        f"status delay {opts.status_delay:g}s: "
        f"create {seconds['create']:.1f}s, "
        f"scale {seconds['scale']:.1f}s, delete {seconds['delete']:.1f}s"
    )
    print(f"controller_runtime_reconcile_errors_total  {out['errors_total']:g}")
    for result, value in results.items():
        print(f"controller_runtime_reconcile_total{{result={result!r}}}  {value:g}")
    print(f"writes by the controller                   {out['writes']}")
    print(f"409 answers to the controller              {out['conflicts'] or 'none'}")
    return 0 if out["errors_total"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
