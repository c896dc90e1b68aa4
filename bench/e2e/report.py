"""The end-to-end bench's figures: console lines while it runs, Markdown tables and a chart after.

Figures only. What they mean, how they were measured and what bounds them is written once, by
hand, in docs/benchmarks.md around the block this module renders (``docs.write_docs`` replaces
that block and nothing else); ``bound_figures`` lists the run's numbers that text refers to.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bench.e2e.stats import Key, summarise

W2, W8 = "ours w=2 qps=unlimited", "ours w=8 qps=unlimited"
QPS20 = "ours w=2 qps=20"
RATIO_PAIRS = [
    (W2, "official w=2"),
    (W2, "kopf"),
    (W8, "official w=8"),
    (W8, "kopf"),
    (W2, "floor"),
    (W2, "base w=2"),
]
FLOOR = "floor"
# The columns of the CPU-per-Foo table: ours beside the peers and the floor.
CPU_COLUMNS = [W2, W8, "official w=2", "kopf", FLOOR]
CHART_STYLES = {  # variant label -> (legend, colour, line style)
    W2: ("ours, 2 workers", "C0", "-"),
    W8: ("ours, 8 workers", "C0", "--"),
    "base w=2": ("ours before (baseline checkout), 2 workers", "C4", "-."),
    "official w=2": ("official client, 2 workers", "C1", "-"),
    "official w=8": ("official client, 8 workers", "C1", "--"),
    "kopf": ("kopf", "C2", "-"),
    FLOOR: ("floor (plain http.client loop)", "0.5", ":"),
}


# -- console -------------------------------------------------------------------------------------


def burst_line(res: dict, rounds: int) -> str:
    """One burst trial, as it ends."""
    n = res["n"]
    line = (
        f"  round {res['round'] + 1}/{rounds}  {res['variant']:<24} N={n:<5} "
        f"latency={res['latency'] * 1000:.0f}ms {res['seconds']:7.2f} s "
        f"{res['foos_per_s']:5.0f} Foo/s  cpu {res['cpu']:6.2f} s  "
        f"p50/p99 {res['p50'] * 1000:5.0f}/{res['p99'] * 1000:5.0f} ms  "
        f"writes/Foo {res['writes'] / n:4.1f}  "
        f"cpu/Foo {res['cpu'] / n * 1000:5.2f} ms  "
        f"peak RSS {res.get('peak_rss', 0) / 2**20:5.1f} MiB  "
        f"switches/Foo {res.get('context_switches', 0) / n:5.1f}"
    )
    if not res["converged"]:
        line += f"  NOT CONVERGED ({res['left']} left)"
    return line


def _ratio_keys(summary: dict[Key, dict]) -> list[tuple[int, float, str, str, dict, dict]]:
    """(N, latency, ours, peer, ours' medians, peer's medians) for every pair that ran."""
    out = []
    for n, latency in sorted({(k[1], k[2]) for k in summary}, key=lambda x: (x[1], x[0])):
        for ours, peer in RATIO_PAIRS:
            a, b = summary.get((ours, n, latency)), summary.get((peer, n, latency))
            if a is not None and b is not None:
                out.append((n, latency, ours, peer, a, b))
    return out


def _short(label: str) -> str:
    return label.split(" qps")[0]


def ratio_lines(summary: dict[Key, dict]) -> list[str]:
    """The console form of ratio_table."""
    return [
        f"  N={n:<5} latency={latency * 1000:.0f}ms  {_short(ours):>8} / {peer:<13}"
        f" time {a['seconds'] / b['seconds']:5.2f}x   cpu {a['cpu'] / b['cpu']:5.2f}x"
        for n, latency, ours, peer, a, b in _ratio_keys(summary)
    ]


# -- Markdown ------------------------------------------------------------------------------------


def _table(header: list[str], align: list[str]) -> list[str]:
    """A Markdown table's first two lines; align holds '---' or '---:' per column."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]


def _order(label: str) -> tuple[int, bool, str]:
    kinds = {"ours": 0, "base": 1, "official": 2, "kopf": 3, "floor": 4}
    return (kinds.get(label.split()[0], 9), "qps=20" in label, label)


def burst_table(summary: dict[Key, dict], latency: float) -> list[str]:
    lines = _table(
        [
            "N",
            "controller",
            "converge (s), median (min-max)",
            "Foos/s",
            "create -> Deployment p50 / p99 (ms)",
            "controller CPU (s)",
            "kubesim CPU (s)",
            "API writes / Foo",
        ],
        ["---:", "---"] + ["---:"] * 6,
    )
    keys = sorted((k for k in summary if k[2] == latency), key=lambda k: (k[1], _order(k[0])))
    for variant, n, _ in keys:
        s = summary[(variant, n, latency)]
        spread = f" ({s['min']:.2f}-{s['max']:.2f})" if s["rounds"] > 1 else ""
        flag = "" if s["converged"] else " (not converged)"
        lines.append(
            f"| {n:,} | {variant} | {s['seconds']:.2f}{spread}{flag} | {s['foos_per_s']:,.0f} | "
            f"{s['p50'] * 1000:,.0f} / {s['p99'] * 1000:,.0f} | {s['cpu']:.2f} | "
            f"{s['server_cpu']:.2f} | {s['writes_per_foo']:.1f} |"
        )
    return lines


def ratio_table(summary: dict[Key, dict]) -> list[str]:
    lines = _table(
        ["N", "latency", "ours / peer", "time to converge", "CPU seconds"],
        ["---:", "---:", "---", "---:", "---:"],
    )
    for n, latency, ours, peer, a, b in _ratio_keys(summary):
        lines.append(
            f"| {n:,} | {latency * 1000:.0f} ms | {_short(ours)} / {peer} | "
            f"**{a['seconds'] / b['seconds']:.2f}x** | {a['cpu'] / b['cpu']:.2f}x |"
        )
    return lines


def cpu_per_foo_table(summary: dict[Key, dict]) -> list[str]:
    """Controller CPU per converged Foo, ours beside the peers and the floor, per (N, latency).

    The floor (``bench.peers.floor``) makes the controller's API calls once each with the
    plainest loop: its column is what the calls themselves cost on this interpreter.
    """
    present = [c for c in CPU_COLUMNS if any(k[0] == c for k in summary)]
    lines = _table(
        ["N", "latency"] + [_short(c) for c in present] + ["ours w=2 / floor"],
        ["---:", "---:"] + ["---:"] * (len(present) + 1),
    )
    for n, latency in sorted({(k[1], k[2]) for k in summary}, key=lambda x: (x[1], x[0])):
        cells = []
        for c in present:
            s = summary.get((c, n, latency))
            cells.append(f"{s['cpu'] / n * 1000:.2f} ms" if s else "")
        ours, floor = summary.get((W2, n, latency)), summary.get((FLOOR, n, latency))
        ratio = f"**{ours['cpu'] / floor['cpu']:.2f}x**" if ours and floor else ""
        lines.append(f"| {n:,} | {latency * 1000:.0f} ms | " + " | ".join(cells + [ratio]) + " |")
    return lines


def steady_table(steady: dict) -> list[str]:
    lines = _table(
        [
            "Foos converged",
            "`--resync-period`",
            "periods watched",
            "API writes",
            "requests other than the open watches",
            "reconciles",
            "controller CPU (s)",
        ],
        ["---:"] * 7,
    )
    lines.append(
        f"| {steady['n']:,} | {steady['resync']:g}s | {steady['periods']} | "
        f"**{steady['writes']}** | {steady['requests']} | {steady['syncs']:,.0f} | "
        f"{steady['cpu']:.2f} |"
    )
    return lines


def memory_table(mem: list[dict]) -> list[str]:
    lines = _table(
        [
            "managedFields",
            "RSS delta / object",
            "traced (tracemalloc) / object",
            "decoded / object",
            "cache / decoded",
            "RSS / decoded",
            "decoded one by one / object",
            "traced peak during sync",
        ],
        ["---"] + ["---:"] * 7,
    )
    for row in mem:
        n = row["objects"]
        lines.append(
            f"| {'stripped (transform)' if row['strip'] else 'kept'} | "
            f"{row['rss_delta'] / n:,.0f} B | {row['traced_delta'] / n:,.0f} B | "
            f"{row['decoded'] / n:,.0f} B | {row['traced_delta'] / row['decoded']:.2f}x | "
            f"**{row['rss_delta'] / row['decoded']:.2f}x** | "
            f"{row['decoded_single'] / n:,.0f} B | {row['traced_peak'] / 2**20:,.0f} MiB |"
        )
    return lines


def _verdict(ratios: list[tuple[str, float]]) -> str:
    """'met (0.40x-0.80x)' or 'missed at ...' for ratios that must stay below 1."""
    worst = max(r for _, r in ratios)
    span = f"{min(r for _, r in ratios):.2f}x-{worst:.2f}x"
    if worst < 1.0:
        return f"met ({span})"
    return f"**missed** at {', '.join(w for w, r in ratios if r >= 1.0)} ({span})"


def targets(results: dict, summary: dict[Key, dict]) -> list[str]:
    """The bench's targets, each checked against this run's medians."""
    lines = ["**Targets**, checked against the medians above:", ""]
    for ours in (W2, W8):
        time_r, cpu_r = [], []
        for (variant, n, latency), peer in summary.items():
            if variant.split()[0] not in ("official", "kopf") or (ours, n, latency) not in summary:
                continue
            if variant == "official w=8" and ours.startswith("ours w=2"):
                continue  # like with like: worker counts match, kopf has its own
            if (
                variant == "official w=2"
                and ours.startswith("ours w=8")
                and ("official w=8", n, latency) in summary
            ):
                continue
            a = summary[(ours, n, latency)]
            where = f"N={n:,} {latency * 1000:.0f} ms vs {variant}"
            time_r.append((where, a["seconds"] / peer["seconds"]))
            cpu_r.append((where, a["cpu"] / peer["cpu"]))
        if time_r:
            lines.append(
                f"- {_short(ours)}: converges faster than both peers at every N: "
                f"{_verdict(time_r)}; uses less CPU: {_verdict(cpu_r)}."
            )
    floor_r = [
        (f"N={n:,} {latency * 1000:.0f} ms", summary[(W2, n, latency)]["cpu"] / s["cpu"])
        for (variant, n, latency), s in summary.items()
        if variant == FLOOR and (W2, n, latency) in summary
    ]
    if floor_r:
        span = f"{min(r for _, r in floor_r):.2f}x-{max(r for _, r in floor_r):.2f}x"
        verdict = "met" if max(r for _, r in floor_r) <= 1.2 else "**missed**"
        lines.append(
            f"- ours w=2: CPU within 1.2x of the floor (the steer for the 1.2x-of-Go CPU "
            f"target; Go itself is not measured here): {verdict} ({span})."
        )
    steady = results.get("steady")
    if steady:
        lines.append(
            f"- Steady-state writes are 0: {'met' if steady['writes'] == 0 else '**missed**'}"
            f" ({steady['writes']} writes over {steady['periods']} resync periods)."
        )
    for row in results.get("memory") or []:
        if row["strip"]:
            r = row["traced_delta"] / row["decoded"]
            lines.append(
                f"- managedFields stripped, cache cost within 1.5x of the decoded object: "
                f"{'met' if r <= 1.5 else '**missed**'} ({r:.2f}x)."
            )
            rss = row["rss_delta"] / row["decoded"]
            lines.append(
                f"- managedFields stripped, peak RSS (the delta over start-up) within 1.3x of "
                f"the decoded objects: {'met' if rss <= 1.3 else '**missed**'} ({rss:.2f}x)."
            )
    lines.append("")
    return lines


def bound_figures(results: dict, summary: dict[Key, dict]) -> list[tuple[str, str]]:
    """(figure, value): this run's numbers that docs/benchmarks.md's 'What bounds it' cites.

    Each is derived from the medians above; the reasoning that uses them is in the docs.
    """
    out: list[tuple[str, str]] = []
    big = max((k[1] for k in summary if k[0] == W2), default=0)
    slow = summary.get((W2, big, 0.005))  # bound by round trips
    fast = summary.get((W8, big, 0.005))
    cpu_bound = summary.get((W2, big, 0.0))
    if slow:
        where = f"ours w=2, 5 ms, N={big:,}"
        out.append((f"{where}: Foos/s", f"{slow['foos_per_s']:.0f}"))
        out.append(
            (
                f"{where}: controller CPU in time to converge",
                f"{slow['cpu']:.1f} s in {slow['seconds']:.1f} s",
            )
        )
    if fast:
        out.append((f"ours w=8, 5 ms, N={big:,}: Foos/s", f"{fast['foos_per_s']:.0f}"))
    if cpu_bound:
        where = f"ours w=2, 0 ms, N={big:,}"
        share = cpu_bound["cpu"] / cpu_bound["seconds"]
        out.append((f"{where}: controller CPU, share of one core", f"{share:.0%}"))
        per_foo = cpu_bound["cpu"] / big * 1000
        out.append((f"{where}: controller CPU per Foo", f"{per_foo:.1f} ms"))
    qps = [(k[1], s) for k, s in summary.items() if k[0] == QPS20 and k[2] == 0.0]
    if qps:
        n, s = min(qps, key=lambda x: x[0])
        where = f"ours w=2 qps=20, 0 ms, N={n:,}"
        w = s["writes_per_foo"]
        out.append((f"{where}: API writes / Foo", f"{w:.1f}"))
        out.append((f"{where}: Foos/s that 20 qps allows (20 / writes per Foo)", f"{20 / w:.1f}"))
        out.append((f"{where}: Foos/s measured", f"{s['foos_per_s']:.1f}"))
    mem = {row["strip"]: row for row in results.get("memory") or []}
    if True in mem and False in mem:
        kept, stripped = mem[False], mem[True]
        cache_cut = 1 - stripped["traced_delta"] / kept["traced_delta"]
        rss_cut = 1 - stripped["rss_delta"] / kept["rss_delta"]
        single = stripped["decoded_single"] / stripped["decoded"]
        out.append(("managedFields stripped: the cache (traced) smaller by", f"{cache_cut:.0%}"))
        out.append(("managedFields stripped: RSS smaller by", f"{rss_cut:.0%}"))
        out.append(("decoded one by one / decoded in list pages (stripped)", f"{single:.1f}x"))
    return out


def package_version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def kopf_executor_threads() -> int:
    """asyncio's default executor size, which kopf runs sync handlers on: min(32, cores + 4)."""
    return min(32, (os.cpu_count() or 1) + 4)


def figures(results: dict, command: str) -> str:
    """The Markdown block of docs/benchmarks.md's 'End to end' section that a run rewrites."""
    summary = summarise(results["bursts"])
    rounds = max((r["round"] for r in results["bursts"]), default=0) + 1
    lines = [
        f"Run: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"kopf {package_version('kopf')} ({kopf_executor_threads()} executor threads), "
        f"kubernetes {package_version('kubernetes')}; {rounds} interleaved round(s), medians; "
        f"whole run {results['elapsed'] / 60:.0f} min, at commit {results.get('revision', '?')}.",
        "Command:",
        "",
        "```sh",
        command,
        "```",
        "",
    ]
    if results.get("note"):
        lines += [results["note"], ""]
    lines += ["![time to converge vs N](e2e_converge.png)", ""]
    for latency in sorted({k[2] for k in summary}):
        lines += [f"**Burst, {latency * 1000:.0f} ms added per request**", ""]
        lines += burst_table(summary, latency)
        lines.append("")
    if summary:
        lines += ["**Ratios, ours / peer** (below 1: ours is faster or cheaper)", ""]
        lines += ratio_table(summary)
        lines.append("")
        lines += ["**Controller CPU per Foo** (CPU seconds of the burst / N)", ""]
        lines += cpu_per_foo_table(summary)
        lines.append("")
    steady = results.get("steady")
    if steady:
        lines += ["**Steady state**", ""] + steady_table(steady) + [""]
    mem = results.get("memory")
    if mem:
        n = mem[0]["objects"]
        lines += [
            f"**Memory**: {n // 2:,} Foos and {n // 2:,} Deployments cached; "
            f"bytes per object over all {n:,}",
            "",
        ]
        lines += memory_table(mem) + [""]
    lines += targets(results, summary)
    bounds = bound_figures(results, summary)
    if bounds:
        lines += ["**Figures that 'What bounds it' cites**", ""]
        lines += _table(["figure", "this run"], ["---", "---:"])
        lines += [f"| {name} | {value} |" for name, value in bounds]
        lines.append("")
    return "\n".join(lines)


# -- chart ---------------------------------------------------------------------------------------


def chart(summary: dict[Key, dict], path: Path) -> None:
    """Time to converge against N, one panel per latency, log-log (docs/e2e_converge.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latencies = sorted({k[2] for k in summary})
    fig, axes = plt.subplots(1, len(latencies), figsize=(4.2 * len(latencies), 3.3), sharey=True)
    axes = list(axes) if len(latencies) > 1 else [axes]
    for ax, latency in zip(axes, latencies, strict=True):
        for variant, (label, color, ls) in CHART_STYLES.items():
            pts = sorted(
                (k[1], v["seconds"])
                for k, v in summary.items()
                if k[0] == variant and k[2] == latency
            )
            if len(pts) > 1:
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    ls,
                    color=color,
                    marker="o",
                    markersize=3,
                    label=label,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Foos created at once (N)")
        ax.set_title(f"{latency * 1000:.0f} ms added per request", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds until all converged")
    if axes[-1].get_legend_handles_labels()[0]:  # a run at one N draws no lines
        axes[-1].legend(fontsize=8)
    fig.suptitle("Time to converge a burst of Foos (kubesim, 2 cores; median)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
