"""informer.shared_informer: the same behaviour suite over RealFIFO and DeltaFIFO (fake
ListWatch)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from client.wait import ExponentialBackoff
from informer import shared_informer
from informer.shared_informer import (
    FilteringResourceEventHandler,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from informer.store import DeletedFinalStateUnknown
from informer.testing import FakeListWatch
from tests.helpers import wait_for


def foo(name, ns="ns", labels=None, **spec):
    meta = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "spec": spec}


def name_of(obj):
    if isinstance(obj, DeletedFinalStateUnknown):
        return "tombstone:" + obj.key
    return obj["metadata"]["name"]


class Recorder:
    """A handler that records (kind, name, detail) tuples."""

    def __init__(self):
        self.events: list[tuple] = []
        self.lock = threading.Lock()

    def on_add(self, obj, is_in_initial_list):
        with self.lock:
            self.events.append(("add", name_of(obj), is_in_initial_list))

    def on_update(self, old, new):
        with self.lock:
            self.events.append(("update", name_of(new), old is new))

    def on_delete(self, obj):
        with self.lock:
            self.events.append(("delete", name_of(obj), obj))

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def kinds(self):
        return [(k, n) for k, n, _ in self.snapshot()]


@pytest.fixture(params=["real", "delta"])
def fifo(request):
    return request.param


@pytest.fixture
def running():
    """Start informers on threads; stop them all at teardown."""
    started: list[tuple[SharedIndexInformer, threading.Event, threading.Thread]] = []

    def start(informer):
        stop = threading.Event()
        thread = threading.Thread(
            target=informer.run, args=(stop,), name=f"informer-{informer.name}"
        )
        thread.start()
        started.append((informer, stop, thread))
        return stop, thread

    yield start
    for _, stop, thread in started:
        stop.set()
        thread.join(2)
        assert not thread.is_alive()


def make_informer(lw, fifo, resync=0.0, **kw):
    kw.setdefault(
        "reflector_options", {"backoff": ExponentialBackoff(initial=0.001, cap=0.005, jitter=0)}
    )
    return SharedIndexInformer(lw, resync, fifo=fifo, name="foos", **kw)


def test_initial_list_is_delivered_as_initial_adds_then_synced(fifo, running):
    lw = FakeListWatch([foo("a"), foo("b")])
    informer = make_informer(lw, fifo)
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    assert not informer.has_synced() and not reg.has_synced()
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, reg, timeout=2)
    assert sorted(rec.snapshot()) == [("add", "a", True), ("add", "b", True)]
    assert sorted(informer.get_store().list_keys()) == ["ns/a", "ns/b"]
    assert informer.get_indexer() is informer.get_store()
    assert informer.last_sync_resource_version() == "2"


def test_watch_events_become_add_update_delete(fifo, running):
    lw = FakeListWatch([foo("a")])
    informer = make_informer(lw, fifo)
    rec = Recorder()
    informer.add_event_handler(rec)
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    lw.add(foo("b"))
    lw.modify(foo("a", replicas=2))
    lw.delete("ns/b")
    wait_for(lambda: len(rec.snapshot()) == 4)
    # Per object, events keep their order (DeltaFIFO may serve b's two deltas before a's update).
    events = rec.snapshot()
    assert [e[0] for e in events if e[1] == "a"] == ["add", "update"]
    assert [e[0] for e in events if e[1] == "b"] == ["add", "delete"]
    assert ("add", "b", False) in events  # not part of the initial list
    assert ("update", "a", False) in events  # a real update: old is not new
    assert informer.get_store().get_by_key("ns/a")["spec"] == {"replicas": 2}
    assert informer.get_store().get_by_key("ns/b") is None


def test_missed_deletion_arrives_as_tombstone_after_relist(fifo, running):
    lw = FakeListWatch([foo("a"), foo("b")])
    informer = make_informer(lw, fifo)
    rec = Recorder()
    informer.add_event_handler(rec)
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    lw.modify(foo("a", replicas=5))
    wait_for(lambda: len(rec.snapshot()) == 3)
    lw.miss_deletion("ns/a")
    wait_for(lambda: any(k == "delete" for k, _, _ in rec.snapshot()), message="tombstone")
    deletes = [e for e in rec.snapshot() if e[0] == "delete"]
    assert len(deletes) == 1
    tombstone = deletes[0][2]
    assert isinstance(tombstone, DeletedFinalStateUnknown) and tombstone.key == "ns/a"
    assert tombstone.obj["spec"] == {"replicas": 5}  # the last state the cache had
    assert informer.get_store().list_keys() == ["ns/b"]


def test_relist_replays_unchanged_objects_as_same_rv_updates(fifo, running):
    """As client-go: a relisted object whose RV did not change counts as a resync, and a handler
    is "due a resync" until the informer's resync timer first says otherwise; without a resync
    period that is forever, so the handler sees an update with equal resourceVersions (which is
    why sample-controller's update handlers compare them)."""
    lw = FakeListWatch([foo("a"), foo("b")])
    informer = make_informer(lw, fifo)
    updates = []
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.add_event_handler(
        ResourceEventHandlerFuncs(update_func=lambda old, new: updates.append((old, new)))
    )
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    lw.add(foo("c"))
    wait_for(lambda: len(rec.snapshot()) == 3)
    lw.miss_deletion("ns/c")  # forces a relist in which a and b are unchanged
    wait_for(lambda: len(rec.snapshot()) == 6)
    assert sorted(rec.kinds()[3:]) == [
        ("delete", "tombstone:ns/c"),
        ("update", "a"),
        ("update", "b"),
    ]
    rvs = [
        (old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
        for old, new in updates
    ]
    assert all(o == n for o, n in rvs) and len(rvs) == 2


def test_resync_replays_cache_only_to_handlers_that_asked(fifo, running, monkeypatch):
    monkeypatch.setattr(shared_informer, "MINIMUM_RESYNC_PERIOD", 0.01)
    lw = FakeListWatch([foo("a")])
    informer = make_informer(lw, fifo, resync=0.05)
    resyncing, quiet = Recorder(), Recorder()
    informer.add_event_handler(resyncing)  # the informer's default period
    informer.add_event_handler(quiet, resync_period=0)
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    wait_for(lambda: len(resyncing.snapshot()) >= 3, message="two resyncs")
    assert resyncing.snapshot()[1] == ("update", "a", True)  # a resync: old is new
    assert quiet.snapshot() == [("add", "a", True)]


def test_resync_period_is_clamped_to_one_second():
    informer = SharedIndexInformer(FakeListWatch(), 0.001)
    reg = informer.add_event_handler(Recorder(), resync_period=0.2)
    assert reg.requested_resync_period == 1.0 and reg.resync_period == 1.0
    assert informer._resync_check_period == 1.0


def test_late_handler_with_shorter_resync_gets_the_check_period(running):
    lw = FakeListWatch()
    informer = SharedIndexInformer(lw, 30.0)
    reg_before = informer.add_event_handler(Recorder(), resync_period=10.0)
    assert informer._resync_check_period == 10.0  # lowered before start
    running(informer)
    wait_for(informer.has_synced)
    reg_after = informer.add_event_handler(Recorder(), resync_period=5.0)
    assert reg_after.resync_period == 10.0
    assert reg_before.resync_period == 10.0
    assert informer.add_event_handler(Recorder(), resync_period=0).resync_period == 0


def test_handler_exception_is_logged_with_key_and_not_fatal(fifo, running, caplog):
    lw = FakeListWatch([foo("bad"), foo("good")])
    informer = make_informer(lw, fifo)
    rec = Recorder()

    def on_add(obj, initial):
        if obj["metadata"]["name"] == "bad":
            raise ValueError("boom")
        rec.on_add(obj, initial)

    informer.add_event_handler(
        ResourceEventHandlerDetailedFuncs(add_func=on_add, update_func=rec.on_update)
    )
    caplog.set_level(logging.ERROR, logger="informer.shared_informer")
    stop, _ = running(informer)
    wait_for(lambda: len(rec.snapshot()) == 1)
    lw.modify(foo("bad", x=1))
    wait_for(lambda: len(rec.snapshot()) == 2)  # the listener survived
    assert any("ns/bad" in r.getMessage() and r.exc_info for r in caplog.records)


def test_a_delta_the_cache_rejects_loses_only_itself(fifo, running, caplog):
    # RealFIFO hands the whole initial list over as one batch: an index function that rejects one
    # object must not cost the handlers the objects around it, nor leave them out of the cache.
    lw = FakeListWatch([foo("a"), foo("bad"), foo("b")])

    def by_name(o):
        if o["metadata"]["name"] == "bad":
            raise ValueError("cannot index")
        return [o["metadata"]["name"]]

    informer = make_informer(lw, fifo, indexers={"name": by_name})
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    caplog.set_level(logging.ERROR, logger="informer.shared_informer")
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, reg, timeout=2)
    assert sorted(rec.snapshot()) == [("add", "a", True), ("add", "b", True)]
    assert sorted(informer.get_store().list_keys()) == ["ns/a", "ns/b"]
    assert any("ns/bad" in r.getMessage() and r.exc_info for r in caplog.records)


def test_slow_handler_does_not_block_others(fifo, running):
    lw = FakeListWatch([foo("a")])
    informer = make_informer(lw, fifo)
    release = threading.Event()
    slow_seen = []

    def slow_add(obj):
        release.wait(5)
        slow_seen.append(name_of(obj))

    fast = Recorder()
    slow_reg = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=slow_add))
    informer.add_event_handler(fast)
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    for i in range(50):
        lw.add(foo(f"n{i}"))
    wait_for(lambda: len(fast.snapshot()) == 51, message="fast handler got everything")
    assert slow_seen == [] and slow_reg.pending() >= 49  # buffered, not dropped, not blocking
    assert informer.has_synced() and not slow_reg.has_synced()  # its initial add is still in flight
    release.set()
    wait_for(lambda: len(slow_seen) == 51)
    assert slow_seen == ["a"] + [f"n{i}" for i in range(50)]  # in order
    assert slow_reg.has_synced()


def test_handler_added_after_start_gets_synthetic_adds(fifo, running):
    lw = FakeListWatch([foo("a"), foo("b")])
    informer = make_informer(lw, fifo)
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    gate = threading.Event()
    late = Recorder()

    def gated_add(obj, initial):
        gate.wait(5)
        late.on_add(obj, initial)

    reg = informer.add_event_handler(ResourceEventHandlerDetailedFuncs(add_func=gated_add))
    assert not reg.has_synced()  # the synthetic adds are not delivered yet
    gate.set()
    assert wait_for_cache_sync(stop, reg, timeout=2)
    assert sorted(late.snapshot()) == [("add", "a", True), ("add", "b", True)]
    lw.add(foo("c"))
    wait_for(lambda: len(late.snapshot()) == 3)
    assert late.snapshot()[-1] == ("add", "c", False)


def test_transform_runs_before_objects_enter_the_store(fifo, running):
    obj = foo("a")
    obj["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    lw = FakeListWatch([obj])

    def strip(o):
        o = dict(o)
        o["metadata"] = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        return o

    informer = make_informer(lw, fifo, transform=strip)
    seen = []
    informer.add_event_handler(
        ResourceEventHandlerFuncs(add_func=seen.append, update_func=lambda o, n: seen.append(n))
    )
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    lw.modify(obj)
    wait_for(lambda: len(seen) == 2)
    assert all("managedFields" not in o["metadata"] for o in seen)
    assert "managedFields" not in informer.get_store().get_by_key("ns/a")["metadata"]
    with pytest.raises(RuntimeError):
        informer.set_transform(None)
    with pytest.raises(RuntimeError):
        informer.set_watch_error_handler(lambda r, e: None)
    with pytest.raises(RuntimeError):
        informer.add_indexers({"x": lambda o: []})


def test_watch_error_handler_is_called(fifo, running):
    lw = FakeListWatch([foo("a")])
    lw.fail_next_list(RuntimeError("list failed"))
    # The list path, where the failure is scripted; WatchList's own failures fall back to a list
    # before any handler hears of them (test_reflector.py).
    informer = make_informer(lw, fifo, use_watch_list=False)
    errors = []
    informer.set_watch_error_handler(lambda r, e: errors.append(e))
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    assert [str(e) for e in errors] == ["list failed"]


def test_remove_event_handler_stops_delivery(fifo, running):
    lw = FakeListWatch([foo("a")])
    informer = make_informer(lw, fifo)
    kept, removed = Recorder(), Recorder()
    informer.add_event_handler(kept)
    reg = informer.add_event_handler(removed)
    stop, _ = running(informer)
    wait_for(lambda: len(removed.snapshot()) == 1)
    informer.remove_event_handler(reg)
    assert reg not in informer.handler_registrations()
    lw.add(foo("b"))
    wait_for(lambda: len(kept.snapshot()) == 2)
    assert removed.snapshot() == [("add", "a", True)]


def test_stop_is_prompt_and_final(fifo, running):
    lw = FakeListWatch([foo("a")])
    informer = make_informer(lw, fifo)
    reg = informer.add_event_handler(Recorder())
    stop, thread = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    started = time.monotonic()
    stop.set()
    thread.join(1.0)
    assert not thread.is_alive() and time.monotonic() - started < 1.0
    assert informer.is_stopped()
    assert not reg._thread.is_alive()
    assert lw.open_watches() == []
    with pytest.raises(RuntimeError):
        informer.add_event_handler(Recorder())
    with pytest.raises(RuntimeError):
        informer.run(threading.Event())


def test_handler_added_while_the_listeners_stop_is_refused(running):
    # run() stops the listeners and then waits for each: a handler registered in between must be
    # refused, not given a thread that nothing will ever stop.
    informer = make_informer(FakeListWatch([foo("a")]), "real")
    busy, release = threading.Event(), threading.Event()

    def on_add(obj):
        busy.set()
        release.wait(5)  # keeps run() waiting for this listener while it stops

    first = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=on_add))
    stop, thread = running(informer)
    try:
        assert busy.wait(2)
        stop.set()
        wait_for(lambda: first._stopped)
        with pytest.raises(RuntimeError):
            informer.add_event_handler(Recorder())
    finally:
        release.set()
    thread.join(2)
    assert [r._thread.is_alive() for r in informer.handler_registrations()] == [False]


def test_custom_indexers_and_lister(fifo, running):
    lw = FakeListWatch([foo("a", labels={"app": "web"}), foo("b", "other", labels={"app": "db"})])

    def by_app(o):
        return [o["metadata"].get("labels", {}).get("app", "")]

    informer = make_informer(lw, fifo, indexers={"app": by_app})
    stop, _ = running(informer)
    assert wait_for_cache_sync(stop, informer, timeout=2)
    assert [name_of(o) for o in informer.get_indexer().by_index("app", "web")] == ["a"]
    assert [name_of(o) for o in informer.get_indexer().by_index("namespace", "other")] == ["b"]
    lister = informer.lister()
    assert name_of(lister.get("ns", "a")) == "a"
    assert [name_of(o) for o in lister.list("app=db")] == ["b"]


def test_wait_for_cache_sync_gives_up_on_timeout_and_stop():
    class Never:
        def has_synced(self):
            return False

    stop = threading.Event()
    started = time.monotonic()
    assert wait_for_cache_sync(stop, Never(), timeout=0.25) is False
    assert 0.2 <= time.monotonic() - started < 0.6
    threading.Timer(0.05, stop.set).start()
    assert wait_for_cache_sync(stop, Never()) is False
    assert wait_for_cache_sync(threading.Event()) is True  # nothing to wait for


def test_bad_fifo_kind_is_rejected():
    with pytest.raises(ValueError):
        SharedIndexInformer(FakeListWatch(), fifo="lifo")


# -- handler adapters ------------------------------------------------------------------------------


def test_handler_funcs_ignore_missing_functions():
    h = ResourceEventHandlerFuncs()
    h.on_add(foo("a"), True)
    h.on_update(foo("a"), foo("a"))
    h.on_delete(foo("a"))
    got = []
    ResourceEventHandlerFuncs(add_func=got.append).on_add(foo("x"), True)
    assert [name_of(o) for o in got] == ["x"]


def test_filtering_handler_turns_updates_into_adds_and_deletes():
    rec = Recorder()
    h = FilteringResourceEventHandler(lambda o: o["spec"].get("keep", False), rec)
    h.on_add(foo("no"), True)
    h.on_add(foo("yes", keep=True), True)
    h.on_update(foo("x"), foo("x", keep=True))  # enters the filter
    h.on_update(foo("x", keep=True), foo("x", keep=True))
    h.on_update(foo("x", keep=True), foo("x"))  # leaves it
    h.on_delete(foo("no"))
    assert rec.kinds() == [("add", "yes"), ("add", "x"), ("update", "x"), ("delete", "x")]
