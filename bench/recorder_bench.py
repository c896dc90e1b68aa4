"""What recording an Event costs the worker that records it, and how fast the senders write.

    python -m bench.recorder_bench [--rounds 9] [--events 2000] [--latency-ms 5]

Two parts:

- **caller**: CPU time of the calling thread per ``EventRecorder.event(foo, Normal, Synced,
  ...)``, logging configured as the controller configures it (text, ``-v 0``, to
  ``/dev/null``), senders not started (the queue only fills). Beside it, in the same run, the
  floor of any hand-off: ``SimpleQueue.put`` of a tuple, and ``queue.Queue.put_nowait``. Median
  over interleaved rounds.
- **senders**: wall time to write ``--events`` Events about as many objects through kubesim
  with ``--latency-ms`` added per request, for 1, 2 and 4 sender threads: Events per second.
  (The recorder's default is ``tools.record.recorder.SENDERS``.)
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from controller.logs import configure_logging
from tools.record import EVENT_TYPE_NORMAL, EventRecorder

FOO = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {
        "name": "foo-00042",
        "namespace": "default",
        "uid": "00000042-0000-4000-8000-000000000042",
        "resourceVersion": "123456",
    },
    "spec": {"deploymentName": "foo-00042", "replicas": 1},
}


class NoRest:
    def request(self, *args: object, **kwargs: object) -> dict:
        raise AssertionError("the caller part starts no sender")


def timed(fn: Callable[[], object], number: int) -> float:
    """CPU seconds of this thread per call (waiting for a core is not counted)."""
    started = time.thread_time()
    for _ in range(number):
        fn()
    return (time.thread_time() - started) / number


def caller_costs(rounds: int, number: int) -> dict[str, float]:
    cases: dict[str, Callable[[], object]] = {}
    simple: queue.SimpleQueue[tuple] = queue.SimpleQueue()
    plain: queue.Queue[tuple] = queue.Queue(maxsize=10**9)
    item = ("Foo", "v1", "ns", "name", "uid", "1", "Normal", "Synced", "m", 0)
    recorders: list[EventRecorder] = []

    def record() -> None:
        recorders[-1].event(FOO, EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")

    cases["EventRecorder.event"] = record
    cases["floor: SimpleQueue.put(tuple)"] = lambda: simple.put(item)
    cases["queue.Queue.put_nowait(tuple)"] = lambda: plain.put_nowait(item)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        recorders[:] = [EventRecorder(NoRest(), component="bench", host="h", queue_length=10**9)]
        simple = queue.SimpleQueue()
        plain = queue.Queue(maxsize=10**9)
        for name, fn in cases.items():
            samples[name].append(timed(fn, number))
    return {name: statistics.median(v) for name, v in samples.items()}


def sender_rates(events: int, latency: float, counts: list[int]) -> dict[int, float]:
    from kubernetes import client, config

    from client.rest import RESTClient
    from kubesim import KubeSim

    out: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for senders in counts:
            sim = KubeSim()
            sim.start()
            try:
                if latency:
                    sim.faults.add_latency(latency)
                cfg = client.Configuration()
                config.load_kube_config(
                    sim.write_kubeconfig(Path(tmp) / "kubeconfig"), client_configuration=cfg
                )
                rest = RESTClient(client.ApiClient(cfg))
                rec = EventRecorder(
                    rest, component="bench", host="h", senders=senders, queue_length=events
                )
                for i in range(events):  # queued before the senders start: only writing is timed
                    obj = {**FOO, "metadata": {**FOO["metadata"], "name": f"foo-{i:05d}"}}
                    rec.event(obj, EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
                started = time.monotonic()
                rec.start()
                if not rec.shutdown(timeout=600):
                    raise RuntimeError("senders did not finish")
                out[senders] = events / (time.monotonic() - started)
            finally:
                sim.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.recorder_bench")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--number", type=int, default=5000, help="calls per case per round")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--latency-ms", type=float, default=5.0)
    p.add_argument("--senders", default="1,2,4", help="sender counts to time, comma-separated")
    a = p.parse_args(argv)
    configure_logging("text", 0, stream=open(os.devnull, "w"))  # open for the whole process
    costs = caller_costs(a.rounds, a.number)
    floor = costs["floor: SimpleQueue.put(tuple)"]
    print(f"caller CPU per call (median of {a.rounds} rounds, {a.number} calls each):")
    for name, cost in costs.items():
        print(f"  {name:<34} {cost * 1e6:7.2f} us  ({cost / floor:4.1f}x floor)")
    logging.getLogger().handlers[:] = [logging.NullHandler()]
    counts = [int(x) for x in a.senders.split(",")]
    rates = sender_rates(a.events, a.latency_ms / 1000, counts)
    print(f"senders, {a.events} Events about as many objects, {a.latency_ms:g} ms per request:")
    for senders, rate in rates.items():
        print(f"  {senders} sender(s): {rate:6.0f} Events/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
