"""End-to-end benchmark: the whole controller against kubesim, beside two Python peers.

    .venv/bin/python -m bench.e2e_bench            # the make-bench set (a few minutes)
    .venv/bin/python -m bench.e2e_bench --full     # the figures in docs/benchmarks.md
    .venv/bin/python -m bench.e2e_bench --full --write-docs   # ... and rewrite them + the chart
    .venv/bin/python -m bench.e2e_bench --sizes 50 --steady-n 200 --memory-n 1000   # ~1 minute

Each trial times a burst of N Foos, created at once, until every Foo has its Deployment and
its status; our controller (``python -m controller``), kopf and the official client's informer
do the same job on the same server in the same run. docs/benchmarks.md ("End to end") says
how, and what the figures mean; ``bench.e2e`` holds the parts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.e2e import harness, plan, report
from bench.e2e.docs import CHART, DOCS, ROOT, write_docs
from bench.e2e.stats import summarise


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def _latencies(text: str) -> list[float]:
    return [float(x) / 1000 for x in text.split(",")]


def _peers(text: str) -> list[harness.Variant]:
    known = {v.label: v for v in PEER_CHOICES}
    try:
        return [known[x] for x in text.split(",")]
    except KeyError as e:
        raise argparse.ArgumentTypeError(f"unknown peer {e}; one of {sorted(known)}") from None


# What --peers can name: the variants of the published set, by their table labels.
PEER_CHOICES = (
    harness.OURS,
    harness.OURS8,
    harness.OFFICIAL,
    harness.OFFICIAL8,
    harness.KOPF,
    harness.FLOOR,
)


def named_checkout(text: str) -> tuple[str, Path]:
    # the last '=': labels here say "w=2", paths seldom hold one
    name, sep, directory = text.rpartition("=")
    if not sep or not name or not directory:
        raise argparse.ArgumentTypeError(f"expected NAME=DIR, got {text!r}")
    return name, Path(directory)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.e2e_bench",
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--full", action="store_true", help="the published set (N up to 5,000, 3 rounds)"
    )
    p.add_argument("--quick", action="store_true", help="the make-bench set (the default)")
    p.add_argument("--rounds", type=int, help="override the number of interleaved rounds")
    p.add_argument(
        "--sizes",
        type=_sizes,
        help="burst sizes N, comma-separated (the 1-worker trial runs at the largest, the "
        "qps=20 one at the smallest)",
    )
    p.add_argument(
        "--latencies",
        type=_latencies,
        help="added latency per request in ms, comma-separated (default 0,5)",
    )
    p.add_argument(
        "--peers",
        type=_peers,
        help="only these variants at every N, by label, comma-separated (e.g. "
        "'ours w=2 qps=unlimited,floor'); the 1-worker and qps=20 trials are then left out",
    )
    p.add_argument("--steady-n", type=int, help="Foos converged for the steady-state trial")
    p.add_argument("--memory-n", type=int, help="Foos (and as many Deployments) cached")
    p.add_argument(
        "--only",
        choices=plan.PARTS,
        action="append",
        help="run only these parts (repeatable)",
    )
    p.add_argument(
        "--write-docs",
        action="store_true",
        help="rewrite the figures of docs/benchmarks.md's 'End to end' section and "
        "docs/e2e_converge.png",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        help="also run the controller of this other checkout (e.g. `git archive REV | tar -x "
        "-C DIR`), 2 workers, beside ours at every N: 'base w=2' in the tables",
    )
    p.add_argument(
        "--variant",
        type=named_checkout,
        action="append",
        metavar="NAME=DIR",
        help="also run the controller of the checkout DIR, 2 workers, under the label NAME "
        "(repeatable: a change and the same tree without one of its parts, in the same rounds)",
    )
    p.add_argument(
        "--probes",
        action="store_true",
        help="also run ours with the health probes served, as the default flags serve them: "
        "'ours w=2 qps=unlimited probes' in the tables",
    )
    p.add_argument("--json", help="also write every raw result to this file")
    p.add_argument("--from-json", help="skip measuring: report the results saved by --json")
    return p


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this run, as the docs print it."""
    return (
        ".venv/bin/python -m bench.e2e_bench"
        + (" --full" if args.full else "")
        + (f" --rounds {args.rounds}" if args.rounds else "")
        + (f" --sizes {','.join(map(str, args.sizes))}" if args.sizes else "")
        + (
            f" --latencies {','.join(f'{x * 1000:g}' for x in args.latencies)}"
            if args.latencies
            else ""
        )
        + (f" --peers '{','.join(v.label for v in args.peers)}'" if args.peers else "")
        + (f" --steady-n {args.steady_n}" if args.steady_n else "")
        + (f" --memory-n {args.memory_n}" if args.memory_n else "")
        + "".join(f" --only {o}" for o in args.only or [])
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + "".join(f" --variant {name}={path}" for name, path in args.variant or [])
        + (" --probes" if args.probes else "")
    )


def make_plan(args: argparse.Namespace) -> plan.Plan:
    """The trials the command line asks for."""
    the_plan = plan.full() if args.full else plan.quick()
    if args.rounds:
        the_plan.rounds = args.rounds
    if args.sizes:
        the_plan.resize(args.sizes)
    if args.latencies:
        the_plan.latencies = args.latencies
    if args.peers:
        the_plan.peers = list(args.peers)
        the_plan.scaling_n = 0
        the_plan.qps20 = []
        the_plan.qps20_once = []
    if args.steady_n:
        the_plan.steady_n = args.steady_n
    if args.memory_n:
        the_plan.memory_n = args.memory_n
    if args.baseline:
        the_plan.peers.insert(1, harness.Variant("ours", source=args.baseline.resolve()))
    if args.probes:
        the_plan.peers.append(harness.Variant("ours", probes=True))
    for name, path in args.variant or []:
        the_plan.peers.append(harness.Variant("ours", source=path.resolve(), name=name))
    return the_plan


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    the_plan = make_plan(args)
    parts = set(args.only or plan.PARTS)
    command = command_line(args)
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        command = results.get("command", command)
    else:
        revision = harness.revision()  # before: the controller's code is read as each trial starts
        results = plan.run(the_plan, parts)
        results["command"] = command
        results["revision"] = revision
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    summary = summarise(results["bursts"])
    print("ratios (ours / peer; below 1: ours faster or cheaper):")
    print("\n".join(report.ratio_lines(summary)))
    print(f"elapsed {results['elapsed']:.0f} s")
    if args.write_docs:
        write_docs(report.figures(results, command))
        report.chart(summary, CHART)
        print(f"wrote {DOCS.relative_to(ROOT)} (End to end) and {CHART.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
