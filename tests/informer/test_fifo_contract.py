"""The contract both reflector queues keep (client-go ``Queue``), run against RealFIFO and
DeltaFIFO."""

from __future__ import annotations

import threading

import pytest

from informer.delta_fifo import DeltaFIFO
from informer.fifo import DeltaType, FIFOClosedError
from informer.real_fifo import RealFIFO
from informer.store import DeletedFinalStateUnknown, Indexer, KeyFuncError


def obj(name, rv="1", **extra):
    o = {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}
    o.update(extra)
    return o


@pytest.fixture(params=["real", "delta"])
def kind(request):
    return request.param


def make(kind, known=None, **kw):
    known = known if known is not None else Indexer()
    cls = RealFIFO if kind == "real" else DeltaFIFO
    return cls(known_objects=known, **kw), known


def pop_all(fifo):
    """Pop until empty; returns [(type, name or tombstone-key, is_in_initial_list)]."""
    out = []
    while len(fifo):

        def process(deltas, initial):
            for d in deltas:
                o = d.object
                name = o.key if isinstance(o, DeletedFinalStateUnknown) else o["metadata"]["name"]
                out.append((d.type, name, initial))

        fifo.pop(process)
    return out


def test_add_then_pop_in_order(kind):
    fifo, _ = make(kind)
    fifo.add(obj("a"))
    fifo.add(obj("b"))
    assert fifo.list_keys() == ["ns/a", "ns/b"]
    assert pop_all(fifo) == [(DeltaType.ADDED, "a", False), (DeltaType.ADDED, "b", False)]
    assert len(fifo) == 0


def test_pop_returns_what_process_saw(kind):
    fifo, _ = make(kind)
    fifo.update(obj("a", "2"))
    seen = []
    got = fifo.pop(lambda deltas, initial: seen.append(deltas))
    assert seen == [got]
    assert got[0].type is DeltaType.UPDATED and got[0].object["metadata"]["resourceVersion"] == "2"


def test_pop_blocks_until_an_item_arrives(kind):
    fifo, _ = make(kind)
    got = []
    popper = threading.Thread(target=lambda: got.append(fifo.pop(lambda d, i: None)), name="popper")
    popper.start()
    popper.join(0.05)
    assert popper.is_alive() and got == []
    fifo.add(obj("a"))
    popper.join(2)
    assert not popper.is_alive()
    assert got[0][0].object["metadata"]["name"] == "a"


def test_close_wakes_a_blocked_pop(kind):
    fifo, _ = make(kind)
    errors = []

    def pop():
        try:
            fifo.pop(lambda d, i: None)
        except FIFOClosedError as e:
            errors.append(e)

    popper = threading.Thread(target=pop, name="popper")
    popper.start()
    popper.join(0.05)
    fifo.close()
    popper.join(2)
    assert not popper.is_alive() and len(errors) == 1
    assert fifo.is_closed()


def test_close_drains_before_reporting_closed(kind):
    fifo, _ = make(kind)
    fifo.add(obj("a"))
    fifo.close()
    assert fifo.pop(lambda d, i: None)[0].object["metadata"]["name"] == "a"
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None)


def test_replace_emits_replaced_and_tombstones_for_missing_known_keys(kind):
    known = Indexer()
    gone = obj("gone", "5")
    known.add(gone)
    known.add(obj("kept", "6"))
    fifo, _ = make(kind, known)
    fifo.replace([obj("kept", "7"), obj("new", "8")], "10")
    popped = []
    while len(fifo):
        fifo.pop(lambda deltas, initial: popped.extend(deltas))
    tombstones = [d for d in popped if d.type is DeltaType.DELETED]
    assert len(tombstones) == 1
    assert tombstones[0].object == DeletedFinalStateUnknown("ns/gone", gone)
    assert tombstones[0].object.obj is gone  # the last known state, not a copy
    replaced = sorted(d.object["metadata"]["name"] for d in popped if d.type is DeltaType.REPLACED)
    assert replaced == ["kept", "new"]


def test_replace_tombstones_a_queued_key_missing_from_the_list(kind):
    fifo, _ = make(kind)
    fifo.add(obj("queued", "3"))
    fifo.replace([], "10")
    popped = []
    while len(fifo):
        fifo.pop(lambda deltas, initial: popped.extend(deltas))
    deleted = [d for d in popped if d.type is DeltaType.DELETED]
    assert len(deleted) == 1
    assert deleted[0].object.key == "ns/queued"
    assert deleted[0].object.obj["metadata"]["resourceVersion"] == "3"


def test_has_synced_after_first_replace_batch_is_popped(kind):
    known = Indexer()
    known.add(obj("gone"))
    fifo, _ = make(kind, known)
    assert not fifo.has_synced()
    fifo.replace([obj("a"), obj("b")], "1")
    assert not fifo.has_synced()
    fifo.add(obj("c"))  # arrives after the list: not part of the initial batch
    flags = []
    while not fifo.has_synced():
        fifo.pop(lambda deltas, initial: flags.append(initial))
    assert flags == [True, True, True]  # a, b and the tombstone for "gone"
    fifo.pop(lambda deltas, initial: flags.append(initial))
    assert flags[-1] is False
    fifo.replace([], "2")  # later relists do not unsync
    assert fifo.has_synced()


def test_has_synced_at_once_for_an_empty_first_list(kind):
    fifo, _ = make(kind)
    fifo.replace([], "1")
    assert fifo.has_synced()


def test_add_before_any_replace_counts_as_synced(kind):
    fifo, _ = make(kind)
    fifo.add(obj("a"))
    assert fifo.has_synced()


def test_resync_queues_sync_only_for_keys_without_pending_items(kind):
    known = Indexer()
    known.add(obj("idle", "1"))
    known.add(obj("busy", "1"))
    fifo, _ = make(kind, known)
    fifo.update(obj("busy", "2"))
    fifo.resync()
    popped = []
    while len(fifo):
        fifo.pop(lambda deltas, initial: popped.extend(deltas))
    assert [(d.type, d.object["metadata"]["name"]) for d in popped] == [
        (DeltaType.UPDATED, "busy"),
        (DeltaType.SYNC, "idle"),
    ]
    assert popped[1].object is known.get_by_key("ns/idle")


def test_transform_applies_to_new_states_only(kind):
    calls = []

    def strip(o):
        calls.append(o["metadata"]["name"])
        o = dict(o)
        o["metadata"] = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        return o

    known = Indexer()
    known.add(obj("cached"))
    known.add(obj("gone"))
    fifo, _ = make(kind, known, transform=strip)
    fifo.add({"metadata": {"name": "a", "namespace": "ns", "managedFields": [{}]}})
    fifo.replace([obj("cached")], "1")
    fifo.resync()  # nothing: every key is queued
    popped = []
    while len(fifo):
        fifo.pop(lambda deltas, initial: popped.extend(deltas))
    assert "managedFields" not in popped[0].object["metadata"]
    assert sorted(calls) == ["a", "cached"]  # not the tombstone of "gone"
    fifo.resync()
    fifo.pop(lambda deltas, initial: popped.extend(deltas))
    assert sorted(calls) == ["a", "cached"]  # Sync replays the cache untouched


def test_unkeyable_object_is_rejected(kind):
    fifo, _ = make(kind)
    with pytest.raises(KeyFuncError):
        fifo.add({"spec": {}})
    assert len(fifo) == 0


def test_report_length_tracks_queue_depth(kind):
    depths = []
    fifo, _ = make(kind, report_length=depths.append)
    fifo.add(obj("a"))
    fifo.add(obj("b"))
    fifo.pop(lambda d, i: None)
    assert depths[-1] == 1
    fifo.pop(lambda d, i: None)
    assert depths[-1] == 0


def test_concurrent_producer_and_consumer_lose_nothing(kind):
    fifo, _ = make(kind)
    names = [f"o{i}" for i in range(500)]
    seen = []

    def consume():
        while True:
            try:
                fifo.pop(
                    lambda deltas, initial: seen.extend(
                        d.object["metadata"]["name"] for d in deltas
                    )
                )
            except FIFOClosedError:
                return

    consumer = threading.Thread(target=consume, name="consumer")
    consumer.start()
    for n in names:
        fifo.add(obj(n))
    fifo.close()
    consumer.join(5)
    assert not consumer.is_alive()
    assert seen == names


def test_replace_transforms_each_listed_object_before_taking_the_next(kind):
    # A lazily decoded list hands objects out one at a time: each must be transformed (here, its
    # bulky part dropped) before the next is decoded, so the list never exists whole untouched.
    counts = {"listed": 0, "transformed": 0}

    def strip(o):
        counts["transformed"] += 1
        return {**o, "bulk": None}

    def listed():
        for name in ("a", "b", "c"):
            assert counts["transformed"] == counts["listed"], "an earlier object is untransformed"
            counts["listed"] += 1
            yield obj(name, bulk="x" * 100)

    fifo, _ = make(kind, transform=strip)
    fifo.replace(listed(), "5")
    assert counts == {"listed": 3, "transformed": 3}
    assert [d[1] for d in pop_all(fifo)] == ["a", "b", "c"]
