"""Events on the objects a controller manages, as client-go's ``tools/record`` package posts them.

Why this is more than one POST per event: a controller that reconciles every 30 s would write a
new Event object every 30 s per Foo, flooding etcd and making ``kubectl describe`` unreadable. So,
as upstream:

- ``EventRecorder.event`` never blocks the caller and costs it only a hand-off: a small tuple
  goes into a bounded queue (1000) that sender threads drain, building, logging and writing
  the Event there; when the queue is full the event is dropped with a log line
  (``record.EventBroadcaster``, ``watch.Broadcaster`` with ``DropIfChannelFull``);
- the ``EventCorrelator`` (``correlator.py``, events_cache.go) runs before each write: it folds
  similar events into one, turns a repeat into a PATCH of its ``count``, and drops a storm;
- a failed write is retried up to 12 times, 10 s apart, unless the server said the request
  itself is wrong (``recordToSink``).

What one Event costs a sender, beyond its one request: the Event dict is built once and the
correlator changes it in place; its timestamps are formatted once per second (``_Stamps``);
the server's answer is not decoded (``RESTClient.request(decode=False)``), because all the
correlator needs of the written Event is what was sent; and the ``"event"`` line is logged at
INFO, the level of sample-controller's ``eventBroadcaster.StartStructuredLogging(0)`` (klog
``V(0)``, shown at every ``-v``). ``python -m bench.recorder_bench`` measures each part.

client-go twins: ``record.EventRecorder`` / ``EventBroadcaster`` (event.go), ``EventCorrelator``
(events_cache.go). Differences: sender threads instead of a broadcaster with watchers (we have
exactly one sink, the API), each owning the Events of a share of the objects so that one
object's Events are still written in order; and no ``StartLogging`` watcher: the senders log
each event as they build it.
"""

from __future__ import annotations

import logging
import queue
import random
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from client.errors import APIError, TransportError, is_not_found
from client.objects import Object
from client.rest import Interface, resource_path
from tools.record.correlator import EventCorrelator, EventKey

__all__ = [
    "EventRecorderInterface",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EventRecorder",
]

log = logging.getLogger(__name__)

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"

# Defaults of client-go record (event.go).
QUEUE_LENGTH = 1000  # maxQueuedEvents
MAX_TRIES_PER_EVENT = 12  # maxTriesPerEvent
RETRY_INTERVAL = 10.0  # defaultSleepDuration, seconds
# Ours: threads writing Events. client-go's sink writes one Event at a time; at a few ms a round
# trip that caps Events near 1 / RTT per second, about what two workers making one write each
# produce, so two keep up with sample-controller's default of two workers.
SENDERS = 2

# What a caller hands off: the involved object's kind, apiVersion, namespace, name, uid and
# resourceVersion as they were at the call, then type, reason, message and the call's time (unix
# nanoseconds). Everything else (the Event, its timestamps, the log line) is made by a sender.
_Recorded = tuple[str, str, str, str, str, str, str, str, str, int]


def _rfc3339(unix_s: int) -> str:
    return datetime.fromtimestamp(unix_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Stamps:
    """RFC 3339 timestamps (whole seconds, as ``metav1.Time`` marshals) of unix nanoseconds,
    the last one kept: a burst records many Events in one second, and formatting a date costs
    more than building the rest of the Event. Thread-safe: the cache is one tuple, replaced
    whole."""

    def __init__(self) -> None:
        self._last: tuple[int, str] = (-1, "")  # (unix seconds, their timestamp)

    def format(self, unix_ns: int) -> str:
        second = unix_ns // 1_000_000_000
        last = self._last
        if last[0] != second:
            last = self._last = (second, _rfc3339(second))
        return last[1]


class EventRecorderInterface(Protocol):
    """client-go ``record.EventRecorder``, the interface: what a controller calls to record an
    Event (``Event``: never blocks, may drop under load). ``EventRecorder`` below implements it;
    a test double implements it in a few lines."""

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None: ...


class EventRecorder:
    """Record Events about objects, asynchronously (client-go ``record.EventRecorder``).

    Differs: sender threads where client-go runs an ``EventBroadcaster`` with watchers.

    ``event(obj, type, reason, message)`` returns at once, having done no more than copy six
    fields of ``obj`` into a tuple and queue it: building the Event, formatting its timestamps,
    logging it and writing it happen on a sender thread, so a worker pays for the hand-off only.
    ``start()`` runs the senders; ``shutdown(timeout)`` flushes what is queued, within the
    timeout, and stops them.

    Ordering: every Event about one object goes to the same sender (chosen by the object's
    namespace and name), which writes them one at a time in the order they were recorded, as
    client-go's sink does. The correlator's state is per involved object (its keys start with
    it), so a repeat still becomes a PATCH of the Event written before it, never a second POST.
    Events about different objects are written side by side, ``senders`` at a time.
    """

    def __init__(
        self,
        rest: Interface,
        component: str,
        host: str | None = None,
        field_manager: str | None = None,
        queue_length: int = QUEUE_LENGTH,
        max_tries: int = MAX_TRIES_PER_EVENT,
        retry_interval: float = RETRY_INTERVAL,
        correlator: EventCorrelator | None = None,
        senders: int = SENDERS,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self._rest = rest  # writes Events through the API
        self._component = component  # source.component and reportingComponent
        self._host = host or socket.gethostname()  # source.host and reportingInstance
        self._field_manager = field_manager or component  # ?fieldManager= on every write
        # one queue per sender; None, put by shutdown, ends that sender. SimpleQueue (C, no
        # Condition) keeps the hand-off cheap; the bound is kept by _queued below.
        self._queues: list[queue.SimpleQueue[_Recorded | None]] = [
            queue.SimpleQueue() for _ in range(max(1, senders))
        ]
        self._queue_length = queue_length  # events waiting, all senders together, at most
        self._queued = 0  # events waiting now (recorded, not yet taken by a sender)
        self._queued_lock = threading.Lock()
        self._max_tries = max_tries  # write attempts per event before it is dropped
        self._retry_interval = retry_interval  # seconds between attempts
        self._correlator = correlator or EventCorrelator()
        self._clock = clock  # unix nanoseconds of a call: the Event's name and timestamps
        self._stamps = _Stamps()  # the timestamps' text, formatted once per second
        self._stop = threading.Event()  # set by shutdown: stop retrying, flush what is queued
        self._threads: list[threading.Thread] = []  # the senders, once started
        self.dropped = 0  # events dropped because the queue was full (for tests and metrics)

    # -- producing ----------------------------------------------------------------------------

    def event(self, obj: Object, event_type: str, reason: str, message: str) -> None:
        """Record an event about obj (a Foo, a Deployment, ...). Never blocks."""
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        recorded: _Recorded = (
            obj.get("kind", ""),
            obj.get("apiVersion", ""),
            namespace,
            name,
            meta.get("uid", ""),
            meta.get("resourceVersion", ""),
            event_type,
            reason,
            message,
            self._clock(),
        )
        with self._queued_lock:
            full = self._queued >= self._queue_length
            if not full:
                self._queued += 1
        if full:
            # client-go's ActionOrDrop: a burst of Events must not stall the caller
            self.dropped += 1
            log.error("event queue full, dropping event", extra={"reason": reason})
            return
        queues = self._queues
        queues[hash((namespace, name)) % len(queues) if len(queues) > 1 else 0].put(recorded)

    def eventf(self, obj: Object, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def _make_event(self, recorded: _Recorded) -> Object:
        """The Event a recorded tuple stands for (client-go ``makeEvent``), and its log line."""
        kind, api_version, namespace, name, uid, rv, event_type, reason, message, at = recorded
        log.info(
            "event",
            extra={
                "object": f"{namespace}/{name}",
                "kind": kind,
                "type": event_type,
                "reason": reason,
                "event_message": message,
            },
        )
        stamp = self._stamps.format(at)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                # "<object name>.<hex unix nanos>", as makeEvent
                "name": f"{name}.{at:x}",
                "namespace": namespace or "default",
            },
            "involvedObject": {
                "kind": kind,
                "namespace": namespace,
                "name": name,
                "uid": uid,
                "apiVersion": api_version,
                "resourceVersion": rv,
            },
            "reason": reason,
            "message": message,
            "source": {"component": self._component, "host": self._host},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": event_type,
            "reportingComponent": self._component,
            "reportingInstance": self._host,
        }

    # -- sending ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._threads:
            return
        for i, q in enumerate(self._queues):
            t = threading.Thread(target=self._run, args=(q,), name=f"event-sender-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Flush queued events (no more retries), stop the senders; True when all were sent.

        Returns within ``timeout`` even when a sender is stuck behind a write to a hung
        server; the senders, daemons, are then left to end with the process.
        """
        self._stop.set()
        if not self._threads:
            with self._queued_lock:
                return self._queued == 0
        deadline = time.monotonic() + timeout
        for q in self._queues:
            q.put(None)  # after what is queued: wakes its sender once that is drained
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def _run(self, q: queue.SimpleQueue[_Recorded | None]) -> None:
        while True:
            recorded = q.get()
            if recorded is None:
                return
            with self._queued_lock:
                self._queued -= 1
            try:
                self._record_to_sink(self._make_event(recorded))
            except Exception:  # the sender must outlive any single bad event
                log.exception("unexpected error while writing an event")

    def _record_to_sink(self, ev: Object) -> None:
        result = self._correlator.correlate(ev)
        if result.skip or result.event is None:
            return
        for attempt in range(1, self._max_tries + 1):
            written = self._write(result.event, result.patch, result.key)
            if written:
                return
            if self._stop.is_set() or attempt == self._max_tries:
                break
            # As upstream, the first retry waits a random part of the interval, so that many
            # recorders that lost the server together do not retry in lockstep.
            delay = self._retry_interval * (random.random() if attempt == 1 else 1.0)
            if self._stop.wait(delay):
                break
        log.error(
            "dropping event after %d attempts",
            attempt,
            extra={"reason": ev.get("reason"), "event_message": ev.get("message")},
        )

    def _write(self, ev: Object, patch: Object | None, key: EventKey) -> bool:
        """One attempt; True when done (written, or not worth retrying).

        The server's answer is not decoded (``decode=False``): what the correlator remembers
        of a written Event (its name, count and firstTimestamp) is what was sent, which the
        server stores as it is. client-go's ``recordToSink`` decodes the answer into a
        ``v1.Event`` and remembers the same three fields of it.
        """
        namespace = ev["metadata"]["namespace"]
        params: dict[str, Any] = {"fieldManager": self._field_manager}
        try:
            if patch is not None:
                try:
                    self._rest.request(
                        "PATCH",
                        resource_path("", "v1", "events", namespace, ev["metadata"]["name"]),
                        params=params,
                        body=patch,
                        content_type="application/strategic-merge-patch+json",
                        decode=False,
                    )
                except APIError as err:
                    if not is_not_found(err):
                        raise
                    # The Event expired or was deleted: write it anew (recordToSink does).
                    self._correlator.forget(key)
                    ev = dict(ev, count=1, firstTimestamp=ev["lastTimestamp"])
                    ev["metadata"] = {
                        "name": f"{ev['involvedObject']['name']}.{self._clock():x}",
                        "namespace": namespace,
                    }
                    self._create(ev, params)
            else:
                self._create(ev, params)
        except TransportError as err:
            log.warning("could not write event, will retry: %s", err)
            return False
        except APIError as err:
            if err.code in (429,) or err.code >= 500:
                log.warning("could not write event, will retry: %s", err)
                return False
            # 4xx: the request itself is wrong (namespace terminating, invalid, ...); upstream
            # gives up at once on these too.
            log.error("server rejected event, not retrying: %s", err)
            return True
        self._correlator.update_state(ev, key)
        return True

    def _create(self, ev: Object, params: dict[str, Any]) -> None:
        self._rest.request(
            "POST",
            resource_path("", "v1", "events", ev["metadata"]["namespace"]),
            params=params,
            body=ev,
            decode=False,
        )
