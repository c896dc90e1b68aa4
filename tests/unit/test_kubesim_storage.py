"""kubesim.storage: RV counter, history snapshots, watcher dispatch, compaction, encodings."""

from __future__ import annotations

import json

import pytest

from kubesim.storage import ExpiredError, Storage, Stored

KEY = ("g", "things")


def obj(name: str, ns: str = "ns", **extra) -> dict:
    return {
        "kind": "Thing",
        "apiVersion": "g/v1",
        "metadata": {"name": name, "namespace": ns, **extra},
    }


def test_put_and_remove_advance_one_global_rv():
    s = Storage()
    a = s.put(KEY, "ns", "a", obj("a"))
    b = s.put(("", "other"), "", "b", {"kind": "O", "apiVersion": "v1", "metadata": {"name": "b"}})
    gone = s.remove(KEY, "ns", "a")
    assert (a.rv, b.rv, gone.rv, s.rv) == (1, 2, 3, 3)
    assert s.get(KEY, "ns", "a") is None and s.remove(KEY, "ns", "a") is None


def test_encodings_are_slices_of_one_encoding():
    st = Stored(obj("a"))
    full = json.loads(st.full())
    assert full["kind"] == "Thing"
    assert json.loads(st.bare()) == {"metadata": full["metadata"]}
    assert json.loads(st.at_version("g/v2"))["apiVersion"] == "g/v2"


def test_snapshot_rolls_history_back_and_expires_after_compaction():
    s = Storage()
    s.put(KEY, "ns", "a", obj("a"))
    s.put(KEY, "ns", "b", obj("b"))
    rv = s.rv
    s.put(KEY, "ns", "a", obj("a", labels={"x": "1"}))
    s.remove(KEY, "ns", "b")
    s.put(KEY, "ns", "c", obj("c"))
    snap = s.snapshot(KEY, rv)
    assert [x.obj["metadata"]["name"] for x in snap] == ["a", "b"]
    assert "labels" not in snap[0].obj["metadata"]
    s.compact()
    with pytest.raises(ExpiredError):
        s.snapshot(KEY, rv)
    assert [x.obj["metadata"]["name"] for x in s.snapshot(KEY, s.rv)] == ["a", "c"]


def test_history_is_bounded():
    s = Storage(history_size=5)
    for i in range(30):
        s.put(KEY, "ns", "a", obj("a", labels={"i": str(i)}))
    assert s.oldest_rv > 1
    with pytest.raises(ExpiredError):
        s.watch(KEY, None, 1, False)


def test_watch_replays_and_translates_filter_transitions():
    s = Storage()
    s.put(KEY, "ns", "a", obj("a"))
    rv = s.rv
    flt = lambda o: (o["metadata"].get("labels") or {}).get("x") == "1"  # noqa: E731
    w = s.watch(KEY, flt, rv, False)
    s.put(KEY, "ns", "a", obj("a", labels={"x": "1"}))
    s.put(KEY, "ns", "a", obj("a", labels={"x": "1", "y": "2"}))
    s.put(KEY, "ns", "a", obj("a", labels={"x": "0"}))
    s.put(KEY, "ns", "b", obj("b"))
    assert [t for t, _ in w.drain(0)] == ["ADDED", "MODIFIED", "DELETED"]
    assert w.last_rv == s.rv  # filtered events still advance what a bookmark may report


def test_watcher_overflow_closes_instead_of_blocking():
    s = Storage(watch_queue_size=2)
    w = s.watch(KEY, None, None, False)
    for i in range(5):
        s.put(KEY, "ns", f"o{i}", obj(f"o{i}"))
    assert w.closed and len(w.items) == 2


def test_watch_from_a_future_rv_skips_events_up_to_it():
    s = Storage()
    w = s.watch(KEY, None, 3, False)
    for name in "abcd":
        s.put(KEY, "ns", name, obj(name))
    assert [st.obj["metadata"]["name"] for _, st in w.drain(0)] == ["d"]
