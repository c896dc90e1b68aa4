"""controller.writebehind.WriteBehind: a free thread takes a callable, or the caller keeps it."""

from __future__ import annotations

import threading

from controller.writebehind import WriteBehind
from tests.helpers import wait_for


def test_a_free_thread_takes_the_callable_and_a_busy_pool_refuses():
    writers = WriteBehind(2, name="w")
    release = threading.Event()
    ran: list[str] = []

    def blocked(tag):
        def fn():
            ran.append(threading.current_thread().name)
            release.wait(5)

        return fn

    assert writers.try_submit(blocked("a"))
    assert writers.try_submit(blocked("b"))
    assert not writers.try_submit(lambda: ran.append("refused"))  # both busy: not run, ever
    wait_for(lambda: len(ran) == 2, message="both threads running")
    assert sorted(ran) == ["w-0", "w-1"]
    assert not writers.wait_idle(0.01)
    release.set()
    assert writers.wait_idle(5)
    assert writers.try_submit(lambda: ran.append("later"))  # free again
    assert writers.wait_idle(5)
    assert ran[2:] == ["later"]
    assert writers.stop(5)
    assert writers.alive() == 0


def test_a_failing_callable_does_not_end_its_thread(caplog):
    writers = WriteBehind(1)

    def boom():
        raise RuntimeError("boom")

    assert writers.try_submit(boom)
    assert writers.wait_idle(5)
    assert writers.alive() == 1
    assert "write-behind task failed" in caplog.text
    done = threading.Event()
    assert writers.try_submit(done.set)
    assert done.wait(5)
    assert writers.stop(5)


def test_stop_runs_what_was_accepted_first():
    writers = WriteBehind(1)
    gate, ran = threading.Event(), threading.Event()
    assert writers.try_submit(lambda: gate.wait(5) and ran.set())
    stopper = threading.Thread(target=writers.stop, args=(5,))
    stopper.start()
    gate.set()
    stopper.join(5)
    assert ran.is_set() and writers.alive() == 0
