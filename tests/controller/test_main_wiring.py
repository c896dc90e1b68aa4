"""controller.main.run wires the flags into the informers through the runtime's manager (no API
server needed)."""

import sys
import threading

import controller.main as main
import runtime.manager as manager
from controller.main import parse_foo_options as parse_options
from informer.transforms import transform_strip_managed_fields
from workqueue import RateLimitingQueue, sample_controller_rate_limiter


class RecordingFactory:
    made: list = []

    def __init__(self, rest, resync, **kwargs):
        self.kwargs = dict(kwargs, resync=resync)
        RecordingFactory.made.append(self)

    def for_resource(self, *gvr):
        return FakeInformer()

    def start(self, stop):
        pass


class FakeInformer:
    def lister(self):
        return None

    def add_indexers(self, indexers):
        pass

    def get_indexer(self):
        return None

    def add_event_handler(self, handler, resync_period=None):
        return self

    def has_synced(self):
        return False


def run_with(monkeypatch, *flags):
    RecordingFactory.made = []
    monkeypatch.setattr(manager, "SharedInformerFactory", RecordingFactory)
    options = parse_options(["--resync-period", "1m30s", *flags])
    stop = threading.Event()
    stop.set()  # run returns at once: the caches never sync
    from prometheus_client import CollectorRegistry

    assert main.run(options, rest=None, stop=stop, registry=CollectorRegistry()) == 0
    return [f.kwargs for f in RecordingFactory.made]


def _with_managed_fields() -> dict:
    return {
        "metadata": {"name": "d", "managedFields": [{"manager": "kubectl"}]},
        "spec": {"image": "".join(["nginx:", "1.25"])},  # built at run time: not interned yet
    }


def test_managed_fields_are_stripped_by_default(monkeypatch):
    made = run_with(monkeypatch)
    for kwargs in made:
        transformed = kwargs["transform"](_with_managed_fields())
        assert transformed == transform_strip_managed_fields(_with_managed_fields())
        assert "managedFields" not in transformed["metadata"]
        assert transformed["spec"]["image"] is sys.intern("nginx:1.25")  # then interned
    assert {k["resync"] for k in made} == {90.0}


def test_no_strip_managed_fields_keeps_them(monkeypatch):
    made = run_with(
        monkeypatch, "--no-strip-managed-fields", "--fifo", "delta", "--namespace", "ns1"
    )
    for kwargs in made:  # only interned: managedFields stay
        transformed = kwargs["transform"](_with_managed_fields())
        assert transformed["metadata"]["managedFields"] == [{"manager": "kubectl"}]
        assert transformed["spec"]["image"] is sys.intern("nginx:1.25")
    assert {k["fifo"] for k in made} == {"delta"} and {k["namespace"] for k in made} == {"ns1"}


def test_foo_selector_narrows_only_the_foo_informer(monkeypatch):
    made = run_with(monkeypatch, "--foo-selector", "shard=a")
    tweaks = [k.get("tweak_list_options") for k in made]
    assert tweaks[0] is None  # Deployments: all of them
    options: dict = {}
    tweaks[1](options)
    assert options == {"labelSelector": "shard=a"}


def test_watch_list_is_left_to_the_gate_unless_the_flag_says(monkeypatch):
    # None: each reflector asks client-go's WatchListClient gate (KUBE_FEATURE_WatchListClient)
    assert {k["use_watch_list"] for k in run_with(monkeypatch)} == {None}
    assert {k["use_watch_list"] for k in run_with(monkeypatch, "--watch-list=false")} == {False}
    assert {k["use_watch_list"] for k in run_with(monkeypatch, "--watch-list")} == {True}


def test_no_registry_no_metrics(monkeypatch):
    """Nothing serves /metrics: the informers, the queue and the reconciles count nothing
    (client-go's no-op providers), so no metric is updated on the hot path."""
    from workqueue import NoopMetricsProvider

    metrics = manager.Metrics.into(None)
    assert metrics.informers is None
    assert isinstance(metrics.queue, NoopMetricsProvider)
    assert metrics.reconcile("foo") is None
    stop = threading.Event()
    stop.set()
    RecordingFactory.made = []
    monkeypatch.setattr(manager, "SharedInformerFactory", RecordingFactory)
    assert main.run(parse_options([]), rest=None, stop=stop) == 0
    assert [f.kwargs["metrics"] for f in RecordingFactory.made] == [None, None]


def test_a_registry_gets_every_metric():
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    metrics = manager.Metrics.into(registry)
    assert metrics.informers is not None and metrics.reconcile("foo") is not None
    queue = RateLimitingQueue(
        sample_controller_rate_limiter(), name="foo", metrics_provider=metrics.queue
    )
    queue.add("default/a")
    queue.shut_down()
    assert registry.get_sample_value("workqueue_adds_total", {"name": "foo"}) == 1.0
    assert (
        registry.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}
        )
        == 0.0
    )
    informer = metrics.informers.for_informer("kube", "apps", "v1", "deployments")
    informer.inc_watches()
    labels = {"name": "kube", "group": "apps", "version": "v1", "resource": "deployments"}
    assert registry.get_sample_value("informer_watches_total", labels) == 1.0
