"""informer.metrics: client-go names and labels, an injectable registry, a no-op default."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry

from client.wait import ExponentialBackoff
from informer.metrics import NOOP_METRICS, InformerMetrics, InformerMetricsProvider
from informer.shared_informer import SharedIndexInformer, wait_for_cache_sync
from informer.testing import FakeListWatch
from tests.helpers import wait_for

LABELS = {"name": "ctl", "group": "apps", "version": "v1", "resource": "deployments"}


def test_bound_metrics_record_under_client_go_names():
    registry = CollectorRegistry()
    m = InformerMetricsProvider(registry).for_informer("ctl", "apps", "v1", "deployments")
    m.set_queued_items(7)
    m.set_store_resource_version("12345678901234567890")
    m.observe_processing_latency(0.002)
    m.inc_lists()
    m.inc_relists()
    m.inc_watches()
    m.inc_watch_events()
    get = registry.get_sample_value
    assert get("informer_queued_items", LABELS) == 7
    assert get("informer_store_resource_version", LABELS) == 678901234567890  # 15 low digits
    assert get("informer_processing_latency_seconds_count", LABELS) == 1
    assert get("informer_lists_total", LABELS) == 1
    assert get("informer_relists_total", LABELS) == 1
    assert get("informer_watches_total", LABELS) == 1
    assert get("informer_watch_events_total", LABELS) == 1


def test_non_numeric_resource_version_is_not_plotted():
    registry = CollectorRegistry()
    m = InformerMetricsProvider(registry).for_informer("ctl", "apps", "v1", "deployments")
    m.set_store_resource_version("abc")
    assert registry.get_sample_value("informer_store_resource_version", LABELS) == 0  # left alone


def test_noop_metrics_accept_every_call():
    assert isinstance(NOOP_METRICS, InformerMetrics)
    NOOP_METRICS.set_queued_items(1)
    NOOP_METRICS.set_store_resource_version("1")
    NOOP_METRICS.inc_lists()


def test_informer_reports_lists_watches_events_depth_and_rv():
    registry = CollectorRegistry()
    metrics = InformerMetricsProvider(registry).for_informer("ctl", "apps", "v1", "deployments")
    lw = FakeListWatch([{"metadata": {"name": "a", "namespace": "ns"}}])
    informer = SharedIndexInformer(
        lw,
        metrics=metrics,
        # the list path: informer_lists_total counts LIST calls
        use_watch_list=False,
        reflector_options={"backoff": ExponentialBackoff(0.001, 0.005, jitter=0)},
    )
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), name="informer-metrics")
    thread.start()
    try:
        assert wait_for_cache_sync(stop, informer, timeout=2)
        lw.add({"metadata": {"name": "b", "namespace": "ns"}})
        get = registry.get_sample_value
        wait_for(lambda: get("informer_store_resource_version", LABELS) == 2)
        lw.miss_deletion("ns/a")
        wait_for(lambda: get("informer_relists_total", LABELS) == 1)
        assert get("informer_lists_total", LABELS) == 2
        assert get("informer_watches_total", LABELS) >= 2
        assert get("informer_watch_events_total", LABELS) >= 1
        assert get("informer_queued_items", LABELS) is not None
        wait_for(lambda: get("informer_queued_items", LABELS) == 0)
        assert get("informer_processing_latency_seconds_count", LABELS) >= 2
    finally:
        stop.set()
        thread.join(2)


def test_a_streamed_relist_is_a_relist_but_no_list_call():
    registry = CollectorRegistry()
    metrics = InformerMetricsProvider(registry).for_informer("ctl", "apps", "v1", "deployments")
    lw = FakeListWatch([{"metadata": {"name": "a", "namespace": "ns"}}])
    informer = SharedIndexInformer(
        lw,
        metrics=metrics,
        use_watch_list=True,
        reflector_options={"backoff": ExponentialBackoff(0.001, 0.005, jitter=0)},
    )
    stop = threading.Event()
    thread = threading.Thread(target=informer.run, args=(stop,), name="informer-metrics")
    thread.start()
    try:
        assert wait_for_cache_sync(stop, informer, timeout=2)
        get = registry.get_sample_value
        lw.miss_deletion("ns/a")
        wait_for(lambda: get("informer_relists_total", LABELS) == 1)
        assert get("informer_lists_total", LABELS) == 0
        assert get("informer_watches_total", LABELS) >= 2
        assert lw.list_calls == []
    finally:
        stop.set()
        thread.join(2)
