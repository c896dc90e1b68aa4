"""workqueue.DelayingQueue: add_after with a heap and one waiting thread (client-go
delaying_queue.go). Time is a FakeClock; tests wait for the waiting thread to park on the
clock (FakeClock.wait_for_waiters) instead of sleeping."""

from __future__ import annotations

import threading
import time

import pytest

from tests.helpers import wait_for
from workqueue import DelayingQueue, FakeClock
from workqueue.delaying_queue import _REMOVED, MAX_WAIT


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def q(clock: FakeClock):
    queue = DelayingQueue(clock=clock)
    yield queue
    queue.shut_down()


def settle(q: DelayingQueue, clock: FakeClock) -> None:
    """Wait until the waiting thread has caught up: parked on the clock, due to wake no later
    than the earliest waiting item.

    A registration on the clock means the thread has added everything it popped; a deadline
    later than the earliest item means it has not yet seen a newer add_after. Only the waiting
    thread waits on this clock (the queues here have no metrics).
    """

    def caught_up() -> bool:
        deadlines = clock.waiter_deadlines()
        if not deadlines:
            return False
        with q._waiting_lock:
            live = [entry[0] for entry in q._waiting_heap if entry[2] is not _REMOVED]
        return deadlines[0] <= min(live, default=clock.now() + MAX_WAIT)

    wait_for(caught_up, message="the waiting thread to catch up")


def step(q: DelayingQueue, clock: FakeClock, seconds: float) -> None:
    """Advance time once the waiting thread has seen every add_after, and wait until it has
    added every item due at the new time."""
    settle(q, clock)
    clock.step(seconds)
    settle(q, clock)


def drain(q: DelayingQueue) -> list:
    """Get and finish everything queued now."""
    items = []
    while len(q):
        item, _ = q.get()
        q.done(item)
        items.append(item)
    return items


def test_non_positive_delay_adds_at_once(q: DelayingQueue):
    q.add_after("a", 0)
    q.add_after("b", -1.5)
    assert len(q) == 2
    assert drain(q) == ["a", "b"]


def test_item_is_added_only_when_its_delay_has_passed(q: DelayingQueue, clock: FakeClock):
    q.add_after("a", 1.0)
    assert len(q) == 0
    step(q, clock, 0.75)
    assert len(q) == 0
    step(q, clock, 0.25)
    assert len(q) == 1
    assert q.get() == ("a", False)


def test_items_come_out_in_ready_time_order_not_add_order(q: DelayingQueue, clock: FakeClock):
    q.add_after("c", 3.0)
    q.add_after("a", 1.0)
    q.add_after("b", 2.0)
    q.add_after("d", 2.0)  # same ready time as b: add order breaks the tie
    step(q, clock, 1.5)
    assert drain(q) == ["a"]
    step(q, clock, 5.0)
    assert drain(q) == ["b", "d", "c"]


def test_repeated_add_after_keeps_the_earlier_ready_time(q: DelayingQueue, clock: FakeClock):
    q.add_after("a", 1.0)
    q.add_after("a", 5.0)  # later: ignored
    step(q, clock, 1.0)
    assert drain(q) == ["a"]
    step(q, clock, 10.0)
    assert drain(q) == [], "the later add_after should have been coalesced away"


def test_repeated_add_after_with_an_earlier_time_moves_the_item_up(
    q: DelayingQueue, clock: FakeClock
):
    q.add_after("a", 5.0)
    q.add_after("b", 3.0)
    q.add_after("a", 1.0)
    step(q, clock, 1.0)
    assert drain(q) == ["a"]
    step(q, clock, 10.0)
    assert drain(q) == ["b"], "the superseded 5 s entry of a must not fire"


def test_an_immediate_add_does_not_cancel_a_pending_add_after(q: DelayingQueue, clock: FakeClock):
    """As client-go (kubernetes/kubernetes#126027): the heap entry stays and fires later."""
    q.add_after("a", 5.0)
    q.add_after("a", 0)
    assert drain(q) == ["a"]
    step(q, clock, 5.0)
    assert drain(q) == ["a"]


def test_due_item_already_queued_is_not_queued_twice(q: DelayingQueue, clock: FakeClock):
    q.add("a")
    q.add_after("a", 1.0)
    step(q, clock, 1.0)
    assert len(q) == 1


def test_waiting_thread_sleeps_at_most_max_wait(q: DelayingQueue, clock: FakeClock):
    assert clock.wait_for_waiters(1)
    assert clock.waiter_deadlines() == [clock.now() + MAX_WAIT]
    q.add_after("far", 60.0)
    wait_for(
        lambda: clock.waiter_deadlines() == [clock.now() + MAX_WAIT],
        message="the waiting thread to park for MAX_WAIT",
    )
    # Each heartbeat re-parks for another MAX_WAIT until the item is due.
    step(q, clock, MAX_WAIT)
    assert clock.waiter_deadlines() == [clock.now() + MAX_WAIT]
    step(q, clock, 50.0)
    assert drain(q) == ["far"]


def test_an_earlier_item_wakes_the_waiting_thread(q: DelayingQueue, clock: FakeClock):
    q.add_after("late", 5.0)
    wait_for(
        lambda: clock.waiter_deadlines() == [clock.now() + 5.0],
        message="the waiting thread to park until the item is due",
    )
    q.add_after("early", 1.0)
    wait_for(
        lambda: clock.waiter_deadlines() == [clock.now() + 1.0],
        message="the waiting thread to wake for the earlier item",
    )


def test_shut_down_stops_the_waiting_thread_and_drops_waiting_items(
    q: DelayingQueue, clock: FakeClock
):
    q.add_after("a", 1.0)
    thread = q._waiting_thread
    assert thread.is_alive() and thread.name.startswith("workqueue-waiting-")
    q.shut_down()
    assert not thread.is_alive()
    clock.step(2.0)
    assert q.get() == (None, True)


def test_shut_down_with_drain_also_stops_the_waiting_thread(clock: FakeClock):
    q = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    q.shut_down_with_drain()
    assert not q._waiting_thread.is_alive()
    assert q.get() == (None, True)


def test_add_after_after_shut_down_is_ignored(q: DelayingQueue, clock: FakeClock):
    q.shut_down()
    q.add_after("a", 0)
    q.add_after("b", 1.0)
    clock.step(2.0)
    assert q.get() == (None, True)


def test_delaying_queue_keeps_the_queue_guarantees(q: DelayingQueue, clock: FakeClock):
    q.add("a")
    q.get()
    q.add_after("a", 1.0)
    step(q, clock, 1.0)
    assert len(q) == 0, "an item in flight must not be queued again before done"
    q.done("a")
    assert q.get() == ("a", False)


def test_many_threads_adding_after_deliver_each_item_once(q: DelayingQueue, clock: FakeClock):
    def add(offset: int) -> None:
        for i in range(200):
            q.add_after(f"key-{i}", 1.0 + (i + offset) % 7)

    threads = [threading.Thread(target=add, args=(n,), name=f"test-adder-{n}") for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    step(q, clock, 10.0)
    assert sorted(drain(q)) == sorted(f"key-{i}" for i in range(200))


def test_real_clock_delay_elapses():
    q = DelayingQueue(name=None)
    try:
        start = time.monotonic()
        q.add_after("a", 0.02)
        assert q.get() == ("a", False)
        assert time.monotonic() - start >= 0.02
    finally:
        q.shut_down()


def test_waiting_lists_delayed_items_earliest_first_with_the_time_left(
    q: DelayingQueue, clock: FakeClock
):
    assert q.waiting() == []
    q.add_after("late", 2.0)
    q.add_after("soon", 0.5)
    # the earlier of two ready times wins, and the superseded entry is not listed
    q.add_after("late", 1.0)
    assert q.waiting() == [("soon", 0.5), ("late", 1.0)]
    step(q, clock, 0.75)
    assert q.waiting() == [("late", 0.25)]
    # "soon" was added: queued now, no longer waiting
    assert q.snapshot().queued == ("soon",)
