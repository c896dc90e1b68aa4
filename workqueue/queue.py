"""The de-duplicating work queue (client-go util/workqueue/queue.go `Type`).

A controller's workers take keys from this queue. It guarantees:

* an item is never handed to two workers at once (a worker owns it from `get` to `done`);
* adding an item that is already waiting is a no-op, so a burst of events for one object is
  processed once;
* adding an item while a worker processes it marks it dirty; `done` queues it again, so the
  change that arrived during processing is not lost;
* after `shut_down` adds are ignored and `get` hands out what is queued, then reports shutdown;
  `shut_down_with_drain` also waits until every in-flight item is `done`.

Items must be hashable (keys such as "namespace/name").
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from workqueue.clock import Clock, RealClock
from workqueue.metrics import MetricsProvider, QueueMetrics, get_provider, new_queue_metrics

__all__ = ["UNFINISHED_WORK_UPDATE_PERIOD", "Queue", "QueueSnapshot"]

# How often the unfinished-work gauges are refreshed (client-go defaultUnfinishedWorkUpdatePeriod).
UNFINISHED_WORK_UPDATE_PERIOD = 0.5


@dataclass(frozen=True)
class QueueSnapshot:
    """What a queue holds at one moment: a read-only copy for a reader to look at.

    No client-go twin: client-go exposes only ``Len()``. This exists for the demo's page
    (``make demo-ui``), which draws the three sets as the queue keeps them, and for tests; the
    controller never reads it (a copy is stale the moment the lock is released).
    """

    # waiting to be handed out, in hand-out order (every one of them is also dirty)
    queued: tuple[Hashable, ...]
    # need processing: queued, or added again while a worker processes them
    dirty: frozenset[Hashable]
    # handed out by get and not yet done
    processing: frozenset[Hashable]


class Queue:
    """A FIFO of distinct items with dirty/processing bookkeeping (client-go `Typed[T]` / `Type`).

    Differs: no generics (items are any hashable, usually "namespace/name" strings), and a
    `threading.Condition` where client-go uses a `sync.Cond`.

    `name` turns on metrics (through `metrics_provider`, or the provider installed with
    `workqueue.metrics.set_provider`); `clock` is injectable for tests.
    """

    def __init__(
        self,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        # name labels this queue's metrics and threads; "" means unnamed (no metrics).
        self.name: str = name or ""
        # _clock: the source of every timestamp and timed wait of this queue.
        self._clock: Clock = clock if clock is not None else RealClock()
        # _metrics_provider: resolved once, so subclasses create their metrics from the same one.
        self._metrics_provider: MetricsProvider = (
            metrics_provider if metrics_provider is not None else get_provider()
        )
        # _queue is the order of work. Every element is in _dirty and not in _processing.
        self._queue: deque[Hashable] = deque()
        # _dirty holds every item that needs processing (queued, or re-added while processing).
        self._dirty: set[Hashable] = set()
        # _processing holds the items handed out by get and not yet done; an item may be in
        # _dirty at the same time, and then done puts it back in _queue.
        self._processing: set[Hashable] = set()
        # _lock guards every field above and below; it is the lock of _queue_changed.
        self._lock = threading.Lock()
        # _queue_changed is notified when something a waiter waits for happens: an item is
        # appended to _queue (wakes one get), shutdown begins (wakes all), or _processing
        # empties while draining (wakes shut_down_with_drain).
        self._queue_changed = threading.Condition(self._lock)
        # _shutting_down: set once by shut_down*; from then on add is a no-op.
        self._shutting_down = False
        # _drain: shut_down_with_drain is waiting for _processing to empty; shut_down clears it.
        self._drain = False
        # _metrics: None for unnamed queues, so the hot path pays one test for them.
        self._metrics: QueueMetrics | None = new_queue_metrics(
            self.name, self._metrics_provider, self._clock
        )
        # _tick_stop is notified on shutdown to stop the unfinished-work thread; it has its own
        # lock so the tick thread never consumes a notify meant for a worker in get.
        self._tick_stop = threading.Condition()
        # _unfinished_work_thread: refreshes the unfinished-work gauges; only with metrics.
        self._unfinished_work_thread: threading.Thread | None = None
        if self._metrics is not None:
            self._unfinished_work_thread = threading.Thread(
                target=self._update_unfinished_work_loop,
                name=f"workqueue-unfinished-work-{self.name}",
                # A daemon: losing a metrics refresh at interpreter exit is harmless.
                daemon=True,
            )
            self._unfinished_work_thread.start()

    def add(self, item: Hashable) -> None:
        """Mark `item` as needing processing; a no-op if it already waits or after shutdown."""
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            if self._metrics is not None:
                self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                # done() will queue it again; queueing it now could hand it to a second worker.
                return
            self._queue.append(item)
            self._queue_changed.notify()

    def __len__(self) -> int:
        """The number of items waiting to be handed out (informational: do not gate on it)."""
        with self._lock:
            return len(self._queue)

    def snapshot(self) -> QueueSnapshot:
        """A consistent copy of the queued, dirty and processing items (read-only; see
        ``QueueSnapshot``)."""
        with self._lock:
            return QueueSnapshot(
                tuple(self._queue), frozenset(self._dirty), frozenset(self._processing)
            )

    def get(self) -> tuple[Any, bool]:
        """Block until an item is available; return `(item, False)`, or `(None, True)` once the
        queue is shut down and empty, when the worker should stop. Call `done(item)` after."""
        with self._lock:
            while not self._queue and not self._shutting_down:
                self._queue_changed.wait()
            if not self._queue:
                return None, True
            item = self._queue.popleft()
            if self._metrics is not None:
                self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    def done(self, item: Hashable) -> None:
        """Mark `item` as processed; if it was added again meanwhile, queue it again."""
        with self._lock:
            if self._metrics is not None:
                self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                self._queue_changed.notify()
            elif self._drain and not self._processing:
                self._queue_changed.notify_all()

    def shut_down(self) -> None:
        """Ignore new adds; `get` hands out what is queued, then reports shutdown.

        Also releases a pending `shut_down_with_drain` without waiting for the drain.
        """
        with self._lock:
            self._drain = False
            self._begin_shutdown()
        self._on_shut_down()

    def shut_down_with_drain(self) -> None:
        """Like `shut_down`, and wait until every item handed out has been `done`.

        The workers must keep calling `done`, or this blocks until someone calls `shut_down`.
        """
        with self._lock:
            self._drain = True
            self._begin_shutdown()
        self._on_shut_down()
        with self._lock:
            while self._processing and self._drain:
                self._queue_changed.wait()

    def shutting_down(self) -> bool:
        """Whether shut_down or shut_down_with_drain has been called."""
        with self._lock:
            return self._shutting_down

    def _begin_shutdown(self) -> None:
        """Flip to shutting down and wake every waiter (called with _lock held)."""
        self._shutting_down = True
        self._queue_changed.notify_all()

    def _on_shut_down(self) -> None:
        """Stop this queue's background threads (called without _lock; subclasses extend it)."""
        with self._tick_stop:
            self._tick_stop.notify_all()
        thread = self._unfinished_work_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _update_unfinished_work_loop(self) -> None:
        """Refresh the unfinished-work gauges every period until shutdown (client-go
        `updateUnfinishedWorkLoop`), so a stuck worker shows up while it is still stuck."""
        assert self._metrics is not None
        clock = self._clock
        with self._tick_stop:
            next_tick = clock.now() + UNFINISHED_WORK_UPDATE_PERIOD
            while True:
                # Read under _tick_stop: shut_down sets the flag before notifying, so either we
                # see it here or its notify arrives while we wait.
                if self._shutting_down:
                    return
                if clock.now() >= next_tick:
                    with self._lock:
                        if self._shutting_down:
                            return
                        self._metrics.update_unfinished_work()
                    next_tick = clock.now() + UNFINISHED_WORK_UPDATE_PERIOD
                clock.wait_until(self._tick_stop, next_tick)
