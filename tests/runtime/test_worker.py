"""runtime.worker.Workers: a key is finished by the Result its reconcile returned.

The Foo controller's own cases (a 409 is a requeue, an error is retried with backoff, the drain
deadline) are in test_foo_controller.py; these cover the loop on its own, with a reconcile
function that returns what each case needs.
"""

from __future__ import annotations

import logging
import threading

import pytest
from prometheus_client import CollectorRegistry

from runtime.context import Context
from runtime.metrics.reconcile import ReconcileMetrics
from runtime.shutdown import ShutdownBudget
from runtime.worker import AbandonedError, Result, Workers
from tests.helpers import wait_for
from workqueue import FakeClock, RateLimitingQueue, sample_controller_rate_limiter

log = logging.getLogger("test.worker")


def workers(reconcile):
    clock = FakeClock()
    queue = RateLimitingQueue(sample_controller_rate_limiter(), clock=clock)
    w = Workers(
        queue, reconcile, name="t", log=log, metrics=ReconcileMetrics("t", CollectorRegistry())
    )
    return w, queue, clock


def count(w, result):
    return w.metrics.total.labels("t", result)._value.get()


@pytest.mark.parametrize(
    ("result", "label", "requeues"),
    [
        (Result(), "success", 0),
        (Result(requeue=True, cause="409 Conflict"), "requeue", 1),
        (Result(error=RuntimeError("boom")), "error", 1),
        # an error wins over a requeue, as in controller-runtime
        (Result(requeue=True, error=RuntimeError("boom")), "error", 1),
    ],
)
def test_the_result_decides_forget_or_backoff(result, label, requeues):
    w, queue, _ = workers(lambda ctx, key: result)
    queue.add("k")
    assert w.process_next_work_item()
    assert count(w, label) == 1
    assert queue.num_requeues("k") == requeues
    assert w.longest_running_sync() == 0
    queue.shut_down()


def test_requeue_after_forgets_the_failures_and_comes_back_after_the_delay():
    results = iter([Result(error=RuntimeError("boom")), Result(requeue_after=30.0)])
    w, queue, clock = workers(lambda ctx, key: next(results))
    queue.add("k")
    assert w.process_next_work_item()
    assert queue.num_requeues("k") == 1
    clock.step(0.006)
    wait_for(lambda: len(queue) == 1, message="the key back after its backoff")
    assert w.process_next_work_item()
    assert count(w, "requeue_after") == 1 and queue.num_requeues("k") == 0
    clock.step(29.0)
    assert len(queue) == 0  # not before its delay
    clock.step(1.1)
    wait_for(lambda: len(queue) == 1, message="the key back after 30 s")
    queue.shut_down()


def test_a_reconcile_that_raises_is_an_error_and_the_worker_lives_on():
    calls = []

    def reconcile(ctx, key):
        calls.append(key)
        if key == "bad":
            raise RuntimeError("boom")
        return Result()

    w, queue, _ = workers(reconcile)
    queue.add("bad")
    queue.add("good")
    assert w.process_next_work_item()
    assert w.process_next_work_item()
    assert calls == ["bad", "good"]
    assert count(w, "error") == 1 and count(w, "success") == 1
    queue.shut_down()


def test_an_abandoned_sync_stops_its_worker_without_a_retry():
    w, queue, _ = workers(lambda ctx, key: Result(error=AbandonedError("status write")))
    queue.add("k")
    assert not w.process_next_work_item()
    assert queue.num_requeues("k") == 0 and count(w, "error") == 0
    queue.shut_down()


def test_run_drains_what_is_in_flight_and_queued_before_it_returns():
    gate = threading.Event()
    done = []

    def reconcile(ctx, key):
        gate.wait(5)
        done.append(key)
        return Result()

    w, queue, _ = workers(reconcile)
    stop = threading.Event()
    t = threading.Thread(target=w.run, args=(2, stop, ShutdownBudget(10)))
    t.start()
    for key in "abcd":
        queue.add(key)
    wait_for(lambda: w.longest_running_sync() > 0, message="a sync in flight")
    assert w.started() == 2 and w.alive() == 2
    stop.set()
    gate.set()
    t.join(5)
    assert not t.is_alive()
    assert sorted(done) == ["a", "b", "c", "d"]
    wait_for(lambda: w.alive() == 0, message="the workers ended")


def test_writes_are_refused_once_the_drain_deadline_has_passed():
    w, queue, _ = workers(lambda ctx, key: Result())
    budget = ShutdownBudget(0.0)
    w.ctx = Context(budget, w._abandoned)
    assert w.ctx.timeout("PUT /x", 60.0) == 60.0  # not stopping: the full timeout
    budget.begin()
    assert w.ctx.done()
    with pytest.raises(AbandonedError):
        w.ctx.timeout("PUT /x", 60.0)
    with pytest.raises(AbandonedError):
        w.ctx.err("event")
    queue.add("k")
    assert not w.process_next_work_item()  # no key starts past it
    assert len(queue) == 1 and count(w, "success") == 0  # left queued, never synced
    queue.shut_down()
