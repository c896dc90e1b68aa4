"""Benchmark: add/get/done cycles per second of workqueue.Queue against queue.Queue.

Two shapes of load, each with 1 and 4 worker threads:

* closed loop: every worker thread adds an item, gets one and marks it done, over and over.
  The queue is never empty, so this measures the cost of the operations and of contention on
  the queue's lock.
* producer + workers: the main thread adds N items while the workers get and finish them,
  blocking when the queue is empty, as a controller's workers do. On a busy 2-core machine
  this one is bimodal (the producer either runs alone for long stretches or ping-pongs with
  the workers), so its figures are medians of many short rounds and the spread is printed.

The baseline does the same with the standard library's queue.Queue (put / get / task_done).
Both run in the same process, interleaved round by round, and each ratio compares against the
baseline of the same shape and worker count. Items are distinct, so de-duplication never
makes our queue's job easier.

Usage: python -m bench.workqueue_bench [--items N] [--rounds R]
"""

from __future__ import annotations

import argparse
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from workqueue import PrometheusMetricsProvider, Queue

# Targets: our queue against queue.Queue in the same run.
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
    q = _new_queue(with_metrics)

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


def run_stdlib_closed(items: int, workers: int) -> float:
    """Seconds for `items` put/get/task_done cycles, each worker cycling on its own."""
    q: queue.Queue = queue.Queue()
    per_worker = items // workers

    def work(first: int) -> None:
        for i in range(first, first + per_worker):
            q.put(i)
            q.get()
            q.task_done()

    return _run_closed(work, per_worker, workers, "stdlib")


def run_workqueue_closed(items: int, workers: int, with_metrics: bool) -> float:
    """Seconds for `items` add/get/done cycles, each worker cycling on its own."""
    q = _new_queue(with_metrics)
    per_worker = items // workers

    def work(first: int) -> None:
        for i in range(first, first + per_worker):
            q.add(i)
            item, _ = q.get()
            q.done(item)

    try:
        return _run_closed(work, per_worker, workers, "workqueue")
    finally:
        q.shut_down()


def _run_closed(work: Callable[[int], None], per_worker: int, workers: int, tag: str) -> float:
    threads = [
        threading.Thread(target=work, args=(n * per_worker,), name=f"bench-{tag}-{n}")
        for n in range(workers)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def _new_queue(with_metrics: bool) -> Queue:
    if with_metrics:
        return Queue(name="bench", metrics_provider=PrometheusMetricsProvider(CollectorRegistry()))
    return Queue()


def median_rate(runs: list[float], items: int) -> float:
    return items / statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50_000, help="cycles per run")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per figure")
    args = parser.parse_args(argv)
    n = args.items

    shapes: dict[str, dict[str, Callable[[int], float]]] = {
        "closed loop": {
            "queue.Queue": lambda w: run_stdlib_closed(n, w),
            "Queue": lambda w: run_workqueue_closed(n, w, False),
            "Queue+prometheus": lambda w: run_workqueue_closed(n, w, True),
        },
        "producer+workers": {
            "queue.Queue": lambda w: run_stdlib(n, w),
            "Queue": lambda w: run_workqueue(n, w, False),
            "Queue+prometheus": lambda w: run_workqueue(n, w, True),
        },
    }
    targets = {"Queue": TARGET_NO_METRICS, "Queue+prometheus": TARGET_WITH_METRICS}

    rows = []
    missed = []
    for shape, cases in shapes.items():
        for workers in (1, 4):
            times: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(args.rounds):
                for name, run in cases.items():
                    times[name].append(run(workers))
            base = median_rate(times["queue.Queue"], n)
            for name in cases:
                rate = median_rate(times[name], n)
                low, high = n / max(times[name]), n / min(times[name])
                ratio = rate / base
                target = targets.get(name)
                if target is not None and ratio < target:
                    missed.append(f"{shape}, {workers} worker(s), {name}: {ratio:.2f}x < {target}x")
                rows.append((shape, workers, name, rate, low, high, ratio, target))

    print(
        f"workqueue bench: {n} cycles per run, median of {args.rounds} interleaved rounds, "
        f"Python {sys.version.split()[0]}"
    )
    print(
        f"{'shape':<17} {'workers':>7}  {'queue':<17} {'cycles/s':>10}  {'(min - max)':>19}"
        f"  {'vs queue.Queue':>14}  {'target':>6}"
    )
    for shape, workers, name, rate, low, high, ratio, target in rows:
        spread = f"({low / 1000:,.0f}k - {high / 1000:,.0f}k)"
        target_text = f">={target}" if target is not None else "-"
        print(
            f"{shape:<17} {workers:>7}  {name:<17} {rate:>10,.0f}  {spread:>19}"
            f"  {ratio:>13.2f}x  {target_text:>6}"
        )
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
