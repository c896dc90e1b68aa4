"""Informers recovering from server trouble, against kubesim over HTTP.

Each test gets its own kubesim, because they stop, restart and break it.
"""

from __future__ import annotations

import threading
from urllib.parse import parse_qs

import pytest

from client.rest import RESTClient
from client.wait import ExponentialBackoff
from controller.foo_controller import FOO_GVR
from informer import DeletedFinalStateUnknown, SharedIndexInformer, wait_for_cache_sync
from informer.listwatch import ListWatch
from informer.testing import RunningInformer
from tests.helpers import wait_for

GROUP, VERSION, PLURAL = FOO_GVR
NS = "default"


@pytest.fixture(params=["real", "delta"])
def fifo(request):
    return request.param


def foo_body(name, replicas=1):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


def info(sim):
    return sim.registry.lookup(GROUP, VERSION, PLURAL)


def create(sim, name, replicas=1):
    """Write straight into kubesim's storage: works while its HTTP side is down."""
    sim.rest.create(info(sim), NS, foo_body(name, replicas), {})


def foo_informer(sim, fifo="real", **reflector_options):
    reflector_options.setdefault("backoff", ExponentialBackoff(initial=0.05, cap=0.2))
    lw = ListWatch(RESTClient(sim.api_client), GROUP, VERSION, PLURAL, NS)
    return SharedIndexInformer(lw, 0.0, fifo=fifo, name="foos", reflector_options=reflector_options)


def requests(sim, verb):
    return [
        {k: v[0] for k, v in parse_qs(r.query).items()}
        for r in sim.request_log
        if r.resource == PLURAL and r.verb == verb
    ]


class Recorder:
    def __init__(self):
        self.events = []
        self.lock = threading.Lock()

    def on_add(self, obj, initial):
        with self.lock:
            self.events.append(("add", obj["metadata"]["name"], obj))

    def on_update(self, old, new):
        with self.lock:
            self.events.append(("update", new["metadata"]["name"], new))

    def on_delete(self, obj):
        with self.lock:
            name = obj.key if isinstance(obj, DeletedFinalStateUnknown) else obj["metadata"]["name"]
            self.events.append(("delete", name, obj))

    def of(self, kind):
        with self.lock:
            return [e for e in self.events if e[0] == kind]


def wait_watching(sim):
    wait_for(lambda: len(sim.storage.watchers()) > 0, timeout=5, message="an open watch")


def test_deletion_missed_during_watch_drop_and_compaction_arrives_as_tombstone(sim, fifo):
    create(sim, "a", replicas=2)
    create(sim, "b")
    # the list path: it counts LIST calls (test_informer_watch_list.py has the streamed relist)
    informer = foo_informer(sim, fifo, use_watch_list=False)
    rec = Recorder()
    informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        wait_watching(sim)
        sim.stop()  # the watch drops; reconnects are refused for now
        sim.rest.delete(info(sim), NS, "a", {}, None)  # deleted while nobody watched...
        sim.storage.compact()  # ...and the history that would have told us is gone
        sim.start()
        wait_for(lambda: rec.of("delete"), timeout=10, message="the tombstone")
        ((_, key, tombstone),) = rec.of("delete")
        assert isinstance(tombstone, DeletedFinalStateUnknown) and key == f"{NS}/a"
        assert tombstone.obj["spec"]["replicas"] == 2  # the last state the cache had
        assert [o["metadata"]["name"] for o in informer.lister().list()] == ["b"]
    lists = requests(sim, "list")
    assert len(lists) == 2  # the relist after 410 Expired
    assert lists[1]["resourceVersion"] not in ("", "0")  # at the last synced RV first, as client-go


def test_server_restart_resumes_the_watch_without_relisting(sim, fifo):
    create(sim, "a")
    # the list path: it counts LIST calls (test_informer_watch_list.py has the streamed twin)
    informer = foo_informer(sim, fifo, use_watch_list=False)
    rec = Recorder()
    informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        wait_watching(sim)
        # One event on the watch first: a watch that ends within a second with no events at all
        # is treated as a server fault and answered with a relist (client-go's "very short watch").
        create(sim, "warm-up")
        wait_for(lambda: len(rec.of("add")) == 2, timeout=5)
        synced_rv = int(informer.last_sync_resource_version())
        sim.stop()
        create(sim, "made-while-down")
        sim.start()
        wait_for(lambda: len(rec.of("add")) == 3, timeout=10, message="the missed add")
        assert rec.of("add")[2][1] == "made-while-down"
        assert int(informer.last_sync_resource_version()) > synced_rv
    assert len(requests(sim, "list")) == 1  # history was kept: watching again was enough
    # the re-watch after the restart resumed from the last synced RV (logged once it ended)
    wait_for(
        lambda: any(int(w.get("resourceVersion", 0)) == synced_rv for w in requests(sim, "watch")),
        timeout=5,
        message=f"a watch from resourceVersion {synced_rv}",
    )
