"""Object storage: one global resourceVersion, etcd's history, per-resource watch windows.

This is kubesim's etcd and watch cache in one (k8s.io/apiserver/pkg/storage/etcd3 and
storage/cacher). Everything that must be atomic with respect to the resourceVersion counter
happens under ``Storage.lock``:

- a write takes the next resourceVersion, replaces the stored object, appends an ``Event`` to
  etcd's history and to its resource's watch window, and hands it to each matching watcher;
- a list reads the objects (or rebuilds an older snapshot from etcd's history) at one RV;
- a watch registers itself and replays its resource's window after its start RV in the same
  critical section, so no event is lost or seen twice between "list" and "watch".

Two histories, as on a real server:

- etcd's (``snapshot``: Exact lists, continue tokens) keeps every revision until compaction.
  kube-apiserver compacts etcd every ``--etcd-compaction-interval`` (5 min) to the revision it
  saw at the previous tick, so 5 to 10 minutes are kept; so does kubesim.
- each resource's watch cache window (``watch``: the cacher's ``watchCache``) keeps the last
  ``capacity`` events, sized automatically between 100 and 102,400: it doubles when full and
  its oldest event is under 75 s old, and halves when even its newest quarter is older than
  75 s. A watch from below the window gets "too old resource version: X (Y)" (410 Expired).

resourceVersions start from the wall clock in microseconds, so a kubesim started later (a
"restart with fresh state") never hands out an RV a previous one did: no Python server writes
faster than one object per microsecond, so every RV of an older server is below the newer
server's first one, lands below its window, and gets 410, and the client relists. A real
server whose etcd is reset instead reuses RVs and leaves such clients waiting forever.

Stored objects are never mutated after they are stored (client-go's rule for cached objects,
applied to the server): writers build a fresh dict. That is what allows every ``Stored`` to
encode its JSON once and hand the same bytes to every GET, list and watcher.

Watchers never block writers: each has its own bounded queue, and one that falls too far
behind is closed, as the cacher closes a watcher whose buffer is full.
"""

from __future__ import annotations

import bisect
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "COMPACTION_INTERVAL",
    "EVENT_FRESH_DURATION",
    "WATCH_CACHE_LOWER_BOUND",
    "WATCH_CACHE_UPPER_BOUND",
    "Event",
    "ExpiredError",
    "Storage",
    "Stored",
    "WatchCache",
    "Watcher",
    "encode",
    "go_escape",
    "time_based_resource_version",
]

# The cacher's watchCache sizing (storage/cacher/watch_cache.go).
WATCH_CACHE_LOWER_BOUND = 100  # defaultLowerBoundCapacity
WATCH_CACHE_UPPER_BOUND = 100 * 1024  # defaultUpperBoundCapacity
EVENT_FRESH_DURATION = 75.0  # eventFreshDuration: seconds of history the window aims to keep
COMPACTION_INTERVAL = 300.0  # kube-apiserver's --etcd-compaction-interval default (5m)
MAX_RESOURCE_VERSION = (1 << 63) - 1  # etcd revisions are int64

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
# queue marker: the initial events of a sendInitialEvents watch are done
INITIAL_END = "INITIAL_END"

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

# Go's encoding/json escapes these inside strings (HTML safety, and the two JavaScript line
# terminators); Python's encoder does not. They can only occur inside JSON strings, so a
# replacement on the encoded text is exact.
_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")


def go_escape(text: str) -> str:
    """``text`` (encoded JSON) with the characters Go's encoder escapes written as it writes
    them (``\\u003c`` for ``<``, ...). The ``in`` tests are the fast path: most objects
    have none of them, and five substring scans cost far less than one regex pass."""
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        return _GO_ESCAPED.sub(lambda m: _GO_ESCAPES[m.group()], text)
    return text


def encode(obj: Any) -> bytes:
    """Compact JSON as UTF-8 bytes, escaped as Go's ``json.Marshal`` escapes it (the wire form
    of every object; a response body adds the newline of Go's ``json.Encoder``)."""
    return go_escape(_dumps(obj)).encode()


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
    """The requested resourceVersion is older than the retained history (410 Expired).

    The message is the cacher's: "too old resource version: <requested> (<oldest - 1>)".
    """

    def __init__(self, requested: int, oldest: int):
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested  # the RV the client asked for
        self.oldest = oldest  # the lowest RV a watch may still start from


_base_lock = threading.Lock()  # guards _last_base
_last_base = 0  # the last RV base handed to a Storage in this process


def time_based_resource_version() -> int:
    """A starting resourceVersion above any a previous kubesim can have handed out.

    Microseconds since the epoch (about 1.7e15, far below etcd's int64 limit), and above the
    last base given out in this process (two servers made within one microsecond).
    """
    global _last_base
    with _base_lock:
        base = max(time.time_ns() // 1000, _last_base + 1)
        _last_base = base
    return base


class WatchCache:
    """One resource's window of recent events: the cacher's ``watchCache`` ring buffer.

    ``events[start:]`` is the window (older entries are dropped in batches). ``list_rv`` is
    the RV the cache was (re)initialised at, the server's start, a compaction, or the resource's
    creation; while no event has left the window, a watch may start anywhere from it on.
    """

    __slots__ = ("events", "times", "start", "capacity", "lower", "upper", "list_rv", "removed")

    def __init__(self, list_rv: int, lower: int, upper: int):
        self.events: list[Event] = []  # this resource's events in RV order (window from start)
        self.times: list[float] = []  # record time (monotonic) of each entry of events
        self.start = 0  # index of the window's oldest event in events
        self.capacity = lower  # current window size; starts at the lower bound, as upstream
        self.lower = lower  # capacity never shrinks below this
        self.upper = upper  # nor grows above this (the configurable size)
        self.list_rv = list_rv  # RV at which this cache started
        self.removed = False  # an event has left the window since list_rv

    def __len__(self) -> int:
        return len(self.events) - self.start

    def floor(self) -> int:
        """The lowest RV a watch may start from (getAllEventsSinceLocked's ``oldest - 1``)."""
        if self.removed and self.start < len(self.events):
            return self.events[self.start].rv - 1
        return self.list_rv

    def add(self, ev: Event, now: float) -> None:
        """updateCache: resize if due, evict the oldest event when full, append."""
        if len(self.events) - self.start >= self.capacity:
            self._make_room(now)
        self.events.append(ev)
        self.times.append(now)

    def _make_room(self, now: float) -> None:
        """resizeCacheLocked, then eviction down to below capacity (the window is full)."""
        oldest_age = now - self.times[self.start]
        if oldest_age < EVENT_FRESH_DURATION and self.capacity < self.upper:
            self.capacity = min(self.capacity * 2, self.upper)
            return
        q = self.capacity // 4
        quarter = self.times[len(self.events) - q if q else self.start]
        if now - quarter > EVENT_FRESH_DURATION and self.capacity > self.lower:
            self.capacity = max(self.capacity // 2, self.lower)
        self.start = len(self.events) - self.capacity + 1
        self.removed = True
        if self.start > 1024 and self.start * 2 > len(self.events):
            # Drop evicted entries in batches so the lists are not shifted on every write.
            del self.events[: self.start]
            del self.times[: self.start]
            self.start = 0

    def since(self, rv: int) -> list[Event]:
        """Window events with an RV above rv, oldest first."""
        i = bisect.bisect_right(self.events, rv, lo=self.start, key=lambda e: e.rv)
        return self.events[i:]


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
        # guards items/closed; signals "not empty"
        self.cond = threading.Condition(threading.Lock())
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
    """All objects of all resources, keyed by storage key (group, plural) then (namespace, name).

    history_size: the largest a resource's watch window may grow (the real cacher's bound is
        102,400 events); the window starts at min(100, history_size) events.
    watch_queue_size: per-watcher overflow bound.
    compaction_interval: seconds between etcd compactions (each drops what the previous tick
        saw); 0 disables them.
    initial_rv: the RV before the first write; None starts from the clock (see the module
        docstring), 0 gives the small RVs unit tests like to read.
    clock: monotonic seconds, for the window's freshness and compaction timing (tests).
    """

    def __init__(
        self,
        history_size: int = WATCH_CACHE_UPPER_BOUND,
        watch_queue_size: int = 100_000,
        *,
        compaction_interval: float = COMPACTION_INTERVAL,
        initial_rv: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.lock = threading.RLock()  # every field below is read and written under it
        self.history_size = max(1, history_size)  # upper bound of each watch window
        self.watch_queue_size = watch_queue_size  # per-watcher overflow bound
        self.compaction_interval = compaction_interval  # seconds; 0 = never compact
        self.clock = clock  # monotonic time source
        start = time_based_resource_version() if initial_rv is None else initial_rv
        self._rv = start  # the last resourceVersion handed out; only grows
        self._objects: dict[Any, dict[tuple[str, str], Stored]] = {}  # key -> (ns, name) -> obj
        self._sorted: dict[Any, list[tuple[str, str]] | None] = {}  # key -> sorted names cache
        self._history: list[Event] = []  # etcd: every event after _compacted_rv, in RV order
        self._compacted_rv = start  # etcd reads below this revision are gone (410)
        self._next_compaction = clock() + compaction_interval  # when the compactor next runs
        self._compaction_target = start  # the revision the next compaction compacts to
        self._windows: dict[Any, WatchCache] = {}  # key -> that resource's watch window
        self._window_floor = start  # list_rv of windows created from now on
        self._watchers: dict[Any, set[Watcher]] = {}  # key -> open watchers
        self._listeners: list[Callable[[Event], None]] = []  # in-process controllers' hooks

    # ---- reads -------------------------------------------------------------------------------

    @property
    def rv(self) -> int:
        """The current global resourceVersion."""
        return self._rv

    @property
    def oldest_rv(self) -> int:
        """etcd's compacted revision: Exact lists and continue tokens below it get 410."""
        return self._compacted_rv

    def watch_floor(self, key) -> int:
        """The lowest RV a watch of this resource may start from (older ones get 410)."""
        with self.lock:
            return self._window(key).floor()

    def window_capacity(self, key) -> int:
        """The current size of this resource's watch window (grows and shrinks with load)."""
        with self.lock:
            return self._window(key).capacity

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

        Rolls etcd's history back from now to rv; ExpiredError if rv was compacted.
        """
        with self.lock:
            self._maybe_compact(self.clock())
            if rv >= self._rv:
                return self.items(key)
            if rv < self._compacted_rv:
                raise ExpiredError(rv, self._compacted_rv)
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
        if self._rv >= MAX_RESOURCE_VERSION:
            raise OverflowError("resourceVersion would exceed etcd's int64 revisions")
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
        """Delete every object of a resource (its CRD is gone) and end its watches.

        The resource's watch cache goes with it; one made again later starts at that time's RV,
        as a new cacher does when its CRD comes back.
        """
        with self.lock:
            for ns, name in list(self._objects.get(key) or {}):
                self.remove(key, ns, name)
            self._objects.pop(key, None)
            self._sorted.pop(key, None)
            self._windows[key] = WatchCache(self._rv, *self._window_bounds())
            for w in self._watchers.pop(key, set()):
                w.close("resource removed")

    def _window_bounds(self) -> tuple[int, int]:
        return min(WATCH_CACHE_LOWER_BOUND, self.history_size), self.history_size

    def _window(self, key) -> WatchCache:
        win = self._windows.get(key)
        if win is None:
            win = WatchCache(self._window_floor, *self._window_bounds())
            self._windows[key] = win
        return win

    def _emit(self, ev: Event) -> None:
        now = self.clock()
        self._history.append(ev)
        if self.compaction_interval and now >= self._next_compaction:
            self._maybe_compact(now)
        win = self._windows.get(ev.key) or self._window(ev.key)
        win.add(ev, now)
        for w in self._watchers.get(ev.key, ()):
            w._dispatch(ev)
        for listener in self._listeners:
            listener(ev)

    def _maybe_compact(self, now: float) -> None:
        """The apiserver's compactor: every interval, compact etcd to the previous tick's RV."""
        if not self.compaction_interval or now < self._next_compaction:
            return
        self._compact_etcd(self._compaction_target)
        self._compaction_target = self._rv
        self._next_compaction = now + self.compaction_interval

    def _compact_etcd(self, rv: int) -> None:
        if rv <= self._compacted_rv:
            return
        self._compacted_rv = rv
        cut = bisect.bisect_right(self._history, rv, key=lambda e: e.rv)
        del self._history[:cut]

    def compact(self) -> None:
        """Forget all history now (fault injection): etcd is compacted to the current RV and
        every watch window starts over at it, so watches, continue tokens and Exact lists from
        any older RV get 410 Expired."""
        with self.lock:
            self._compact_etcd(self._rv)
            self._window_floor = self._rv
            lower, upper = self._window_bounds()
            for key in list(self._windows):
                self._windows[key] = WatchCache(self._rv, lower, upper)

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

        since_rv: replay the window's events after it (ExpiredError if it is below the window);
        None: start now. initial: first queue a synthetic ADDED for every current object
        (the watch-from-"0" and sendInitialEvents behaviour). mark_initial_end: then queue an
        (INITIAL_END, rv) marker, which the stream renders as the BOOKMARK annotated
        k8s.io/initial-events-end (WatchList).
        """
        with self.lock:
            if since_rv is not None and since_rv < self._rv:
                floor = self._window(key).floor()
                if since_rv < floor:
                    raise ExpiredError(since_rv, floor)
            start = self._rv if since_rv is None else since_rv
            w = Watcher(key, flt, max_queue or self.watch_queue_size, start)
            if initial:
                for stored in self.items(key):
                    if w._passes(stored):
                        w.items.append((ADDED, stored))
            if mark_initial_end:
                w.items.append((INITIAL_END, self._rv))
            if since_rv is not None and since_rv < self._rv:
                for ev in self._window(key).since(since_rv):
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
