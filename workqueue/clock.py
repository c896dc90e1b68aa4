"""Injectable time for the workqueue family (client-go: k8s.io/utils/clock).

Delays, backoff and metrics all read time through a `Clock`, so tests can drive them with a
`FakeClock` instead of sleeping. Every timed wait in the package goes through
`Clock.wait_until`, which waits on a `threading.Condition` until an absolute deadline on that
clock: a fake clock can then wake the waiter when a test steps time forward, and a deadline
(not a relative timeout) cannot be lost if the clock moves between computing it and waiting.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "FakeClock", "RealClock"]


class Clock(Protocol):
    """What the queues need from time (client-go `clock.WithTicker`, reduced to two calls)."""

    def now(self) -> float:
        """Monotonic time in seconds; only differences between two readings mean anything."""
        ...

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        """Wait on `cond` (held by the caller) until notified or until `now() >= deadline`.

        Returns at once if the deadline has passed. May return early (spuriously), like
        `Condition.wait`, so callers re-check their predicate in a loop.
        """
        ...


class RealClock:
    """Wall-independent real time: `time.monotonic` and `Condition.wait(timeout)`
    (k8s.io/utils/clock `RealClock`, which client-go's queues use; no tickers or timers here)."""

    def now(self) -> float:
        return time.monotonic()

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        timeout = deadline - time.monotonic()
        if timeout > 0:
            cond.wait(timeout)


class _Waiter:
    """One thread parked in FakeClock.wait_until (compared by identity, never by value)."""

    __slots__ = ("deadline", "cond")

    def __init__(self, deadline: float, cond: threading.Condition) -> None:
        self.deadline = deadline
        self.cond = cond


class FakeClock:
    """A clock that moves only when a test calls `step` (client-go `testingclock.FakeClock`).

    Threads that wait through `wait_until` register their deadline here; `step` moves time
    forward and notifies the conditions of every waiter whose deadline has been reached.
    `wait_for_waiters` lets a test block until a background thread is parked on this clock,
    which is how tests know a loop has caught up without sleeping.
    """

    def __init__(self, start: float = 1000.0) -> None:
        # _lock guards _now and _waiters; it is never held while taking a waiter's condition,
        # so it cannot deadlock against a waiter that holds its condition and registers here.
        self._lock = threading.Lock()
        # _waiters_changed is notified whenever a waiter registers or leaves.
        self._waiters_changed = threading.Condition(self._lock)
        # _now only grows (step rejects negative steps).
        self._now = float(start)
        # _waiters holds one entry per thread parked in wait_until whose deadline is not due.
        self._waiters: list[_Waiter] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def step(self, seconds: float) -> None:
        """Advance time by `seconds` and wake every waiter whose deadline is now due."""
        if seconds < 0:
            raise ValueError("a FakeClock cannot go backwards")
        with self._lock:
            self._now += seconds
            due = [w for w in self._waiters if w.deadline <= self._now]
            self._waiters = [w for w in self._waiters if w.deadline > self._now]
            if due:
                self._waiters_changed.notify_all()
        for waiter in due:
            with waiter.cond:
                waiter.cond.notify_all()

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        entry = _Waiter(deadline, cond)
        with self._lock:
            if deadline <= self._now:
                return
            self._waiters.append(entry)
            self._waiters_changed.notify_all()
        try:
            # The caller holds cond, so step() cannot notify before we are waiting on it.
            cond.wait()
        finally:
            with self._lock:
                self._waiters = [w for w in self._waiters if w is not entry]
                self._waiters_changed.notify_all()

    def waiter_deadlines(self) -> list[float]:
        """The deadlines of the threads currently parked on this clock, earliest first."""
        with self._lock:
            return sorted(w.deadline for w in self._waiters)

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (in real time, at most `timeout`) until at least `count` threads are parked."""
        with self._lock:
            return self._waiters_changed.wait_for(lambda: len(self._waiters) >= count, timeout)
