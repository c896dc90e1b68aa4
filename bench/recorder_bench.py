"""What recording an Event costs the worker that records it, and how fast the senders write.

    python -m bench.recorder_bench [--rounds 9] [--events 2000] [--latency-ms 5]

Three parts:

- **caller**: CPU time of the calling thread per ``EventRecorder.event(foo, Normal, Synced,
  ...)``, logging configured as the controller configures it (text, ``-v 0``, to
  ``/dev/null``), senders not started (the queue only fills). Beside it, in the same run, the
  floor of any hand-off: ``SimpleQueue.put`` of a tuple, and ``queue.Queue.put_nowait``. Median
  over interleaved rounds.
- **senders**: wall time to write ``--events`` Events about as many objects through kubesim
  with ``--latency-ms`` added per request, for 1, 2 and 4 sender threads: Events per second.
  (The recorder's default is ``tools.record.recorder.SENDERS``.)
- **sender CPU**: CPU time of one sender thread per Event it writes (``--events`` Synced
  Events about as many objects, so each is a POST, through kubesim in this process; logging as
  above), rounds interleaved, beside a same-run baseline mode that does what the sender did
  before: every answer decoded (``jsonutil.loads``) and the timestamps formatted per Event.
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

from runtime.log import configure_logging
from tools.record import EVENT_TYPE_NORMAL, EventRecorder
from tools.record.recorder import _rfc3339

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


class _TimedRecorder(EventRecorder):
    """Adds up the CPU time of its (one) sender thread: ``cpu`` seconds over ``written``."""

    cpu = 0.0

    def _run(self, q: queue.SimpleQueue) -> None:  # type: ignore[type-arg]
        started = time.thread_time()
        try:
            super()._run(q)
        finally:
            self.cpu += time.thread_time() - started


class _DecodingRest:
    """The baseline mode's client: every answer decoded, whatever the caller asked."""

    def __init__(self, rest: object) -> None:
        self._rest = rest

    def request(self, *args: object, decode: bool = True, **kwargs: object) -> object:
        return self._rest.request(*args, **kwargs)  # type: ignore[attr-defined]


class _PerEventStamps:
    """The baseline mode's timestamps: formatted for every Event."""

    @staticmethod
    def format(unix_ns: int) -> str:
        return _rfc3339(unix_ns // 1_000_000_000)


def sender_cpu(events: int, rounds: int) -> dict[str, float]:
    """Median CPU seconds of the sender thread per Event, now and in the baseline mode."""
    from client import headers
    from client.config import load_rest_config
    from client.rest import RESTClient
    from kubesim import KubeSim

    headers.install()  # the response header parser the controller installs (manager.py)
    samples: dict[str, list[float]] = {"now": [], "before: answers decoded, stamps per Event": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for mode in samples if r % 2 == 0 else reversed(list(samples)):
                sim = KubeSim()
                sim.start()
                try:
                    kubeconfig = sim.write_kubeconfig(Path(tmp) / "kubeconfig")
                    rest = RESTClient(load_rest_config(kubeconfig))
                    sink = rest if mode == "now" else _DecodingRest(rest)
                    rec = _TimedRecorder(
                        sink,  # type: ignore[arg-type]
                        component="bench",
                        host="h",
                        senders=1,
                        queue_length=events,
                    )
                    if mode != "now":
                        rec._stamps = _PerEventStamps()  # type: ignore[assignment]
                    for i in range(events):
                        obj = {**FOO, "metadata": {**FOO["metadata"], "name": f"foo-{i:05d}"}}
                        rec.event(obj, EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
                    rec.start()
                    if not rec.shutdown(timeout=600):
                        raise RuntimeError("the sender did not finish")
                    samples[mode].append(rec.cpu / events)
                finally:
                    sim.close()
    return {mode: statistics.median(v) for mode, v in samples.items()}


def sender_parts(number: int) -> dict[str, float]:
    """CPU seconds per call of the sender's parts that are not the request itself."""
    from client import jsonutil
    from tools.record.correlator import EventCorrelator

    rec = EventRecorder(NoRest(), component="sample-controller", host="h")
    meta = FOO["metadata"]
    recorded = (
        *("Foo", FOO["apiVersion"], meta["namespace"], meta["name"], meta["uid"]),
        *(meta["resourceVersion"], EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully"),
        time.time_ns(),
    )
    event = rec._make_event(recorded)  # type: ignore[arg-type]
    # what kube-apiserver answers a POST of it: the Event with its metadata filled in
    stored = {
        **event,
        "metadata": {**event["metadata"], "uid": meta["uid"], "resourceVersion": "1"},
    }
    stored["metadata"]["managedFields"] = [
        {"manager": "sample-controller", "operation": "Update", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "fieldsV1": {f"f:{k}": {} for k in event if k != "metadata"}}
    ]  # fmt: skip
    answer = jsonutil.dumps(stored)
    correlator = EventCorrelator()
    # one Event per call, each about another object (a burst's Synced Events), built beforehand
    fresh = iter(
        [
            {**event, "involvedObject": {**event["involvedObject"], "name": f"foo-{i}"}}
            for i in range(number)
        ]
    )

    def correlate_new() -> None:
        correlator.correlate(next(fresh))

    cases: dict[str, Callable[[], object]] = {
        f"decode the answer ({len(answer)} B), no longer done": lambda: jsonutil.loads(answer),
        "timestamp per Event (strftime), no longer done": lambda: _rfc3339(1_700_000_000),
        "timestamp, once per second (_Stamps)": lambda: rec._stamps.format(1_700_000_000 * 10**9),
        "build the Event, with its log line": lambda: rec._make_event(recorded),  # type: ignore[arg-type]
        "correlate (a new object)": correlate_new,
    }
    return {name: timed(fn, number) for name, fn in cases.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.recorder_bench")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--number", type=int, default=5000, help="calls per case per round")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--latency-ms", type=float, default=5.0)
    p.add_argument("--senders", default="1,2,4", help="sender counts to time, comma-separated")
    p.add_argument("--cpu-rounds", type=int, default=6, help="rounds of the sender CPU part")
    a = p.parse_args(argv)
    configure_logging("text", 0, stream=open(os.devnull, "w"))  # open for the whole process
    costs = caller_costs(a.rounds, a.number)
    floor = costs["floor: SimpleQueue.put(tuple)"]
    print(f"caller CPU per call (median of {a.rounds} rounds, {a.number} calls each):")
    for name, cost in costs.items():
        print(f"  {name:<34} {cost * 1e6:7.2f} us  ({cost / floor:4.1f}x floor)")
    cpu = sender_cpu(a.events, a.cpu_rounds)
    base = cpu["before: answers decoded, stamps per Event"]
    print(f"sender CPU per Event (median of {a.cpu_rounds} rounds, {a.events} POSTs each):")
    for name, cost in cpu.items():
        print(f"  {name:<42} {cost * 1e6:7.1f} us  ({cost / base:4.2f}x before)")
    print(f"sender parts, CPU per call ({a.number} calls each):")
    for name, cost in sender_parts(a.number).items():
        print(f"  {name:<52} {cost * 1e6:7.2f} us")
    logging.getLogger().handlers[:] = [logging.NullHandler()]
    counts = [int(x) for x in a.senders.split(",")]
    rates = sender_rates(a.events, a.latency_ms / 1000, counts)
    print(f"senders, {a.events} Events about as many objects, {a.latency_ms:g} ms per request:")
    for senders, rate in rates.items():
        print(f"  {senders} sender(s): {rate:6.0f} Events/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
