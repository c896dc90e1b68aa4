"""The log lines a burst of Foos costs the controller at ``-v 0``, per Foo and by message.

    python -m bench.log_lines --foos 500 [--variant NAME=DIR ...]

No client-go twin: a bench. Each controller (this checkout's, and each ``--variant`` tree's)
runs as ``bench.e2e_bench`` runs it (``bench.e2e.harness.running``: 2 workers, unlimited QPS,
text logs at ``-v 0``), one burst of ``--foos`` Foos; the lines it wrote from the burst's start
until it converged are counted by message. Multiplied by what one line costs
(``python -m bench.logging_bench``), that is the CPU the log takes per Foo, measured apart from
the burst's noise on this shared machine. docs/benchmarks.md (Logging at client-go's levels)
has the figures.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from bench.e2e import harness
from bench.e2e.harness import OURS, Variant
from bench.e2e_bench import named_checkout

# The message of a text-format line: the first quoted string after the klog header.
_MESSAGE = re.compile(r'^[IWEFD]\d{4} [\d:.]+ \S+\] "((?:[^"\\]|\\.)*)"')


def burst_lines(v: Variant, foos: int) -> Counter[str]:
    """The lines, by message, that ``v``'s controller wrote while a burst converged."""
    with tempfile.TemporaryDirectory() as wd, harness.running(v, 0.0, Path(wd)) as running:
        sim, tracker, ctl = running
        start = ctl.log_path.stat().st_size
        names = harness.foo_names(foos)
        tracker.arm(names)
        harness.create_foos(sim, names)
        if not tracker.done.wait(120):
            raise RuntimeError(f"{v.label}: the burst did not converge; see {ctl.log_path}")
        with open(ctl.log_path, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
    return Counter(m.group(1) for m in map(_MESSAGE.match, text.splitlines()) if m)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.log_lines", description=__doc__)
    p.add_argument("--foos", type=int, default=500)
    p.add_argument("--variant", type=named_checkout, action="append", default=[])
    args = p.parse_args(argv)
    variants = [OURS] + [replace(OURS, source=path, name=name) for name, path in args.variant]
    counts = {v.label: burst_lines(v, args.foos) for v in variants}
    messages = sorted({m for c in counts.values() for m in c}, key=lambda m: -counts[OURS.label][m])
    print(f"lines per Foo at -v 0, one burst of {args.foos} Foos each")
    print("| message | " + " | ".join(counts) + " |")
    print("|---|" + "---:|" * len(counts))
    for message in messages:
        cells = " | ".join(f"{c[message] / args.foos:.2f}" for c in counts.values())
        print(f"| {message} | {cells} |")
    totals = " | ".join(f"**{sum(c.values()) / args.foos:.2f}**" for c in counts.values())
    print(f"| all | {totals} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
