"""Same-round ratios of a saved end-to-end run: each variant against a reference, round by round.

No upstream twin: a reading aid for ``bench.e2e_bench --json``. The machine is shared, so a
figure moves with the load more than a change moves it; a ratio of two variants measured in the
same round (one after the other, interleaved) cancels most of that. This prints, per burst size
and latency, each variant's median CPU per Foo, peak RSS, time to converge and context switches
per Foo, and the median and range over the rounds of its same-round ratio to each reference
(``--against``):

    python -m bench.e2e.paired RESULTS.json --against floor --against 'base w=2'
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["main", "paired_rows"]

# One trial: (size, latency in ms) -> round -> variant label -> result
Trials = dict[tuple[int, int], dict[int, dict[str, dict[str, Any]]]]


def _group(bursts: Iterable[dict[str, Any]]) -> Trials:
    grouped: Trials = defaultdict(lambda: defaultdict(dict))
    for res in bursts:
        if res.get("converged", True):
            at = (res["n"], round(res["latency"] * 1000))
            grouped[at][res["round"]][res["variant"]] = res
    return grouped


def _spread(values: list[float], unit: str, digits: int) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    return f"{med:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def paired_rows(results: dict[str, Any], against: list[str]) -> list[list[str]]:
    """One row per size, latency and variant: medians (min-max) and same-round ratios."""
    rows = []
    for (n, latency), rounds in sorted(_group(results["bursts"]).items()):
        variants = sorted({v for by_variant in rounds.values() for v in by_variant})
        for variant in variants:
            mine = [r[variant] for r in rounds.values() if variant in r]
            cpu = [res["cpu"] / n * 1000 for res in mine]
            rss = [res.get("peak_rss", 0) / 2**20 for res in mine]
            secs = [res["seconds"] for res in mine]
            # thread hand-offs per Foo (older results have no count)
            switches = [res["context_switches"] / n for res in mine if "context_switches" in res]
            row = [
                f"{n:,}",
                f"{latency} ms",
                variant,
                str(len(mine)),
                _spread(cpu, " ms", 2),
                _spread(rss, " MiB", 1),
                _spread(secs, " s", 2),
                _spread(switches, "", 1),
            ]
            for ref in against:
                cpu_ratio, rss_ratio = [], []
                for by_variant in rounds.values():
                    if variant in by_variant and ref in by_variant and variant != ref:
                        a, b = by_variant[variant], by_variant[ref]
                        cpu_ratio.append(a["cpu"] / b["cpu"])
                        rss_ratio.append(a.get("peak_rss", 0) / max(1, b.get("peak_rss", 1)))
                row.append(_spread(cpu_ratio, "x", 2))
                row.append(_spread(rss_ratio, "x", 3))
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.e2e.paired", description=__doc__)
    p.add_argument("results", type=Path, help="a file written by bench.e2e_bench --json")
    p.add_argument("--against", action="append", default=[], help="reference variant label")
    args = p.parse_args(argv)
    results = json.loads(args.results.read_text())
    head = ["N", "latency", "variant", "rounds", "CPU/Foo", "peak RSS", "converge", "switches/Foo"]
    for ref in args.against:
        head += [f"CPU / {ref}", f"RSS / {ref}"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in paired_rows(results, args.against):
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
