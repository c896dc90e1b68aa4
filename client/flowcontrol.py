"""Client-side request throttling (``--kube-api-qps`` / ``--kube-api-burst``).

client-go twin: ``k8s.io/client-go/util/flowcontrol`` ``NewTokenBucketRateLimiter``, which every
``rest.RESTClient`` request waits on before it is sent. Like upstream it is a token bucket over
the same algorithm as ``golang.org/x/time/rate``: it holds up to ``burst`` tokens and refills at
``qps`` per second; a request takes one token, and when none is left it waits until one will
have been refilled.

The workqueue's ``BucketRateLimiter`` is the same algorithm; upstream, too, the two are separate
(the workqueue imports nothing from the client), so this one is written again here rather than
imported across layers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucketRateLimiter"]


class TokenBucketRateLimiter:
    """A token bucket shared by every request of one client (client-go ``flowcontrol.RateLimiter``
    from ``NewTokenBucketRateLimiter``)."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if not qps > 0:
            raise ValueError(f"qps must be positive, got {qps!r}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst!r}")
        self._qps = float(qps)  # refill rate, tokens per second
        self._burst = float(burst)  # capacity; _tokens never exceeds it
        self._clock = clock  # monotonic seconds
        self._lock = threading.Lock()  # guards _tokens and _last
        self._tokens = float(burst)  # tokens at _last; negative when reserved ahead
        self._last = clock()  # when _tokens was last brought up to date

    def reserve(self) -> float:
        """Take one token and return how long to wait before using it (0 when one was there).

        A token taken from an empty bucket is borrowed from the future, so concurrent callers
        queue up behind each other instead of all waking at the same instant."""
        with self._lock:
            now = self._clock()
            tokens = min(self._tokens + (now - min(self._last, now)) * self._qps, self._burst) - 1.0
            self._tokens = tokens
            self._last = now
        return -tokens / self._qps if tokens < 0 else 0.0

    def accept(self) -> None:
        """Block until a token is available (``flowcontrol.RateLimiter.Accept``)."""
        delay = self.reserve()
        if delay > 0:
            time.sleep(delay)
