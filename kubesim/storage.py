"""Object storage: one global resourceVersion, a bounded event history, and watchers.

This is kubesim's etcd and watch cache in one (k8s.io/apiserver/pkg/storage/etcd3 and
storage/cacher). Everything that must be atomic with respect to the resourceVersion counter
happens under ``Storage.lock``:

- a write takes the next resourceVersion, replaces the stored object, appends an ``Event`` to
  the history and hands it to each matching watcher's queue;
- a list reads the objects (or rebuilds an older snapshot from the history) at one RV;
- a watch registers itself and replays the history after its start RV in the same critical
  section, so no event is lost or seen twice between "list" and "watch".

Stored objects are never mutated after they are stored (client-go's rule for cached objects,
applied to the server): writers build a fresh dict. That is what allows every ``Stored`` to
encode its JSON once and hand the same bytes to every GET, list and watcher.

Watchers never block writers: each has its own bounded queue, and one that falls too far
behind is closed, as the cacher closes a watcher whose buffer is full.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Event", "Storage", "Stored", "Watcher", "ExpiredError", "encode"]

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
INITIAL_END = (
    "INITIAL_END"  # queue marker: the initial events of a sendInitialEvents watch are done
)

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode(obj: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (the wire form of every response body)."""
    return _dumps(obj).encode()


def _prefix(kind: str, api_version: str) -> bytes:
    """The encoded '{"kind":..,"apiVersion":..,' head every stored object starts with."""
    return b'{"kind":' + encode(kind) + b',"apiVersion":' + encode(api_version) + b","


class Stored:
    """An immutable stored object plus its JSON, encoded once on first use.

    obj: the object dict with "kind" and "apiVersion" as its first two keys (so that the typed-list
    form without them and the other-version form are byte slices of one encoding).
    """

    __slots__ = ("obj", "_full", "_head")

    def __init__(self, obj: dict):
        self.obj = obj  # never mutated once stored
        self._full: bytes | None = None  # cached encoding of obj
        self._head = 0  # length of the '{"kind":..,"apiVersion":..,' prefix in _full

    @property
    def rv(self) -> int:
        return int(self.obj["metadata"]["resourceVersion"])

    def full(self) -> bytes:
        """JSON of the object with kind/apiVersion, as single GETs and watch events carry it."""
        full = self._full
        if full is None:
            full = encode(self.obj)
            self._head = len(_prefix(self.obj["kind"], self.obj["apiVersion"]))
            self._full = full
        return full

    def at_version(self, api_version: str) -> bytes:
        """The object served at another version of the same resource (conversion None)."""
        full = self.full()
        if api_version == self.obj["apiVersion"]:
            return full
        return _prefix(self.obj["kind"], api_version) + full[self._head :]

    def bare(self) -> bytes:
        """JSON without kind/apiVersion: items of typed lists (DeploymentList) omit them."""
        full = self.full()
        return b"{" + full[self._head :]


def normalize(obj: dict) -> dict:
    """Return obj with kind and apiVersion first (a new dict only when needed)."""
    keys = iter(obj)
    if next(keys, None) == "kind" and next(keys, None) == "apiVersion":
        return obj
    out = {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion")}
    for k, v in obj.items():
        if k not in out:
            out[k] = v
    return out


class Event:
    """One entry of the history: what happened to one object at one resourceVersion.

    obj is what a watcher receives for this event's own type (for DELETED: the last stored
    state carrying the delete's RV); prev is exactly the object stored before (None for ADDED),
    which is what a snapshot restores when it rolls the event back.
    """

    __slots__ = ("rv", "type", "key", "ns", "name", "obj", "prev")

    def __init__(self, rv: int, etype: str, key, ns: str, name: str, obj: Stored, prev):
        self.rv = rv  # the global resourceVersion this event created
        self.type = etype  # ADDED | MODIFIED | DELETED
        self.key = key  # storage key (group, plural)
        self.ns = ns  # namespace ("" for cluster-scoped)
        self.name = name  # object name
        self.obj = obj  # Stored sent to watchers for this event
        self.prev = prev  # Stored before the event, or None for ADDED


class ExpiredError(Exception):
    """The requested resourceVersion is older than the retained history (410 Expired)."""

    def __init__(self, requested: int, oldest: int):
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested  # the RV the client asked for
        self.oldest = oldest  # the oldest RV still served


# A predicate on an object dict: does it pass the watcher's namespace/label/field filter?
Filter = Callable[[dict], bool]


class Watcher:
    """One open watch: a bounded queue of (type, Stored) filled by writers, drained by its stream.

    Twin of the cacher's cacheWatcher. Writers call ``_dispatch`` under the storage lock; the
    HTTP thread serving the watch calls ``drain``. Overflow closes the watcher instead of
    blocking the writer (the cacher terminates watchers whose buffer stays full).
    """

    def __init__(self, key, flt: Filter | None, max_queue: int, start_rv: int):
        self.key = key  # storage key watched
        self.filter = flt  # None matches everything
        self.max_queue = max_queue  # overflow bound; exceeding it closes the watcher
        self.cond = threading.Condition(
            threading.Lock()
        )  # guards items/closed; signals "not empty"
        self.items: deque = deque()  # pending (type, Stored | bytes) in RV order
        self.closed = False  # set once; the stream ends after draining what is queued
        self.close_reason = ""  # why it was closed ("stopped", "too slow", ...)
        self.start_rv = start_rv  # the RV the client started from (what it already knows)
        self.last_rv = start_rv  # highest RV queued so far (what a bookmark may report)
        self.bookmark_requested = False  # a bookmark was asked for (Storage.request_bookmarks)

    def _passes(self, stored: Stored | None) -> bool:
        return stored is not None and (self.filter is None or self.filter(stored.obj))

    def _dispatch(self, ev: Event) -> None:
        """Translate an event through the filter (cacheWatcher.convertToWatchEvent) and queue it."""
        if ev.rv <= self.start_rv:
            return  # a watch from a future RV skips events up to it (cacheWatcher.process)
        if ev.type == DELETED:
            cur_ok, prev_ok = False, self._passes(ev.prev)
        else:
            cur_ok, prev_ok = self._passes(ev.obj), self._passes(ev.prev)
        if cur_ok and prev_ok:
            self._offer(MODIFIED, ev.obj, ev.rv)
        elif cur_ok:
            self._offer(ADDED, ev.obj, ev.rv)
        elif prev_ok:
            obj = ev.obj if ev.type == DELETED else _with_rv(ev.prev, ev.rv)
            self._offer(DELETED, obj, ev.rv)
        else:
            self.last_rv = ev.rv

    def _offer(self, etype: str, stored: Stored, rv: int) -> None:
        with self.cond:
            if self.closed:
                return
            if len(self.items) >= self.max_queue:
                self.closed = True
                self.close_reason = "too slow: event queue overflow"
                self.cond.notify_all()
                return
            self.items.append((etype, stored))
            self.last_rv = rv
            self.cond.notify()

    def close(self, reason: str = "stopped") -> None:
        with self.cond:
            if not self.closed:
                self.closed = True
                self.close_reason = reason
            self.cond.notify_all()

    def take_bookmark_rv(self) -> int:
        """Clear a pending bookmark request; return the RV a bookmark may report now.

        0 while events are queued: a bookmark must not overtake events it would claim to cover.
        """
        with self.cond:
            self.bookmark_requested = False
            return self.last_rv if not self.items else 0

    def drain(self, timeout: float | None) -> list:
        """Wait up to timeout for events; return all queued ones (empty on timeout/close)."""
        with self.cond:
            if not self.items and not self.closed and not self.bookmark_requested:
                self.cond.wait(timeout)
            items = list(self.items)
            self.items.clear()
            return items


def _with_rv(stored: Stored, rv: int) -> Stored:
    """A copy of stored whose metadata.resourceVersion is rv.

    DELETED events carry the RV of the delete, not the deleted object's last RV.
    """
    obj = dict(stored.obj)
    obj["metadata"] = dict(obj["metadata"], resourceVersion=str(rv))
    return Stored(obj)


class Storage:
    """All objects of all resources, keyed by storage key (group, plural) then (namespace, name)."""

    def __init__(self, history_size: int = 10000, watch_queue_size: int = 100_000):
        self.lock = threading.RLock()  # every field below is read and written under it
        self.history_size = history_size  # events retained for watch/continue/Exact reads
        self.watch_queue_size = watch_queue_size  # per-watcher overflow bound
        self._rv = 0  # the last resourceVersion handed out; only grows
        self._objects: dict[Any, dict[tuple[str, str], Stored]] = {}  # key -> (ns, name) -> obj
        self._sorted: dict[Any, list[tuple[str, str]] | None] = {}  # key -> sorted names cache
        self._history: list[Event] = []  # events in RV order, the last history_size or so
        self._oldest_rv = 0  # watches and snapshots from an RV >= this are still served
        self._watchers: dict[Any, set[Watcher]] = {}  # key -> open watchers
        self._listeners: list[Callable[[Event], None]] = []  # in-process controllers' hooks

    # ---- reads -------------------------------------------------------------------------------

    @property
    def rv(self) -> int:
        """The current global resourceVersion."""
        return self._rv

    @property
    def oldest_rv(self) -> int:
        return self._oldest_rv

    def get(self, key, ns: str, name: str) -> Stored | None:
        bucket = self._objects.get(key)
        return bucket.get((ns, name)) if bucket else None

    def items(self, key) -> list[Stored]:
        """Current objects of one resource in key order (etcd's order: namespace, then name)."""
        with self.lock:
            bucket = self._objects.get(key)
            if not bucket:
                return []
            names = self._sorted.get(key)
            if names is None:
                names = sorted(bucket)
                self._sorted[key] = names
            return [bucket[n] for n in names]

    def count(self, key) -> int:
        return len(self._objects.get(key) or ())

    def snapshot(self, key, rv: int) -> list[Stored]:
        """The objects of one resource as they were at rv, in key order (etcd MVCC read).

        Rolls the retained history back from now to rv; ExpiredError if rv was compacted.
        """
        with self.lock:
            if rv >= self._rv:
                return self.items(key)
            if rv < self._oldest_rv:
                raise ExpiredError(rv, self._oldest_rv)
            state = dict(self._objects.get(key) or {})
            start = bisect.bisect_right(self._history, rv, key=lambda e: e.rv)
            for ev in reversed(self._history[start:]):
                if ev.key != key:
                    continue
                if ev.prev is None:
                    state.pop((ev.ns, ev.name), None)
                else:
                    state[(ev.ns, ev.name)] = ev.prev
        return [state[n] for n in sorted(state)]

    # ---- writes (callers hold self.lock around read-check-write sequences) --------------------

    def next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def put(self, key, ns: str, name: str, obj: dict) -> Stored:
        """Create or replace an object: stamp a new RV into obj's metadata, store, emit.

        obj and obj["metadata"] must be fresh dicts owned by storage from now on.
        """
        with self.lock:
            rv = self.next_rv()
            obj["metadata"]["resourceVersion"] = str(rv)
            stored = Stored(normalize(obj))
            bucket = self._objects.setdefault(key, {})
            prev = bucket.get((ns, name))
            bucket[(ns, name)] = stored
            if prev is None:
                self._sorted[key] = None
            self._emit(Event(rv, MODIFIED if prev else ADDED, key, ns, name, stored, prev))
            return stored

    def remove(self, key, ns: str, name: str) -> Stored | None:
        """Delete an object; the DELETED event carries its last stored state at a new RV."""
        with self.lock:
            bucket = self._objects.get(key)
            prev = bucket.pop((ns, name), None) if bucket else None
            if prev is None:
                return None
            self._sorted[key] = None
            rv = self.next_rv()
            gone = _with_rv(prev, rv)
            self._emit(Event(rv, DELETED, key, ns, name, gone, prev))
            return gone

    def drop_resource(self, key) -> None:
        """Delete every object of a resource (its CRD is gone) and end its watches."""
        with self.lock:
            for ns, name in list(self._objects.get(key) or {}):
                self.remove(key, ns, name)
            self._objects.pop(key, None)
            self._sorted.pop(key, None)
            for w in self._watchers.pop(key, set()):
                w.close("resource removed")

    def _emit(self, ev: Event) -> None:
        hist = self._history
        hist.append(ev)
        if len(hist) > self.history_size * 2:
            # Trim in batches so the list is not shifted on every write.
            cut = len(hist) - self.history_size
            self._oldest_rv = hist[cut - 1].rv
            del hist[:cut]
        for w in self._watchers.get(ev.key, ()):
            w._dispatch(ev)
        for listener in self._listeners:
            listener(ev)

    def compact(self) -> None:
        """Forget all history now: watches/continues from any older RV get 410 Expired."""
        with self.lock:
            self._history.clear()
            self._oldest_rv = self._rv

    # ---- watch ---------------------------------------------------------------------------------

    def watch(
        self,
        key,
        flt: Filter | None,
        since_rv: int | None,
        initial: bool,
        max_queue: int | None = None,
        mark_initial_end: bool = False,
    ) -> Watcher:
        """Open a watcher.

        since_rv: replay the retained events after it (ExpiredError if it was compacted);
        None: start now. initial: first queue a synthetic ADDED for every current object
        (the watch-from-"0" and sendInitialEvents behaviour). mark_initial_end: then queue an
        (INITIAL_END, rv) marker, which the stream renders as the BOOKMARK annotated
        k8s.io/initial-events-end (WatchList).
        """
        with self.lock:
            start = self._rv if since_rv is None else since_rv
            w = Watcher(key, flt, max_queue or self.watch_queue_size, start)
            if initial:
                for stored in self.items(key):
                    if w._passes(stored):
                        w.items.append((ADDED, stored))
            if mark_initial_end:
                w.items.append((INITIAL_END, self._rv))
            if since_rv is not None and since_rv < self._rv:
                if since_rv < self._oldest_rv:
                    raise ExpiredError(since_rv, self._oldest_rv)
                i = bisect.bisect_right(self._history, since_rv, key=lambda e: e.rv)
                for ev in self._history[i:]:
                    if ev.key == key:
                        w._dispatch(ev)
                w.last_rv = self._rv
            self._watchers.setdefault(key, set()).add(w)
            return w

    def unwatch(self, w: Watcher) -> None:
        with self.lock:
            ws = self._watchers.get(w.key)
            if ws:
                ws.discard(w)
        w.close()

    def watchers(self) -> list[Watcher]:
        with self.lock:
            return [w for ws in self._watchers.values() for w in ws]

    def close_all_watchers(self, reason: str = "closed by kubesim") -> int:
        """End every open watch (fault injection, shutdown); returns how many were open."""
        ws = self.watchers()
        for w in ws:
            w.close(reason)
        return len(ws)

    def request_bookmarks(self) -> None:
        """Ask every bookmark-enabled watch to send a BOOKMARK now (if its RV advanced)."""
        for w in self.watchers():
            with w.cond:
                w.bookmark_requested = True
                w.cond.notify_all()

    def add_listener(self, fn: Callable[[Event], None]) -> None:
        """Call fn(event) under the storage lock for every write (in-process controllers)."""
        with self.lock:
            self._listeners.append(fn)

    def all_keys(self) -> Iterable:
        with self.lock:
            return list(self._objects)
