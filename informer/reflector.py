"""Reflector: keeps a store in step with the API server by listing, then watching.

client-go twin: ``tools/cache/reflector.go``. What it borrows lives where upstream keeps it: paged
lists in ``client/pager.py`` (``tools/pager``), the backoff in ``client/wait.py``
(``wait.ExponentialBackoffManager``), the error predicates in ``client/errors.py``
(``apimachinery/pkg/api/errors``).

The loop, as upstream:

1. **List** the resource and ``replace`` the store with the result. The first list asks for
   ``resourceVersion=0`` (served from the API server's watch cache) through the pager with pages of
   500. Paging is switched off when listing at a specific resourceVersion (so the watch cache can
   serve it), and kept on for later lists if the first list came back paged (no watch cache).
   When the server answers 410 Expired (or "too large resource version"), the list is retried at
   once with ``resourceVersion=""``, a consistent read of the latest state.
2. **Watch** from the list's resourceVersion with ``allowWatchBookmarks=true`` and a
   ``timeoutSeconds`` random in [5 min, 10 min) that spreads reconnections. Every event moves
   ``last_sync_resource_version``; BOOKMARK events do only that. When the server ends the watch
   normally, or the connection drops, watch again from there: no relist is needed.
3. An ERROR event or an error answer ends the cycle: the reflector backs off and lists again
   (step 1). The exceptions are 429 Too Many Requests and "connection refused", which only delay
   the next watch (honouring Retry-After): the server is busy or restarting, and the data we hold
   is still good. Back-off is 800 ms doubling to a 30 s cap, each delay stretched by up to 100%
   jitter, reset after 2 minutes without needing one.

What Python clients usually get wrong and this one does not:

- a **stalled watch** (no bytes, no FIN, e.g. a load balancer dropped the flow) is torn down: every
  read has a deadline a little past the watch's own ``timeoutSeconds``, and hitting it ends the
  watch like a dropped connection;
- **stop is prompt**: a helper thread closes the open watch the moment the stop event is set, and
  list calls are abandoned rather than waited for, so ``run`` returns within a second.

**WatchList** (streaming lists, KEP-3157) is on by default, as in client-go 1.35+: the reflector's
``use_watch_list`` defaults to client-go's ``WatchListClient`` gate (``client/features.py``), which
``KUBE_FEATURE_WatchListClient=false`` turns off; the controller's ``--watch-list=false`` passes
False. As reflector.go's ``watchList``, instead of step 1 the reflector opens a watch with
``sendInitialEvents=true``, ``resourceVersionMatch=NotOlderThan``, ``allowWatchBookmarks=true``
and the last synced resourceVersion (``""`` at the start: a consistent read of the latest state).
The server streams an ADDED per object, then a BOOKMARK annotated
``k8s.io/initial-events-end: "true"``. Until that bookmark the events go to a **temporary store**,
which applies the real store's transform as client-go's does with a ``TransformingStore`` (so the
streamed state waits without managedFields, as a lazily decoded list would); at the bookmark the
real store is ``replace``d with its contents in one call, told they are transformed already, and
the same watch carries on as step 2. So the informer's ``has_synced`` comes with the bookmark,
and no consumer ever sees a half-streamed state. While streaming:

- 429 or "connection refused": back off and stream again; Expired or "too large resource version":
  stream again from ``""`` (both as upstream's ``isErrorRetriableWithSideEffectsFn``);
- the watch ends or drops before the bookmark: stream again into a fresh temporary store, after a
  back-off step (upstream streams again at once); a watch that ends within a second without an
  event is a VeryShortWatchError, which falls back;
- any other error, e.g. v1.24's 422 Invalid (``resourceVersionMatch`` is forbidden for watch, the
  server predates WatchList) or a 403: **fall back** to list+watch for this cycle, as
  ``ListAndWatchWithContext`` does ("making progress is better than deadlocking").

Where this reflector differs, and why:

- **A server that ignores** ``sendInitialEvents`` (it streams the objects, or nothing, and never
  the bookmark): client-go only logs a warning each 10 s without an event
  (``initialEventsEndBookmarkTicker``) and keeps waiting, which no kube-apiserver makes it do (an
  old one refuses with 422, as above) but a proxy or a fake server can. Here the same 10 s
  (``watch_list_bookmark_timeout``) of quiet before the bookmark ends the attempt and the reflector
  falls back; the watch's own read deadline stays the long one of step 2.
- **It remembers** a server that ignored WatchList, or refused it with 400/422, and lists from
  then on; client-go tries WatchList again at every relist (one wasted request on an old server,
  one whole wasted stream on an ignoring one).

**A resource the server does not serve** (its CRD is not installed, or was deleted): every list
and watch gets 404, and the loop above retries with its backoff. The default watch error handler
says so in words a user can act on, once while it lasts: ``failed to list
samplecontroller.k8s.io/v1alpha1 foos: the server does not serve this resource (404); is its
CustomResourceDefinition installed?`` (the repeats at debug level; once a list succeeds again,
the next failure is reported again). client-go prints ``Failed to watch ... the server could not
find the requested resource`` through ``HandleError`` each time, rate-limited only to one per
millisecond.

**Sync state** for health checks: ``last_sync_error()`` is the error of the last cycle that
failed to bring the store up to date (a list, a WatchList stream, or a watch refused with 404),
and None once a list or stream has succeeded. client-go keeps no such state (``HasSynced`` stays
true after the first sync, and a process's readiness does not look at its informers); here a
process can report not ready while its cache cannot be refreshed. A watch that only ends (410
Expired, a dropped connection, 429) does not count: the data held is still good.

Deliberate differences from client-go: errors that end a watch (Expired, other ERROR events, a
watch that closed at once) are raised from ``list_and_watch`` so the watch error handler sees them
(upstream logs them and returns nil); the relist that follows is the same.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from client.errors import (
    APIError,
    TransportError,
    api_error_from_status,
    is_connection_refused,
    is_expired_error,
    is_not_found,
    is_too_large_resource_version_error,
    is_too_many_requests,
)
from client.features import WATCH_LIST_CLIENT, feature_gates
from client.objects import Object
from client.pager import DEFAULT_PAGE_SIZE, ListPager
from client.wait import ExponentialBackoff
from client.watch import Watch
from informer.listwatch import ListerWatcher, watch_read_timeout
from informer.metrics import NOOP_METRICS, InformerMetrics
from informer.store import Indexer

__all__ = [
    "DEFAULT_MIN_WATCH_TIMEOUT",
    "DEFAULT_PAGE_SIZE",
    "INITIAL_EVENTS_ANNOTATION",
    "Reflector",
    "ReflectorStore",
    "VeryShortWatchError",
    "WatchErrorHandler",
    "default_watch_error_handler",
    "not_served_message",
]

log = logging.getLogger(__name__)

DEFAULT_MIN_WATCH_TIMEOUT = 300.0  # watch timeoutSeconds is random in [min, 2*min)
# marks WatchList's end-of-initial-state bookmark
INITIAL_EVENTS_ANNOTATION = "k8s.io/initial-events-end"


class ReflectorStore(Protocol):
    """Where the reflector writes: a FIFO, or a plain ``Indexer`` (client-go ``ReflectorStore``)."""

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, objects: Iterable[Any], resource_version: str) -> None: ...

    def resync(self) -> None: ...


@runtime_checkable
class TransformingStore(ReflectorStore, Protocol):
    """A store that transforms what it takes (client-go ``TransformingStore``): WatchList's
    temporary store applies the same transform as objects stream in, so that they are held
    transformed until the bookmark, and then hands them over as ``transformed``."""

    def transformer(self) -> Callable[[Any], Any] | None: ...

    def replace(
        self, objects: Iterable[Any], resource_version: str, *, transformed: bool = False
    ) -> None: ...


WatchErrorHandler = Callable[["Reflector", BaseException], None]
"""Called with each error that ends a list-and-watch cycle, before the back-off (client-go
``WatchErrorHandler``). It must return quickly."""


class VeryShortWatchError(Exception):
    """The watch closed within a second without a single event: the server is unwell
    (client-go's reflector returns a "very short watch" error for the same case)."""


class _Stopped(Exception):
    """Internal: the stop event was set while a call was in flight."""


class _Relist(Exception):
    """Internal: ``request_relist`` asked for a list now (the selector changed)."""


class _WatchListIgnored(Exception):
    """Internal: the server answered a WatchList request like a plain watch."""


def _is_watch_error_retriable(err: BaseException) -> bool:
    """Errors after which watching again is enough (client-go ``isWatchErrorRetriable``)."""
    return is_too_many_requests(err) or (
        isinstance(err, TransportError) and is_connection_refused(err)
    )


def default_watch_error_handler(reflector: Reflector, err: BaseException) -> None:
    """Log by severity (client-go ``DefaultWatchErrorHandler``).

    A resource that is not served (404) is named, with the likely fix, once while it lasts:
    the reflector calls its handler before it records ``err``, so ``last_sync_error()`` is the
    previous failure here, None when the last cycle synced.
    """
    if is_expired_error(err):
        log.info("%s: watch closed with: %s", reflector.name, err)
    elif is_not_found(err):
        message = not_served_message(reflector)
        previous = reflector.last_sync_error()
        if previous is not None and is_not_found(previous):
            log.debug("%s: %s (still)", reflector.name, message)
        else:
            log.warning("%s: %s", reflector.name, message)
    else:
        log.warning("%s: failed to list/watch: %s", reflector.name, err)


def not_served_message(reflector: Reflector) -> str:
    """``failed to list samplecontroller.k8s.io/v1alpha1 foos: the server does not serve this
    resource (404); is its CustomResourceDefinition installed?``"""
    return (
        f"failed to {reflector.phase()} {reflector.resource_description()}: the server does not "
        "serve this resource (404); is its CustomResourceDefinition installed?"
    )


# -- the reflector -----------------------------------------------------------------------------


class Reflector:
    """Lists and watches one resource into a store until stopped (client-go ``Reflector``).

    Differs: threads and a ``threading.Event`` for goroutines and ``stopCh``; a read deadline
    on every watch; errors that end a watch reach the watch error handler; WatchList gives up
    on a server that ignores it, and remembers one that refused it (module docstring).

    ``use_watch_list``: None (the default) asks client-go's ``WatchListClient`` gate, on unless
    ``KUBE_FEATURE_WatchListClient`` is false; True or False decides.

    ``run(stop)`` blocks until ``stop`` is set; run it on its own thread. The store is usually the
    informer's FIFO, but any object with ``add``/``update``/``delete``/``replace``/``resync`` works,
    e.g. a plain ``Indexer``.
    """

    def __init__(
        self,
        list_watch: ListerWatcher,
        store: ReflectorStore,
        *,
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        page_size: int | None = None,
        use_watch_list: bool | None = None,
        min_watch_timeout: float = DEFAULT_MIN_WATCH_TIMEOUT,
        watch_stall_timeout: Callable[[float], float] = watch_read_timeout,
        watch_list_bookmark_timeout: float = 10.0,
        backoff: ExponentialBackoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        watch_error_handler: WatchErrorHandler | None = None,
        metrics: InformerMetrics = NOOP_METRICS,
    ) -> None:
        self.name = name  # for logs and thread names
        self.list_watch = list_watch  # the source
        self.store = store  # the destination
        self.resync_period = resync_period  # seconds between store.resync() calls; 0 = never
        self.should_resync = should_resync  # consulted at each resync tick; None means always
        self.page_size = page_size  # client-go WatchListPageSize: forces this page size when set
        if use_watch_list is None:
            # client-go NewReflectorWithOptions: the WatchListClient gate decides.
            use_watch_list = feature_gates().enabled(WATCH_LIST_CLIENT)
        self.use_watch_list = use_watch_list  # stream the initial state before list+watch
        self.min_watch_timeout = min_watch_timeout  # watch timeoutSeconds in [min, 2*min)
        # timeoutSeconds -> read deadline (stall guard)
        self.watch_stall_timeout = watch_stall_timeout
        # Seconds without an event before the initial-events-end bookmark after which the server
        # counts as ignoring WatchList (client-go warns after the same 10 s).
        self.watch_list_bookmark_timeout = watch_list_bookmark_timeout
        # between failed cycles
        self.backoff = backoff or ExponentialBackoff(clock=clock, rand=rand)
        self.watch_error_handler: WatchErrorHandler = (
            watch_error_handler or default_watch_error_handler
        )
        self.metrics = metrics  # list/watch counters
        self._clock = clock  # monotonic seconds; injectable for tests
        self._rand = rand  # uniform [0, 1) for the watch timeout; injectable for tests

        self._rv_lock = threading.Lock()  # guards the three fields below
        self._last_sync_resource_version = ""  # RV of the last list or event applied to the store
        self._rv_unavailable = False  # the last list/watch at that RV got Expired / too large
        # the RV="0" list came back paged: the server has no watch cache
        self._paginated_result = False

        self._sync_lock = threading.Lock()  # guards the two fields below
        # why the store could not be brought up to date; None once a list or stream succeeded
        self._sync_error: BaseException | None = None
        self._listing = False  # the cycle has not yet listed (or streamed) into the store

        self._watch_list_supported = True  # cleared once the server rejects or ignores WatchList
        self._listed_once = False  # a list has completed before (the next one is a relist)

        self._stream_lock = threading.Lock()  # guards _stream and _stopping
        # the open watch, closed by the helper thread on stop
        self._stream: _OpenWatch | None = None
        # set by the helper thread once stop fired; no new stream may stay open
        self._stopping = False
        self._pending_calls: set[threading.Event] = set()  # abandonable calls to release on stop
        # request_relist() was called: the watch ends and the next cycle lists (guarded by
        # _stream_lock)
        self._relist_requested = False

    # -- public API -----------------------------------------------------------------------------

    def last_sync_resource_version(self) -> str:
        """The resourceVersion the store is known to reflect ("" before the first list)."""
        with self._rv_lock:
            return self._last_sync_resource_version

    def last_sync_error(self) -> BaseException | None:
        """The error that kept the last cycle from bringing the store up to date (a failed list
        or WatchList stream, or a watch refused with 404), or None once one has succeeded (no
        client-go twin: see the module docstring). For readiness: the cache may be stale."""
        with self._sync_lock:
            return self._sync_error

    def phase(self) -> str:
        """Which half of a cycle the reflector is in, for messages: "list" until the store is
        filled, "watch" after."""
        with self._sync_lock:
            return "list" if self._listing else "watch"

    def resource_description(self) -> str:
        """What is listed, as an API path names it: ``samplecontroller.k8s.io/v1alpha1 foos``,
        ``v1 pods`` (client-go's ``typeDescription``); the reflector's name for a list/watch
        that does not say."""
        lw = self.list_watch
        resource = getattr(lw, "resource", None)
        version = getattr(lw, "version", None)
        if not resource or not version:
            return self.name
        group = getattr(lw, "group", "")
        return f"{group}/{version} {resource}" if group else f"{version} {resource}"

    def _synced(self) -> None:
        """A list or stream filled the store: no longer failing (said once, if it was)."""
        with self._sync_lock:
            previous, self._sync_error, self._listing = self._sync_error, None, False
        if previous is not None and is_not_found(previous):
            log.info("%s: %s is served again", self.name, self.resource_description())

    def _record_failure(self, err: BaseException) -> None:
        """After the handler saw ``err``: a cycle that had not synced, or a 404, is failing."""
        with self._sync_lock:
            if self._listing or is_not_found(err):
                self._sync_error = err

    def request_relist(self) -> None:
        """End the open watch and list again at once (no client-go twin: there a selector is
        fixed for the reflector's life; runtime.sharding changes its selectors at run time).

        The list's replace removes from the store what the new selector no longer selects and
        adds what it now does. A list in progress finishes, and another one follows it.
        """
        with self._stream_lock:
            self._relist_requested = True
            stream = self._stream
        _close(stream)

    def _take_relist_request(self) -> bool:
        with self._stream_lock:
            requested, self._relist_requested = self._relist_requested, False
            return requested

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set, backing off between failed cycles."""
        helper = threading.Thread(
            target=self._helper_loop, args=(stop,), name=f"{self.name}-stopper", daemon=True
        )
        helper.start()
        log.debug("%s: starting reflector", self.name)
        try:
            while not stop.is_set():
                delay: float | None = None
                try:
                    self.list_and_watch(stop)
                except _Stopped:
                    break
                except _Relist:
                    # asked for, not a failure: list again now
                    log.debug("%s: relisting: the selector changed", self.name)
                    continue
                except Exception as err:  # every failure is retried after backoff
                    if stop.is_set():
                        break
                    try:
                        self.watch_error_handler(self, err)
                    except Exception:  # the caller's handler must not end the reflector
                        log.exception("%s: the watch error handler failed", self.name)
                    # after the handler, which reads the previous failure (see its docstring)
                    self._record_failure(err)
                    delay = self._delay_after(err)
                if delay is None:
                    delay = self.backoff.next_delay()
                if stop.wait(delay):
                    break
        finally:
            log.debug("%s: reflector stopped", self.name)

    def list_and_watch(self, stop: threading.Event) -> None:
        """One cycle: WatchList or list into the store, then watch until the watch fails.

        client-go ``ListAndWatchWithContext``: when WatchList fails for any reason, this cycle
        lists instead. Returns when stopped; raises the error that ended the cycle.
        """
        stream = None
        synced = False
        with self._sync_lock:
            self._listing = True
        if self.use_watch_list and self._watch_list_supported:
            try:
                stream = self._watch_list(stop)
                synced = True
            except _Stopped:
                raise
            # any failure falls back to list+watch
            except Exception as err:
                # a resource not served: the list says so next, once (default handler)
                level = logging.DEBUG if is_not_found(err) else logging.WARNING
                log.log(
                    level,
                    "%s: the WatchList request ended with an error, falling back to list+watch: %s",
                    self.name,
                    err,
                )
        if not synced:
            self._list(stop)
        self._synced()
        self._watch(stream, stop)

    # -- list -----------------------------------------------------------------------------------

    def _relist_resource_version(self) -> str:
        """RV for the next list (client-go ``relistResourceVersion``)."""
        with self._rv_lock:
            if self._rv_unavailable:
                return ""  # our RV is gone or not yet served: read the latest, consistently
            if not self._last_sync_resource_version:
                return "0"  # the first list may come from the watch cache
            return self._last_sync_resource_version

    def _rewatch_resource_version(self) -> str:
        with self._rv_lock:
            return "" if self._rv_unavailable else self._last_sync_resource_version

    def _set_last_sync_resource_version(self, rv: str) -> None:
        with self._rv_lock:
            self._last_sync_resource_version = rv

    def _set_rv_unavailable(self, unavailable: bool) -> None:
        with self._rv_lock:
            self._rv_unavailable = unavailable

    def _list(self, stop: threading.Event) -> None:
        options = {"resourceVersion": self._relist_resource_version()}
        if self.page_size:
            page_size = self.page_size
        elif self._paginated_result:
            page_size = DEFAULT_PAGE_SIZE  # the server pages for real: keep doing so
        elif options["resourceVersion"] not in ("", "0"):
            page_size = 0  # unpaged, so the watch cache can serve it instead of etcd
        else:
            page_size = DEFAULT_PAGE_SIZE
        self.metrics.inc_lists()
        if self._listed_once:
            self.metrics.inc_relists()
        try:
            result, paginated = self._call_unless_stopped(
                lambda: self._paged_list(options, page_size), stop, "list"
            )
        except Exception as err:
            if not (is_expired_error(err) or is_too_large_resource_version_error(err)):
                raise
            # Our RV is unusable: list again at once at the latest RV.
            self._set_rv_unavailable(True)
            retry = {"resourceVersion": self._relist_resource_version()}
            result, paginated = self._call_unless_stopped(
                lambda: self._paged_list(retry, page_size), stop, "list"
            )
        if options["resourceVersion"] == "0" and paginated:
            self._paginated_result = True
        self._set_rv_unavailable(False)
        metadata = result.get("metadata") or {}
        resource_version = metadata.get("resourceVersion") or ""
        items = result.get("items") or []
        # One pass: with a lazily decoded list each item is decoded here, as the store takes it
        # (and transforms it), so the whole list never exists decoded at once.
        self.store.replace(_with_kind(items, result), resource_version)
        del result, items
        self._set_last_sync_resource_version(resource_version)
        self._listed_once = True
        log.debug("%s: listed at resourceVersion %s", self.name, resource_version)

    def _paged_list(self, options: Mapping[str, Any], page_size: int) -> tuple[Object, bool]:
        """All pages of one list through client-go's pager; returns (list, was_paged)."""
        return ListPager(self.list_watch.list, page_size).list(options)

    # -- watch ----------------------------------------------------------------------------------

    def _watch_timeout_seconds(self) -> int:
        return max(1, int(self.min_watch_timeout * (self._rand() + 1.0)))

    def _open_watch(
        self, options: dict[str, Any], read_timeout: float, stop: threading.Event
    ) -> _OpenWatch:
        self.metrics.inc_watches()
        stream = self._call_unless_stopped(
            lambda: self.list_watch.watch(options, read_timeout=read_timeout), stop, "watch"
        )
        watch = _OpenWatch(stream)
        with self._stream_lock:
            if self._stopping:
                watch.close()
                raise _Stopped()
            self._stream = watch
        return watch

    def _watch(self, stream: _OpenWatch | None, stop: threading.Event) -> None:
        """Watch from the last synced RV, re-watching after clean ends, until an error."""
        while True:
            if stop.is_set():
                _close(stream)
                raise _Stopped()
            if self._take_relist_request():
                _close(stream)
                raise _Relist()
            start = self._clock()
            if stream is None:
                timeout_seconds = self._watch_timeout_seconds()
                options = {
                    "resourceVersion": self.last_sync_resource_version(),
                    "timeoutSeconds": timeout_seconds,
                    "allowWatchBookmarks": True,
                }
                try:
                    stream = self._open_watch(
                        options, self.watch_stall_timeout(timeout_seconds), stop
                    )
                except _Stopped:
                    raise
                except Exception as err:
                    if _is_watch_error_retriable(err):
                        log.info("%s: watch failed, backing off: %s", self.name, err)
                        if stop.wait(self._delay_after(err)):
                            raise _Stopped() from None
                        continue
                    raise
            try:
                self._handle_watch(
                    start, stream, stop, self.store, self._set_last_sync_resource_version
                )
            except _Stopped:
                raise
            except Exception as err:
                # the watch that request_relist closed: no failure (the loop's top relists)
                with self._stream_lock:
                    if self._relist_requested:
                        continue
                if is_too_many_requests(err):
                    log.info("%s: watch returned 429, backing off: %s", self.name, err)
                    if stop.wait(self._delay_after(err)):
                        raise _Stopped() from None
                    continue
                raise
            finally:
                self._forget_stream(stream)
                stream = None

    def _handle_watch(
        self,
        start: float,
        watch: _OpenWatch,
        stop: threading.Event,
        store: ReflectorStore,
        set_resource_version: Callable[[str], None],
        exit_on_initial_events_end: bool = False,
        observe: Callable[[], None] | None = None,
    ) -> bool:
        """Apply a watch's events to ``store`` until it ends (client-go ``handleAnyWatch``).

        Returns whether WatchList's initial-events-end bookmark was seen (and, when
        ``exit_on_initial_events_end``, returns right after it with the stream still open).
        ``observe`` is called as each event arrives (WatchList's watchdog).
        A connection that drops or stalls ends the watch like a clean close; an ERROR event raises
        its APIError; a watch that closes within a second without events raises
        VeryShortWatchError.
        """
        count = 0
        initial_events_end = False
        metrics = self.metrics
        try:
            for event in watch.events:
                if stop.is_set():
                    raise _Stopped()
                if observe is not None:
                    observe()
                metrics.inc_watch_events()
                event_type = event.get("type")
                obj = event.get("object")
                if event_type == "ERROR":
                    raise api_error_from_status(obj)
                # Events that cannot be applied are logged by type and key, never by content: the
                # object may be a Secret, or carry a password in a container's env.
                try:
                    metadata = obj["metadata"]
                    resource_version = metadata.get("resourceVersion") or ""
                except (KeyError, TypeError, AttributeError):
                    log.error(
                        "%s: unable to understand %s watch event: its object has no metadata",
                        self.name,
                        event_type,
                    )
                    continue
                try:
                    if event_type == "ADDED":
                        store.add(obj)
                    elif event_type == "MODIFIED":
                        store.update(obj)
                    elif event_type == "DELETED":
                        store.delete(obj)
                    elif event_type == "BOOKMARK":
                        annotations = metadata.get("annotations") or {}
                        if annotations.get(INITIAL_EVENTS_ANNOTATION) == "true":
                            initial_events_end = True
                    else:
                        log.error(
                            "%s: unable to understand %s watch event of %s/%s",
                            self.name,
                            event_type,
                            metadata.get("namespace", ""),
                            metadata.get("name", ""),
                        )
                        continue
                except Exception:  # one bad object must not end the watch
                    log.exception(
                        "%s: unable to apply %s event to the store", self.name, event_type
                    )
                    continue
                if resource_version:
                    set_resource_version(resource_version)
                count += 1
                if exit_on_initial_events_end and initial_events_end:
                    return True
        except TransportError as err:
            if stop.is_set():
                raise _Stopped() from None
            if exit_on_initial_events_end:
                raise
            # The connection dropped or stalled past its deadline: re-watch from where we are.
            log.info("%s: watch connection ended: %s", self.name, err)
        if stop.is_set():
            raise _Stopped()
        if count == 0 and self._clock() - start < 1.0:
            raise VeryShortWatchError(
                f"{self.name}: unexpected watch close - "
                "watch lasted less than a second and no items received"
            )
        log.debug("%s: watch closed after %d events", self.name, count)
        return initial_events_end

    # -- WatchList ------------------------------------------------------------------------------

    def _watch_list(self, stop: threading.Event) -> _OpenWatch | None:
        """Stream the initial state, replace the store with it, and return the still-open watch.

        client-go ``watchList``; the module docstring lists what is retried here and where this
        differs. Returns None when the watch closed right at the bookmark (the caller then opens
        a new one from the synced RV). Raises when the server refuses, ignores or fails the
        request: the caller lists instead.
        """
        # client-go: the temporary store applies the real store's transform, so 10,000 streamed
        # Deployments wait for the bookmark with managedFields already dropped (as a list does,
        # decoding and transforming item by item), not as served.
        store = self.store
        transform = store.transformer() if isinstance(store, TransformingStore) else None
        while True:
            if stop.is_set():
                raise _Stopped()
            received_rv = ""  # RV of the last event of this attempt

            def set_received_rv(rv: str) -> None:
                nonlocal received_rv
                received_rv = rv

            # The stream's objects until the bookmark confirms them: the real store (a FIFO the
            # informer drains as it fills) must only ever see the whole state, at once.
            temporary = _TemporaryStore(transform)
            timeout_seconds = self._watch_timeout_seconds()
            options = {
                "resourceVersion": self._rewatch_resource_version(),
                "allowWatchBookmarks": True,
                "sendInitialEvents": True,
                "resourceVersionMatch": "NotOlderThan",
                "timeoutSeconds": timeout_seconds,
            }
            start = self._clock()
            stream = None
            watchdog = None
            try:
                stream = self._open_watch(options, self.watch_stall_timeout(timeout_seconds), stop)
                watchdog = _InitialEventsWatchdog(
                    stream, self.watch_list_bookmark_timeout, self._clock, self.name
                )
                got_bookmark = self._handle_watch(
                    start, stream, stop, temporary, set_received_rv, True, watchdog.observe
                )
            except _Stopped:
                _stop_watchdog(watchdog)
                self._forget_stream(stream)
                raise
            except Exception as err:
                ignored = _stop_watchdog(watchdog)
                self._forget_stream(stream)
                if _is_watch_error_retriable(err):
                    log.info("%s: WatchList failed, backing off: %s", self.name, err)
                    if stop.wait(self._delay_after(err)):
                        raise _Stopped() from None
                    continue
                if is_expired_error(err) or is_too_large_resource_version_error(err):
                    # Our RV is gone or not served yet: stream the latest state instead.
                    self._set_rv_unavailable(True)
                    continue
                if ignored:
                    self._watch_list_supported = False
                    raise _WatchListIgnored(
                        f"no initial-events-end bookmark within "
                        f"{self.watch_list_bookmark_timeout:g}s of quiet"
                    ) from err
                if isinstance(err, TransportError) and stream is not None:
                    # The connection dropped mid-stream: what arrived is incomplete, so it is
                    # dropped with the temporary store and the state is streamed again.
                    log.info("%s: WatchList stream broke before the bookmark: %s", self.name, err)
                    if stop.wait(self._delay_after(err)):
                        raise _Stopped() from None
                    continue
                if isinstance(err, APIError) and err.code in (400, 422):
                    self._watch_list_supported = False  # the server does not know the parameters
                raise
            ignored = _stop_watchdog(watchdog)
            if got_bookmark:
                break
            self._forget_stream(stream)
            if ignored:
                self._watch_list_supported = False
                raise _WatchListIgnored(
                    f"no initial-events-end bookmark within "
                    f"{self.watch_list_bookmark_timeout:g}s of quiet"
                )
            # The server ended the watch before the bookmark (a restart, a rollout): stream again.
            log.info("%s: WatchList stream ended before the bookmark; streaming again", self.name)
            if stop.wait(self.backoff.next_delay()):
                raise _Stopped()
        self._set_rv_unavailable(False)
        if self._listed_once:
            # A recovery like a relist, though no LIST call was made (informer_lists_total).
            self.metrics.inc_relists()
        if transform is not None and isinstance(store, TransformingStore):
            store.replace(temporary.list(), received_rv, transformed=True)
        else:
            store.replace(temporary.list(), received_rv)
        del temporary
        self._set_last_sync_resource_version(received_rv)
        self._listed_once = True
        log.debug("%s: streamed the initial state at resourceVersion %s", self.name, received_rv)
        if watchdog is not None and watchdog.expired:
            # It fired in the instant between the bookmark and its stop and closed the stream.
            self._forget_stream(stream)
            return None
        return stream

    # -- helpers --------------------------------------------------------------------------------

    def _delay_after(self, err: BaseException) -> float:
        """The next backoff step, but never shorter than the server's Retry-After."""
        delay = self.backoff.next_delay()
        retry_after = getattr(err, "retry_after", None)
        if retry_after:
            delay = max(delay, float(retry_after))
        return delay

    def _forget_stream(self, stream: _OpenWatch | None) -> None:
        with self._stream_lock:
            if self._stream is stream:
                self._stream = None
        _close(stream)

    def _call_unless_stopped(self, fn: Callable[[], Any], stop: threading.Event, what: str) -> Any:
        """Run a blocking request on a helper thread and stop waiting for it when ``stop`` fires.

        A list of a large resource, or a request to a server that hangs, must not delay shutdown
        (client-go runs its list in a goroutine for the same reason). An abandoned call finishes in
        the background; a watch stream it returns late is closed there.
        """
        done = threading.Event()  # set when the call returns, or by the helper thread on stop
        box: dict[str, Any] = {}  # "outcome": (result, error) once the call returned in time
        with self._stream_lock:
            if self._stopping or stop.is_set():
                raise _Stopped()
            self._pending_calls.add(done)

        def call() -> None:
            result: Any = None
            error: BaseException | None = None
            try:
                result = fn()
            except BaseException as err:  # handed to the waiting thread
                error = err
            with self._stream_lock:
                abandoned = box.get("abandoned", False)
                if not abandoned:
                    box["outcome"] = (result, error)
            if abandoned:
                _close(result)  # nobody will read this stream
            done.set()

        threading.Thread(target=call, name=f"{self.name}-{what}", daemon=True).start()
        done.wait()
        with self._stream_lock:
            self._pending_calls.discard(done)
            if "outcome" not in box:
                box["abandoned"] = True  # released by stop before the call returned
                raise _Stopped()
        result, error = box["outcome"]
        if error is not None:
            raise error
        return result

    def _helper_loop(self, stop: threading.Event) -> None:
        """Resync the store on schedule; on stop, close the watch and release pending calls."""
        period = self.resync_period if self.resync_period > 0 else None
        while not stop.wait(period):
            if self.should_resync is None or self.should_resync():
                try:
                    self.store.resync()
                except Exception:  # a failed resync is retried next period
                    log.exception("%s: resync failed", self.name)
        with self._stream_lock:
            self._stopping = True
            stream, self._stream = self._stream, None
            pending = list(self._pending_calls)
        _close(stream)
        for done in pending:
            done.set()


class _OpenWatch:
    """A watch stream and the one iterator over it.

    WatchList hands its stream on to the regular watch loop mid-way, so both must read through the
    same iterator: a second ``iter(stream)`` would lose lines the first had already buffered.
    """

    __slots__ = ("events", "stream")

    def __init__(self, stream: Watch) -> None:
        self.stream = stream  # has close(), callable from any thread
        self.events = iter(stream)  # yields decoded watch events

    def close(self) -> None:
        _close(self.stream)


class _TemporaryStore:
    """WatchList's objects until the bookmark (client-go's ``temporaryStore``, a ``Store`` made
    with the real store's transformer): an ``Indexer`` whose new states are transformed."""

    __slots__ = ("_indexer", "_transform")

    def __init__(self, transform: Callable[[Any], Any] | None) -> None:
        self._indexer = Indexer()  # keyed as the informer's cache
        self._transform = transform  # the real store's, or None

    def add(self, obj: Any) -> None:
        self._indexer.add(obj if self._transform is None else self._transform(obj))

    def update(self, obj: Any) -> None:
        self._indexer.update(obj if self._transform is None else self._transform(obj))

    def delete(self, obj: Any) -> None:
        self._indexer.delete(obj)

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        raise NotImplementedError("a watch never replaces")

    def resync(self) -> None:
        pass

    def list(self) -> list[Any]:
        return self._indexer.list()


class _InitialEventsWatchdog:
    """Closes a WatchList stream that goes quiet before its initial-events-end bookmark.

    client-go twin: ``initialEventsEndBookmarkTicker``, which ticks every 10 s and warns when no
    event came for that long. Here the same quiet ends the attempt: the stream is closed (its
    iteration then ends quietly) and ``expired`` tells the reflector the server is ignoring
    ``sendInitialEvents``. A thread rather than the socket's read deadline, so that the stream
    keeps its long stall deadline once it carries on as the regular watch.
    """

    def __init__(
        self, watch: _OpenWatch, timeout: float, clock: Callable[[], float], name: str
    ) -> None:
        self._watch = watch  # closed on expiry
        self._timeout = timeout  # quiet seconds allowed
        self._clock = clock
        self._name = name  # the reflector's, for the log line
        self._last_event = clock()  # when the last event (or the watch's start) was seen
        self._lock = threading.Lock()  # makes expiry and stop exclusive
        self._stopped = threading.Event()  # set by stop(); the thread then ends
        self.expired = False  # it fired: the bookmark never came
        threading.Thread(target=self._run, name=f"{name}-watchlist-watchdog", daemon=True).start()

    def observe(self) -> None:
        """An event arrived (called by the reading thread, once per event)."""
        self._last_event = self._clock()

    def stop(self) -> bool:
        """Stop watching; returns whether it had already fired."""
        with self._lock:
            self._stopped.set()
            return self.expired

    def _run(self) -> None:
        while True:
            remaining = self._last_event + self._timeout - self._clock()
            if remaining <= 0:
                with self._lock:
                    if self._stopped.is_set():
                        return
                    self.expired = True
                log.warning(
                    "%s: no initial-events-end bookmark and no event for %gs: the server ignores "
                    "sendInitialEvents",
                    self._name,
                    self._timeout,
                )
                self._watch.close()
                return
            if self._stopped.wait(remaining):
                return


def _stop_watchdog(watchdog: _InitialEventsWatchdog | None) -> bool:
    return watchdog.stop() if watchdog is not None else False


def _close(stream: object) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a broken stream may fail; it is gone either way
            log.debug("closing a watch stream failed", exc_info=True)


def _with_kind(items: Iterable[Any], result: Mapping[str, Any]) -> Iterator[Any]:
    """The list's items, one at a time, each given the kind/apiVersion that typed lists leave out.

    Watch events and single GETs always carry them; items of built-in lists do not. Filling them
    in (as client-go's unstructured list decoding does) makes every cached object look the same
    however it arrived. The items are fresh from the decoder, so nothing shared is mutated.
    """
    kind = result.get("kind") or ""
    api_version = result.get("apiVersion")
    if not (kind.endswith("List") and api_version):
        yield from items
        return
    item_kind = kind[: -len("List")]
    for item in items:
        if isinstance(item, dict) and "kind" not in item:
            item["kind"] = item_kind
            item["apiVersion"] = api_version
        yield item
