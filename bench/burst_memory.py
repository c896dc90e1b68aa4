"""What a burst of Foos adds to the controller's memory, against a baseline tree in the same run.

    python -m bench.burst_memory --foos 500 --rounds 3 --baseline /tmp/base

No client-go twin: a bench. Each round starts kubesim and the controller as ``bench.e2e_bench``
does (``bench.e2e.harness.running``: 2 workers, unlimited QPS, one warm-up Foo converged), reads
the controller's ``/proc/PID/status`` (VmRSS, RssAnon, VmHWM, Threads), creates the burst inside
kubesim, waits until every Foo has converged and a second more, and reads it again. With
``--baseline DIR`` (a tree made by ``git archive REV | tar -x -C DIR``) each round runs that
tree's controller too, interleaved, so load on the machine hits both alike. What the burst adds
is the RssAnon growth; VmHWM equal to the final VmRSS says it was kept, not a transient.
docs/benchmarks.md (Memory of a burst) has the figures and what holds them.
"""

from __future__ import annotations

import argparse
import compileall
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.e2e import harness
from bench.e2e.harness import OURS, Variant

FIELDS = ("VmRSS", "VmHWM", "RssAnon", "Threads")


def status(pid: int) -> dict[str, int]:
    """The fields of ``/proc/PID/status`` in FIELDS (kB, and Threads as a count)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in FIELDS:
                out[name] = int(value.split()[0])
    return out


def one_burst(v: Variant, foos: int) -> tuple[dict[str, int], dict[str, int]]:
    """The controller's status before and after a burst of ``foos`` Foos."""
    with tempfile.TemporaryDirectory() as wd, harness.running(v, 0.0, Path(wd)) as running:
        sim, tracker, ctl = running
        time.sleep(0.5)
        names = harness.foo_names(foos)
        tracker.arm(names)
        before = status(ctl.pid)
        harness.create_foos(sim, names)
        if not tracker.done.wait(120):
            raise RuntimeError(f"{v.label}: the burst did not converge; see {ctl.log_path}")
        time.sleep(1.0)
        return before, status(ctl.pid)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--foos", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--baseline", type=Path, help="another tree's controller, interleaved")
    args = p.parse_args()
    variants = [OURS]
    if args.baseline is not None:
        # compiled first: a tree without .pyc files pays ~1 MiB at start-up for compiling
        compileall.compile_dir(str(args.baseline), quiet=1)
        variants.insert(0, replace(OURS, source=args.baseline))
    print("| round | variant | VmRSS before | VmRSS after | VmHWM | RssAnon growth | threads |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in range(1, args.rounds + 1):
        for v in variants:
            b, a = one_burst(v, args.foos)
            print(
                f"| {r} | {v.label} | {b['VmRSS'] / 1024:.1f} MiB | {a['VmRSS'] / 1024:.1f} MiB"
                f" | {a['VmHWM'] / 1024:.1f} MiB | {(a['RssAnon'] - b['RssAnon']) / 1024:.2f} MiB"
                f" | {b['Threads']} -> {a['Threads']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
