"""What the end-to-end bench reads off a trial: convergence, CPU seconds, counters, profiles.

Every figure comes from a source that involves no client clock and no polling of the API:
convergence and per-Foo latency from kubesim's storage events (the moment each object was
committed), CPU from the kernel's per-process accounting, requests from kubesim's request log,
reconciles from the controller's own ``/metrics``.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from kubesim import RequestRecord

FOO_KEY = ("samplecontroller.k8s.io", "foos")  # kubesim's storage key (group, plural)
DEPLOY_KEY = ("apps", "deployments")
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
CLK_TCK = os.sysconf("SC_CLK_TCK")


class _Stored(Protocol):
    obj: dict


class StorageEvent(Protocol):
    """What a kubesim storage listener is handed for every committed write."""

    type: str
    key: tuple[str, str]
    name: str
    obj: _Stored


class Tracker:
    """A kubesim storage listener: commit times of Foos and Deployments, and convergence.

    A Foo of the armed batch has converged when its Deployment exists and its
    ``status.availableReplicas`` equals ``spec.replicas``: what a user waits for. Called under
    kubesim's storage lock for every write, so it only does dict work.
    """

    def __init__(self) -> None:
        self.foo_created: dict[str, float] = {}  # Foo name -> monotonic time of its ADDED
        self.dep_created: dict[str, float] = {}  # Deployment name -> monotonic time of its ADDED
        self.pending: set[str] = set()  # Foos of the current batch not yet converged
        self.done = threading.Event()  # set when pending became empty
        self.done_at = 0.0  # monotonic time pending became empty

    def arm(self, names: list[str]) -> None:
        """Start waiting for these Foos (the next batch)."""
        self.done.clear()
        self.pending = set(names)

    def __call__(self, ev: StorageEvent) -> None:
        if ev.type != "ADDED" and ev.type != "MODIFIED":
            return
        if ev.key == DEPLOY_KEY:
            if ev.type == "ADDED":
                self.dep_created.setdefault(ev.name, time.monotonic())
            return
        if ev.key != FOO_KEY:
            return
        if ev.type == "ADDED":
            self.foo_created[ev.name] = time.monotonic()
        if ev.name not in self.pending:
            return
        obj = ev.obj.obj
        want = (obj.get("spec") or {}).get("replicas", 1)
        got = (obj.get("status") or {}).get("availableReplicas")
        if got == want and ev.name in self.dep_created:
            self.pending.discard(ev.name)
            if not self.pending:
                self.done_at = time.monotonic()
                self.done.set()

    def create_to_deployment(self, names: list[str]) -> list[float]:
        """Seconds from each Foo's commit to its Deployment's, for the Foos that got one."""
        return [self.dep_created[x] - self.foo_created[x] for x in names if x in self.dep_created]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat.

    Read from the kernel rather than asked of the process, so the controllers under test need
    no instrumentation and the peers are measured exactly as ours is.
    """
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def peak_rss(pid: int) -> float:
    """VmHWM of a process in bytes: its peak resident set since it started (start-up included).

    The kernel keeps the high-water mark, so one read after the burst gives the peak of the
    whole run without sampling.
    """
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024.0
    return 0.0


def context_switches(pid: int) -> int:
    """Context switches of every thread of a process so far, voluntary and not.

    A thread that waits for work (a queue, a condition, a socket) and is woken switches once
    per hand-off, so the count over a burst, per Foo, is how often the process handed work
    from one thread to another (each a GIL hand-over in CPython), besides its waits on the
    network. Threads that ended during the burst are not counted (none do).
    """
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if "ctxt_switches:" in line:
                        total += int(line.split()[1])
        except FileNotFoundError:
            continue  # the thread ended meanwhile
    return total


def self_cpu() -> float:
    """CPU seconds of this process: kubesim (and the loop creating the Foos)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def count(items: Iterable[str]) -> dict[str, int]:
    """How often each item occurs, sorted by item."""
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def writes(log: list[RequestRecord]) -> list[RequestRecord]:
    """The requests of a kubesim request log that changed something."""
    return [r for r in log if r.verb in WRITE_VERBS]


def last_request_end(log: list[RequestRecord]) -> float:
    """Wall time the last request other than a watch finished (0 for none)."""
    return max((r.time + r.duration for r in log if r.verb != "watch"), default=0.0)


def scrape(port: int, metric: str) -> float:
    """The sum of a metric's samples (every label set) on a local ``/metrics`` endpoint."""
    url = f"http://127.0.0.1:{port}/metrics"
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(metric + "{") or line.startswith(metric + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Profiler:
    """py-spy on one controller during a burst, when ``E2E_PYSPY`` names an output directory.

    ``--gil`` samples only while a thread holds the GIL: on a CPU-bound Python process that is
    where the CPU goes. Without ``E2E_PYSPY`` it does nothing, so a normal run pays nothing.
    """

    def __init__(self, pid: int, name: str) -> None:
        self._spy: subprocess.Popen[bytes] | None = None
        out = os.environ.get("E2E_PYSPY")
        if not out:
            return
        Path(out).mkdir(parents=True, exist_ok=True)
        py_spy = Path(sys.executable).parent / "py-spy"
        self._spy = subprocess.Popen(
            [str(py_spy), "record", "-p", str(pid), "-r", "250", "--gil", "-f", "raw"]
            + ["-o", str(Path(out) / f"{name}.txt")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # py-spy attaches; there is nothing to wait on for that

    def stop(self) -> None:
        """Stop sampling; py-spy writes its output on SIGINT."""
        if self._spy is not None:
            self._spy.send_signal(signal.SIGINT)
            self._spy.wait(60)
