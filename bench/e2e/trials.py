"""The end-to-end bench's trials: a burst, the steady state, the memory of a full cache.

Each trial sets up its stage with ``harness``, reads its figures with ``measure`` and returns
them as one plain dict (what ``--json`` saves and ``report`` reads), printing nothing.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.e2e import harness, measure
from bench.e2e.harness import CRD, OURS, PY, ROOT, Launch, Variant
from bench.e2e.preload import preload
from bench.e2e.stats import pct
from kubesim import KubeSim

SETTLE = 0.5  # seconds for the warm-up's trailing writes (its Events) to land before a burst
QUIET = 1.0  # seconds without a request that count as quiet before the steady state is watched
QUIET_DEADLINE = 30.0  # at most this long waiting for quiet
STEADY_CONVERGE_TIMEOUT = 300.0
MEMORY_PROBE_TIMEOUT = 900.0


def burst(v: Variant, n: int, latency: float, workdir: Path, timeout: float) -> dict:
    """N Foos created at once, timed until every one has converged.

    The clock starts as the first Foo is created and stops at the commit that made the last
    one converge. Controller CPU is the child's, kubesim's is this process's; requests and
    writes are everything in kubesim's request log, which only the controller writes to.
    """
    with harness.running(v, latency, workdir) as (sim, tracker, ctl):
        time.sleep(SETTLE)  # nothing signals the last Event of the warm-up
        sim.clear_request_log()
        names = harness.foo_names(n)
        tracker.arm(names)
        profiler = measure.Profiler(ctl.pid, f"{v.kind}-{n}")
        cpu0, server0 = measure.cpu_seconds(ctl.pid), measure.self_cpu()
        switches0 = measure.context_switches(ctl.pid)
        t0 = time.monotonic()
        harness.create_foos(sim, names)
        converged = tracker.done.wait(timeout)
        t1 = tracker.done_at if converged else time.monotonic()
        cpu1, server1 = measure.cpu_seconds(ctl.pid), measure.self_cpu()
        switches = measure.context_switches(ctl.pid) - switches0
        profiler.stop()
        peak = measure.peak_rss(ctl.pid)
        log = sim.request_log
        writes = measure.writes(log)
        lat = tracker.create_to_deployment(names)
        return {
            "variant": v.label,
            "kind": v.kind,
            "workers": v.workers,
            "qps": v.qps,
            "n": n,
            "latency": latency,
            "converged": converged,
            "left": len(tracker.pending),
            "seconds": t1 - t0,
            "foos_per_s": n / (t1 - t0),
            "cpu": cpu1 - cpu0,
            "server_cpu": server1 - server0,
            "peak_rss": peak,
            "context_switches": switches,
            "p50": pct(lat, 0.5),
            "p99": pct(lat, 0.99),
            "requests": len(log),
            "writes": len(writes),
            "write_kinds": measure.count(f"{r.verb} {r.resource}" for r in writes),
            "conflicts": sum(r.code == 409 for r in log),
        }


def _wait_quiet(sim: KubeSim) -> None:
    """Until no request but the open watches for QUIET seconds (Events are written late)."""
    deadline = time.monotonic() + QUIET_DEADLINE
    while time.monotonic() < deadline:
        log = sim.request_log
        if log and time.time() - measure.last_request_end(log) > QUIET:
            return
        time.sleep(0.2)


def steady_state(n: int, resync: float, periods: int, workdir: Path) -> dict:
    """With n Foos converged, count API writes over whole resync periods (must be 0).

    Every resync re-queues every Foo, so the reconciles counted show the controller did run
    its syncs; the writes show that a sync of a converged Foo changes nothing.
    """
    port = harness.free_port()
    launch = Launch(resync=f"{resync:g}s", metrics_port=port)
    with harness.running(OURS, 0.0, workdir, launch) as (sim, tracker, ctl):
        names = harness.foo_names(n)
        tracker.arm(names)
        harness.create_foos(sim, names)
        if not tracker.done.wait(STEADY_CONVERGE_TIMEOUT):
            raise RuntimeError("steady state: burst did not converge")
        _wait_quiet(sim)
        sim.clear_request_log()
        syncs0 = measure.scrape(port, "controller_runtime_reconcile_total")
        cpu0 = measure.cpu_seconds(ctl.pid)
        time.sleep(resync * periods)  # the figure is "over whole periods": a wall-clock span
        syncs1 = measure.scrape(port, "controller_runtime_reconcile_total")
        cpu1 = measure.cpu_seconds(ctl.pid)
        log = sim.request_log
        writes = measure.writes(log)
        return {
            "n": n,
            "resync": resync,
            "periods": periods,
            "writes": len(writes),
            "requests": sum(r.verb != "watch" for r in log),
            "write_detail": sorted({f"{r.verb} {r.resource}" for r in writes}),
            "syncs": syncs1 - syncs0,
            "cpu": cpu1 - cpu0,
        }


@contextlib.contextmanager
def preloaded(n: int, workdir: Path) -> Iterator[tuple[KubeSim, str]]:
    """A kubesim holding n converged Foos and Deployments, and a kubeconfig for it."""
    sim = KubeSim(crds=[CRD], history_size=4 * n + 1000)
    sim.start()
    try:
        preload(sim, n)
        yield sim, sim.write_kubeconfig(workdir / "kubeconfig")
    finally:
        sim.close()


def memory_row(sim: KubeSim, kubeconfig: str, n: int, strip: bool) -> dict:
    """RSS and tracemalloc figures of the controller holding the preloaded objects.

    The probe (``bench.e2e_memory_probe``) runs twice: without tracemalloc for RSS, whose
    figures tracemalloc's own bookkeeping would inflate, and with it for the traced figures.
    """
    row: dict[str, Any] = {}
    for traced in (False, True):
        cmd = [PY, "-m", "bench.e2e_memory_probe", "--kubeconfig", kubeconfig, "--expect", str(n)]
        cmd += ["--strip"] if strip else []
        cmd += ["--tracemalloc"] if traced else []
        sim.clear_request_log()
        done = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, timeout=MEMORY_PROBE_TIMEOUT
        )
        if done.returncode != 0:
            raise RuntimeError(f"memory probe failed: {done.stderr[-2000:]}")
        got = json.loads(done.stdout.strip().splitlines()[-1])
        writes = len(measure.writes(sim.request_log))
        if traced:
            traced_figures = {k: v for k, v in got.items() if k.startswith(("traced", "decoded"))}
            row.update(traced_figures, writes_traced=writes)
        else:
            row.update(got, writes=writes)
    return row
