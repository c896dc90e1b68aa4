"""The event correlator: what to write for each Event, so a busy controller does not flood etcd.

client-go twin: ``tools/record/events_cache.go`` (``EventCorrelator`` with ``EventAggregator``,
``eventLogger`` and ``EventSourceObjectSpamFilter``). Same limits and the same order as upstream:

1. the *aggregator* folds 10 events that differ only in message, within 10 minutes, into one
   "(combined from similar events): ..." event;
2. the *logger* recognises an event identical to one already written and turns the write
   into a PATCH of that Event's ``count`` and ``lastTimestamp``, so ``kubectl describe``
   shows one line "x42 over 21m" instead of 42 lines;
3. the *spam filter*, a token bucket per involved object (burst 25, one token per 5 min),
   drops what is left of a storm.

It is pure bookkeeping, with no I/O: the recorder (``recorder.py``) asks it before each write.
It works on the Event the recorder built for that one write, in place: the involved object's
key is read once and shared by the three stages, and a combined or repeated Event is the same
dict with its message, count or name changed (client-go copies the Event first because a
broadcaster may hand one Event to several watchers; ours has one sink).

What the three stages remember is kept small, since they remember it for up to 4096 objects
each: the keys nest instead of repeating (an Event's key holds its aggregate key, which holds
the object's key the spam filter uses, so all three share one tuple of the object's fields),
and the distinct messages of an aggregate are a tuple, not a set (nearly always one message;
never more than ten). That took what the correlator keeps of an Event from about 1,020 to
about 690 bytes (docs/benchmarks.md, Memory of a burst).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from client.objects import Object

__all__ = ["CorrelateResult", "EventCorrelator"]

# Defaults of client-go record (events_cache.go).
LRU_CACHE_SIZE = 4096  # maxLruCacheEntries
AGGREGATE_MAX_EVENTS = 10  # defaultAggregateMaxEvents
AGGREGATE_INTERVAL = 600.0  # defaultAggregateIntervalInSeconds
SPAM_BURST = 25  # defaultSpamBurst
SPAM_QPS = 1.0 / 300.0  # defaultSpamQPS: one token per 5 minutes

_COMBINED_PREFIX = "(combined from similar events): "

ObjectKey = tuple[str, str, str, str, str, str, str]
"""The source and the involved object of an Event: what the spam filter counts by (client-go
``getSpamKey``)."""

AggregateKey = tuple[ObjectKey, str, str]
"""The object key with the Event's type and reason: what the aggregator groups by."""

EventKey = tuple[object, ...]
"""What the logger remembers a written Event by: ``(aggregate key, message)`` for an Event's
own key (client-go ``getEventKey``), or the aggregate key alone for a combined Event. Nested,
so the object's fields are held once for all three stages."""

_V = TypeVar("_V")


class _LRU(OrderedDict[EventKey, _V]):
    """A size-bounded dict that forgets the least recently used key (golang lru.Cache)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size

    def get_recent(self, key: EventKey) -> _V | None:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: EventKey, value: _V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self._size:
            self.popitem(last=False)


def _object_key(event: Object) -> ObjectKey:
    io = event["involvedObject"]
    src = event.get("source") or {}
    return (
        src.get("component", ""),
        src.get("host", ""),
        io.get("kind", ""),
        io.get("namespace", ""),
        io.get("name", ""),
        io.get("uid", ""),
        io.get("apiVersion", ""),
    )


@dataclass(slots=True)
class _SpamRecord:
    tokens: float  # tokens left in this object's bucket at `last`
    last: float  # monotonic time tokens was computed


@dataclass(slots=True)
class _AggregateRecord:
    # distinct messages seen in the interval (upstream's set; a tuple is a fifth of a set's
    # size, and it holds one message nearly always, never more than AGGREGATE_MAX_EVENTS)
    local_keys: tuple[str, ...]
    last: float  # monotonic time of the newest of them


@dataclass(slots=True)
class _LogRecord:
    count: int  # the count written to the server for this Event
    first_timestamp: str  # firstTimestamp of the Event, kept across repeats
    name: str  # metadata.name of the Event object on the server


@dataclass(slots=True)
class CorrelateResult:
    """What to write for one event: the event, and whether it is a PATCH of an existing one
    (client-go ``record.EventCorrelateResult``)."""

    event: Object | None  # None when skipped
    patch: Object | None = None  # the body of a strategic merge patch, when it repeats an Event
    skip: bool = False  # dropped by the spam filter
    # what the written Event is remembered under: the event's own key, or for a combined event
    # the key of its reason (client-go's aggregate key), so later combined ones patch the same
    key: EventKey = ()


class EventCorrelator:
    """Aggregate, deduplicate and rate-limit events before they are written (client-go
    ``record.EventCorrelator``, events_cache.go).

    Thread-safe; the sender thread is the only writer in practice, but tests and the recorder's
    callers may call ``correlate`` concurrently.
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, cache_size: int = LRU_CACHE_SIZE
    ) -> None:
        self._clock = clock  # monotonic seconds; injectable for tests
        self._lock = threading.Lock()
        self._spam: _LRU[_SpamRecord] = _LRU(cache_size)  # ObjectKey -> its token bucket
        self._aggregate: _LRU[_AggregateRecord] = _LRU(cache_size)  # AggregateKey -> messages
        self._log: _LRU[_LogRecord] = _LRU(cache_size)  # exact event key -> the Event written

    def correlate(self, event: Object) -> CorrelateResult:
        """What to write for ``event``; the result's ``event`` is ``event`` itself, changed in
        place (message, count, firstTimestamp, metadata.name) where a stage says so."""
        object_key = _object_key(event)
        with self._lock:
            # one reading of the clock for the aggregator and the spam filter
            now = self._clock()
            key = self._aggregate_event(event, object_key, now)
            patch = self._observe(event, key)
            if not self._spam_allows(object_key, now):
                return CorrelateResult(None, skip=True)
            return CorrelateResult(event, patch, key=key)

    def update_state(self, written: Object, key: EventKey | None = None) -> None:
        """Remember what the server stored under ``key`` (a correlate result's; by default the
        written event's own), so the next event with that key patches it."""
        with self._lock:
            self._log.put(
                _event_key(written) if key is None else key,
                _LogRecord(
                    count=int(written.get("count") or 1),
                    first_timestamp=written.get("firstTimestamp") or "",
                    name=written["metadata"]["name"],
                ),
            )

    def forget(self, key: EventKey) -> None:
        """Drop the memory of an Event the server no longer has (a PATCH answered 404)."""
        with self._lock:
            self._log.pop(key, None)

    # -- the three stages ---------------------------------------------------------------------

    def _aggregate_event(self, event: Object, object_key: ObjectKey, now: float) -> EventKey:
        """The key the event is remembered under, its message combined once the threshold is
        reached (client-go ``EventAggregate``)."""
        # the aggregate key: the object, type and reason (message left out)
        key: AggregateKey = (object_key, event.get("type", ""), event.get("reason", ""))
        message = event.get("message", "")
        record = self._aggregate.get_recent(key)
        if record is None or now - record.last > AGGREGATE_INTERVAL:
            record = _AggregateRecord((message,), now)
        elif message not in record.local_keys:
            record.local_keys += (message,)
        record.last = now
        self._aggregate.put(key, record)
        if len(record.local_keys) < AGGREGATE_MAX_EVENTS:
            return (key, message)  # the event's own key (_event_key)
        # the messages need not grow past the threshold (upstream's PopAny): drop the newest
        record.local_keys = record.local_keys[:-1]
        event["message"] = _COMBINED_PREFIX + message
        return key

    def _observe(self, event: Object, key: EventKey) -> Object | None:
        record = self._log.get_recent(key)
        if record is None:
            return None
        event["count"] = record.count + 1
        event["firstTimestamp"] = record.first_timestamp
        event["metadata"]["name"] = record.name
        return {
            "count": event["count"],
            "lastTimestamp": event["lastTimestamp"],
            "message": event["message"],
        }

    def _spam_allows(self, key: ObjectKey, now: float) -> bool:
        record = self._spam.get_recent(key)
        if record is None:
            record = _SpamRecord(tokens=float(SPAM_BURST), last=now)
        record.tokens = min(SPAM_BURST, record.tokens + (now - record.last) * SPAM_QPS)
        record.last = now
        allowed = record.tokens >= 1.0
        if allowed:
            record.tokens -= 1.0
        self._spam.put(key, record)
        return allowed


def _event_key(event: Object) -> EventKey:
    aggregate: AggregateKey = (_object_key(event), event.get("type", ""), event.get("reason", ""))
    return (aggregate, event.get("message", ""))
