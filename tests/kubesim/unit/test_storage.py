"""kubesim.storage.store: RV counter, etcd history snapshots, per-resource watch windows, watcher
dispatch, compaction, encodings."""

from __future__ import annotations

import json

import pytest

from kubesim.storage.store import (
    EVENT_FRESH_DURATION,
    WATCH_CACHE_LOWER_BOUND,
    WATCH_CACHE_UPPER_BOUND,
    ExpiredError,
    Storage,
    Stored,
)

KEY = ("g", "things")
OTHER = ("g", "others")


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def obj(name: str, ns: str = "ns", **extra) -> dict:
    return {
        "kind": "Thing",
        "apiVersion": "g/v1",
        "metadata": {"name": name, "namespace": ns, **extra},
    }


def test_put_and_remove_advance_one_global_rv():
    s = Storage(initial_rv=0)
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


def test_resource_versions_start_from_the_clock_above_any_earlier_server():
    old = Storage()
    for i in range(50):
        old.put(KEY, "ns", f"o{i}", obj(f"o{i}"))
    new = Storage()  # a restart with fresh state
    assert new.rv > old.rv  # never reuses an RV the old server handed out
    assert new.rv < 1 << 63  # etcd revisions are int64
    with pytest.raises(ExpiredError) as ei:
        new.watch(KEY, None, old.rv, False)  # a client that kept the old server's RV
    assert str(ei.value) == f"too old resource version: {old.rv} ({new.rv})"


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


def test_watch_window_is_bounded_per_resource():
    s = Storage(history_size=5, initial_rv=0)
    s.put(OTHER, "ns", "x", obj("x"))  # rv 1, another resource
    for i in range(30):  # rvs 2..31
        s.put(KEY, "ns", "a", obj("a", labels={"i": str(i)}))
    # the window holds the last 5 events of KEY (rvs 27..31): a watch may start at 26
    assert s.watch_floor(KEY) == 26
    with pytest.raises(ExpiredError) as ei:
        s.watch(KEY, None, 25, False)
    assert str(ei.value) == "too old resource version: 25 (26)"
    w = s.watch(KEY, None, 26, False)
    assert [st.rv for _, st in w.drain(0)] == [27, 28, 29, 30, 31]
    # the other resource's window never filled: a watch from the server's start still works
    assert s.watch_floor(OTHER) == 0
    assert [st.rv for _, st in s.watch(OTHER, None, 0, False).drain(0)] == [1]


def test_watch_window_grows_while_events_are_fresh_and_shrinks_when_they_age():
    clock = Clock()
    s = Storage(history_size=400, initial_rv=0, clock=clock)
    assert s.window_capacity(KEY) == WATCH_CACHE_LOWER_BOUND
    for i in range(200):  # all within the fresh duration: 100 -> 200, nothing evicted
        s.put(KEY, "ns", f"o{i}", obj(f"o{i}"))
    assert s.window_capacity(KEY) == 200 and s.watch_floor(KEY) == 0
    clock.now = EVENT_FRESH_DURATION + 1  # even the newest quarter is stale now: halve
    s.put(KEY, "ns", "late", obj("late"))
    assert s.window_capacity(KEY) == 100
    assert s.watch_floor(KEY) == s.rv - 100  # the last 100 events are kept
    with pytest.raises(ExpiredError):
        s.watch(KEY, None, s.rv - 101, False)


def test_watch_window_is_capped_at_the_upper_bound():
    s = Storage(initial_rv=0)
    for i in range(3 * WATCH_CACHE_LOWER_BOUND):
        s.put(KEY, "ns", "a", obj("a", labels={"i": str(i)}))
    assert s.window_capacity(KEY) == 4 * WATCH_CACHE_LOWER_BOUND  # 100 -> 200 -> 400
    assert Storage().history_size == WATCH_CACHE_UPPER_BOUND == 102_400


def test_etcd_is_compacted_every_interval_to_the_previous_ticks_revision():
    clock = Clock()
    s = Storage(initial_rv=0, compaction_interval=300, clock=clock)
    s.put(KEY, "ns", "a", obj("a"))  # rv 1
    clock.now = 301
    s.put(KEY, "ns", "b", obj("b"))  # rv 2; first tick: remembers rv 2, compacts nothing
    assert s.oldest_rv == 0 and [x.rv for x in s.snapshot(KEY, 1)] == [1]
    clock.now = 602
    s.put(KEY, "ns", "c", obj("c"))  # rv 3; second tick: compacts to rv 2
    assert s.oldest_rv == 2
    with pytest.raises(ExpiredError):
        s.snapshot(KEY, 1)
    assert [x.obj["metadata"]["name"] for x in s.snapshot(KEY, 2)] == ["a", "b"]
    # compaction is etcd's: the watch window still replays from before it
    assert [st.rv for _, st in s.watch(KEY, None, 0, False).drain(0)] == [1, 2, 3]


def test_compact_raises_every_watch_floor():
    s = Storage(initial_rv=0)
    s.put(KEY, "ns", "a", obj("a"))
    s.put(OTHER, "ns", "b", obj("b"))
    s.compact()
    assert s.watch_floor(KEY) == s.watch_floor(OTHER) == s.watch_floor(("g", "new")) == s.rv
    with pytest.raises(ExpiredError):
        s.watch(OTHER, None, s.rv - 1, False)
    s.watch(OTHER, None, s.rv, False)


def test_watch_replays_and_translates_filter_transitions():
    s = Storage(initial_rv=0)
    s.put(KEY, "ns", "a", obj("a"))
    rv = s.rv

    def flt(o: dict) -> bool:
        return (o["metadata"].get("labels") or {}).get("x") == "1"

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
    s = Storage(initial_rv=0)
    w = s.watch(KEY, None, 3, False)
    for name in "abcd":
        s.put(KEY, "ns", name, obj(name))
    assert [st.obj["metadata"]["name"] for _, st in w.drain(0)] == ["d"]
