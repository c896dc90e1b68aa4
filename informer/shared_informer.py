"""SharedIndexInformer: one cache per resource, fed by a reflector, fanned out to many handlers.

client-go twin: ``tools/cache/shared_informer.go`` (``sharedIndexInformer``, ``sharedProcessor``,
``processorListener``) and ``controller.go`` (``processDeltas``, ``WaitForCacheSync``).

The flow of one change::

    Reflector --add/update/delete/replace--> FIFO --pop--> _handle_deltas
                                                           |-> Indexer (the cache listers read)
                                                           '-> each listener's buffer -> its thread
                                                               -> handler.on_add/on_update/on_delete

Threads (all named after the informer):

- ``reflector-<name>``: lists and watches, writing into the FIFO;
- the thread that calls ``run(stop)``: pops the FIFO, updates the indexer, and appends
  notifications to listener buffers. It never calls handlers, so a slow handler cannot stall the
  cache;
- ``listener-<name>-<n>``: one per handler, draining that handler's unbounded buffer in order.
  A slow handler only grows its own buffer; a handler that raises is logged (with the object's
  key) and keeps receiving.

Semantics kept from client-go:

- an object already in the cache arrives as an update; a Replaced or Sync whose resourceVersion
  equals the cached one is a *resync*, delivered only to handlers whose resync period is due;
- resync periods below 1 s are raised to 1 s; a handler registered after start with a period
  shorter than the informer's check period gets the check period;
- a handler registered after start first receives an add (``is_in_initial_list=True``) for every
  cached object; its registration reports ``has_synced()`` only once those are delivered;
- ``set_transform``, ``set_watch_error_handler`` and ``add_indexers`` must come before ``run``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from informer.delta_fifo import DeltaFIFO
from informer.fifo import Delta, DeltaType, FIFOClosedError, Queue, TransformFunc
from informer.lister import Lister
from informer.listwatch import ListerWatcher
from informer.metrics import NOOP_METRICS, InformerMetrics
from informer.real_fifo import RealFIFO
from informer.reflector import Reflector, WatchErrorHandler
from informer.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    meta_namespace_index_func,
    meta_namespace_key_func,
)

__all__ = [
    "MINIMUM_RESYNC_PERIOD",
    "FilteringResourceEventHandler",
    "ResourceEventHandler",
    "ResourceEventHandlerDetailedFuncs",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "wait_for_cache_sync",
]

log = logging.getLogger(__name__)

MINIMUM_RESYNC_PERIOD = 1.0  # seconds; shorter handler resync periods are raised to this
SYNCED_POLL_PERIOD = 0.1  # seconds between has_synced checks in wait_for_cache_sync
LISTENER_JOIN_TIMEOUT = 1.0  # seconds run() waits for each listener to finish its current call


# -- handlers --------------------------------------------------------------------------------------


class ResourceEventHandler(Protocol):
    """What an informer notifies (client-go ``ResourceEventHandler``).

    ``on_delete`` may receive a ``DeletedFinalStateUnknown`` instead of the object when the
    deletion was only noticed by a relist. Handlers must not mutate the objects they receive.
    """

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


@dataclass
class ResourceEventHandlerFuncs:
    """Adapts plain functions, any of them optional (client-go ``ResourceEventHandlerFuncs``).

    ``add_func`` takes only the object; use ``ResourceEventHandlerDetailedFuncs`` to also get
    ``is_in_initial_list``.
    """

    add_func: Callable[[Any], None] | None = None
    update_func: Callable[[Any, Any], None] | None = None
    delete_func: Callable[[Any], None] | None = None

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


@dataclass
class ResourceEventHandlerDetailedFuncs(ResourceEventHandlerFuncs):
    """Like ``ResourceEventHandlerFuncs`` but ``add_func(obj, is_in_initial_list)``
    (client-go ``ResourceEventHandlerDetailedFuncs``)."""

    add_func: Callable[[Any, bool], None] | None = None  # type: ignore[assignment]

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)


@dataclass
class FilteringResourceEventHandler:
    """Passes on only objects the filter accepts (client-go ``FilteringResourceEventHandler``).

    An update is turned into an add or a delete when the object enters or leaves the filter.
    """

    filter_func: Callable[[Any], bool]
    handler: ResourceEventHandler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        was, now = self.filter_func(old), self.filter_func(new)
        if was and now:
            self.handler.on_update(old, new)
        elif now:
            self.handler.on_add(new, False)
        elif was:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)


# -- listeners ------------------------------------------------------------------------------------

# Notifications are tuples, the cheapest thing to build on the hot path:
# (_ADD, obj, is_in_initial_list) | (_UPDATE, old, new) | (_DELETE, obj, None)
_ADD, _UPDATE, _DELETE = 0, 1, 2
_Notification = tuple[int, Any, Any]


class ResourceEventHandlerRegistration:
    """One handler's buffer, thread and resync schedule (client-go ``processorListener``).

    Returned by ``add_event_handler``; ``has_synced()`` says whether the handler has been given
    everything of the informer's initial list.
    """

    def __init__(
        self,
        handler: ResourceEventHandler,
        requested_resync_period: float,
        resync_period: float,
        upstream_has_synced: Callable[[], bool],
        clock: Callable[[], float],
        name: str,
    ) -> None:
        self.handler = handler  # receives the notifications, in order, on this listener's thread
        # what the caller asked for (clamped >= 1 s)
        self.requested_resync_period = requested_resync_period
        self.name = name  # the listener thread's name
        self._clock = clock  # monotonic seconds; injectable
        self._upstream_has_synced = upstream_has_synced  # the informer's own has_synced
        self._lock = threading.Lock()  # guards the fields below
        self._not_empty = threading.Condition(self._lock)  # signalled on add and on stop
        # unbounded: the informer never blocks on a handler
        self._buffer: deque[_Notification] = deque()
        self._pending_initial = 0  # initial-list adds queued or being handled, not yet finished
        self._stopped = False  # stop() was called: the thread exits after its current call
        self._resync_period = resync_period  # seconds between resyncs for this handler; 0 = never
        self._next_resync = clock() + resync_period  # when this handler is next due a resync
        self._thread: threading.Thread | None = None  # set by start()

    # -- the informer's side ----------------------------------------------------------------------

    def add_many(self, notifications: list[_Notification], initial: int) -> None:
        """Append a batch, ``initial`` of which are initial-list adds: one lock, one wake-up."""
        with self._lock:
            self._pending_initial += initial
            self._buffer.extend(notifications)
            self._not_empty.notify()

    def start(self) -> None:
        # Daemon: a handler stuck forever must not keep the process alive at exit; run() already
        # waits a bounded time for each listener on an orderly stop.
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._not_empty.notify_all()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def should_resync(self, now: float) -> bool:
        with self._lock:
            return self._resync_period > 0 and now >= self._next_resync

    def determine_next_resync(self, now: float) -> None:
        with self._lock:
            self._next_resync = now + self._resync_period

    def set_resync_period(self, period: float) -> None:
        with self._lock:
            self._resync_period = period

    @property
    def resync_period(self) -> float:
        with self._lock:
            return self._resync_period

    # -- the caller's side ------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """The informer has synced and this handler has handled every initial-list add."""
        if not self._upstream_has_synced():
            return False
        with self._lock:
            return self._pending_initial == 0

    def pending(self) -> int:
        """Notifications waiting in this handler's buffer (not counting the batch in hand)."""
        with self._lock:
            return len(self._buffer)

    # -- the listener thread ----------------------------------------------------------------------

    def _run(self) -> None:
        handler = self.handler
        while True:
            # Take everything buffered at once: one lock round per batch, not per notification.
            with self._lock:
                while not self._buffer and not self._stopped:
                    self._not_empty.wait()
                if self._stopped:
                    return
                batch, self._buffer = self._buffer, deque()
            for kind, a, b in batch:
                if self._stopped:  # a plain read: stop promptly even mid-batch
                    return
                try:
                    if kind == _ADD:
                        handler.on_add(a, b)
                    elif kind == _UPDATE:
                        handler.on_update(a, b)
                    else:
                        handler.on_delete(a)
                except Exception:  # one failing call must not kill the listener
                    log.exception(
                        "%s: event handler failed on %s of %s",
                        self.name,
                        _KIND_NAMES[kind],
                        _key_of(b if kind == _UPDATE else a),
                    )
                finally:
                    if kind == _ADD and b:
                        with self._lock:
                            self._pending_initial -= 1


_KIND_NAMES = {_ADD: "add", _UPDATE: "update", _DELETE: "delete"}


def _key_of(obj: Any) -> str:
    try:
        return meta_namespace_key_func(obj)
    except Exception:  # only for a log line
        return repr(obj)[:100]


class _SharedProcessor:
    """The set of listeners and who is due a resync (client-go ``sharedProcessor``)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()  # guards the fields below
        # listener -> whether it is due the resync in progress; insertion-ordered for determinism
        self._listeners: dict[ResourceEventHandlerRegistration, bool] = {}
        self._started = False  # listeners added from now on start their thread at once

    def add_listener(self, listener: ResourceEventHandlerRegistration) -> None:
        with self._lock:
            self._listeners[listener] = True
            if self._started:
                listener.start()

    def remove_listener(self, listener: ResourceEventHandlerRegistration) -> bool:
        with self._lock:
            if self._listeners.pop(listener, None) is None:
                return False
        listener.stop()
        return True

    def listeners(self) -> list[ResourceEventHandlerRegistration]:
        with self._lock:
            return list(self._listeners)

    def distribute_many(
        self, notifications: list[_Notification], syncs: list[bool], initial: int
    ) -> None:
        """Hand a batch to every listener; a listener not due a resync skips the sync entries.

        ``initial`` counts the initial-list adds in the batch (never sync entries).
        """
        has_sync = any(syncs)
        with self._lock:
            for listener, syncing in self._listeners.items():
                if syncing or not has_sync:
                    listener.add_many(notifications, initial)
                else:
                    listener.add_many(
                        [n for n, s in zip(notifications, syncs, strict=True) if not s], initial
                    )

    def start(self) -> None:
        with self._lock:
            self._started = True
            for listener in self._listeners:
                listener.start()

    def stop(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.stop()
        for listener in listeners:
            listener.join(LISTENER_JOIN_TIMEOUT)

    def should_resync(self) -> bool:
        """Mark which listeners are due; true if any is.

        client-go ``sharedProcessor.shouldResync``.
        """
        with self._lock:
            now = self._clock()
            due = False
            for listener in self._listeners:
                syncing = listener.should_resync(now)
                self._listeners[listener] = syncing
                if syncing:
                    due = True
                    listener.determine_next_resync(now)
            return due

    def resync_check_period_changed(self, check_period: float) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.set_resync_period(
                    _determine_resync_period(listener.requested_resync_period, check_period)
                )


def _determine_resync_period(desired: float, check: float) -> float:
    if desired == 0:
        return 0.0
    if check == 0:
        log.warning("resync period %.3gs requested, but the informer does not resync", desired)
        return 0.0
    return max(desired, check)


# -- the informer ----------------------------------------------------------------------------------


class SharedIndexInformer:
    """A cache of one resource plus change notifications to any number of handlers.

    client-go twin: ``sharedIndexInformer``. Differs: ``run`` processes the FIFO on the calling
    thread (no inner ``controller``), each listener is one thread with a ``deque`` instead of
    two goroutines and a ring buffer, and the cached objects are shared dicts.
    """

    def __init__(
        self,
        list_watch: ListerWatcher,
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc] | None = None,
        *,
        transform: TransformFunc | None = None,
        fifo: str = "real",
        name: str | None = None,
        use_watch_list: bool | None = None,
        metrics: InformerMetrics = NOOP_METRICS,
        clock: Callable[[], float] = time.monotonic,
        reflector_options: Mapping[str, Any] | None = None,
    ) -> None:
        if fifo not in ("real", "delta"):
            raise ValueError(f"fifo must be 'real' or 'delta', not {fifo!r}")
        self.list_watch = list_watch  # the reflector's source
        # for threads and logs
        self.name = name or str(getattr(list_watch, "resource", None) or "informer")
        self.fifo_kind = fifo  # which queue the reflector feeds: "real" (default) or "delta"
        # stream the initial state (WatchList); None: client-go's WatchListClient gate decides
        self.use_watch_list = use_watch_list
        self.metrics = metrics  # informer_* metrics for this informer
        self._clock = clock  # monotonic seconds; injectable for resync tests
        self._reflector_options = dict(reflector_options or {})  # extra Reflector kwargs (tests)
        all_indexers = {NAMESPACE_INDEX: meta_namespace_index_func}
        all_indexers.update(indexers or {})
        self._indexer = Indexer(meta_namespace_key_func, all_indexers)  # the cache
        self._processor = _SharedProcessor(clock)  # the handlers
        self._transform = transform  # applied before objects enter the FIFO (and so the cache)
        self._watch_error_handler: WatchErrorHandler | None = None  # passed to the reflector
        # Resync periods: the default for handlers that give none, and how often the reflector
        # asks whether any handler is due (the smallest handler period registered before start).
        self._default_event_handler_resync_period = _clamp_resync(resync_period)
        self._resync_check_period = self._default_event_handler_resync_period
        self._start_lock = threading.Lock()  # guards _started, _stopped and the two below
        self._started = False  # run() has begun: configuration is frozen
        # run() is stopping its listeners or has returned: no handler can be added
        self._stopped = False
        self._fifo: Queue | None = None  # created by run()
        self._reflector: Reflector | None = None  # created by run()
        # Held while a popped delta is applied and distributed, and while a late handler gets its
        # synthetic adds: a handler must never see an object twice or miss one in between.
        self._block_deltas = threading.Lock()
        self._listener_count = 0  # for unique listener thread names

    # -- configuration (before run) ---------------------------------------------------------------

    def set_transform(self, transform: TransformFunc | None) -> None:
        with self._start_lock:
            self._require_not_started("set_transform")
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler) -> None:
        with self._start_lock:
            self._require_not_started("set_watch_error_handler")
            self._watch_error_handler = handler

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        with self._start_lock:
            self._require_not_started("add_indexers")
            self._indexer.add_indexers(indexers)

    def _require_not_started(self, what: str) -> None:
        if self._started:
            raise RuntimeError(f"{self.name}: {what} must be called before the informer starts")

    # -- handlers ---------------------------------------------------------------------------------

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> ResourceEventHandlerRegistration:
        """Register a handler; returns its registration.

        client-go ``AddEventHandlerWithResyncPeriod``.

        After start, the handler first receives an add for every cached object.
        """
        with self._start_lock:
            if self._stopped:
                raise RuntimeError(f"{self.name}: handler not added, the informer has stopped")
            if resync_period is None:
                resync_period = self._default_event_handler_resync_period
            resync_period = _clamp_resync(resync_period)
            if resync_period > 0 and resync_period < self._resync_check_period:
                if self._started:
                    log.warning(
                        "%s: resync period %.3gs is below the informer's check period; using %.3gs",
                        self.name,
                        resync_period,
                        self._resync_check_period,
                    )
                    resync_period = self._resync_check_period
                else:
                    self._resync_check_period = resync_period
                    self._processor.resync_check_period_changed(resync_period)
            self._listener_count += 1
            listener = ResourceEventHandlerRegistration(
                handler,
                resync_period,
                _determine_resync_period(resync_period, self._resync_check_period),
                self.has_synced,
                self._clock,
                f"listener-{self.name}-{self._listener_count}",
            )
            if not self._started:
                self._processor.add_listener(listener)
                return listener
            with self._block_deltas:
                self._processor.add_listener(listener)
                cached = self._indexer.list()
                listener.add_many([(_ADD, obj, True) for obj in cached], len(cached))
            return listener

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None:
        """Stop delivering to a handler; its thread ends after the call in progress."""
        with self._block_deltas:
            self._processor.remove_listener(registration)

    # -- running ----------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Start the reflector and the listeners, then process changes until ``stop`` is set."""
        with self._start_lock:
            if self._started:
                raise RuntimeError(f"{self.name}: the informer can run only once")
            if self._stopped:
                return
            self._started = True
            metrics = self.metrics
            report = metrics.set_queued_items if metrics is not NOOP_METRICS else None
            if self.fifo_kind == "real":
                fifo: Queue = RealFIFO(
                    known_objects=self._indexer, transform=self._transform, report_length=report
                )
            else:
                fifo = DeltaFIFO(
                    known_objects=self._indexer, transform=self._transform, report_length=report
                )
            self._fifo = fifo
            options = dict(self._reflector_options)
            options.setdefault("use_watch_list", self.use_watch_list)
            self._reflector = Reflector(
                self.list_watch,
                fifo,
                name=f"reflector-{self.name}",
                resync_period=self._resync_check_period,
                should_resync=self._processor.should_resync,
                watch_error_handler=self._watch_error_handler,
                metrics=metrics,
                **options,
            )
        reflector_thread = threading.Thread(
            target=self._run_reflector, args=(stop,), name=f"reflector-{self.name}", daemon=True
        )
        self._processor.start()
        reflector_thread.start()
        try:
            self._process_loop(stop)
        finally:
            reflector_thread.join(2.0)
            # first: a handler added from now on is refused, not left running
            with self._start_lock:
                self._stopped = True
            self._processor.stop()

    def relist(self) -> None:
        """List again now, through the list/watch's current selectors (no client-go twin:
        ``Reflector.request_relist``); nothing before the informer runs (its first list reads
        them anyway)."""
        with self._start_lock:
            reflector = self._reflector
        if reflector is not None:
            reflector.request_relist()

    def _run_reflector(self, stop: threading.Event) -> None:
        assert self._reflector is not None and self._fifo is not None
        try:
            self._reflector.run(stop)
        finally:
            # Wakes the process loop out of pop() (client-go closes the queue on stop the same way).
            self._fifo.close()

    def _process_loop(self, stop: threading.Event) -> None:
        fifo = self._fifo
        assert fifo is not None
        # RealFIFO can hand over everything waiting at once; DeltaFIFO pops one key at a time.
        pop_batch = getattr(fifo, "pop_batch", None)
        handle_batch, handle = self._handle_batch, self._handle_deltas
        while not stop.is_set():
            try:
                if pop_batch is not None:
                    pop_batch(handle_batch)
                else:
                    fifo.pop(handle)
            except FIFOClosedError:
                return
            except Exception:  # a bad delta must not stop the informer
                log.exception("%s: failed to process a delta", self.name)

    def _handle_deltas(self, deltas: list[Delta], is_in_initial_list: bool) -> None:
        """Apply one popped entry's deltas (DeltaFIFO: all of one key's) to the cache and notify."""
        self._handle_batch(deltas, len(deltas) if is_in_initial_list else 0)

    def _handle_batch(self, deltas: list[Delta], initial_count: int) -> None:
        """Apply popped deltas to the cache, then notify every listener.

        client-go ``processDeltas``.

        Runs on the informer's thread under the FIFO's lock. The first ``initial_count`` deltas
        belong to the initial list. An object already cached makes an update, which is a resync
        when the delta is a Sync, or a Replaced with an unchanged resourceVersion. A delta the
        cache rejects is logged and skipped alone, as client-go's batch processing skips only
        the failed ones: the rest of the batch still reaches the cache and the handlers.
        """
        started = time.perf_counter()
        indexer = self._indexer
        notifications: list[_Notification] = []
        syncs: list[bool] = []
        initial_adds = 0
        deleted, sync, replaced = DeltaType.DELETED, DeltaType.SYNC, DeltaType.REPLACED
        with self._block_deltas:
            for i, (delta_type, obj) in enumerate(deltas):
                try:
                    if delta_type is deleted:
                        indexer.delete(obj)
                        notifications.append((_DELETE, obj, None))
                        syncs.append(False)
                        continue
                    old = indexer.add_or_update(obj)
                except Exception:  # e.g. an index function rejecting the object
                    log.exception(
                        "%s: cannot apply %s of %s to the cache; skipped",
                        self.name,
                        delta_type,
                        _key_of(obj),
                    )
                    continue
                if old is not None:
                    notifications.append((_UPDATE, old, obj))
                    syncs.append(
                        delta_type is sync
                        or (
                            delta_type is replaced
                            and _resource_version(old) == _resource_version(obj)
                        )
                    )
                else:
                    initial = i < initial_count
                    initial_adds += initial
                    notifications.append((_ADD, obj, initial))
                    syncs.append(False)
            self._processor.distribute_many(notifications, syncs, initial_adds)
        if self.metrics is not NOOP_METRICS:
            last = deltas[-1].object
            if not isinstance(last, DeletedFinalStateUnknown):
                self.metrics.set_store_resource_version(_resource_version(last))
            self.metrics.observe_processing_latency(time.perf_counter() - started)

    # -- reading ----------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the first full list has been applied to the cache."""
        fifo = self._fifo
        return fifo is not None and fifo.has_synced()

    def get_store(self) -> Indexer:
        return self._indexer

    def get_indexer(self) -> Indexer:
        return self._indexer

    def lister(self) -> Lister:
        """A Lister reading this informer's cache."""
        return Lister(
            self._indexer,
            resource=str(getattr(self.list_watch, "resource", "") or self.name),
            group=str(getattr(self.list_watch, "group", "") or ""),
        )

    def last_sync_resource_version(self) -> str:
        reflector = self._reflector
        return reflector.last_sync_resource_version() if reflector is not None else ""

    def last_sync_error(self) -> BaseException | None:
        """Why the cache could not be brought up to date by the last list or watch, or None
        when it was (``Reflector.last_sync_error``; no client-go twin). ``has_synced`` stays
        true after the first sync, as client-go's; a readiness check that should fail while the
        cache is stale (its resource not served, say) asks this too."""
        with self._start_lock:
            reflector = self._reflector
        return reflector.last_sync_error() if reflector is not None else None

    def is_stopped(self) -> bool:
        with self._start_lock:
            return self._stopped

    def handler_registrations(self) -> list[ResourceEventHandlerRegistration]:
        return self._processor.listeners()


def _clamp_resync(period: float) -> float:
    if period <= 0:
        return 0.0
    if period < MINIMUM_RESYNC_PERIOD:
        log.warning("resync period %.3gs is too small; using %.3gs", period, MINIMUM_RESYNC_PERIOD)
        return MINIMUM_RESYNC_PERIOD
    return period


def _resource_version(obj: Any) -> str:
    try:
        return obj["metadata"].get("resourceVersion") or ""
    except (KeyError, TypeError, AttributeError):
        return ""


class _HasSynced(Protocol):
    def has_synced(self) -> bool: ...


def wait_for_cache_sync(
    stop: threading.Event, *synced: _HasSynced, timeout: float | None = None
) -> bool:
    """Wait until every informer or registration has synced (client-go ``WaitForCacheSync``).

    Polls every 100 ms. Returns False if ``stop`` is set or ``timeout`` passes first.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if all(s.has_synced() for s in synced):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        wait = SYNCED_POLL_PERIOD
        if deadline is not None:
            wait = max(0.0, min(wait, deadline - time.monotonic()))
        if stop.wait(wait):
            return False
