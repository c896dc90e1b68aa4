"""Writer threads that make the last write of a sync, so that the worker need not wait for it.

No client-go twin. A Go worker waits for every request of its sync, and so does ours, except
for the last one: nothing in the sync needs the answer of the write that ends it (the
Deployment create, or the status write), so the worker hands that write, together with what
finishes the key (forget or requeue, then ``done``), to a free writer thread and takes the
next key. The key stays in the queue's processing set until its write has landed, so the
workqueue's promises hold unchanged: a key is synced by one thread at a time, a key added
meanwhile is synced again afterwards, and a failed write is retried with backoff, as if the
worker had made it.

Why: with a few milliseconds of API latency, a worker that waits on every write spends most
of its time waiting, and two workers (sample-controller's default) make at most two requests
at a time. The workers still make every decision and every write whose answer a sync needs;
the writers only take the writes that end syncs.

How many: ``WRITERS_PER_WORKER`` (two) per worker, from the shape of the reconcile: a new Foo
costs a worker one request (the status write that proves the Foo still exists, whose answer
decides the create) and the writers two (the create, then the status once the Deployment is
available), so with two writers per worker neither side waits for the other. A worker that
finds no writer free makes the write itself, so no write queues behind a busy writer, and the
syncs never have more than three requests per worker in flight (docs/benchmarks.md, "The
latency case"). ``--kube-api-qps`` limits them all, writers included.

The threads are daemons: at the drain deadline ``Controller.run`` returns without waiting
for them, as for the workers (a write not begun by then is abandoned by the controller's own
check).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["WRITERS_PER_WORKER", "WriteBehind"]

log = logging.getLogger(__name__)

# Writer threads per worker (see the module docstring for why two).
WRITERS_PER_WORKER = 2


class WriteBehind:
    """``threads`` daemon threads; ``try_submit`` gives one of them a callable if one is free
    (no client-go twin: a Go worker makes its writes itself)."""

    def __init__(self, threads: int, name: str = "foo-writer") -> None:
        # (holds at most one callable per thread: try_submit refuses more)
        self._queue: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._pending = 0  # accepted and not yet run to the end
        self._idle = threading.Condition()
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
            for i in range(max(1, threads))
        ]
        for t in self._threads:
            t.start()

    def try_submit(self, fn: Callable[[], object]) -> bool:
        """Run ``fn`` on a free thread and return True; False (and nothing run) if none is."""
        with self._idle:
            if self._pending >= len(self._threads):
                return False
            self._pending += 1
        self._queue.put(fn)
        return True

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until everything accepted has run; False if that took longer than ``timeout``."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def stop(self, timeout: float | None = None) -> bool:
        """Let what was accepted run, then end the threads; False if some did not end in time."""
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join(timeout)
        return not any(t.is_alive() for t in self._threads)

    def alive(self) -> int:
        """Threads still running."""
        return sum(t.is_alive() for t in self._threads)

    def _run(self) -> None:
        while True:
            fn = self._queue.get()
            if fn is None:
                return
            try:
                fn()
            except Exception:  # a failure must not end the thread
                log.exception("write-behind task failed")
            finally:
                with self._idle:
                    self._pending -= 1
                    if self._pending == 0:
                        self._idle.notify_all()
