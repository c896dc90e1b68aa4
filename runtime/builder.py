"""The Builder: a controller from what it reconciles, what it owns and what else it watches.

controller-runtime twin: ``pkg/builder`` (``ControllerManagedBy(mgr).Named(...).For(...)
.Owns(...).Watches(...).WithEventFilter(...).WithOptions(...).Complete(r)``). It turns a few
declarations into the pieces a sample-controller-style controller wires by hand:

- ``for_(gvr)``: the informer of the reconciled kind (sharded by ``shardSelector``), whose
  events enqueue the object itself (``EnqueueRequestForObject``);
- ``owns(gvr)``: the informer of a kind it makes (sharded by bucket label), whose events
  enqueue the object's controlling owner of the ``for_`` kind (``EnqueueRequestForOwner``);
- ``watches(gvr, handler)``: any other kind, through the handler given;
- a rate-limited queue of ``Request``s (client-go's default controller rate limiter, as
  controller-runtime's), the reconcile metrics and workqueue metrics under the controller's
  name, ``max_concurrent_reconciles`` workers (default: the process's ``--workers``);
- the controller (``runtime.controller.Controller``) added to the manager, which gives it
  ``/readyz`` (its sources synced), ``/healthz`` (its workers alive), leader election or
  sharding, and the shutdown budget. Sharded, the manager enqueues the ``for_`` objects of
  buckets taken over, the controller reconciles only the objects of buckets it acts on, and
  the manager's Client labels what is created for them (``runtime.client``).

Deliberate differences:

- kinds are named by GVR; the ``for_`` kind's name (for the owner references ``owns`` matches,
  and the default controller name, the kind lowercased) comes from discovery when the
  controller is completed (``runtime.restmapper``);
- ``for_`` is required whenever ``owns`` is used, as upstream, and ``named`` is required
  without ``for_``; no ``WatchesRawSource``, no ``WatchesMetadata``, no webhooks.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runtime.cache import DEFAULT_SYNC_TIMEOUT, GVR
from runtime.controller import Controller
from runtime.handler import EnqueueRequestForObject, EnqueueRequestForOwner, EventHandler
from runtime.predicate import Predicate
from runtime.reconcile import Reconciler, request_for
from runtime.source import Kind
from workqueue import RateLimiter, default_controller_rate_limiter

if TYPE_CHECKING:
    from runtime.manager import Manager

__all__ = ["Builder", "controller_managed_by"]

# the names of the controllers each manager has, which must differ: they label the metrics
_names: weakref.WeakKeyDictionary[Manager, set[str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _Watch:
    gvr: GVR
    predicates: tuple[Predicate, ...]
    handler: EventHandler | None = None
    # owns(): only the controlling owner is enqueued (upstream's OnlyControllerOwner)
    only_controller: bool = True


class Builder:
    """Declares a controller, then makes it and adds it to the manager (controller-runtime
    ``builder.Builder``).
    Each method returns the builder, so that the declarations chain."""

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._name = ""
        self._for: _Watch | None = None
        self._for_twice = False
        self._owns: list[_Watch] = []
        self._watches: list[_Watch] = []
        self._global_predicates: list[Predicate] = []
        self._max_concurrent_reconciles: int | None = None
        self._cache_sync_timeout: float | None = None
        self._rate_limiter: RateLimiter | None = None

    def named(self, name: str) -> Builder:
        """The controller's name: its metrics', its queue's and its worker threads' (default:
        the ``for_`` kind, lowercased)."""
        self._name = name
        return self

    def for_(self, gvr: GVR, *predicates: Predicate) -> Builder:
        """The kind this controller reconciles: each of its events (that the predicates pass)
        enqueues the object's own request. Once only."""
        if self._for is not None:
            self._for_twice = True
        self._for = _Watch(gvr, predicates)
        return self

    def owns(self, gvr: GVR, *predicates: Predicate, match_every_owner: bool = False) -> Builder:
        """A kind this controller makes: each event enqueues the object's controlling owner
        of the ``for_`` kind (every owner of that kind with ``match_every_owner``)."""
        self._owns.append(_Watch(gvr, predicates, only_controller=not match_every_owner))
        return self

    def watches(self, gvr: GVR, handler: EventHandler, *predicates: Predicate) -> Builder:
        """Any other kind: ``handler`` says which requests each event enqueues."""
        self._watches.append(_Watch(gvr, predicates, handler))
        return self

    def with_event_filter(self, predicate: Predicate) -> Builder:
        """A predicate every event of every source must pass, before its own."""
        self._global_predicates.append(predicate)
        return self

    def with_options(
        self,
        max_concurrent_reconciles: int | None = None,
        cache_sync_timeout: float | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> Builder:
        """``controller.Options``: workers (default ``--workers``), how long to wait for the
        caches at start (default 2 minutes), the queue's rate limiter (default client-go's
        ``DefaultControllerRateLimiter``)."""
        if max_concurrent_reconciles is not None:
            if max_concurrent_reconciles < 1:
                raise ValueError("max_concurrent_reconciles must be at least 1")
            self._max_concurrent_reconciles = max_concurrent_reconciles
        if cache_sync_timeout is not None:
            self._cache_sync_timeout = cache_sync_timeout
        if rate_limiter is not None:
            self._rate_limiter = rate_limiter
        return self

    def complete(self, reconciler: Reconciler) -> Controller:
        """Make the controller and add it to the manager (``Complete``; ``Build`` is the same
        here and returns the controller too). ``ValueError`` for what upstream refuses."""
        return self.build(reconciler)

    def build(self, reconciler: Reconciler) -> Controller:
        """See ``complete``."""
        if reconciler is None:
            raise ValueError("must provide a non-nil Reconciler")
        if self._for_twice:
            raise ValueError(
                "For(...) should only be called once, could not assign multiple objects for "
                "reconciliation"
            )
        if self._owns and self._for is None:
            raise ValueError("Owns() can only be used together with For()")
        manager = self._manager
        cache, client = manager.get_cache(), manager.get_client()
        mapper = manager.get_rest_mapper()
        name = self._name
        for_kind = None
        if self._for is not None:
            for_kind = mapper.mapping(self._for.gvr)
            name = name or for_kind.kind.lower()
        if not name:
            raise ValueError("one of For() or Named() must be called")
        taken = _names.setdefault(manager, set())
        if name in taken:
            raise ValueError(
                f"controller with name {name} already exists. Controller names must be unique "
                "to avoid multiple controllers reporting the same metric"
            )

        globals_ = tuple(self._global_predicates)
        sources: list[Kind] = []
        for_informer = None
        if self._for is not None and for_kind is not None:
            for_informer = cache.informer_for(self._for.gvr, "primary")
            sources.append(
                Kind(for_informer, EnqueueRequestForObject(), globals_ + self._for.predicates)
            )
            group = self._for.gvr[0]
            for owned in self._owns:
                handler = EnqueueRequestForOwner(
                    group, for_kind.kind, owned.only_controller, for_kind.namespaced
                )
                informer = cache.informer_for(owned.gvr, "owned")
                sources.append(Kind(informer, handler, globals_ + owned.predicates))
            # sharded: what this replica creates for these objects carries their bucket label
            client.shard_owned_by(group, for_kind.kind)
        for watch in self._watches:
            assert watch.handler is not None
            informer = cache.informer_for(watch.gvr)
            sources.append(Kind(informer, watch.handler, globals_ + watch.predicates))

        limiter = self._rate_limiter or default_controller_rate_limiter()
        queue = manager.new_queue(name, limiter)
        controller = Controller(
            name,
            reconciler,
            queue,
            sources,
            self._max_concurrent_reconciles or manager.options.workers,
            for_informer=for_informer,
            gate=manager.gate,
            metrics=manager.reconcile_metrics(name),
            cache_sync_timeout=self._cache_sync_timeout or DEFAULT_SYNC_TIMEOUT,
        )
        if for_informer is not None:
            # sharded: the objects of buckets taken over are reconciled (their events may have
            # come and gone while another replica acted on them)
            manager.on_buckets_taken(for_informer, lambda obj: queue.add(request_for(obj)))
        taken.add(name)
        manager.add(controller)
        return controller


def controller_managed_by(manager: Manager) -> Builder:
    """A Builder of a controller run by ``manager`` (``builder.ControllerManagedBy``)."""
    return Builder(manager)
