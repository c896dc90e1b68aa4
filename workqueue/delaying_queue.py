"""A work queue that can add an item later (client-go util/workqueue/delaying_queue.go).

Controllers re-queue a failed key after a backoff instead of retrying it in a hot loop. Waiting
items sit in a heap ordered by ready time; one named thread sleeps until the earliest one is
due (or at most `MAX_WAIT`), moves every due item into the queue, and sleeps again. `add_after`
wakes it only when the new item becomes the earliest, and shutdown wakes it to exit, so nothing
polls.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable
from typing import Any

from workqueue.clock import Clock
from workqueue.metrics import CounterMetric, MetricsProvider, new_retry_metrics
from workqueue.queue import Queue

__all__ = ["MAX_WAIT", "DelayingQueue"]

# The waiting thread re-checks the heap at least this often (client-go maxWait): insurance, so a
# due item never sits more than 10 s even if a wake-up were somehow missed.
MAX_WAIT = 10.0

# Marks a heap entry superseded by an earlier add_after of the same item (lazy deletion).
_REMOVED = object()


class DelayingQueue(Queue):
    """A `Queue` with `add_after` (client-go `DelayingInterface`, `delayingType`).

    Differs: a heap under a lock and one waiting thread woken by a `Condition`, where client-go
    feeds a goroutine through a channel; a subclass of `Queue`, not a wrapper around one.
    """

    def __init__(
        self,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name=name, metrics_provider=metrics_provider, clock=clock)
        # _waiting_lock guards _waiting_heap, _waiting_by_item and _waiting_stopped.
        self._waiting_lock = threading.Lock()
        # _waiting_changed is notified when an entry becomes the earliest one, and on shutdown.
        self._waiting_changed = threading.Condition(self._waiting_lock)
        # _waiting_heap: [ready_at, sequence, item] entries, earliest first; the sequence keeps
        # equal ready times in add order and means items are never compared. An entry whose
        # item is _REMOVED was superseded and is skipped when popped.
        self._waiting_heap: list[list[Any]] = []
        # _waiting_by_item: item -> its live heap entry; exactly the items waiting in the heap.
        self._waiting_by_item: dict[Hashable, list[Any]] = {}
        # _sequence numbers heap entries in add order.
        self._sequence = itertools.count()
        # _waiting_stopped: set on shutdown; the waiting thread exits and add_after is a no-op.
        self._waiting_stopped = False
        # _retries counts every add_after (None for an unnamed queue).
        self._retries: CounterMetric | None = new_retry_metrics(self.name, self._metrics_provider)
        # _waiting_thread moves due items from the heap into the queue.
        self._waiting_thread = threading.Thread(
            target=self._waiting_loop,
            name=f"workqueue-waiting-{self.name or id(self)}",
            # A daemon: at exit the waiting items would be dropped by shutdown anyway.
            daemon=True,
        )
        self._waiting_thread.start()

    def add_after(self, item: Hashable, delay: float) -> None:
        """Add `item` after `delay` seconds; at once if `delay <= 0`.

        If the item is already waiting, the earlier of the two ready times wins. Every call
        (before shutdown) counts a retry.
        """
        if self.shutting_down():
            return
        if self._retries is not None:
            self._retries.inc()
        if delay <= 0:
            self.add(item)
            return
        with self._waiting_lock:
            if self._waiting_stopped:
                return
            ready_at = self._clock.now() + delay
            existing = self._waiting_by_item.get(item)
            if existing is not None:
                if existing[0] <= ready_at:
                    return
                existing[2] = _REMOVED
            entry = [ready_at, next(self._sequence), item]
            heapq.heappush(self._waiting_heap, entry)
            self._waiting_by_item[item] = entry
            if self._waiting_heap[0] is entry:
                # The thread sleeps until the old earliest entry; wake it to sleep less.
                self._waiting_changed.notify()

    def waiting(self) -> list[tuple[Hashable, float]]:
        """The items waiting for their delay, earliest first, each with the seconds left until
        it is added (read-only; no client-go twin: for the demo's page and tests, as
        ``Queue.snapshot``)."""
        with self._waiting_lock:
            now = self._clock.now()
            entries = sorted(self._waiting_by_item.values())
            return [(item, max(0.0, ready_at - now)) for ready_at, _, item in entries]

    def _on_shut_down(self) -> None:
        """Stop the waiting thread too (client-go closes stopCh), then the base threads."""
        with self._waiting_lock:
            self._waiting_stopped = True
            self._waiting_changed.notify()
        if self._waiting_thread is not threading.current_thread():
            self._waiting_thread.join()
        super()._on_shut_down()

    def _pop_ready(self, now: float) -> list[Hashable]:
        """Remove and return the items due at `now`, earliest first (with _waiting_lock held)."""
        heap = self._waiting_heap
        ready: list[Hashable] = []
        while heap and heap[0][0] <= now:
            _, _, item = heapq.heappop(heap)
            if item is _REMOVED:
                continue
            del self._waiting_by_item[item]
            ready.append(item)
        return ready

    def _waiting_loop(self) -> None:
        """Until shutdown: sleep to the earliest ready time (at most MAX_WAIT), then add every
        due item to the queue (client-go `waitingLoop`)."""
        clock = self._clock
        while True:
            with self._waiting_lock:
                while True:
                    if self._waiting_stopped:
                        return
                    now = clock.now()
                    ready = self._pop_ready(now)
                    if ready:
                        break
                    deadline = now + MAX_WAIT
                    if self._waiting_heap and self._waiting_heap[0][0] < deadline:
                        deadline = self._waiting_heap[0][0]
                    clock.wait_until(self._waiting_changed, deadline)
            # Outside _waiting_lock: add takes the queue lock, and add_after must not wait for it.
            for item in ready:
                self.add(item)
