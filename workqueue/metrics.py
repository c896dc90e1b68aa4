"""Workqueue metrics (client-go util/workqueue/metrics.go and component-base's prometheus provider).

A queue records metrics only when it has a name, through a `MetricsProvider` that hands out one
small metric object per (metric, queue name). The default provider records nothing; the
`PrometheusMetricsProvider` exports client-go's metric names, so dashboards written for Go
controllers work unchanged:

| metric                                        | kind      |
|-----------------------------------------------|-----------|
| workqueue_depth                               | gauge     |
| workqueue_adds_total                          | counter   |
| workqueue_queue_duration_seconds              | histogram |
| workqueue_work_duration_seconds               | histogram |
| workqueue_unfinished_work_seconds             | gauge     |
| workqueue_longest_running_processor_seconds   | gauge     |
| workqueue_retries_total                       | counter   |

all with the single label `name`. `QueueMetrics` is the per-queue bookkeeping (client-go
`defaultQueueMetrics`): the queue calls it under its own lock, so it needs no lock of its own.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from typing import Protocol

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from .clock import Clock

__all__ = [
    "DURATION_BUCKETS",
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PrometheusMetricsProvider",
    "QueueMetrics",
    "SettableGaugeMetric",
    "get_provider",
    "set_provider",
]

# Both duration histograms: 10^-8 .. 10 s, exponential x10 (client-go ExponentialBuckets(10e-9, 10, 10)).
DURATION_BUCKETS: tuple[float, ...] = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


class GaugeMetric(Protocol):
    """A gauge moved by steps (client-go `GaugeMetric`)."""

    def inc(self) -> None: ...
    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    """A gauge set to a value (client-go `SettableGaugeMetric`)."""

    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    """A monotonically increasing count (client-go `CounterMetric`)."""

    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    """A distribution of observed values (client-go `HistogramMetric`)."""

    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Creates the metrics of one named queue (client-go `MetricsProvider`)."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...
    def new_adds_metric(self, name: str) -> CounterMetric: ...
    def new_latency_metric(self, name: str) -> HistogramMetric: ...
    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...
    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_retries_metric(self, name: str) -> CounterMetric: ...


class _NoopMetric:
    """Every metric kind at once, recording nothing."""

    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


_NOOP = _NoopMetric()


class NoopMetricsProvider:
    """The default provider (client-go `noopMetricsProvider`): metrics cost nothing until asked for."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP


class _PrometheusFamilies:
    """The seven labelled metric families, registered once per registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["name"]
        self.depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", labels, registry=registry
        )
        self.adds = Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            labels,
            registry=registry,
        )
        self.latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            labels,
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels,
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.unfinished_work_seconds = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels,
            registry=registry,
        )
        self.longest_running_processor = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels,
            registry=registry,
        )
        self.retries = Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            labels,
            registry=registry,
        )


# One set of families per registry: prometheus-client refuses to register a name twice, and two
# providers on one registry must share the series (as two Go queues of one name share theirs).
_families_lock = threading.Lock()
_families_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, _PrometheusFamilies] = (
    weakref.WeakKeyDictionary()
)


class PrometheusMetricsProvider:
    """Exports queue metrics into a prometheus-client registry under client-go's names.

    The twin of k8s.io/component-base/metrics/prometheus/workqueue. `registry` defaults to
    prometheus-client's global `REGISTRY`.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = REGISTRY if registry is None else registry
        with _families_lock:
            families = _families_by_registry.get(registry)
            if families is None:
                families = _PrometheusFamilies(registry)
                _families_by_registry[registry] = families
        # _families: the registered metric families this provider hands out children of.
        self._families = families

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._families.depth.labels(name=name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._families.adds.labels(name=name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._families.latency.labels(name=name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._families.work_duration.labels(name=name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.unfinished_work_seconds.labels(name=name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.longest_running_processor.labels(name=name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._families.retries.labels(name=name)


# The provider used by queues constructed without one (client-go `globalMetricsFactory`).
_global_provider: MetricsProvider = NoopMetricsProvider()


def set_provider(provider: MetricsProvider) -> None:
    """Set the provider for queues created from now on without an explicit one.

    client-go's SetProvider takes effect only on its first call; here a later call replaces the
    provider (queues already created keep theirs), which keeps tests independent of each other.
    """
    global _global_provider
    _global_provider = provider


def get_provider() -> MetricsProvider:
    """The provider that `set_provider` last installed (a no-op provider by default)."""
    return _global_provider


class QueueMetrics:
    """Per-queue bookkeeping behind the metrics (client-go `defaultQueueMetrics`).

    Not thread-safe by itself: the owning queue calls every method under its lock.
    """

    def __init__(self, name: str, provider: MetricsProvider, clock: Clock) -> None:
        # _clock: the queue's clock; every duration here is a difference of its readings.
        self._clock = clock
        # depth counts items that are dirty (waiting to be handed out), including an item
        # re-added while it is processed, which is queued again on done.
        self.depth = provider.new_depth_metric(name)
        # adds counts every add that was not a no-op.
        self.adds = provider.new_adds_metric(name)
        # latency observes, per get, how long the item waited since its first pending add.
        self.latency = provider.new_latency_metric(name)
        # work_duration observes, per done, how long the item was processed.
        self.work_duration = provider.new_work_duration_metric(name)
        # unfinished_work_seconds: sum of the ages of every in-flight item, set on each tick.
        self.unfinished_work_seconds = provider.new_unfinished_work_seconds_metric(name)
        # longest_running_processor: the age of the oldest in-flight item, set on each tick.
        self.longest_running_processor = provider.new_longest_running_processor_seconds_metric(
            name
        )
        # _add_times: item -> time of its first add since it was last handed out.
        self._add_times: dict[Hashable, float] = {}
        # _processing_start_times: item -> when get handed it out; exactly the in-flight items.
        self._processing_start_times: dict[Hashable, float] = {}

    def add(self, item: Hashable) -> None:
        self.adds.inc()
        self.depth.inc()
        if item not in self._add_times:
            self._add_times[item] = self._clock.now()

    def get(self, item: Hashable) -> None:
        self.depth.dec()
        now = self._clock.now()
        self._processing_start_times[item] = now
        start = self._add_times.pop(item, None)
        if start is not None:
            self.latency.observe(now - start)

    def done(self, item: Hashable) -> None:
        start = self._processing_start_times.pop(item, None)
        if start is not None:
            self.work_duration.observe(self._clock.now() - start)

    def update_unfinished_work(self) -> None:
        """Publish the total and the longest age of the in-flight items (called per tick)."""
        now = self._clock.now()
        total = 0.0
        oldest = 0.0
        for start in self._processing_start_times.values():
            age = now - start
            total += age
            if age > oldest:
                oldest = age
        self.unfinished_work_seconds.set(total)
        self.longest_running_processor.set(oldest)


def new_queue_metrics(name: str, provider: MetricsProvider, clock: Clock) -> QueueMetrics | None:
    """Metrics for a queue, or None when it records none (client-go `newQueueMetrics`).

    Unnamed queues and the no-op provider get None, so the queue skips the bookkeeping and
    starts no unfinished-work thread.
    """
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return QueueMetrics(name, provider, clock)


def new_retry_metrics(name: str, provider: MetricsProvider) -> CounterMetric | None:
    """The retry counter of a delaying queue, or None when it records none."""
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return provider.new_retries_metric(name)
