"""DeltaFIFO specifics: per-key delta lists, deletion dedup, requeue (client-go
delta_fifo_test.go)."""

from __future__ import annotations

import pytest

from informer.delta_fifo import DeltaFIFO
from informer.fifo import DeltaType, RequeueError
from informer.store import DeletedFinalStateUnknown, Indexer


def obj(name, rv="1"):
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def types(deltas):
    return [d.type for d in deltas]


def test_deltas_of_one_key_are_merged_in_first_queued_order():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a", "1"))
    f.add(obj("b", "1"))
    f.update(obj("a", "2"))
    assert f.list_keys() == ["ns/a", "ns/b"]
    assert len(f) == 2
    a = f.pop(lambda d, i: None)
    assert types(a) == [DeltaType.ADDED, DeltaType.UPDATED]
    assert [d.object["metadata"]["resourceVersion"] for d in a] == ["1", "2"]
    assert types(f.pop(lambda d, i: None)) == [DeltaType.ADDED]


def test_two_consecutive_deletes_merge_keeping_the_real_object():
    known = Indexer()
    known.add(obj("a"))
    f = DeltaFIFO(known_objects=known)
    real = obj("a", "9")
    f.delete(real)
    f.delete(DeletedFinalStateUnknown("ns/a", obj("a", "1")))
    deltas = f.get_by_key("ns/a")
    assert types(deltas) == [DeltaType.DELETED]
    assert deltas[0].object is real


def test_tombstone_then_real_delete_keeps_the_real_one():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a"))
    f.replace([], "2")  # tombstone for the queued key
    real = obj("a", "3")
    f.delete(real)
    deltas = f.get_by_key("ns/a")
    assert types(deltas) == [DeltaType.ADDED, DeltaType.DELETED]
    assert deltas[-1].object is real


def test_delete_of_unknown_key_is_dropped():
    f = DeltaFIFO(known_objects=Indexer())
    f.delete(obj("never-seen"))
    assert len(f) == 0
    f_without_known = DeltaFIFO()
    f_without_known.delete(obj("never-seen"))
    assert len(f_without_known) == 0


def test_delete_of_a_known_key_is_queued():
    known = Indexer()
    known.add(obj("a"))
    f = DeltaFIFO(known_objects=known)
    f.delete(obj("a", "2"))
    assert types(f.get_by_key("ns/a")) == [DeltaType.DELETED]


def test_replace_tombstone_unwraps_a_queued_tombstone():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a", "1"))
    f.replace([], "2")
    f.replace([], "3")  # the second relist must not nest tombstones
    deltas = f.get_by_key("ns/a")
    assert types(deltas) == [DeltaType.ADDED, DeltaType.DELETED]  # merged consecutive deletes
    assert deltas[-1].object == DeletedFinalStateUnknown("ns/a", obj("a", "1"))


def test_replace_can_emit_sync_for_old_clients():
    f = DeltaFIFO(known_objects=Indexer(), emit_delta_type_replaced=False)
    f.replace([obj("a")], "1")
    assert types(f.get_by_key("ns/a")) == [DeltaType.SYNC]


def test_requeue_puts_the_item_back_and_raises_the_wrapped_error():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a"))

    def fail(deltas, initial):
        raise RequeueError(RuntimeError("try later"))

    with pytest.raises(RuntimeError, match="try later"):
        f.pop(fail)
    assert f.list_keys() == ["ns/a"]
    assert types(f.pop(lambda d, i: None)) == [DeltaType.ADDED]


def test_requeue_without_error_returns_normally():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a"))

    def requeue(deltas, initial):
        raise RequeueError()

    f.pop(requeue)
    assert f.list_keys() == ["ns/a"]


def test_other_process_errors_propagate_and_drop_the_item():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a"))
    with pytest.raises(ValueError):
        f.pop(lambda d, i: (_ for _ in ()).throw(ValueError("bad")))
    assert len(f) == 0


def test_list_returns_newest_objects():
    f = DeltaFIFO(known_objects=Indexer())
    f.add(obj("a", "1"))
    f.update(obj("a", "2"))
    assert [o["metadata"]["resourceVersion"] for o in f.list()] == ["2"]
    assert f.get_by_key("ns/missing") is None


def test_initial_population_counts_keys_not_deltas():
    known = Indexer()
    known.add(obj("gone"))
    f = DeltaFIFO(known_objects=known)
    f.replace([obj("a"), obj("b")], "1")
    pops = 0
    while not f.has_synced():
        f.pop(lambda d, i: None)
        pops += 1
    assert pops == 3
