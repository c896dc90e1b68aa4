"""Benchmark: add/get/done cycles per second of workqueue.Queue against queue.Queue.

One producer (the main thread) adds N distinct items while W worker threads take each item
and mark it done; a run ends when every worker has seen shutdown, so every item was processed.
The baseline does the same with the standard library's queue.Queue (put / get / task_done,
one sentinel per worker). Both run in the same process, interleaved, and each figure is the
median of several rounds; ratios compare against the baseline of the same worker count.

Usage: python bench/workqueue_bench.py [--items N] [--rounds R]
"""

from __future__ import annotations

import argparse
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prometheus_client import CollectorRegistry  # noqa: E402

from workqueue import PrometheusMetricsProvider, Queue  # noqa: E402

# Targets from issue 2: our queue against queue.Queue in the same run.
TARGET_NO_METRICS = 0.8
TARGET_WITH_METRICS = 0.4


def run_stdlib(items: int, workers: int) -> float:
    """Seconds for `items` put/get/task_done cycles through queue.Queue."""
    q: queue.Queue = queue.Queue()
    sentinel = object()

    def work() -> None:
        while True:
            item = q.get()
            q.task_done()
            if item is sentinel:
                return

    threads = [threading.Thread(target=work, name=f"bench-stdlib-{i}") for i in range(workers)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    for i in range(items):
        q.put(i)
    for _ in threads:
        q.put(sentinel)
    for t in threads:
        t.join()
    return time.perf_counter() - start


def run_workqueue(items: int, workers: int, with_metrics: bool) -> float:
    """Seconds for `items` add/get/done cycles through workqueue.Queue."""
    if with_metrics:
        q = Queue(name="bench", metrics_provider=PrometheusMetricsProvider(CollectorRegistry()))
    else:
        q = Queue()

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            q.done(item)

    threads = [threading.Thread(target=work, name=f"bench-workqueue-{i}") for i in range(workers)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    for i in range(items):
        q.add(i)
    # shut_down lets get hand out everything queued before it reports shutdown.
    q.shut_down()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def median_rate(runs: list[float], items: int) -> float:
    return items / statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50_000, help="cycles per run")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per figure")
    args = parser.parse_args(argv)

    rows = []
    missed = []
    for workers in (1, 4):
        cases: dict[str, Callable[[], float]] = {
            "queue.Queue": lambda w=workers: run_stdlib(args.items, w),
            "Queue": lambda w=workers: run_workqueue(args.items, w, False),
            "Queue+prometheus": lambda w=workers: run_workqueue(args.items, w, True),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, run in cases.items():
                times[name].append(run())
        base = median_rate(times["queue.Queue"], args.items)
        for name in cases:
            rate = median_rate(times[name], args.items)
            ratio = rate / base
            target = {"Queue": TARGET_NO_METRICS, "Queue+prometheus": TARGET_WITH_METRICS}.get(name)
            if target is not None and ratio < target:
                missed.append(f"{name} with {workers} worker(s): {ratio:.2f}x < {target}x")
            rows.append((workers, name, rate, ratio, target))

    print(
        f"workqueue bench: {args.items} cycles per run, median of {args.rounds} rounds, "
        f"Python {sys.version.split()[0]}"
    )
    print(f"{'workers':>7}  {'queue':<18} {'cycles/s':>10}  {'vs queue.Queue':>14}  {'target':>6}")
    for workers, name, rate, ratio, target in rows:
        target_text = f">={target}" if target is not None else "-"
        print(f"{workers:>7}  {name:<18} {rate:>10,.0f}  {ratio:>13.2f}x  {target_text:>6}")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
