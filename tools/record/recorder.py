"""Events on the objects a controller manages, as client-go's ``tools/record`` package posts them.

Why this is more than one POST per event: a controller that reconciles every 30 s would write a
new Event object every 30 s per Foo, flooding etcd and making ``kubectl describe`` unreadable. So,
as upstream:

- ``EventRecorder.event`` never blocks the caller: events go into a bounded queue (1000) that a
  sender thread drains; when the queue is full the event is dropped with a log line
  (``record.EventBroadcaster``, ``watch.Broadcaster`` with ``DropIfChannelFull``);
- the ``EventCorrelator`` (``correlator.py``, events_cache.go) runs before each write: it folds
  similar events into one, turns a repeat into a PATCH of its ``count``, and drops a storm;
- a failed write is retried up to 12 times, 10 s apart, unless the server said the request
  itself is wrong (``recordToSink``).

client-go twins: ``record.EventRecorder`` / ``EventBroadcaster`` (event.go), ``EventCorrelator``
(events_cache.go). Differences: one sender thread instead of a broadcaster with watchers (we have
exactly one sink, the API), and no ``StartLogging`` watcher: the recorder logs each event itself.
"""

from __future__ import annotations

import logging
import queue
import random
import socket
import threading
import time
from datetime import UTC, datetime
from typing import Any

from client.errors import APIError, TransportError, is_not_found
from client.objects import Object
from client.rest import Interface, resource_path
from tools.record.correlator import EventCorrelator, EventKey

__all__ = [
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


def _now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    """Record Events about objects, asynchronously (client-go ``record.EventRecorder``).

    Differs: one sender thread where client-go runs an ``EventBroadcaster`` with watchers.

    ``event(obj, type, reason, message)`` returns at once. ``start()`` runs the sender thread;
    ``shutdown(timeout)`` flushes what is queued, within the timeout, and stops it.
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
    ) -> None:
        self._rest = rest  # writes Events through the API
        self._component = component  # source.component and reportingComponent
        self._host = host or socket.gethostname()  # source.host and reportingInstance
        self._field_manager = field_manager or component  # ?fieldManager= on every write
        # events waiting for the sender; None, put by shutdown, ends it
        self._queue: queue.Queue[Object | None] = queue.Queue(maxsize=queue_length)
        self._max_tries = max_tries  # write attempts per event before it is dropped
        self._retry_interval = retry_interval  # seconds between attempts
        self._correlator = correlator or EventCorrelator()
        self._stop = threading.Event()  # set by shutdown: stop retrying, flush what is queued
        self._thread: threading.Thread | None = None  # the sender
        self.dropped = 0  # events dropped because the queue was full (for tests and metrics)

    # -- producing ----------------------------------------------------------------------------

    def event(self, obj: Object, event_type: str, reason: str, message: str) -> None:
        """Record an event about obj (a Foo, a Deployment, ...). Never blocks."""
        meta = obj.get("metadata") or {}
        now = _now_rfc3339()
        namespace = meta.get("namespace") or "default"
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                # "<object name>.<hex unix nanos>", as makeEvent
                "name": f"{meta.get('name', '')}.{time.time_ns():x}",
                "namespace": namespace,
            },
            "involvedObject": {
                "kind": obj.get("kind", ""),
                "namespace": meta.get("namespace", ""),
                "name": meta.get("name", ""),
                "uid": meta.get("uid", ""),
                "apiVersion": obj.get("apiVersion", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": reason,
            "message": message,
            "source": {"component": self._component, "host": self._host},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": event_type,
            "reportingComponent": self._component,
            "reportingInstance": self._host,
        }
        log.info(
            "event",
            extra={
                "object": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                "kind": obj.get("kind", ""),
                "type": event_type,
                "reason": reason,
                "event_message": message,
            },
        )
        try:
            self._queue.put_nowait(ev)
        except queue.Full:
            self.dropped += 1
            log.error("event queue full, dropping event", extra={"reason": reason})

    def eventf(self, obj: Object, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    # -- sending ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="event-sender", daemon=True)
            self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Flush queued events (no more retries), stop the sender; True when all were sent.

        Returns within ``timeout`` even when the queue is full behind a write to a hung server;
        the sender, a daemon, is then left to end with the process.
        """
        self._stop.set()
        if self._thread is None:
            return self._queue.empty()
        deadline = time.monotonic() + timeout
        try:
            self._queue.put(None, timeout=timeout)  # wakes the sender once the queue is drained
        except queue.Full:
            return False
        self._thread.join(max(0.0, deadline - time.monotonic()))
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            ev = self._queue.get()
            if ev is None:
                return
            try:
                self._record_to_sink(ev)
            except Exception:  # noqa: BLE001 - the sender must outlive any single bad event
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
        """One attempt; True when done (written, or not worth retrying)."""
        namespace = ev["metadata"]["namespace"]
        params: dict[str, Any] = {"fieldManager": self._field_manager}
        try:
            if patch is not None:
                try:
                    stored = self._rest.request(
                        "PATCH",
                        resource_path("", "v1", "events", namespace, ev["metadata"]["name"]),
                        params=params,
                        body=patch,
                        content_type="application/strategic-merge-patch+json",
                    )
                except APIError as err:
                    if not is_not_found(err):
                        raise
                    # The Event expired or was deleted: write it anew (recordToSink does).
                    self._correlator.forget(key)
                    ev = dict(ev, count=1, firstTimestamp=ev["lastTimestamp"])
                    ev["metadata"] = {
                        "name": f"{ev['involvedObject']['name']}.{time.time_ns():x}",
                        "namespace": namespace,
                    }
                    stored = self._create(ev, params)
            else:
                stored = self._create(ev, params)
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
        self._correlator.update_state(stored, key)
        return True

    def _create(self, ev: Object, params: dict[str, Any]) -> Object:
        return self._rest.request(
            "POST",
            resource_path("", "v1", "events", ev["metadata"]["namespace"]),
            params=params,
            body=ev,
        )
