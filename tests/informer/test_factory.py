"""informer.factory: one shared informer per resource, start and sync, over a fake transport."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry

from client.rest import RESTClient
from informer.factory import GroupVersionResource, SharedInformerFactory
from informer.metrics import InformerMetricsProvider
from informer.testing import FakeListWatch
from tests.helpers import wait_for


class FakeRESTClient:
    """Routes list/watch requests by path to one FakeListWatch per collection."""

    def __init__(self, sources):
        self.sources = sources  # path -> FakeListWatch
        self.params: list[tuple[str, dict]] = []

    def request(
        self, method, path, params=None, body=None, content_type="application/json", timeout=None
    ):
        self.params.append((path, dict(params or {})))
        return self.sources[path].list(params or {})

    def stream(self, path, params=None, timeout=None):
        self.params.append((path, dict(params or {})))
        options = {k: v for k, v in (params or {}).items() if k != "watch"}
        return self.sources[path].watch(options, read_timeout=timeout[1] if timeout else None)


def foo(name, ns="default"):
    return {"metadata": {"name": name, "namespace": ns, "managedFields": [{"manager": "x"}]}}


@pytest.fixture
def world():
    deployments = FakeListWatch([foo("d1")], kind="Deployment", api_version="apps/v1")
    foos = FakeListWatch([foo("f1"), foo("f2")])
    client = FakeRESTClient(
        {
            "/apis/apps/v1/deployments": deployments,
            "/apis/samplecontroller.k8s.io/v1alpha1/foos": foos,
        }
    )
    return client, deployments, foos


def test_for_resource_returns_one_shared_informer(world):
    client, _, _ = world
    factory = SharedInformerFactory(client, 30.0)
    a = factory.for_resource("apps", "v1", "deployments")
    assert factory.for_resource("apps", "v1", "deployments") is a
    assert factory.for_resource("", "v1", "pods") is not a
    assert a.name == "deployments.apps"
    assert a._default_event_handler_resync_period == 30.0
    assert set(factory.informers()) == {("apps", "v1", "deployments"), ("", "v1", "pods")}
    assert str(GroupVersionResource("", "v1", "pods")) == "v1/pods"


def test_start_sync_list_and_shutdown(world):
    client, deployments, foos = world
    factory = SharedInformerFactory(client, 0.0)
    dep_informer = factory.for_resource("apps", "v1", "deployments")
    foo_informer = factory.for_resource("samplecontroller.k8s.io", "v1alpha1", "foos")
    stop = threading.Event()
    factory.start(stop)
    factory.start(stop)  # idempotent
    synced = factory.wait_for_cache_sync(stop, timeout=2)
    assert synced == {
        GroupVersionResource("apps", "v1", "deployments"): True,
        GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos"): True,
    }
    assert [o["metadata"]["name"] for o in dep_informer.lister().list()] == ["d1"]
    assert sorted(o["metadata"]["name"] for o in foo_informer.lister().list()) == ["f1", "f2"]
    foos.add(foo("f3"))
    wait_for(lambda: len(foo_informer.lister().list()) == 3)
    stop.set()
    factory.shutdown(timeout=2)
    assert all(not t.is_alive() for t in factory._threads.values())


def test_informer_added_after_start_needs_another_start(world):
    client, _, _ = world
    factory = SharedInformerFactory(client)
    factory.for_resource("apps", "v1", "deployments")
    stop = threading.Event()
    try:
        factory.start(stop)
        late = factory.for_resource("samplecontroller.k8s.io", "v1alpha1", "foos")
        assert GroupVersionResource(
            "samplecontroller.k8s.io", "v1alpha1", "foos"
        ) not in factory.wait_for_cache_sync(stop, 2)
        factory.start(stop)
        assert all(factory.wait_for_cache_sync(stop, 2).values())
        assert late.has_synced()
    finally:
        stop.set()
        factory.shutdown(2)


def test_namespace_tweak_transform_and_metrics_reach_the_informers(world):
    client, _, foos = world
    client.sources["/apis/samplecontroller.k8s.io/v1alpha1/namespaces/team/foos"] = foos
    registry = CollectorRegistry()

    def tweak(options):
        options["labelSelector"] = "app=x"

    def strip(o):
        o = dict(o)
        o["metadata"] = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        return o

    factory = SharedInformerFactory(
        client,
        0.0,
        namespace="team",
        tweak_list_options=tweak,
        transform=strip,
        fifo="delta",
        name="ctl",
        metrics=InformerMetricsProvider(registry),
        # the list path, whose calls informer_lists_total counts
        use_watch_list=False,
    )
    informer = factory.for_resource("samplecontroller.k8s.io", "v1alpha1", "foos")
    assert informer.fifo_kind == "delta"
    assert informer.use_watch_list is False
    stop = threading.Event()
    try:
        factory.start(stop)
        assert all(factory.wait_for_cache_sync(stop, 2).values())
        paths = {p for p, _ in client.params}
        assert paths == {"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/team/foos"}
        assert all(params.get("labelSelector") == "app=x" for _, params in client.params)
        assert all("managedFields" not in o["metadata"] for o in informer.lister().list())
        labels = {
            "name": "ctl",
            "group": "samplecontroller.k8s.io",
            "version": "v1alpha1",
            "resource": "foos",
        }
        assert registry.get_sample_value("informer_lists_total", labels) == 1
    finally:
        stop.set()
        factory.shutdown(2)


def test_api_client_is_wrapped_in_a_rest_client():
    from kubernetes.client import ApiClient, Configuration

    config = Configuration()
    config.host = "http://127.0.0.1:1"
    factory = SharedInformerFactory(ApiClient(config))
    assert isinstance(factory.rest_client, RESTClient)
    # the shipped client keeps list items encoded until the informer takes them, one by one
    assert factory.for_resource("apps", "v1", "deployments").list_watch.lazy_items
