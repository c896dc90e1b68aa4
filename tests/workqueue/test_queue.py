"""workqueue.Queue: the de-duplicating FIFO (client-go util/workqueue/queue.go semantics)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import pytest

from tests.helpers import wait_for
from workqueue import Queue


def waiters(q: Queue) -> int:
    """Threads parked on the queue's condition (CPython keeps them in Condition._waiters)."""
    return len(q._queue_changed._waiters)


def start(target: Callable[[], object], name: str) -> tuple[threading.Thread, list]:
    """Run `target` in a thread; its return value lands in the returned list."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(target()), name=name, daemon=True)
    thread.start()
    return thread, result


def test_get_returns_items_in_fifo_order():
    q = Queue()
    for item in ("a", "b", "c"):
        q.add(item)
    assert len(q) == 3
    assert [q.get() for _ in range(3)] == [("a", False), ("b", False), ("c", False)]
    assert len(q) == 0


def test_adding_a_queued_item_is_a_no_op():
    q = Queue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    q.done("a")
    q.done("b")
    assert len(q) == 0


def test_item_being_processed_is_not_handed_out_again_until_done():
    q = Queue()
    q.add("a")
    item, _ = q.get()
    q.add("a")
    # Marked dirty but not queued: a second worker must not get it while the first holds it.
    assert len(q) == 0
    q.done(item)
    assert len(q) == 1
    assert q.get() == ("a", False)


def test_several_adds_during_processing_requeue_once():
    q = Queue()
    q.add("a")
    q.get()
    q.add("a")
    q.add("a")
    q.done("a")
    assert len(q) == 1
    q.get()
    q.done("a")
    assert len(q) == 0


def test_done_without_readd_does_not_requeue():
    q = Queue()
    q.add("a")
    q.get()
    q.done("a")
    assert len(q) == 0
    q.shut_down()
    assert q.get() == (None, True)


def test_len_counts_only_queued_items_not_processing_ones():
    q = Queue()
    q.add("a")
    q.add("b")
    q.get()
    assert len(q) == 1


def test_unhashable_items_are_rejected():
    q = Queue()
    with pytest.raises(TypeError):
        q.add({"not": "hashable"})
    assert len(q) == 0


def test_get_blocks_until_an_item_is_added():
    q = Queue()
    thread, result = start(q.get, "test-getter")
    wait_for(lambda: waiters(q) == 1, message="get to block on the empty queue")
    assert result == []
    q.add("a")
    thread.join(5)
    assert result == [("a", False)]


def test_shut_down_wakes_a_blocked_get():
    q = Queue()
    thread, result = start(q.get, "test-getter")
    wait_for(lambda: waiters(q) == 1, message="get to block on the empty queue")
    q.shut_down()
    thread.join(5)
    assert result == [(None, True)]


def test_after_shut_down_adds_are_ignored_and_get_drains_then_reports_shutdown():
    q = Queue()
    q.add("a")
    q.add("b")
    assert not q.shutting_down()
    q.shut_down()
    assert q.shutting_down()
    q.add("c")
    assert len(q) == 2
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.get() == (None, True)


def test_shut_down_does_not_wait_for_in_flight_items_but_requeues_their_readds():
    q = Queue()
    q.add("a")
    q.get()
    q.add("a")  # dirty while processing, before shutdown
    q.shut_down()  # returns at once although "a" is in flight
    q.add("b")  # ignored
    q.done("a")
    # The re-add arrived before shutdown, so it is still handed out before shutdown is reported.
    assert q.get() == ("a", False)
    q.done("a")
    assert q.get() == (None, True)


def test_shut_down_with_drain_waits_for_every_in_flight_item():
    q = Queue()
    for item in ("a", "b"):
        q.add(item)
    q.get()
    q.get()
    drainer, result = start(lambda: q.shut_down_with_drain() or "drained", "test-drainer")
    wait_for(lambda: waiters(q) == 1, message="shut_down_with_drain to wait for the item in flight")
    assert q.shutting_down()
    q.add("c")  # ignored: shutting down
    q.done("a")
    assert drainer.is_alive() and result == []
    q.done("b")
    drainer.join(5)
    assert result == ["drained"]
    assert q.get() == (None, True)


def test_shut_down_with_drain_hands_out_queued_items_to_workers_while_waiting():
    q = Queue()
    for item in ("a", "b"):
        q.add(item)
    q.get()
    drainer, result = start(lambda: q.shut_down_with_drain() or "drained", "test-drainer")
    wait_for(lambda: waiters(q) == 1, message="the drain to wait")
    assert q.get() == ("b", False)
    q.done("a")
    q.done("b")
    drainer.join(5)
    assert result == ["drained"]
    assert q.get() == (None, True)


def test_shut_down_with_drain_returns_at_once_when_nothing_is_in_flight():
    q = Queue()
    q.add("a")
    q.shut_down_with_drain()
    assert q.get() == ("a", False)


def test_shut_down_releases_a_waiting_drain():
    q = Queue()
    q.add("a")
    q.get()
    drainer, result = start(lambda: q.shut_down_with_drain() or "released", "test-drainer")
    wait_for(lambda: waiters(q) == 1, message="the drain to wait")
    q.shut_down()
    drainer.join(5)
    assert result == ["released"]
    q.done("a")  # late done after a forced shutdown is harmless


def test_every_concurrent_drain_is_released():
    q = Queue()
    q.add("a")
    q.get()
    drainers = [start(q.shut_down_with_drain, f"test-drainer-{i}") for i in range(2)]
    wait_for(lambda: waiters(q) == 2, message="both drains to wait")
    q.done("a")
    for thread, _ in drainers:
        thread.join(5)
        assert not thread.is_alive()


def test_concurrent_producers_and_workers_process_every_key_and_never_twice_at_once():
    """Three producers add 20 keys at random while four workers process them.

    Each producer bumps a key's version before adding it; each worker records the version it
    sees when it starts processing. Every add must be followed by a processing that saw it, so
    at the end each key's highest seen version equals its final version: this fails if an add
    during processing were lost. A key found in flight at get means two workers at once.
    """
    q = Queue()
    keys = [f"ns/foo-{i}" for i in range(20)]
    lock = threading.Lock()
    version = dict.fromkeys(keys, 0)
    seen = dict.fromkeys(keys, 0)
    in_flight: set[str] = set()
    overlaps: list[str] = []
    processed = [0]

    def produce(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(1500):
            key = rng.choice(keys)
            with lock:
                version[key] += 1
            q.add(key)

    def work() -> None:
        while True:
            key, shutdown = q.get()
            if shutdown:
                return
            with lock:
                if key in in_flight:
                    overlaps.append(key)
                in_flight.add(key)
                seen[key] = max(seen[key], version[key])
                processed[0] += 1
            time.sleep(0)  # yield, so other workers run while this key is in flight
            with lock:
                in_flight.discard(key)
            q.done(key)

    workers = [threading.Thread(target=work, name=f"test-worker-{i}") for i in range(4)]
    producers = [
        threading.Thread(target=produce, args=(i,), name=f"test-producer-{i}") for i in range(3)
    ]
    for t in workers + producers:
        t.start()
    for t in producers:
        t.join(30)
    q.shut_down_with_drain()
    for t in workers:
        t.join(30)
        assert not t.is_alive()

    assert overlaps == []
    assert seen == version
    # De-duplication really happened (far fewer runs than adds), yet every key ran.
    assert 20 <= processed[0] < 4500
    assert len(q) == 0


def test_snapshot_shows_queued_dirty_and_processing_as_the_queue_keeps_them():
    q = Queue()
    assert (q.snapshot().queued, q.snapshot().dirty, q.snapshot().processing) == ((), set(), set())
    q.add("a")
    q.add("b")
    # a burst for one key: still one entry
    q.add("a")
    item, _ = q.get()
    assert item == "a"
    # added again while a worker holds it: dirty, not queued (done() will queue it)
    q.add("a")
    snap = q.snapshot()
    assert snap.queued == ("b",)
    assert snap.dirty == {"a", "b"}
    assert snap.processing == {"a"}
    q.done("a")
    snap = q.snapshot()
    assert snap.queued == ("b", "a")
    assert snap.processing == frozenset()
    # a copy: later changes do not show in it
    q.get()
    assert snap.queued == ("b", "a")
