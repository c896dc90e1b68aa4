"""Workqueue metrics: client-go's names, label `name`, values after a known sequence of
operations, read back from a prometheus-client CollectorRegistry. Time is a FakeClock, with
binary-exact steps so durations land in known buckets."""

from __future__ import annotations

import threading
from collections.abc import Hashable

import pytest
from prometheus_client import CollectorRegistry

from tests.helpers import wait_for
from workqueue import (
    DelayingQueue,
    FakeClock,
    NoopMetricsProvider,
    PrometheusMetricsProvider,
    Queue,
    RateLimitingQueue,
    get_provider,
    set_provider,
)
from workqueue.metrics import DURATION_BUCKETS

# Family names as prometheus-client reports them: counter families drop `_total`, which their
# samples carry (checked below).
NAMES = {
    "workqueue_depth": "gauge",
    "workqueue_adds": "counter",
    "workqueue_queue_duration_seconds": "histogram",
    "workqueue_work_duration_seconds": "histogram",
    "workqueue_unfinished_work_seconds": "gauge",
    "workqueue_longest_running_processor_seconds": "gauge",
    "workqueue_retries": "counter",
}
BUCKET_LABELS = ["1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1.0",
                 "10.0", "+Inf"]  # fmt: skip


class ZeroLimiter:
    """A limiter that never delays and counts its `when` calls."""

    def __init__(self) -> None:
        self.calls = 0

    def when(self, item: Hashable) -> float:
        self.calls += 1
        return 0.0

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def value(registry: CollectorRegistry, metric: str, name: str = "test", **labels: str) -> float:
    sample = registry.get_sample_value(metric, {"name": name, **labels})
    assert sample is not None, f"no sample {metric} for queue {name!r}"
    return sample


def buckets(registry: CollectorRegistry, histogram: str, name: str = "test") -> list[float]:
    """Cumulative bucket counts, in BUCKET_LABELS order."""
    return [value(registry, f"{histogram}_bucket", name, le=le) for le in BUCKET_LABELS]


def test_exports_client_go_names_kinds_and_buckets(registry: CollectorRegistry):
    q = DelayingQueue(name="test", metrics_provider=PrometheusMetricsProvider(registry))
    try:
        families = {f.name: f.type for f in registry.collect()}
        assert families == NAMES
        sample_names = {s.name for f in registry.collect() for s in f.samples}
        assert {"workqueue_adds_total", "workqueue_retries_total"} <= sample_names
        assert list(DURATION_BUCKETS) == [10.0**e for e in range(-8, 2)]
        for family in registry.collect():
            for sample in family.samples:
                assert sample.labels["name"] == "test"
                if sample.name.endswith("_bucket"):
                    assert sample.labels["le"] in BUCKET_LABELS
        assert buckets(registry, "workqueue_work_duration_seconds") == [0.0] * 11
    finally:
        q.shut_down()


def test_values_after_a_known_sequence(registry: CollectorRegistry, clock: FakeClock):
    q = Queue(name="test", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    try:
        q.add("a")
        clock.step(1.0)
        q.add("b")
        q.add("a")  # no-op: not counted
        assert value(registry, "workqueue_adds_total") == 2
        assert value(registry, "workqueue_depth") == 2

        clock.step(0.0625)
        q.get()  # a waited 1.0625 s -> le 10
        q.get()  # b waited 0.0625 s -> le 0.1
        assert value(registry, "workqueue_depth") == 0

        clock.step(0.001953125)
        q.add("b")  # while processing: counted, deepens the queue, not yet handed out
        assert value(registry, "workqueue_adds_total") == 3
        assert value(registry, "workqueue_depth") == 1
        q.done("a")  # worked 0.001953125 s -> le 0.01
        q.done("b")  # same; b goes back in the queue with its add time of now
        q.get()  # waited 0 s -> le 1e-08
        assert value(registry, "workqueue_depth") == 0

        assert buckets(registry, "workqueue_queue_duration_seconds") == [
            1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 3
        ]  # fmt: skip
        assert value(registry, "workqueue_queue_duration_seconds_count") == 3
        assert value(registry, "workqueue_queue_duration_seconds_sum") == 1.125
        assert buckets(registry, "workqueue_work_duration_seconds") == [
            0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2
        ]  # fmt: skip
        assert value(registry, "workqueue_work_duration_seconds_sum") == 2 * 0.001953125
    finally:
        q.shut_down()


def test_unfinished_work_gauges_update_on_the_500ms_tick(
    registry: CollectorRegistry, clock: FakeClock
):
    q = Queue(name="test", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    try:
        start = clock.now()
        assert clock.wait_for_waiters(1)
        assert clock.waiter_deadlines() == [start + 0.5]
        q.add("a")
        q.add("b")
        q.get()
        clock.step(0.25)
        q.get()
        # Not yet a tick: the gauges still hold their initial zero.
        assert clock.waiter_deadlines() == [start + 0.5]
        assert value(registry, "workqueue_unfinished_work_seconds") == 0
        clock.step(0.25)  # the tick: a has run 0.5 s, b 0.25 s
        wait_for(
            lambda: value(registry, "workqueue_unfinished_work_seconds") == 0.75,
            message="the tick to update the unfinished-work gauge",
        )
        assert value(registry, "workqueue_longest_running_processor_seconds") == 0.5
        wait_for(
            lambda: clock.waiter_deadlines() == [start + 1.0], message="the next tick scheduled"
        )

        q.done("a")
        q.done("b")
        clock.step(0.5)
        wait_for(
            lambda: value(registry, "workqueue_unfinished_work_seconds") == 0,
            message="the gauge back at zero",
        )
        assert value(registry, "workqueue_longest_running_processor_seconds") == 0
    finally:
        q.shut_down()


def test_unfinished_work_thread_is_named_and_stops_with_the_queue(registry: CollectorRegistry):
    q = Queue(name="stops", metrics_provider=PrometheusMetricsProvider(registry))
    thread = q._unfinished_work_thread
    assert thread is not None and thread.is_alive()
    assert thread.name == "workqueue-unfinished-work-stops"
    q.shut_down()
    assert not thread.is_alive()
    assert "workqueue-unfinished-work-stops" not in [t.name for t in threading.enumerate()]


def test_unfinished_work_thread_stops_with_a_drained_queue(registry: CollectorRegistry):
    q = Queue(name="drained", metrics_provider=PrometheusMetricsProvider(registry))
    thread = q._unfinished_work_thread
    q.shut_down_with_drain()
    assert thread is not None and not thread.is_alive()


def test_every_add_after_counts_a_retry(registry: CollectorRegistry, clock: FakeClock):
    q = DelayingQueue(
        name="test", metrics_provider=PrometheusMetricsProvider(registry), clock=clock
    )
    q.add_after("x", 0)
    q.add_after("y", 1.0)
    q.add_after("y", 2.0)  # coalesced into the earlier one, still a retry
    assert value(registry, "workqueue_retries_total") == 3
    assert value(registry, "workqueue_adds_total") == 1  # only x so far
    q.shut_down()
    q.add_after("z", 0)
    assert value(registry, "workqueue_retries_total") == 3


def test_add_rate_limited_counts_a_retry(registry: CollectorRegistry, clock: FakeClock):
    q = RateLimitingQueue(
        ZeroLimiter(),
        name="test",
        metrics_provider=PrometheusMetricsProvider(registry),
        clock=clock,
    )
    try:
        q.add_rate_limited("x")
        q.add_rate_limited("x")
        assert value(registry, "workqueue_retries_total") == 2
        assert value(registry, "workqueue_adds_total") == 1
    finally:
        q.shut_down()


def test_unnamed_queues_record_nothing_and_start_no_thread(registry: CollectorRegistry):
    provider = PrometheusMetricsProvider(registry)
    limiter = ZeroLimiter()
    q = RateLimitingQueue(limiter, name=None, metrics_provider=provider)
    try:
        q.add("a")
        q.add_rate_limited("b")
        assert limiter.calls == 1
        assert q._unfinished_work_thread is None
        assert all(not family.samples for family in registry.collect())
    finally:
        q.shut_down()


def test_named_queue_with_the_noop_provider_starts_no_thread():
    q = Queue(name="quiet", metrics_provider=NoopMetricsProvider())
    try:
        q.add("a")
        assert q._unfinished_work_thread is None
    finally:
        q.shut_down()


def test_queues_sharing_a_name_share_the_series(registry: CollectorRegistry):
    first = Queue(name="shared", metrics_provider=PrometheusMetricsProvider(registry))
    second = Queue(name="shared", metrics_provider=PrometheusMetricsProvider(registry))
    other = Queue(name="other", metrics_provider=PrometheusMetricsProvider(registry))
    try:
        first.add("a")
        second.add("a")
        second.add("b")
        other.add("a")
        assert value(registry, "workqueue_depth", "shared") == 3
        assert value(registry, "workqueue_adds_total", "shared") == 3
        assert value(registry, "workqueue_depth", "other") == 1
    finally:
        for q in (first, second, other):
            q.shut_down()


def test_set_provider_applies_to_queues_created_afterwards(registry: CollectorRegistry):
    previous = get_provider()
    before = Queue(name="before")
    set_provider(PrometheusMetricsProvider(registry))
    try:
        after = Queue(name="after")
        before.add("a")
        after.add("a")
        assert value(registry, "workqueue_adds_total", "after") == 1
        assert registry.get_sample_value("workqueue_adds_total", {"name": "before"}) is None
    finally:
        set_provider(previous)
        before.shut_down()
        after.shut_down()
    assert isinstance(get_provider(), type(previous))


def test_metrics_stay_consistent_under_concurrent_workers(registry: CollectorRegistry):
    q = Queue(name="test", metrics_provider=PrometheusMetricsProvider(registry))

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            q.done(item)

    workers = [threading.Thread(target=work, name=f"test-worker-{i}") for i in range(4)]
    for t in workers:
        t.start()
    for i in range(2000):
        q.add(i)
    q.shut_down()
    for t in workers:
        t.join(10)
    assert value(registry, "workqueue_adds_total") == 2000
    assert value(registry, "workqueue_depth") == 0
    assert value(registry, "workqueue_queue_duration_seconds_count") == 2000
    assert value(registry, "workqueue_work_duration_seconds_count") == 2000
