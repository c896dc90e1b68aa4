"""Workers: take a key off the queue, reconcile it, and forget or requeue it by the result.

sample-controller twin: the worker half of controller.go, ``Run`` (start ``workers``
goroutines, wait for the stop), ``runWorker`` and ``processNextWorkItem``. controller-runtime
twin: ``pkg/internal/controller/controller.go``, whose ``processNextWorkItem`` calls
``reconcileHandler``, which reads the ``reconcile.Result`` (and error) the reconciler returned.
Ours is the same loop under the same names, with controller-runtime's result:

- an ``error``: retried with backoff (``add_rate_limited``), logged and counted as an error;
- ``requeue_after``: the failures are forgotten and the key comes back after that delay;
- ``requeue``: retried with backoff, not an error (controller-runtime's ``Requeue: true``; the
  Foo controller returns it for a 409 Conflict or an object gone meanwhile: its cache was
  behind, and the event that brings it up to date enqueues the key again anyway);
- anything else is a success: the key's failures are forgotten (``forget``).

Each worker is one thread, and one key is one thread's from ``get`` to ``done``: the queue
hands a key to one worker at a time, and a key added while it is being processed is handed
out again after ``done``. More concurrency is more workers (``--workers``), as upstream:
sample-controller's ``controller.Run(ctx, 2)``, controller-runtime's
``MaxConcurrentReconciles``, kube-controller-manager's ``--concurrent-deployment-syncs``.

What ours adds (no Go twin: a Go process ends its goroutines by exiting, a Python thread
cannot be stopped from outside): a graceful-shutdown drain within a deadline
(``controller.shutdown.ShutdownBudget``). On stop the queue refuses new keys and the workers
finish what is queued and in flight. Past the drain deadline no key starts, and a sync still
in flight is abandoned at its next write: the reconcile asks ``before_deadline`` (or
``time_for_write``) before each one, and gets ``AbandonedError``. The workers keep the keys in
flight, for the shutdown's log and for the liveness probe's wedge detector.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.shutdown import ShutdownBudget
from controller.trace import TRACE_LOGGER
from workqueue import RateLimitingQueue

if TYPE_CHECKING:
    from controller.metrics import ReconcileMetrics

__all__ = ["AbandonedError", "Reconciler", "Result", "Workers"]

trace = logging.getLogger(TRACE_LOGGER)


@dataclass(frozen=True)
class Result:
    """What a reconcile returns: controller-runtime's ``reconcile.Result`` and its ``error``
    in one value. ``Result()`` is a success."""

    # Retry with backoff, not an error (controller-runtime ``Requeue: true``).
    requeue: bool = False
    # Seconds until the key comes back, its failures forgotten (``RequeueAfter``).
    requeue_after: float = 0.0
    # The sync failed: retried with backoff, logged and counted. It wins over the fields above.
    error: Exception | None = None
    # What a requeue met (a 409's message), for its debug log line.
    cause: str = ""


# The reconcile function: a key in, a Result out (controller-runtime's ``reconcile.Reconciler``).
Reconciler = Callable[[str], Result]


class AbandonedError(Exception):
    """The shutdown budget's drain deadline has passed: the sync stops before its next write
    (no client-go twin: a Go process ends its goroutines by exiting)."""


class Workers:
    """The worker threads of one controller, over its queue and its reconcile function.

    sample-controller twin: ``runWorker`` / ``processNextWorkItem``; controller-runtime twin:
    the internal ``Controller``'s workers and ``reconcileHandler`` (see the module docstring).
    Its log lines go to the controller's logger (controller-runtime's ``LogConstructor``).
    """

    def __init__(
        self,
        queue: RateLimitingQueue,
        reconcile: Reconciler,
        name: str,
        log: logging.Logger,
        metrics: ReconcileMetrics | None = None,
    ) -> None:
        self.queue = queue
        self.reconcile = reconcile
        # threads are "<name>-worker-<n>"
        self.name = name
        self.log = log
        # reconcile counters and durations; None in unit tests
        self.metrics = metrics
        # key -> monotonic start, while a worker syncs it
        self._in_flight: dict[str, float] = {}
        # Guards _in_flight and _abandoned: a key starts, or the drain deadline passes, first.
        self._lock = threading.Lock()
        # the drain deadline has passed: start nothing, write nothing
        self._abandoned = False
        # set by run(): bounds the writes once stopping
        self._budget: ShutdownBudget | None = None
        # started by run()
        self._threads: list[threading.Thread] = []

    # -- run: start, wait for the stop, drain ------------------------------------------------

    def run(self, workers: int, stop: threading.Event, budget: ShutdownBudget) -> None:
        """Run ``workers`` threads until ``stop`` is set, then drain within ``budget``.

        On stop, the queue refuses new keys and the workers finish what is queued and in
        flight, until the budget's drain deadline. Past it, no key is started, the syncs still
        in flight are abandoned (they make no further write), and ``run`` returns without
        waiting for them (the threads are daemons).
        """
        self._budget = budget
        self.log.info("starting workers", extra={"count": workers})
        # run_worker returns only once the queue has shut down and is empty: a sync's error is
        # its result, so (unlike Go's wait.Until) no restart loop is needed to survive one.
        threads = [
            threading.Thread(target=self.run_worker, name=f"{self.name}-worker-{i}", daemon=True)
            for i in range(workers)
        ]
        self._threads = threads
        for t in threads:
            t.start()
        self.log.info("started workers")
        stop.wait()
        budget.begin()
        self.log.info("shutting down workers")
        drained = threading.Thread(
            target=self.queue.shut_down_with_drain, name="queue-drain", daemon=True
        )
        drained.start()
        # Draining ends when nothing is in flight; the workers then take what is still queued.
        drained.join(budget.left(budget.drain_deadline))
        for t in threads:
            t.join(budget.left(budget.drain_deadline))
        if drained.is_alive() or any(t.is_alive() for t in threads):
            abandoned = self._abandon()
            self.log.warning(
                "in-flight work did not finish within the graceful shutdown timeout",
                extra={"timeout": budget.timeout, "abandoned": ",".join(abandoned)},
            )
            # releases the drain; get() still hands out what is queued, to nobody
            self.queue.shut_down()

    def _abandon(self) -> list[str]:
        """Pass the drain deadline: no key starts from now on; returns the keys in flight."""
        with self._lock:
            self._abandoned = True
            return sorted(self._in_flight)

    # -- one worker ---------------------------------------------------------------------------

    def run_worker(self) -> None:
        """Process keys until the queue shuts down and is empty, or the drain deadline passes."""
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Take one key, reconcile it, and finish it by the result; False when the worker
        should stop (the queue has shut down, or the drain deadline has passed)."""
        # (checked again below: get() may block past it)
        if self.past_drain_deadline():
            return False
        key, shutdown = self.queue.get()
        if shutdown:
            return False
        start = time.monotonic()
        # Starting a key and passing the drain deadline exclude each other: after _abandon()
        # no key starts (client-go's queue hands out queued keys until it is empty, so the
        # refusal is here, and the queue keeps client-go's contract).
        with self._lock:
            refused = self._past_drain_deadline_locked()
            if not refused:
                self._in_flight[key] = start
                trace.info("dequeue", extra={"key": key})
        # done() tells the queue we are finished with this key, whatever happens, so that it
        # can be handed out again (it may have been re-added while we worked on it).
        try:
            if refused:
                return False
            try:
                result = self.reconcile(key)
            except Exception as err:
                # A reconcile should return its errors; one it raised is retried all the same
                # (controller-runtime recovers a reconciler's panic), and no worker dies of it.
                result = Result(error=err)
            return self._handle(key, start, result)
        finally:
            self.queue.done(key)

    def _handle(self, key: str, start: float, result: Result) -> bool:
        """Forget or requeue the key by its result (controller-runtime's reconcileHandler);
        False when the drain deadline has cut the sync (the worker should stop)."""
        # in flight until its sync ended, not until it is logged
        with self._lock:
            self._in_flight.pop(key, None)
        err = result.error
        if err is not None:
            if isinstance(err, AbandonedError) or self.past_drain_deadline():
                # cut at the deadline (a write refused, or a request cut short): no retry
                self.log.info(
                    "sync abandoned at the graceful shutdown deadline", extra={"key": key}
                )
                return False
            self.queue.add_rate_limited(key)
            self._observe("error", start)
            self.log.error(
                "error syncing, requeuing",
                extra={"key": key, "error": str(err), "requeues": self.queue.num_requeues(key)},
            )
        elif result.requeue_after > 0:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after)
            self._observe("requeue_after", start)
            self.log.debug(
                "requeuing after a delay", extra={"key": key, "after": result.requeue_after}
            )
        elif result.requeue:
            self.queue.add_rate_limited(key)
            self._observe("requeue", start)
            self.log.debug(
                "conflict, requeuing",
                extra={
                    "key": key,
                    "error": result.cause,
                    "requeues": self.queue.num_requeues(key),
                },
            )
        else:
            # Success: stop tracking the key's failures, so that its next error starts the
            # backoff from the base delay again.
            self.queue.forget(key)
            self._observe("success", start)
            self.log.info(
                "successfully synced",
                extra={"key": key, "duration": round(time.monotonic() - start, 6)},
            )
        return True

    def _observe(self, result: str, start: float) -> None:
        if self.metrics is not None:
            self.metrics.observe(result, time.monotonic() - start)

    # -- the drain deadline, as the reconcile's writes see it --------------------------------

    def past_drain_deadline(self) -> bool:
        """The drain deadline has passed: by the clock already, before run() marks it."""
        with self._lock:
            return self._past_drain_deadline_locked()

    def _past_drain_deadline_locked(self) -> bool:
        if self._abandoned:
            return True
        budget = self._budget
        return budget is not None and budget.started and budget.left(budget.drain_deadline) <= 0

    @contextmanager
    def before_deadline(self, what: str) -> Iterator[None]:
        """Hold the drain deadline off while the block runs; AbandonedError if it has passed.

        The reconcile announces each write (and records each Event) in such a block, so every
        write the log announces was begun before the deadline's warning, and none after it.
        """
        with self._lock:
            if self._past_drain_deadline_locked():
                raise AbandonedError(what)
            yield

    def time_for_write(self, what: str, timeout: float) -> float:
        """The timeout for a write about to be sent: ``timeout``, cut to the drain deadline
        once stopping (a write begun before the stop is abandoned at its next one).
        AbandonedError if the deadline has passed."""
        with self._lock:
            if self._past_drain_deadline_locked():
                raise AbandonedError(what)
        budget = self._budget
        if budget is not None and budget.started:
            return max(0.001, min(timeout, budget.left(budget.drain_deadline)))
        return timeout

    # -- what the probes read -----------------------------------------------------------------

    def longest_running_sync(self) -> float:
        """Seconds the oldest in-flight sync has been running (0 when none): a wedge detector."""
        with self._lock:
            oldest = min(self._in_flight.values(), default=None)
        return 0.0 if oldest is None else time.monotonic() - oldest

    def started(self) -> int:
        """Worker threads run() started."""
        return len(self._threads)

    def alive(self) -> int:
        """Worker threads still running; fewer than started (before shutdown) means one died."""
        return sum(t.is_alive() for t in self._threads)
