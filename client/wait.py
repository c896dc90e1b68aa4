"""Back-off between failed attempts.

client-go twin: ``k8s.io/apimachinery/pkg/util/wait`` (``ExponentialBackoffManager``, which the
reflector uses between list-and-watch cycles). It lives in the client layer, not in the
informer, because anything that retries an API call (the reflector, leader election, a caller's
own loop) wants the same shape of delay.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

__all__ = ["ExponentialBackoff"]


class ExponentialBackoff:
    """Delays between failed attempts (apimachinery ``ExponentialBackoffManager``).

    Each call to ``next_delay`` returns the current step stretched by up to ``jitter`` times
    itself, then doubles the step up to ``cap``. When ``reset_after`` seconds have passed since the
    previous call, things were healthy for a while and the step starts again at ``initial``.
    """

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        reset_after: float = 120.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.initial = initial  # first delay, seconds
        self.cap = cap  # the step never grows past this (jitter may still add to it)
        self.reset_after = reset_after  # quiet seconds after which the step resets
        self.factor = factor  # step multiplier per call
        self.jitter = jitter  # a delay is step * (1 + jitter * rand())
        self._clock = clock  # monotonic seconds
        self._rand = rand  # uniform [0, 1)
        self._lock = threading.Lock()  # guards _step and _last
        self._step = initial  # the next delay before jitter
        self._last: float | None = None  # clock() at the previous next_delay call

    def next_delay(self) -> float:
        with self._lock:
            now = self._clock()
            if self._last is None or now - self._last > self.reset_after:
                self._step = self.initial
            self._last = now
            delay = self._step
            self._step = min(self._step * self.factor, self.cap)
        if self.jitter > 0:
            delay += self._rand() * self.jitter * delay
        return delay
