"""A delaying queue that asks a rate limiter how long to wait
(client-go util/workqueue/rate_limiting_queue.go).

This is the queue a controller uses: on failure a worker calls `add_rate_limited(key)` (the
key comes back after the limiter's backoff), on success `forget(key)` (the backoff restarts).
"""

from __future__ import annotations

from collections.abc import Hashable

from workqueue.clock import Clock
from workqueue.delaying_queue import DelayingQueue
from workqueue.metrics import MetricsProvider
from workqueue.rate_limiters import RateLimiter

__all__ = ["RateLimitingQueue"]


class RateLimitingQueue(DelayingQueue):
    """A `DelayingQueue` plus a `RateLimiter` (client-go `RateLimitingInterface`,
    `rateLimitingType`). Differs: a subclass where client-go embeds the delaying queue."""

    def __init__(
        self,
        rate_limiter: RateLimiter,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name=name, metrics_provider=metrics_provider, clock=clock)
        # rate_limiter decides every add_rate_limited delay and owns the per-item failure counts.
        self.rate_limiter = rate_limiter

    def add_rate_limited(self, item: Hashable) -> None:
        """Add `item` once the rate limiter says it may be retried (counts a failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: Hashable) -> None:
        """The item succeeded: the limiter stops tracking it. It stays in the queue if queued."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        """How many times the item has been rate-limited since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)
