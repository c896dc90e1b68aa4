"""RealFIFO specifics: every event kept, in order, no per-key merging (client-go
the_real_fifo_test.go)."""

from __future__ import annotations

import pytest

from informer.fifo import DeltaType
from informer.real_fifo import RealFIFO
from informer.store import DeletedFinalStateUnknown, Indexer


def obj(name, rv="1"):
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def drain(f):
    out = []
    while len(f):
        f.pop(lambda deltas, initial: out.extend(deltas))
    return out


def describe(deltas):
    out = []
    for d in deltas:
        o = d.object
        if isinstance(o, DeletedFinalStateUnknown):
            out.append((d.type.value, "tombstone:" + o.key))
        else:
            out.append(
                (d.type.value, f"{o['metadata']['name']}@{o['metadata']['resourceVersion']}")
            )
    return out


def test_requires_known_objects():
    with pytest.raises(ValueError):
        RealFIFO()


def test_every_event_is_delivered_in_arrival_order():
    f = RealFIFO(known_objects=Indexer())
    f.add(obj("a", "1"))
    f.add(obj("b", "2"))
    f.update(obj("a", "3"))
    f.delete(obj("b", "4"))
    assert len(f) == 4
    assert f.list_keys() == ["ns/a", "ns/b"]
    popped = []
    while len(f):
        popped.append(f.pop(lambda d, i: None))
    assert all(len(p) == 1 for p in popped)  # one delta per pop, never merged
    assert describe([p[0] for p in popped]) == [
        ("Added", "a@1"),
        ("Added", "b@2"),
        ("Updated", "a@3"),
        ("Deleted", "b@4"),
    ]


def test_delete_of_unknown_key_is_still_delivered():
    f = RealFIFO(known_objects=Indexer())
    f.delete(obj("never-seen"))
    assert describe(drain(f)) == [("Deleted", "never-seen@1")]


def test_replace_puts_tombstones_before_listed_objects():
    known = Indexer()
    known.add(obj("gone", "1"))
    f = RealFIFO(known_objects=known)
    f.add(obj("queued-gone", "2"))
    f.replace([obj("x", "5")], "5")
    assert describe(drain(f)) == [
        ("Added", "queued-gone@2"),
        ("Deleted", "tombstone:ns/queued-gone"),
        ("Deleted", "tombstone:ns/gone"),
        ("Replaced", "x@5"),
    ]


def test_replace_uses_last_queued_state_and_skips_queued_deletions():
    f = RealFIFO(known_objects=Indexer())
    f.add(obj("a", "1"))
    f.update(obj("a", "2"))
    f.add(obj("b", "3"))
    f.delete(obj("b", "4"))
    f.replace([], "9")
    deltas = drain(f)
    assert describe(deltas[-1:]) == [("Deleted", "tombstone:ns/a")]
    assert deltas[-1].object.obj["metadata"]["resourceVersion"] == "2"
    assert len([d for d in deltas if d.type is DeltaType.DELETED]) == 2  # b's own, a's tombstone


def test_initial_population_counts_every_entry():
    known = Indexer()
    known.add(obj("gone"))
    f = RealFIFO(known_objects=known)
    f.replace([obj("a"), obj("b")], "1")
    flags = []
    while len(f):
        f.pop(lambda d, initial: flags.append(initial))
    assert flags == [True, True, True]
    assert f.has_synced()


def test_pop_batch_takes_everything_waiting_in_order():
    known = Indexer()
    known.add(obj("gone"))
    f = RealFIFO(known_objects=known)
    f.replace([obj("a"), obj("b")], "1")
    f.add(obj("c", "2"))
    seen = []
    got = f.pop_batch(lambda deltas, initial: seen.append((describe(deltas), initial)))
    assert seen == [
        (
            [
                ("Deleted", "tombstone:ns/gone"),
                ("Replaced", "a@1"),
                ("Replaced", "b@1"),
                ("Added", "c@2"),
            ],
            3,
        )
    ]
    assert len(got) == 4 and len(f) == 0
    assert f.has_synced()


def test_pop_batch_respects_max_items_and_counts_initial_across_batches():
    f = RealFIFO(known_objects=Indexer())
    f.replace([obj(f"o{i}") for i in range(5)], "1")
    initials = []
    while len(f):
        f.pop_batch(lambda deltas, initial: initials.append((len(deltas), initial)), max_items=2)
        if len(initials) == 2:
            assert not f.has_synced()  # one initial entry still queued
    assert initials == [(2, 2), (2, 2), (1, 1)]
    assert f.has_synced()
    f.add(obj("late"))
    f.pop_batch(lambda deltas, initial: initials.append((len(deltas), initial)))
    assert initials[-1] == (1, 0)


def test_pop_batch_on_closed_empty_queue_raises():
    from informer.fifo import FIFOClosedError

    f = RealFIFO(known_objects=Indexer())
    f.add(obj("a"))
    f.close()
    assert len(f.pop_batch(lambda d, i: None)) == 1
    with pytest.raises(FIFOClosedError):
        f.pop_batch(lambda d, i: None)
