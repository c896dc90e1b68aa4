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
(``runtime.shutdown.ShutdownBudget``). On stop the queue refuses new keys and the workers
finish what is queued and in flight. Past the drain deadline no key starts, and a sync still
in flight is abandoned at its next write: the reconcile is handed a ``runtime.context.Context``,
as a Go reconcile is handed ``ctx``, and asks it before each write (``AbandonedError`` once the
deadline has passed). The workers keep the keys in flight, for the shutdown's log and for the
liveness probe's wedge detector.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from client.errors import APIError
from informer.interfaces import HandlerRegistration
from informer.shared_informer import wait_for_cache_sync
from runtime.context import AbandonedError, Context
from runtime.shutdown import ShutdownBudget
from runtime.trace import TRACE_LOGGER
from runtime.writes import GoneError
from workqueue import RateLimitingQueue

if TYPE_CHECKING:
    from runtime.metrics.reconcile import ReconcileMetrics

__all__ = ["AbandonedError", "Context", "Reconciler", "Result", "Workers", "result_of"]

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


# The reconcile function: the context and a key in, a Result out (controller-runtime's
# ``reconcile.Reconciler``). A key is ``"namespace/name"`` for sample-controller's way, a
# ``runtime.reconcile.Request`` for controllers the Builder makes: anything the queue can hold.
Reconciler = Callable[[Context, Any], Result]


def result_of(sync: Callable[[], object]) -> Result:
    """Run a sync written sample-controller's way (it returns, or raises to be retried) and
    read its ``Result``: a 409 Conflict or an object gone meanwhile (``GoneError``) is a
    requeue, not an error (the cache was behind, and the event that catches it up enqueues
    the key again; controller-runtime users return ``Requeue: true`` for it); any other
    exception is an error, retried with backoff."""
    try:
        sync()
    except (APIError, GoneError) as err:
        if isinstance(err, GoneError) or err.code == 409:
            return Result(requeue=True, cause=str(err))
        return Result(error=err)
    except Exception as err:
        return Result(error=err)
    return Result()


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
        # called with (ctx, key) for every key taken off the queue
        self.reconcile = reconcile
        # threads are "<name>-worker-<n>"
        self.name = name
        self.log = log
        # reconcile counters and durations; None in unit tests
        self.metrics = metrics
        # key -> monotonic start, while a worker syncs it
        self._in_flight: dict[Hashable, float] = {}
        # Guards _in_flight, so that a key starts and the drain deadline passes in one order.
        self._lock = threading.Lock()
        # the drain deadline has passed: start nothing, write nothing
        self._abandoned = threading.Event()
        # what every reconcile is handed; run() gives it the budget that bounds its writes
        self.ctx = Context(None, self._abandoned)
        # started by run()
        self._threads: list[threading.Thread] = []

    # -- run: start, wait for the stop, drain ------------------------------------------------

    def run(
        self,
        workers: int,
        stop: threading.Event,
        budget: ShutdownBudget,
        synced: HandlerRegistration | None = None,
        cache_sync_timeout: float | None = None,
    ) -> None:
        """Wait for ``synced`` (anything with ``has_synced()``: the caches the reconcile
        reads), run ``workers`` threads until
        ``stop`` is set, then drain within ``budget``.

        controller-runtime's ``Controller.Start`` waits for its sources' caches the same way,
        up to ``CacheSyncTimeout`` (``cache_sync_timeout``; None: no limit): TimeoutError when
        they do not sync in time, and nothing started when stopped first. On stop, the queue
        refuses new keys and the workers finish what is queued and in flight, until the
        budget's drain deadline. Past it, no key is started, the syncs still in flight are
        abandoned (they make no further write), and ``run`` returns without waiting for them
        (the threads are daemons).
        """
        if synced is not None:
            self.log.info("waiting for informer caches to sync")
            if not wait_for_cache_sync(stop, synced, timeout=cache_sync_timeout):
                self.queue.shut_down()
                if stop.is_set():
                    return
                raise TimeoutError("failed to wait for caches to sync")
        self.ctx = Context(budget, self._abandoned)
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
            self._abandoned.set()
            return sorted(str(key) for key in self._in_flight)

    # -- one worker ---------------------------------------------------------------------------

    def run_worker(self) -> None:
        """Process keys until the queue shuts down and is empty, or the drain deadline passes."""
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Take one key, reconcile it, and finish it by the result; False when the worker
        should stop (the queue has shut down, or the drain deadline has passed)."""
        # (checked again below: get() may block past it)
        if self.ctx.done():
            return False
        key, shutdown = self.queue.get()
        if shutdown:
            return False
        start = time.monotonic()
        # Starting a key and passing the drain deadline exclude each other: after _abandon()
        # no key starts (client-go's queue hands out queued keys until it is empty, so the
        # refusal is here, and the queue keeps client-go's contract).
        with self._lock:
            refused = self.ctx.done()
            if not refused:
                self._in_flight[key] = start
                trace.info("dequeue", extra={"key": key})
        # done() tells the queue we are finished with this key, whatever happens, so that it
        # can be handed out again (it may have been re-added while we worked on it).
        try:
            if refused:
                return False
            try:
                result = self.reconcile(self.ctx, key)
            except Exception as err:
                # A reconcile should return its errors; one it raised is retried all the same
                # (controller-runtime recovers a reconciler's panic), and no worker dies of it.
                result = Result(error=err)
            return self._handle(key, start, result)
        finally:
            self.queue.done(key)

    def _handle(self, key: Hashable, start: float, result: Result) -> bool:
        """Forget or requeue the key by its result (controller-runtime's reconcileHandler);
        False when the drain deadline has cut the sync (the worker should stop)."""
        # in flight until its sync ended, not until it is logged
        with self._lock:
            self._in_flight.pop(key, None)
        err = result.error
        if err is not None:
            if isinstance(err, AbandonedError) or self.ctx.done():
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
