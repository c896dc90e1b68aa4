"""The controller a Builder makes: sources onto a queue of Requests, workers calling the reconciler.

controller-runtime twin: ``pkg/internal/controller/controller.go`` (``Controller``: its
``Start``, which starts the sources, waits for their caches up to ``CacheSyncTimeout`` and runs
``MaxConcurrentReconciles`` workers; ``reconcileHandler``, which reads the ``Result``). The
worker loop itself is ``runtime.worker.Workers``, shared with the sample-controller way; what
this class adds is what a Builder-made controller needs around it:

- the sources (``runtime.source.Kind``), registered on the informers when it is made, and its
  ``has_synced`` for ``/readyz`` (the manager waits for every runnable that has one) and its
  ``workers`` for ``/healthz``;
- sharding, for any such controller: before the reconciler is called, the ``for_`` object is
  looked up in its informer and held through the manager's gate for the whole reconcile
  (``runtime.sharding.gate``); an object of a bucket this replica does not act on is left
  alone (its request forgotten), as the Foo controller's sync does.

Deliberate differences: the sources are registered when the controller is made, not when it
starts, so that their handlers are in place before the informers list (upstream's late
registration replays the cache to them instead); there is no ``Watch`` after the start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from informer.interfaces import HandlerRegistration
from informer.shared_informer import SharedIndexInformer
from runtime.context import Context
from runtime.reconcile import Reconciler, Request
from runtime.sharding.gate import EVERY_OBJECT, Gate
from runtime.shutdown import ShutdownBudget
from runtime.source import Kind
from runtime.worker import Result, Workers
from workqueue import RateLimitingQueue

if TYPE_CHECKING:
    # prometheus_client is loaded only when metrics are collected (runtime.manager.Metrics)
    from runtime.metrics.reconcile import ReconcileMetrics

__all__ = ["Controller"]


class Controller:
    """One controller: its queue, sources and workers; a runnable of the manager
    (controller-runtime's internal ``controller.Controller``)."""

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        queue: RateLimitingQueue,
        sources: Sequence[Kind],
        max_concurrent_reconciles: int,
        for_informer: SharedIndexInformer | None = None,
        gate: Gate = EVERY_OBJECT,
        metrics: ReconcileMetrics | None = None,
        cache_sync_timeout: float | None = None,
    ) -> None:
        self.name = name
        self.reconciler = reconciler
        # Requests, merged while they wait; one worker at a time per request
        self.queue = queue
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.cache_sync_timeout = cache_sync_timeout
        # sharding: the for_ object, held through the gate while it is reconciled
        self._for_indexer = for_informer.get_indexer() if for_informer is not None else None
        self._gate = gate
        self.log = logging.getLogger(f"controller.{name}")
        # what /healthz watches: threads "<name>-worker-<n>"
        self.workers = Workers(queue, self.reconcile_handler, name, self.log, metrics)
        self._registrations: list[HandlerRegistration] = [s.start(queue) for s in sources]

    def reconcile_handler(self, ctx: Context, request: Request) -> Result:
        """Call the reconciler for ``request``, unless sharding gives its object to another
        replica (upstream's ``reconcileHandler``, with the gate of ``runtime.sharding``)."""
        obj = None
        if self._for_indexer is not None and self._gate is not EVERY_OBJECT:
            obj = self._for_indexer.get_by_key(str(request))
        if obj is None:
            # not sharded, or the object is gone: the reconciler finds out and cleans up
            return self.reconciler.reconcile(ctx, request)
        with self._gate.acting_on(obj) as mine:
            if not mine:
                return Result()
            return self.reconciler.reconcile(ctx, request)

    # -- the manager's runnable ----------------------------------------------------------------

    def start(self, stop: threading.Event, budget: ShutdownBudget) -> None:
        """Wait for the sources' caches, run the workers until ``stop``, drain within
        ``budget`` (upstream ``Controller.Start``)."""
        self.log.info("starting controller", extra={"controller": self.name})
        self.workers.run(
            self.max_concurrent_reconciles,
            stop,
            budget,
            synced=self,
            cache_sync_timeout=self.cache_sync_timeout,
        )

    def has_synced(self) -> bool:
        """Every source's handler has seen its informer's first list."""
        return all(r.has_synced() for r in self._registrations)
