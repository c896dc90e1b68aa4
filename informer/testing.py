"""In-memory stand-ins for unit tests of anything built on informers.

client-go twin: ``tools/cache/testing/fake_controller_source.go`` (``FakeControllerSource``).

``FakeListWatch`` is a tiny API server for one resource, without HTTP: it keeps objects, assigns
resourceVersions from a counter, records history so a watch can resume from any RV it still holds,
and speaks the same list/watch contract as ``ListWatch`` (decoded dicts in, ``{"type", "object"}``
events out). Tests drive it (``add``/``modify``/``delete``/``bookmark``), break it
(``compact`` history, ``end_watches``, ``fail_next_list``/``fail_next_watch``, ``stall_watches``)
and inspect what the reflector asked for (``list_calls``, ``watch_calls``).

Importing this module pulls in nothing beyond the informer package.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from client.errors import APIError, TransportError
from client.objects import Object, Status
from client.watch import WatchEvent
from informer.store import meta_namespace_key_func

__all__ = [
    "FakeListWatch",
    "FakeWatchStream",
    "Runnable",
    "RunningInformer",
    "expired_status",
]


def expired_status(message: str = "too old resource version") -> Status:
    """The Status a watch ERROR event carries for a compacted resourceVersion."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Expired",
        "code": 410,
    }


class FakeWatchStream:
    """A watch stream fed by the test; same contract as ``client.rest.WatchStream``
    (client-go ``watch.FakeWatcher`` plays this part in Go tests).

    Iteration blocks for the next event. ``end()`` is the server closing the stream, ``fail(exc)``
    makes the next read raise, ``close()`` (any thread) ends iteration quietly. When no event
    arrives for ``read_timeout`` seconds, iteration raises TransportError, as a stalled socket does.
    """

    def __init__(self, options: Mapping[str, Any], read_timeout: float | None = None) -> None:
        self.options = dict(options)  # what the watch was opened with
        self.read_timeout = read_timeout  # seconds without an event before TransportError
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # signalled on push/end/fail/close
        # pending events; an Exception instance raises
        self._events: deque[WatchEvent | BaseException] = deque()
        self._ended = False  # the "server" closed the stream: iteration ends after the backlog
        self._closed = False  # the client closed it: iteration ends at once
        self.stalled = False  # while True, pushed events are held back (a silent connection)

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    @property
    def ended(self) -> bool:
        with self._lock:
            return self._ended or self._closed

    def push(self, event_type: str, obj: Any) -> None:
        with self._lock:
            if not (self._ended or self._closed):
                self._events.append({"type": event_type, "object": copy.deepcopy(obj)})
                self._changed.notify_all()

    def end(self) -> None:
        with self._lock:
            self._ended = True
            self._changed.notify_all()

    def fail(self, exc: BaseException) -> None:
        with self._lock:
            self._events.append(exc)
            self._changed.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._changed.notify_all()

    def __enter__(self) -> FakeWatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            with self._lock:
                deadline = (
                    None if self.read_timeout is None else time.monotonic() + self.read_timeout
                )
                while (
                    not self._closed
                    and (self.stalled or not self._events)
                    and not (self._ended and not self._events)
                ):
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise TransportError("read timed out (fake stalled watch)")
                    self._changed.wait(remaining)
                if self._closed or not self._events:
                    return
                item = self._events.popleft()
            if isinstance(item, BaseException):
                raise item
            yield item


class FakeListWatch:
    """One resource held in memory, listable and watchable like the real thing (client-go
    ``tools/cache/testing`` ``FakeControllerSource``, with scripted faults added).

    ``history_limit`` bounds the event history (older watch starts get a 410 ERROR event, as from
    the API server); ``watch_cache`` makes ``resourceVersion=0`` lists ignore ``limit``, as a real
    server with its watch cache does; ``supports_watch_list`` makes it answer
    ``sendInitialEvents=true`` with the initial state and an initial-events-end bookmark (False:
    it ignores the parameter like an old server).
    """

    def __init__(
        self,
        objects: Iterable[Mapping[str, Any]] = (),
        *,
        kind: str = "Foo",
        api_version: str = "example.com/v1",
        history_limit: int | None = None,
        watch_cache: bool = True,
        supports_watch_list: bool = True,
    ) -> None:
        self.kind = kind  # item kind; lists are kind + "List"
        self.api_version = api_version  # for lists and items
        self.history_limit = history_limit  # events kept for resuming watches; None = all
        self.watch_cache = watch_cache  # RV=0 lists are served whole, ignoring limit
        self.supports_watch_list = supports_watch_list  # honour sendInitialEvents
        self._lock = threading.RLock()  # guards every field below
        self._rv = itertools.count(1)  # resourceVersion source
        self.resource_version = 0  # the latest RV handed out
        self._objects: dict[str, Object] = {}  # key -> stored object (never handed out uncopied)
        self._history: list[tuple[int, str, Object]] = []  # (rv, type, object) in RV order
        self._compacted = 0  # watches from an RV below this get 410
        self._watches: list[FakeWatchStream] = []  # open streams fed with new events
        self._snapshots: dict[str, list[Object]] = {}  # continue token -> remaining items
        self._token_ids = itertools.count(1)
        self._list_errors: deque[BaseException] = deque()  # raised by the next list calls
        self._watch_errors: deque[BaseException] = deque()  # raised by the next watch calls
        self._stall_new_watches = False  # new watches start stalled
        self.list_calls: list[dict[str, Any]] = []  # options of every list call, in order
        self.watch_calls: list[dict[str, Any]] = []  # options of every watch call, in order
        for obj in objects:
            self.add(obj)

    # -- driving it ------------------------------------------------------------------------------

    def add(self, obj: Mapping[str, Any]) -> Object:
        return self._write("ADDED", obj)

    def modify(self, obj: Mapping[str, Any]) -> Object:
        return self._write("MODIFIED", obj)

    def delete(self, obj_or_key: Mapping[str, Any] | str) -> Object:
        key = obj_or_key if isinstance(obj_or_key, str) else meta_namespace_key_func(obj_or_key)
        with self._lock:
            stored = self._objects[key]
            return self._write("DELETED", stored)

    def delete_silently(self, key: str) -> None:
        """Remove an object without an event, as if its deletion fell into a watch gap."""
        with self._lock:
            del self._objects[key]
            self.resource_version = next(self._rv)

    def miss_deletion(self, key: str) -> None:
        """Atomically: drop every watch, delete ``key`` without an event, and compact history.

        The informer must then learn of the deletion from a relist, as a tombstone.
        """
        with self._lock:
            self.end_watches()
            self.delete_silently(key)
            self.compact()

    def bookmark(self, annotations: Mapping[str, str] | None = None) -> None:
        """Send a BOOKMARK at the current RV to every open watch."""
        with self._lock:
            obj = self._bookmark_object(annotations)
            for w in self._watches:
                w.push("BOOKMARK", obj)

    def compact(self) -> None:
        """Forget all history: watches from any RV older than now get 410 Expired."""
        with self._lock:
            self._history.clear()
            self._compacted = self.resource_version + 1

    def expire_continue_tokens(self) -> None:
        with self._lock:
            self._snapshots.clear()

    def end_watches(self) -> None:
        """The server closes every open watch (as at timeoutSeconds, or on restart)."""
        with self._lock:
            watches, self._watches = self._watches, []
        for w in watches:
            w.end()

    def stall_watches(self, stalled: bool = True, *, new_ones_too: bool = True) -> None:
        """Hold back events on open (and, by default, future) watches: a silent connection."""
        with self._lock:
            self._stall_new_watches = stalled and new_ones_too
            for w in self._watches:
                w.stalled = stalled
                with w._lock:
                    w._changed.notify_all()

    def fail_next_list(self, *errors: BaseException) -> None:
        with self._lock:
            self._list_errors.extend(errors)

    def fail_next_watch(self, *errors: BaseException) -> None:
        with self._lock:
            self._watch_errors.extend(errors)

    def open_watches(self) -> list[FakeWatchStream]:
        with self._lock:
            return [w for w in self._watches if not w.ended]

    def get(self, key: str) -> Object | None:
        with self._lock:
            obj = self._objects.get(key)
            return copy.deepcopy(obj) if obj is not None else None

    # -- the ListerWatcher contract ----------------------------------------------------------------

    def list(self, options: Mapping[str, Any]) -> Object:
        with self._lock:
            self.list_calls.append(dict(options))
            if self._list_errors:
                raise self._list_errors.popleft()
            token = options.get("continue")
            if token:
                if token not in self._snapshots:
                    raise APIError(
                        410, "Expired", "continue token expired", _status(410, "Expired")
                    )
                remaining = self._snapshots.pop(token)
                rv = int(token.split(":")[0])
            else:
                remaining = [copy.deepcopy(o) for _, o in sorted(self._objects.items())]
                rv = self.resource_version
            limit = int(options.get("limit") or 0)
            if options.get("resourceVersion") == "0" and self.watch_cache:
                limit = 0  # the watch cache serves everything at once
            page, rest = (remaining[:limit], remaining[limit:]) if limit else (remaining, [])
            next_token = ""
            if rest:
                next_token = f"{rv}:{next(self._token_ids)}"
                self._snapshots[next_token] = rest
            return {
                "kind": self.kind + "List",
                "apiVersion": self.api_version,
                "metadata": {"resourceVersion": str(rv), "continue": next_token},
                "items": page,
            }

    def watch(
        self, options: Mapping[str, Any], *, read_timeout: float | None = None
    ) -> FakeWatchStream:
        with self._lock:
            self.watch_calls.append(dict(options))
            if self._watch_errors:
                raise self._watch_errors.popleft()
            stream = FakeWatchStream(options, read_timeout)
            stream.stalled = self._stall_new_watches
            rv_text = options.get("resourceVersion") or ""
            initial = bool(options.get("sendInitialEvents")) and self.supports_watch_list
            if rv_text in ("", "0") or initial:
                for _, obj in sorted(self._objects.items()):
                    stream.push("ADDED", obj)
                if initial:
                    stream.push(
                        "BOOKMARK", self._bookmark_object({"k8s.io/initial-events-end": "true"})
                    )
            else:
                rv = int(rv_text)
                if rv + 1 < self._compacted:
                    stream.push("ERROR", expired_status())
                    stream.end()
                    return stream
                for event_rv, event_type, obj in self._history:
                    if event_rv > rv:
                        stream.push(event_type, obj)
            self._watches.append(stream)
            return stream

    # -- internals -------------------------------------------------------------------------------

    def _bookmark_object(self, annotations: Mapping[str, str] | None) -> Object:
        metadata: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if annotations:
            metadata["annotations"] = dict(annotations)
        return {"kind": self.kind, "apiVersion": self.api_version, "metadata": metadata}

    def _write(self, event_type: str, obj: Mapping[str, Any]) -> Object:
        with self._lock:
            stored = copy.deepcopy(dict(obj))
            stored.setdefault("kind", self.kind)
            stored.setdefault("apiVersion", self.api_version)
            key = meta_namespace_key_func(stored)
            rv = next(self._rv)
            self.resource_version = rv
            stored["metadata"]["resourceVersion"] = str(rv)
            if event_type == "DELETED":
                self._objects.pop(key, None)
            else:
                self._objects[key] = stored
            self._history.append((rv, event_type, stored))
            if self.history_limit is not None and len(self._history) > self.history_limit:
                dropped = self._history[: len(self._history) - self.history_limit]
                del self._history[: len(dropped)]
                self._compacted = dropped[-1][0] + 1
            self._watches = [w for w in self._watches if not w.ended]
            for w in self._watches:
                w.push(event_type, stored)
            return copy.deepcopy(stored)


def _status(code: int, reason: str) -> Status:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
    }


class Runnable(Protocol):
    """What ``RunningInformer`` runs: an informer or a reflector (no client-go twin: Go tests
    run a goroutine)."""

    def run(self, stop: threading.Event) -> None: ...


class RunningInformer:
    """Runs an informer on a named thread for the length of a ``with`` block (no client-go
    twin: Go tests start a goroutine and close a channel).

    On exit the stop event is set and the thread must end within ``stop_within`` seconds,
    otherwise AssertionError: a test that leaves an informer running is a broken test.
    """

    def __init__(self, informer: Runnable, stop_within: float = 2.0) -> None:
        self.informer = informer  # anything with run(stop)
        self.stop = threading.Event()  # set on exit
        self.stop_within = stop_within  # seconds the informer has to stop
        self.thread = threading.Thread(
            target=informer.run,
            args=(self.stop,),
            name=f"informer-{getattr(informer, 'name', 'test')}",
        )

    def __enter__(self) -> RunningInformer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(self.stop_within)
        if self.thread.is_alive():
            raise AssertionError(f"{self.thread.name} did not stop within {self.stop_within}s")
