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

import itertools
import threading
import weakref
from bisect import bisect_left
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from workqueue.clock import Clock

if TYPE_CHECKING:
    # prometheus_client is imported when a PrometheusMetricsProvider is built, not with this
    # module: a process that serves no /metrics (client-go's default, the noop provider) never
    # loads it (about 1.3 MiB after the controller's other imports; docs/benchmarks.md).
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

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

# Both duration histograms: 10^-8 .. 10 s, exponential x10
# (client-go ExponentialBuckets(10e-9, 10, 10)).
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
    """Creates the metrics of one named queue (client-go `MetricsProvider`).

    Contract with the queues: a queue asks for its own metric objects when it is created (two
    queues never share an object), and calls every one of them except the retry counter while
    holding its own lock. A provider may rely on this to avoid locks on the hot path.
    """

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
    """The default provider (client-go `noopMetricsProvider`).

    Metrics cost nothing until asked for.
    """

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


_DOC_DEPTH = "Current depth of workqueue"
_DOC_ADDS = "Total number of adds handled by workqueue"
_DOC_LATENCY = "How long in seconds an item stays in workqueue before being requested."
_DOC_WORK_DURATION = "How long in seconds processing an item from workqueue takes."
_DOC_UNFINISHED = (
    "How many seconds of work has done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
    "threads by observing the rate at which this increases."
)
_DOC_LONGEST = "How many seconds has the longest running processor for workqueue been running."
_DOC_RETRIES = "Total number of retries handled by workqueue"


class _Gauge:
    """A gauge value without a lock: only one queue moves it, under that queue's lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1

    def set(self, value: float) -> None:
        self.value = value


class _Counter:
    """A counter value without a lock: only one queue increments it, under that queue's lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self) -> None:
        self.value += 1


class _LockedCounter:
    """A counter incremented outside any queue lock (retries: add_after may run concurrently)."""

    __slots__ = ("_lock", "value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def inc(self) -> None:
        with self._lock:
            self.value += 1


class _Histogram:
    """Bucket counts without a lock: only one queue observes into it, under that queue's lock."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        # counts[i]: observations in (DURATION_BUCKETS[i-1], DURATION_BUCKETS[i]]; the last
        # slot is the +Inf bucket. Not cumulative: collect() accumulates.
        self.counts = [0] * (len(DURATION_BUCKETS) + 1)
        # sum: the total of every observed value.
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(DURATION_BUCKETS, value)] += 1
        self.sum += value


_Value = TypeVar("_Value", _Gauge, _Counter, _LockedCounter, _Histogram)


class _WorkqueueCollector:
    """Exports every queue's metric values under client-go's names, computed at scrape time.

    Why not prometheus-client's Counter/Gauge/Histogram: each of their updates takes a lock
    (about 0.3 us, 0.6 us per histogram observation), and a queue makes five updates per
    add/get/done cycle while it holds its own lock. Here each queue gets its own plain value
    objects, which it updates under the lock it already holds, and a scrape adds up the objects
    of every queue of one name. The exported families, labels and buckets are the same.
    """

    def __init__(self) -> None:
        # _lock guards the lists in _series (append on queue creation vs iteration on scrape).
        self._lock = threading.Lock()
        # _series: metric kind -> queue name -> the value objects handed out for that name
        # (all of the kind's one class: _Gauge, _Counter, _LockedCounter or _Histogram).
        self._series: dict[str, dict[str, list[Any]]] = {
            kind: {}
            for kind in (
                "depth",
                "adds",
                "latency",
                "work_duration",
                "unfinished",
                "longest",
                "retries",
            )
        }

    def new(self, kind: str, name: str, metric: _Value) -> _Value:
        with self._lock:
            self._series[kind].setdefault(name, []).append(metric)
        return metric

    def describe(self) -> list[Metric]:
        return self._families({kind: {} for kind in self._series})

    def collect(self) -> list[Metric]:
        with self._lock:
            snapshot = {
                kind: {name: list(objs) for name, objs in by_name.items()}
                for kind, by_name in self._series.items()
            }
        return self._families(snapshot)

    @staticmethod
    def _families(series: dict[str, dict[str, list[Any]]]) -> list[Metric]:
        from prometheus_client.metrics_core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )
        from prometheus_client.utils import floatToGoString

        bucket_labels = [floatToGoString(b) for b in DURATION_BUCKETS] + ["+Inf"]
        labels = ["name"]
        depth = GaugeMetricFamily("workqueue_depth", _DOC_DEPTH, labels=labels)
        adds = CounterMetricFamily("workqueue_adds_total", _DOC_ADDS, labels=labels)
        latency = HistogramMetricFamily(
            "workqueue_queue_duration_seconds", _DOC_LATENCY, labels=labels
        )
        work = HistogramMetricFamily(
            "workqueue_work_duration_seconds", _DOC_WORK_DURATION, labels=labels
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds", _DOC_UNFINISHED, labels=labels
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds", _DOC_LONGEST, labels=labels
        )
        retries = CounterMetricFamily("workqueue_retries_total", _DOC_RETRIES, labels=labels)
        for family, kind in (
            (depth, "depth"),
            (adds, "adds"),
            (unfinished, "unfinished"),
            (longest, "longest"),
            (retries, "retries"),
        ):
            for name, objs in series[kind].items():
                family.add_metric([name], sum(o.value for o in objs))
        for histogram, kind in ((latency, "latency"), (work, "work_duration")):
            for name, objs in series[kind].items():
                counts = [
                    sum(column) for column in zip(*(list(o.counts) for o in objs), strict=True)
                ]
                cumulative = list(itertools.accumulate(counts))
                histogram.add_metric(
                    [name],
                    buckets=list(zip(bucket_labels, cumulative, strict=True)),
                    sum_value=sum(o.sum for o in objs),
                )
        return [depth, adds, latency, work, unfinished, longest, retries]


# One collector per registry: a registry refuses a metric name twice, and two providers on one
# registry must share the series (as two Go queues of one name share theirs).
_collectors_lock = threading.Lock()
_collectors_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, _WorkqueueCollector] = (
    weakref.WeakKeyDictionary()
)


class PrometheusMetricsProvider:
    """Exports queue metrics into a prometheus-client registry under client-go's names.

    The twin of k8s.io/component-base/metrics/prometheus/workqueue. `registry` defaults to
    prometheus-client's global `REGISTRY`. Relies on the queue's contract (see
    `MetricsProvider`): each queue asks for its own metrics and updates all but the retry
    counter under its lock, so those need no lock of their own. Several queues with one name
    are summed, as they would share one series in Go.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        from prometheus_client import REGISTRY

        registry = REGISTRY if registry is None else registry
        with _collectors_lock:
            collector = _collectors_by_registry.get(registry)
            if collector is None:
                collector = _WorkqueueCollector()
                registry.register(collector)
                _collectors_by_registry[registry] = collector
        # _collector: the registry's collector that exports what this provider hands out.
        self._collector = collector

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._collector.new("depth", name, _Gauge())

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._collector.new("adds", name, _Counter())

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._collector.new("latency", name, _Histogram())

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._collector.new("work_duration", name, _Histogram())

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._collector.new("unfinished", name, _Gauge())

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._collector.new("longest", name, _Gauge())

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._collector.new("retries", name, _LockedCounter())


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
        self.longest_running_processor = provider.new_longest_running_processor_seconds_metric(name)
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
