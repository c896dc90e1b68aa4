"""The one deadline a graceful shutdown keeps: drain, then Event flush, then Lease release.

controller-runtime twin: the manager's ``GracefulShutdownTimeout``, the one bound on stopping
the runnables and releasing the leader election Lease. sample-controller has none (its
``ShutDown`` waits as long as the workers take).

``--graceful-shutdown-timeout`` (T) is a budget, not a drain time. It starts at the first
SIGTERM (or whenever a part of the process first sees its stop event) and is shared:

- the drain gets T minus a reserve (a quarter of T, at most ``RESERVE_MAX``): workers finish
  what is in flight and queued; at the drain's deadline no key is started any more and what is
  still in flight is abandoned (its next write is not made);
- the first half of the reserve flushes the Events already recorded;
- the rest releases the Lease.

The process then exits within T plus ``EXIT_MARGIN`` (stopping the endpoints and the
interpreter), which is what ``terminationGracePeriodSeconds`` must cover: 45 s in
``manifests/base/deployment.yaml`` against 30 s + 1 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["EXIT_MARGIN", "RESERVE_FRACTION", "RESERVE_MAX", "ShutdownBudget"]

# Part of the budget kept back from the drain for the Event flush and the Lease release: a
# quarter, at most 2 s (each is one or a few requests, 2 s is generous on a working server).
RESERVE_FRACTION = 0.25
RESERVE_MAX = 2.0
# The process exits within the budget plus this: stopping the probe and metrics servers (each
# polls its shutdown flag every 0.2 s) and the interpreter's own exit.
EXIT_MARGIN = 1.0


class ShutdownBudget:
    """When each step of a graceful shutdown must be over (no client-go twin; see the module).

    ``begin()`` starts the clock; it may be called by everything that notices the stop, and
    the first call wins, so the budget runs from the earliest moment anyone knew. Thread-safe.
    """

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        # T: the whole budget, in seconds
        self.timeout = max(0.0, timeout)
        # flush + release
        self.reserve = min(RESERVE_MAX, self.timeout * RESERVE_FRACTION)
        self._clock = clock
        self._lock = threading.Lock()
        # clock() at the first begin()
        self._started: float | None = None

    def begin(self) -> float:
        """Start the budget (once: later calls keep the first start); returns the deadline."""
        with self._lock:
            if self._started is None:
                self._started = self._clock()
            return self._started + self.timeout

    @property
    def started(self) -> bool:
        with self._lock:
            return self._started is not None

    def _start(self) -> float:
        with self._lock:
            if self._started is None:
                raise RuntimeError("the shutdown budget has not begun")
            return self._started

    @property
    def deadline(self) -> float:
        """When everything (drain, flush, release) must be over."""
        return self._start() + self.timeout

    @property
    def drain_deadline(self) -> float:
        """When the workers must have finished: no key starts after it."""
        return self.deadline - self.reserve

    @property
    def flush_deadline(self) -> float:
        """When the Event flush must be over; the rest is the Lease release's."""
        return self.deadline - self.reserve / 2

    def left(self, until: float | None = None) -> float:
        """Seconds from now to ``until`` (default: the final deadline), never negative."""
        end = self.deadline if until is None else until
        return max(0.0, end - self._clock())
