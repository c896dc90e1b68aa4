"""The workqueue family of client-go (util/workqueue), in Python.

- `Queue`: de-duplicating FIFO; an item is never processed by two workers at once.
- `DelayingQueue`: adds `add_after(item, delay)`.
- `RateLimitingQueue`: adds `add_rate_limited`, `forget`, `num_requeues` over a `RateLimiter`.
- Rate limiters: exponential, fast/slow, token bucket, max-of, and client-go's defaults.
- Metrics: client-go's `workqueue_*` names through a pluggable provider (no-op by default).
- Clocks: `RealClock`, and `FakeClock` for tests.
"""

from workqueue.clock import Clock, FakeClock, RealClock
from workqueue.delaying_queue import DelayingQueue
from workqueue.metrics import (
    MetricsProvider,
    NoopMetricsProvider,
    PrometheusMetricsProvider,
    get_provider,
    set_provider,
)
from workqueue.queue import Queue, QueueSnapshot
from workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
    sample_controller_rate_limiter,
)
from workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "Clock",
    "DelayingQueue",
    "FakeClock",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PrometheusMetricsProvider",
    "Queue",
    "QueueSnapshot",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "get_provider",
    "sample_controller_rate_limiter",
    "set_provider",
]
