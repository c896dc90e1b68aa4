"""How cost grows with the number of Foos: CPU per Foo beside the floor, memory per cached object
beside the decoded objects, from saved ``bench.e2e_bench --json`` runs; a table and a chart.

    python -m bench.e2e.growth --bursts A.json [B.json ...] --memory M500.json [M5000.json ...] \\
        --chart docs/cost_growth.png

No upstream twin: a reading aid, as ``bench.e2e.paired``. Each burst figure is the median over
the rounds of one size, beside the floor's in the same rounds (``--peers 'ours w=2
qps=unlimited,floor'``). Each memory figure is one ``--only memory --memory-n N`` run: the
controller's informers holding N Foos and N Deployments (managedFields stripped, as the
controller runs), RSS over start-up per object, beside the same objects decoded and kept in a
list (the same-run baseline).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.e2e.report import FLOOR, W2

__all__ = ["main"]


def burst_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Per size: ours' and the floor's CPU per Foo (medians), their same-round ratio, and
    ours' context switches per Foo and peak RSS."""
    by_size: dict[int, dict[int, dict[str, dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for i, path in enumerate(paths):
        for res in json.loads(path.read_text())["bursts"]:
            if res.get("converged", True) and res["latency"] == 0:
                # rounds of different files are different rounds
                by_size[res["n"]][i * 1000 + res["round"]][res["variant"]] = res
    rows = []
    for n, rounds in sorted(by_size.items()):
        both = [r for r in rounds.values() if W2 in r and FLOOR in r]
        ours = [r[W2]["cpu"] / n * 1000 for r in both]
        floor = [r[FLOOR]["cpu"] / n * 1000 for r in both]
        ratio = [r[W2]["cpu"] / r[FLOOR]["cpu"] for r in both]
        switches = [r[W2].get("context_switches", 0) / n for r in both]
        floor_switches = [r[FLOOR].get("context_switches", 0) / n for r in both]
        rows.append(
            {
                "n": n,
                "rounds": len(both),
                "ours_ms": statistics.median(ours),
                "floor_ms": statistics.median(floor),
                "ratio": statistics.median(ratio),
                "ratio_range": (min(ratio), max(ratio)),
                "switches": statistics.median(switches),
                "floor_switches": statistics.median(floor_switches),
                "peak_rss_mib": statistics.median(r[W2]["peak_rss"] for r in both) / 2**20,
                "seconds": statistics.median(r[W2]["seconds"] for r in both),
            }
        )
    return rows


def memory_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Per size: bytes per cached object (RSS over start-up, traced) and decoded."""
    rows = []
    for path in paths:
        results = json.loads(path.read_text())
        for row in results["memory"]:
            if not row["strip"]:
                continue
            objects = row["objects"]
            rows.append(
                {
                    "n": objects // 2,
                    "objects": objects,
                    "rss_per_object": row["rss_delta"] / objects,
                    "traced_per_object": row["traced_delta"] / objects,
                    "decoded_per_object": row["decoded"] / row["decoded_objects"],
                }
            )
    return sorted(rows, key=lambda r: r["n"])


def chart(bursts: list[dict[str, Any]], memory: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (cpu, mem) = plt.subplots(1, 2, figsize=(10, 4))
    ns = [r["n"] for r in bursts]
    cpu.plot(ns, [r["ours_ms"] for r in bursts], "o-", color="C0", label="ours, 2 workers")
    cpu.plot(ns, [r["floor_ms"] for r in bursts], "s:", color="0.5", label="floor, same rounds")
    cpu.set(xscale="log", xlabel="Foos in the burst", ylabel="controller CPU per Foo (ms)")
    cpu.set_ylim(bottom=0)
    cpu.set_title("CPU per Foo (0 ms added per request)")
    cpu.legend()
    mn = [r["n"] for r in memory]
    mem.plot(mn, [r["rss_per_object"] / 1000 for r in memory], "o-", color="C0", label="RSS")
    mem.plot(mn, [r["traced_per_object"] / 1000 for r in memory], "^--", color="C2", label="traced")
    mem.plot(
        mn,
        [r["decoded_per_object"] / 1000 for r in memory],
        "s:",
        color="0.5",
        label="decoded objects, same run",
    )
    mem.set(xscale="log", xlabel="Foos cached (and as many Deployments)", ylabel="kB per object")
    mem.set_ylim(bottom=0)
    mem.set_title("memory per cached Foo or Deployment")
    mem.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.e2e.growth", description=__doc__)
    p.add_argument("--bursts", type=Path, nargs="+", default=[])
    p.add_argument("--memory", type=Path, nargs="+", default=[])
    p.add_argument("--chart", type=Path, help="write the chart (PNG) here")
    args = p.parse_args(argv)
    bursts, memory = burst_rows(args.bursts), memory_rows(args.memory)
    print(
        "| Foos | rounds | ours CPU/Foo | floor CPU/Foo | ours / floor, same round | "
        "switches/Foo, ours / floor | ours peak RSS | converge |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in bursts:
        low, high = r["ratio_range"]
        print(
            f"| {r['n']:,} | {r['rounds']} | {r['ours_ms']:.2f} ms | {r['floor_ms']:.2f} ms | "
            f"{r['ratio']:.2f}x ({low:.2f}-{high:.2f}) | "
            f"{r['switches']:.1f} / {r['floor_switches']:.1f} | {r['peak_rss_mib']:.1f} MiB | "
            f"{r['seconds']:.1f} s |"
        )
    print()
    print(
        "| Foos cached (+ as many Deployments) | RSS / object | traced / object | "
        "decoded / object (same run) | RSS / decoded |"
    )
    print("|---:|---:|---:|---:|---:|")
    for r in memory:
        print(
            f"| {r['n']:,} | {r['rss_per_object']:,.0f} B | {r['traced_per_object']:,.0f} B | "
            f"{r['decoded_per_object']:,.0f} B | "
            f"{r['rss_per_object'] / r['decoded_per_object']:.2f}x |"
        )
    if args.chart:
        chart(bursts, memory, args.chart)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
