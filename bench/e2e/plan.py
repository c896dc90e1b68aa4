"""Which trials one run of the end-to-end bench makes, in which order, and running them.

Rounds are interleaved (every variant once per round, in an order that rotates from round to
round) because the machine is shared: load that comes and goes then spreads over all variants
instead of landing on one, and the medians over rounds compare like with like.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.e2e import report, trials
from bench.e2e.harness import FLOOR, KOPF, OFFICIAL, OFFICIAL8, OURS, OURS8, Variant

Trial = tuple[Variant, int, float]  # (controller, N, seconds of added latency)
PARTS = ("burst", "steady", "memory")


@dataclass
class Plan:
    """Which trials one run makes."""

    sizes: list[int]  # burst sizes N; at each, every variant of `peers`
    latencies: list[float]  # seconds of injected latency per request
    rounds: int  # interleaved rounds; figures are medians over them
    peers: list[Variant]  # the like-for-like set run at every (N, latency)
    scaling_n: int  # ours at 1 worker too, at this N (2 and 8 are in the peer set)
    qps20: list[tuple[int, float]]  # (N, latency) where ours runs with --kube-api-qps 20
    steady_n: int  # Foos converged before counting steady-state writes
    steady_resync: float  # --resync-period of that run, seconds (two periods are watched)
    memory_n: int  # Foos and Deployments cached for the memory figures
    timeout: float  # seconds one burst may take before it is reported as not converged
    qps20_once: list[tuple[int, float]] = field(default_factory=list)  # first round only

    def resize(self, sizes: list[int]) -> None:
        """Burst at these N instead: the 1-worker trial moves to the largest, qps=20 to the
        smallest (it is slow by design: about N / 4 seconds)."""
        self.sizes = sorted(sizes)
        self.scaling_n = self.sizes[-1]
        self.qps20 = [(self.sizes[0], latency) for _, latency in self.qps20]
        self.qps20_once = [(self.sizes[0], latency) for _, latency in self.qps20_once]


def quick() -> Plan:
    """The make-bench set: a few minutes."""
    return Plan(
        sizes=[100, 1000],
        latencies=[0.0, 0.005],
        rounds=1,
        peers=[OURS, OURS8, OFFICIAL, KOPF, FLOOR],
        scaling_n=1000,
        qps20=[(100, 0.0)],
        steady_n=1000,
        steady_resync=5.0,
        memory_n=10_000,
        timeout=600,
    )


def full() -> Plan:
    """The published set (docs/benchmarks.md): about half an hour."""
    return Plan(
        sizes=[100, 1000, 5000],
        latencies=[0.0, 0.005],
        rounds=3,
        peers=[OURS, OURS8, OFFICIAL, OFFICIAL8, KOPF, FLOOR],
        scaling_n=1000,
        qps20=[(100, 0.0), (100, 0.005)],
        steady_n=1000,
        steady_resync=10.0,
        memory_n=10_000,
        timeout=1800,
    )


def schedule(plan: Plan, first_round: bool) -> list[Trial]:
    """The burst trials of one round, before rotation."""
    out: list[Trial] = []
    for latency in plan.latencies:
        for n in plan.sizes:
            out += [(v, n, latency) for v in plan.peers]
            if n == plan.scaling_n:
                out.append((Variant("ours", workers=1), n, latency))
    if importlib.util.find_spec("kopf") is None:
        print(
            "  kopf is not installed (pip install -e '.[bench]'): the kopf peer is skipped",
            flush=True,
        )
        out = [t for t in out if t[0].kind != "kopf"]
    qps = plan.qps20 + (plan.qps20_once if first_round else [])
    out += [(Variant("ours", qps=20.0), n, latency) for n, latency in qps]
    return out


def run(plan: Plan, parts: set[str]) -> dict:
    """Every trial of the plan, printing one line per trial as it ends; the raw results."""
    started = time.monotonic()
    results: dict[str, Any] = {"bursts": []}
    with tempfile.TemporaryDirectory(prefix="e2e-bench-") as tmp:
        workdir = Path(tmp)
        if "burst" in parts:
            for r in range(plan.rounds):
                todo = schedule(plan, r == 0)
                shift = (r * len(todo)) // max(1, plan.rounds)
                for v, n, latency in todo[shift:] + todo[:shift]:
                    res = trials.burst(v, n, latency, workdir, plan.timeout)
                    res["round"] = r
                    results["bursts"].append(res)
                    print(report.burst_line(res, plan.rounds), flush=True)
        if "steady" in parts:
            results["steady"] = trials.steady_state(plan.steady_n, plan.steady_resync, 2, workdir)
            print("  steady state:", json.dumps(results["steady"]), flush=True)
        if "memory" in parts:
            results["memory"] = []
            with trials.preloaded(plan.memory_n, workdir) as (sim, kubeconfig):
                for strip in (False, True):
                    row = trials.memory_row(sim, kubeconfig, plan.memory_n, strip)
                    results["memory"].append(row)
                    print(f"  memory strip={strip}: {json.dumps(row)}", flush=True)
    results["elapsed"] = time.monotonic() - started
    return results
