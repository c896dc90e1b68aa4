"""Informers against kubesim over HTTP: initial sync, paging, watch updates, bookmarks, handlers,
stop."""

from __future__ import annotations

import threading
import time
from urllib.parse import parse_qs

import pytest
from kubernetes import client

from client.rest import RESTClient
from client.wait import ExponentialBackoff
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from informer import (
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    SharedInformerFactory,
    wait_for_cache_sync,
)
from informer.listwatch import ListWatch
from informer.testing import RunningInformer
from tests.helpers import wait_for

GROUP, VERSION, PLURAL = FOO_GVR


@pytest.fixture(params=["real", "delta"])
def fifo(request):
    return request.param


@pytest.fixture
def ns(shared_sim, request):
    """A fresh namespace per test, so tests sharing the module's server do not see each other."""
    name = (
        "t-" + request.node.name.lower().replace("_", "-").replace("[", "-").replace("]", "")[-50:]
    )
    client.CoreV1Api(shared_sim.api_client).create_namespace({"metadata": {"name": name}})
    return name


def foo_body(name, replicas=1, labels=None):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


def seed_foos(sim, ns, count):
    """Create objects in kubesim's storage directly: the test is about the informer, not POSTs."""
    info = sim.registry.lookup(GROUP, VERSION, PLURAL)
    for i in range(count):
        sim.rest.create(info, ns, foo_body(f"foo-{i:05d}"), {})


def foo_informer(sim, ns, fifo="real", list_watch=None, **kw):
    rest = RESTClient(sim.api_client)
    lw = list_watch or ListWatch(rest, GROUP, VERSION, PLURAL, ns)
    kw.setdefault("reflector_options", {"backoff": ExponentialBackoff(initial=0.05, cap=0.2)})
    return SharedIndexInformer(lw, 0.0, fifo=fifo, name=f"foos-{ns}", **kw)


def new_watches(sim, baseline):
    """The server's open watches that were not open at ``baseline`` (a set of watchers).

    Compared by identity, not by count: the server is shared by the module, and a watch of an
    earlier test may still be closing while this one opens.
    """
    return [w for w in sim.storage.watchers() if w not in baseline]


def watch_opened(sim, baseline):
    """A predicate: the server holds a watch that was not open at ``baseline``."""
    return lambda: new_watches(sim, baseline)


def list_queries(sim, ns):
    out = []
    for r in sim.request_log:
        if r.resource == PLURAL and r.namespace == ns and r.verb in ("list", "watch"):
            out.append((r.verb, {k: v[0] for k, v in parse_qs(r.query).items()}))
    return out


class Recorder:
    def __init__(self):
        self.events = []
        self.lock = threading.Lock()

    def on_add(self, obj, initial):
        with self.lock:
            self.events.append(("add", obj["metadata"]["name"], initial))

    def on_update(self, old, new):
        with self.lock:
            self.events.append(("update", new["metadata"]["name"], new["spec"].get("replicas")))

    def on_delete(self, obj):
        with self.lock:
            self.events.append(
                ("delete", getattr(obj, "key", None) or obj["metadata"]["name"], obj)
            )

    def snapshot(self):
        with self.lock:
            return list(self.events)


def test_initial_sync_is_one_watch_cache_list(shared_sim, ns, fifo):
    seed_foos(shared_sim, ns, 1200)
    # the list path (test_informer_watch_list.py has the streamed twin)
    informer = foo_informer(shared_sim, ns, fifo, use_watch_list=False)
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, reg, timeout=10)
        assert len(informer.lister().list()) == 1200
        assert all(initial for _, _, initial in rec.snapshot()) and len(rec.snapshot()) == 1200
        obj = informer.lister().get(ns, "foo-00042")
        assert obj["kind"] == "Foo" and obj["apiVersion"] == f"{GROUP}/{VERSION}"
    lists = [q for verb, q in list_queries(shared_sim, ns) if verb == "list"]
    # resourceVersion=0 is served whole from the (simulated) watch cache, limit or not
    assert lists == [{"resourceVersion": "0", "limit": "500"}]


class NoWatchCacheListWatch(ListWatch):
    """Asks for quorum reads where the reflector asks for RV=0: what a server without a watch cache
    does with RV=0 anyway. kubesim always emulates the watch cache, so this is how a test makes it
    page the first list."""

    def list(self, options):
        options = dict(options)
        if options.get("resourceVersion") == "0":
            options["resourceVersion"] = ""
        return super().list(options)


def test_initial_sync_of_many_objects_across_pages(shared_sim, ns, fifo):
    seed_foos(shared_sim, ns, 1234)
    rest = RESTClient(shared_sim.api_client)
    informer = foo_informer(
        shared_sim,
        ns,
        fifo,
        list_watch=NoWatchCacheListWatch(rest, GROUP, VERSION, PLURAL, ns),
        use_watch_list=False,  # paging is the list path's
    )
    baseline = set(shared_sim.storage.watchers())
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=10)
        names = sorted(o["metadata"]["name"] for o in informer.lister().list())
        assert names == [f"foo-{i:05d}" for i in range(1234)]
        wait_for(watch_opened(shared_sim, baseline), message="watch open")
    # the server logs a watch when it ends
    wait_for(
        lambda: any(v == "watch" for v, _ in list_queries(shared_sim, ns)), message="watch logged"
    )
    queries = list_queries(shared_sim, ns)
    lists = [q for verb, q in queries if verb == "list"]
    assert [q.get("limit") for q in lists] == ["500", "500", "500"]
    assert "continue" not in lists[0] and all(q.get("continue") for q in lists[1:])
    watch = next(q for verb, q in queries if verb == "watch")
    assert watch["allowWatchBookmarks"] == "true"
    assert 300 <= int(watch["timeoutSeconds"]) < 600
    assert int(watch["resourceVersion"]) >= 1234  # from the list's RV, not from scratch


def test_watch_updates_reach_cache_and_handlers(shared_sim, ns, fifo):
    api = client.CustomObjectsApi(shared_sim.api_client)
    api.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo_body("a"))
    informer = foo_informer(shared_sim, ns, fifo)
    rec = Recorder()
    informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        api.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo_body("b"))
        api.patch_namespaced_custom_object(
            GROUP, VERSION, ns, PLURAL, "a", {"spec": {"replicas": 3}}
        )
        api.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "b")
        wait_for(lambda: len(rec.snapshot()) == 4, timeout=5)
        events = rec.snapshot()
        assert [e[:2] for e in events if e[1] == "a"] == [("add", "a"), ("update", "a")]
        assert [e[:2] for e in events if e[1] == "b"] == [("add", "b"), ("delete", "b")]
        assert ("update", "a", 3) in events
        assert informer.lister().get(ns, "a")["spec"]["replicas"] == 3
        assert [o["metadata"]["name"] for o in informer.lister().by_namespace(ns).list()] == ["a"]
        server_rv = api.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "a")["metadata"][
            "resourceVersion"
        ]
        assert int(informer.last_sync_resource_version()) >= int(server_rv)


def test_bookmarks_advance_the_resource_version(shared_sim, ns):
    api = client.CustomObjectsApi(shared_sim.api_client)
    api.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo_body("a"))
    informer = foo_informer(shared_sim, ns)
    rec = Recorder()
    informer.add_event_handler(rec)
    baseline = set(shared_sim.storage.watchers())
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        wait_for(watch_opened(shared_sim, baseline), message="watch open")
        before = int(informer.last_sync_resource_version())
        # A write elsewhere moves the global RV; our watch only learns of it through a bookmark.
        api.create_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, foo_body(f"elsewhere-{ns}")
        )
        target = shared_sim.resource_version
        assert target > before
        shared_sim.send_bookmarks()
        wait_for(
            lambda: int(informer.last_sync_resource_version()) >= target,
            timeout=5,
            message="bookmark",
        )
        assert rec.snapshot() == [("add", "a", True)]  # a bookmark is not an event for handlers


def test_two_handlers_one_slow(shared_sim, ns, fifo):
    seed_foos(shared_sim, ns, 20)
    informer = foo_informer(shared_sim, ns, fifo)
    release = threading.Event()
    slow_names = []

    def slow_add(obj):
        release.wait(10)
        slow_names.append(obj["metadata"]["name"])

    fast = Recorder()
    slow_reg = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=slow_add))
    fast_reg = informer.add_event_handler(fast)
    api = client.CustomObjectsApi(shared_sim.api_client)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, fast_reg, timeout=5)
        for i in range(30):
            api.create_namespaced_custom_object(
                GROUP, VERSION, ns, PLURAL, foo_body(f"late-{i:02d}")
            )
        wait_for(lambda: len(fast.snapshot()) == 50, timeout=5, message="fast handler")
        assert slow_names == [] and not slow_reg.has_synced()
        release.set()
        assert wait_for_cache_sync(running.stop, slow_reg, timeout=5)
        wait_for(lambda: len(slow_names) == 50, timeout=5)
        assert slow_names[20:] == [f"late-{i:02d}" for i in range(30)]  # watch order kept


def test_stop_is_prompt(shared_sim, ns, fifo):
    seed_foos(shared_sim, ns, 5)
    informer = foo_informer(shared_sim, ns, fifo)
    baseline = set(shared_sim.storage.watchers())
    runner = RunningInformer(informer)
    with runner:
        assert wait_for_cache_sync(runner.stop, informer, timeout=5)
        ours = wait_for(watch_opened(shared_sim, baseline), message="watch open")
        started = time.monotonic()
        runner.stop.set()
        runner.thread.join(1.0)
        assert not runner.thread.is_alive()
        assert time.monotonic() - started < 1.0
    # the server sees the watch go away too
    wait_for(
        lambda: not set(ours) & set(shared_sim.storage.watchers()),
        timeout=3,
        message="server-side watch closed",
    )


def test_factory_against_kubesim(shared_sim, ns):
    seed_foos(shared_sim, ns, 3)
    factory = SharedInformerFactory(shared_sim.api_client, 0.0, namespace=ns)
    foos = factory.for_resource(GROUP, VERSION, PLURAL)
    deployments = factory.for_resource(*DEPLOYMENT_GVR)
    stop = threading.Event()
    try:
        factory.start(stop)
        assert all(factory.wait_for_cache_sync(stop, timeout=5).values())
        assert len(foos.lister().list()) == 3 and deployments.lister().list() == []
    finally:
        stop.set()
        factory.shutdown(timeout=2)
