"""workqueue.RateLimitingQueue: add_rate_limited = add_after(item, limiter.when(item));
forget and num_requeues go to the limiter (client-go rate_limiting_queue.go)."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from tests.helpers import wait_for
from workqueue import (
    DelayingQueue,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)
from workqueue.delaying_queue import _REMOVED, MAX_WAIT


def step(q: DelayingQueue, clock: FakeClock, seconds: float) -> None:
    """Advance time once the waiting thread has seen every add_after, then wait until it has
    added what is due (see test_delaying_queue.settle for why this is exact)."""

    def caught_up() -> bool:
        deadlines = clock.waiter_deadlines()
        if not deadlines:
            return False
        with q._waiting_lock:
            live = [entry[0] for entry in q._waiting_heap if entry[2] is not _REMOVED]
        return deadlines[0] <= min(live, default=clock.now() + MAX_WAIT)

    wait_for(caught_up, message="the waiting thread to catch up")
    clock.step(seconds)
    wait_for(caught_up, message="the waiting thread to catch up")


class RecordingLimiter:
    """A limiter that returns scripted delays and records every call."""

    def __init__(self, delays: list[float]) -> None:
        self.delays = list(delays)
        self.calls: list[tuple[str, Hashable]] = []

    def when(self, item: Hashable) -> float:
        self.calls.append(("when", item))
        return self.delays.pop(0)

    def forget(self, item: Hashable) -> None:
        self.calls.append(("forget", item))

    def num_requeues(self, item: Hashable) -> int:
        self.calls.append(("num_requeues", item))
        return 42


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_add_rate_limited_waits_for_the_limiters_delay(clock: FakeClock):
    limiter = RecordingLimiter([2.0])
    q = RateLimitingQueue(limiter, clock=clock)
    try:
        q.add_rate_limited("a")
        assert limiter.calls == [("when", "a")]
        step(q, clock, 1.5)
        assert len(q) == 0
        step(q, clock, 0.5)
        assert q.get() == ("a", False)
    finally:
        q.shut_down()


def test_zero_delay_adds_at_once(clock: FakeClock):
    q = RateLimitingQueue(RecordingLimiter([0.0]), clock=clock)
    try:
        q.add_rate_limited("a")
        assert len(q) == 1
    finally:
        q.shut_down()


def test_forget_and_num_requeues_go_to_the_limiter(clock: FakeClock):
    limiter = RecordingLimiter([])
    q = RateLimitingQueue(limiter, clock=clock)
    try:
        assert q.num_requeues("a") == 42
        q.forget("a")
        assert limiter.calls == [("num_requeues", "a"), ("forget", "a")]
    finally:
        q.shut_down()


def test_forget_does_not_remove_a_queued_item(clock: FakeClock):
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 1.0), clock=clock)
    try:
        q.add("a")
        q.forget("a")
        assert len(q) == 1
    finally:
        q.shut_down()


def test_controller_retry_loop_backs_off_then_forgets(clock: FakeClock):
    """A worker fails a key three times, then succeeds: the key waits 5, 10, 20 ms of (fake)
    time before each retry, and forget resets the count for the next failure."""
    q = RateLimitingQueue(default_controller_rate_limiter(clock=clock), clock=clock)
    try:
        q.add("ns/foo")
        waits = []
        for attempt in range(4):
            key, shutdown = q.get()
            assert (key, shutdown) == ("ns/foo", False)
            if attempt == 3:
                q.forget(key)
                q.done(key)
                break
            q.add_rate_limited(key)
            q.done(key)
            assert q.num_requeues(key) == attempt + 1
            wait = q._waiting_by_item[key][0] - clock.now()
            waits.append(wait)
            step(q, clock, wait / 2)
            assert len(q) == 0, "the key came back before its backoff"
            step(q, clock, wait / 2)
            if not len(q):  # wait/2 + wait/2 may round a hair short of the ready time
                step(q, clock, 1e-9)
            assert len(q) == 1
        assert waits == pytest.approx([0.005, 0.01, 0.02])
        assert q.num_requeues("ns/foo") == 0
        q.add_rate_limited("ns/foo")  # after forget the backoff starts over at 5 ms
        assert q._waiting_by_item["ns/foo"][0] - clock.now() == pytest.approx(0.005)
    finally:
        q.shut_down()


def test_rate_limited_adds_coalesce_like_add_after(clock: FakeClock):
    q = RateLimitingQueue(RecordingLimiter([1.0, 5.0]), clock=clock)
    try:
        q.add_rate_limited("a")
        q.add_rate_limited("a")  # the later ready time is dropped
        step(q, clock, 1.0)
        assert q.get() == ("a", False)
        q.done("a")
        step(q, clock, 10.0)
        assert len(q) == 0
    finally:
        q.shut_down()


def test_add_rate_limited_after_shut_down_is_ignored(clock: FakeClock):
    q = RateLimitingQueue(RecordingLimiter([0.0]), clock=clock)
    q.shut_down()
    q.add_rate_limited("a")
    assert q.get() == (None, True)
