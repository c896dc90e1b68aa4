"""Rate limiters: how long to wait before retrying an item
(client-go util/workqueue/default_rate_limiters.go).

A controller asks `when(item)` each time an item fails, and calls `forget(item)` once it
succeeds, so per-item backoff starts over. Per-item limiters (exponential, fast/slow) slow down
one hot key; the token bucket bounds the retry rate of the whole queue; `MaxOfRateLimiter`
combines them by taking the longest delay. All delays are in seconds.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Protocol

from workqueue.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "sample_controller_rate_limiter",
]

# The largest delay client-go can represent (math.MaxInt64 nanoseconds), in seconds.
_MAX_DURATION = (2**63 - 1) / 1e9


class RateLimiter(Protocol):
    """Decides how long an item waits before its next try (client-go `RateLimiter`).

    A `Protocol`: any object with these three methods is a rate limiter, as in Go.
    """

    def when(self, item: Hashable) -> float:
        """How many seconds to wait before processing `item` again; records a failure."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking `item` (it succeeded): its next failure starts a fresh backoff."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """How many failures of `item` are being tracked."""
        ...


class ItemExponentialFailureRateLimiter:
    """Per item: `base * 2**failures`, capped at `max_delay` (client-go
    `ItemExponentialFailureRateLimiter`). The first `when` returns `base`."""

    def __init__(self, base: float, max_delay: float) -> None:
        # _base: the first delay, in seconds.
        self._base = base
        # _max_delay: no delay is ever longer, in seconds.
        self._max_delay = max_delay
        # _lock guards _failures.
        self._lock = threading.Lock()
        # _failures: item -> number of `when` calls since it was last forgotten (absent = 0).
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)
            self._failures[item] = exp + 1
        try:
            backoff = self._base * 2.0**exp
        except OverflowError:
            return self._max_delay
        if backoff > _MAX_DURATION:
            return self._max_delay
        return min(backoff, self._max_delay)

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)


class ItemFastSlowRateLimiter:
    """Per item: `fast` for the first `max_fast_attempts` failures, then `slow` (client-go
    `ItemFastSlowRateLimiter`)."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        # _fast_delay, _slow_delay: the two delays, in seconds.
        self._fast_delay = fast_delay
        self._slow_delay = slow_delay
        # _max_fast_attempts: how many failures in a row get the fast delay.
        self._max_fast_attempts = max_fast_attempts
        # _lock guards _failures.
        self._lock = threading.Lock()
        # _failures: item -> number of `when` calls since it was last forgotten (absent = 0).
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        with self._lock:
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
        if failures <= self._max_fast_attempts:
            return self._fast_delay
        return self._slow_delay

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)


class BucketRateLimiter:
    """One token bucket for all items (client-go `BucketRateLimiter` over golang.org/x/time/rate).

    The bucket holds up to `burst` tokens and refills at `qps` tokens per second. Each `when`
    reserves one token like `rate.Limiter.Reserve()`: if none is left the token is borrowed
    from the future (the count goes negative) and the delay until it will have been refilled
    is returned. So a burst of N failures gets delays 0, ..., 0 (burst times), 1/qps, 2/qps, ...
    Items are not tracked: `num_requeues` is always 0 and `forget` does nothing.
    """

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        if not qps > 0:
            raise ValueError(f"qps must be positive, got {qps!r}")
        if burst < 1 and qps != math.inf:
            # x/time/rate would refuse every reservation (an infinite delay).
            raise ValueError(f"burst must be at least 1, got {burst!r}")
        # _qps: refill rate in tokens per second (math.inf: never limit).
        self._qps = float(qps)
        # _burst: bucket capacity; _tokens never exceeds it.
        self._burst = burst
        # _clock: time source for refills.
        self._clock: Clock = clock if clock is not None else RealClock()
        # _lock guards _tokens and _last.
        self._lock = threading.Lock()
        # _tokens: tokens available at time _last; negative when tokens were reserved ahead.
        self._tokens = float(burst)
        # _last: when _tokens was last brought up to date.
        self._last = self._clock.now()

    def when(self, item: Hashable) -> float:
        if self._qps == math.inf:
            return 0.0
        with self._lock:
            now = self._clock.now()
            # advance(): refill for the time since _last, never above burst.
            last = min(self._last, now)
            tokens = min(self._tokens + (now - last) * self._qps, float(self._burst))
            tokens -= 1.0
            self._tokens = tokens
            self._last = now
        if tokens < 0:
            return -tokens / self._qps
        return 0.0

    def num_requeues(self, item: Hashable) -> int:
        return 0

    def forget(self, item: Hashable) -> None:
        pass


class MaxOfRateLimiter:
    """The longest delay of several limiters (client-go `MaxOfRateLimiter`).

    Every limiter is asked on each `when`, so each keeps counting failures.
    """

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        # _limiters: the combined limiters, all consulted on every call.
        self._limiters: tuple[RateLimiter, ...] = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self._limiters])

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """client-go `DefaultControllerRateLimiter`: per item 5 ms * 2^n up to 1000 s, and overall
    10 qps with a burst of 100 (the bucket only limits retry speed across all items)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=10, burst=100, clock=clock),
    )


def sample_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """sample-controller's limiter: per item 5 ms * 2^n up to 1000 s, overall 50 qps, burst 300."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=50, burst=300, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter:
    """client-go `DefaultItemBasedRateLimiter`: per item 1 ms * 2^n up to 1000 s."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
