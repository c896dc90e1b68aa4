"""The end-to-end bench's statistics: percentiles of one trial, medians over rounds.

The machine is shared, so a single trial says little: rounds are interleaved and every figure
reported is a median over them, with the min-max spread of the time to converge kept beside it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

Key = tuple[str, int, float]  # (variant label, N, seconds of added latency)


def pct(values: Iterable[float], q: float) -> float:
    """The nearest-rank q-quantile (0 <= q <= 1); nan for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def summarise(bursts: list[dict]) -> dict[Key, dict]:
    """Medians per (variant, N, latency) over the rounds of burst results."""
    groups: dict[Key, list[dict]] = {}
    for r in bursts:
        groups.setdefault((r["variant"], r["n"], r["latency"]), []).append(r)
    out = {}
    for key, rows in groups.items():
        out[key] = {
            "rounds": len(rows),
            "seconds": med(rows, "seconds"),
            "min": min(r["seconds"] for r in rows),
            "max": max(r["seconds"] for r in rows),
            "foos_per_s": med(rows, "foos_per_s"),
            "cpu": med(rows, "cpu"),
            "server_cpu": med(rows, "server_cpu"),
            "p50": med(rows, "p50"),
            "p99": med(rows, "p99"),
            "peak_rss": statistics.median(r.get("peak_rss", 0.0) for r in rows),
            "writes_per_foo": statistics.median(r["writes"] / r["n"] for r in rows),
            "converged": all(r["converged"] for r in rows),
        }
    return out
