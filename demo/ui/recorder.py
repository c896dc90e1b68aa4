"""What the page draws: the controller's own records, sorted by the pipeline stage they report.

No client-go twin: part of the demo. As ``demo.narration`` does for the terminal, every entry
comes from something the controller or the server already reports, never from a second copy of
its logic:

- the ``--trace`` records (logger ``runtime.trace``: ``informer``, ``enqueue``, ``dequeue``,
  ``own write``, ``owner lookup``, ``status write`` ...) and the controller's log records
  (``creating deployment``, ``successfully synced``, ``error syncing, requeuing``, ``event``),
  each shown beside the line ``sample-controller --trace`` prints for it
  (``runtime.log.TextFormatter``);
- the reflector's log records (logger ``informer``: a watch closed, a list done, a WatchList
  stream, a 410);
- kubesim's request log: every list, watch and write, with its query and its answer;
- what the queue does on its own (``tap_adds``, which wraps this one queue instance's ``add``
  and ``add_after`` as ``demo.narration.tap_queue`` wraps ``add``): each retry's backoff, as
  ``add_rate_limited`` passes the rate limiter's delay on, and the add that ends it
  (``--trace`` logs only the handlers' adds).

``snapshot`` reads the rest at each poll: the informers' metrics from the controller's registry,
their caches (``get_indexer().list()``), ``last_sync_resource_version()``, and the workqueue's
read-only ``snapshot()``, ``waiting()`` and ``num_requeues()``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry

from controller.main import Components
from runtime.log import TextFormatter
from runtime.trace import TRACE_LOGGER

__all__ = ["Recorder"]

# The stages, in pipeline order (the page draws one box each; demo/ui/words.py names them).
STAGES = (
    "apiserver",
    "reflector",
    "fifo",
    "indexer",
    "handlers",
    "queue",
    "workers",
    "writes",
    "events",
)

# The controller's log messages the page shows, and the stage each reports.
CONTROLLER_MESSAGES = {
    "creating deployment": "workers",
    "updating deployment replicas": "workers",
    "successfully synced": "workers",
    "error syncing, requeuing": "workers",
    "conflict, requeuing": "workers",
    "foo no longer exists": "workers",
    "foo is being deleted, nothing to do": "workers",
    "foo deleted during sync, status not written": "workers",
    "recovered deleted object from tombstone": "handlers",
    "event": "events",
}
# The --trace records and their stage ("informer" is the notification: after the FIFO and the
# Indexer, the moment the handlers are called).
TRACE_MESSAGES = {
    "informer": "handlers",
    "enqueue": "queue",
    "own write": "handlers",
    "owner lookup": "handlers",
    "index lookup": "handlers",
    "dequeue": "workers",
    "status write": "workers",
    "cache behind our write": "workers",
}
# Syncs end with one of these (the worker is free again).
SYNC_ENDS = {
    "successfully synced",
    "error syncing, requeuing",
    "conflict, requeuing",
    "foo no longer exists",
    "foo is being deleted, nothing to do",
    "foo deleted during sync, status not written",
    "requeuing after a delay",
}
WRITE_VERBS = ("create", "update", "patch", "delete")
# the reflectors' names (their log lines start with them), and the kind each lists and watches
REFLECTOR_NAMES = {
    "reflector-foos.samplecontroller.k8s.io": "Foo reflector",
    "reflector-deployments.apps": "Deployment reflector",
}


class Recorder(logging.Handler):
    """Collects entries (``{"seq", "t", "stage", "text", "trace"}``) from the controller's log
    records and kubesim's request log, and answers the page's polls (no client-go twin)."""

    def __init__(self, controller_agent: str, user_agent: str, size: int = 2000) -> None:
        super().__init__(level=logging.DEBUG)
        self.controller_agent, self.user_agent = controller_agent, user_agent
        # renders a record as sample-controller prints it (--trace, and its log at -v 4)
        self.line_formatter = TextFormatter()
        self._lock = threading.Lock()
        self._entries: deque[dict[str, Any]] = deque(maxlen=size)
        self._seq = 0
        self._start = time.monotonic()
        # the same instant on the wall clock: kubesim's request log has wall-clock times
        self._start_wall = time.time()
        # worker thread name -> the key its last dequeue took (held while the key is processing)
        self.worker_keys: dict[str, str] = {}
        # the record messages seen, for the demo's waits (e.g. "status write" before a 409)
        self._listeners: list[Callable[[logging.LogRecord], None]] = []
        # key -> the delay of its last add_after (its backoff, when a retry put it there)
        self.delays: dict[str, float] = {}
        self.components: Components | None = None
        self.registry: CollectorRegistry | None = None
        # the last request-log record turned into an entry (the log is bounded: found by identity)
        self._last_request: Any = None

    # -- entries ------------------------------------------------------------------------------

    def add(
        self, stage: str, text: str, trace: str = "", at: float | None = None, **fields: Any
    ) -> None:
        """One entry; ``at`` is when it happened (wall clock), if not now."""
        t = time.monotonic() - self._start
        if at is not None:
            t = at - self._start_wall
        with self._lock:
            self._seq += 1
            self._entries.append(
                {
                    "seq": self._seq,
                    "t": round(t, 3),
                    "stage": stage,
                    "text": text,
                    "trace": trace,
                    **fields,
                }
            )

    def since(self, seq: int) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._entries if e["seq"] > seq]

    def on_record(self, listener: Callable[[logging.LogRecord], None]) -> None:
        """Call ``listener`` with every record the handler receives (the demo's waits)."""
        self._listeners.append(listener)

    def off_record(self, listener: Callable[[logging.LogRecord], None]) -> None:
        self._listeners.remove(listener)

    # -- the controller's records -------------------------------------------------------------

    def emit(self, record: logging.LogRecord) -> None:
        for listener in list(self._listeners):
            listener(record)
        message = record.getMessage()
        fields: Any = record
        if message == "dequeue":
            self.worker_keys[record.threadName or ""] = fields.key
        if record.name == TRACE_LOGGER:
            stage = TRACE_MESSAGES.get(message, "workers")
        elif record.name == "informer.reflector":
            stage = "reflector"
        else:
            stage = CONTROLLER_MESSAGES.get(message, "")
            if not stage and message not in SYNC_ENDS:
                return
            stage = stage or "workers"
        if message == "informer" and fields.event == "resync":
            # a periodic resync: nothing changed (the trace marks it; the page leaves it out)
            return
        extra: dict[str, Any] = {"message": message, "thread": record.threadName}
        for name in ("key", "kind", "event", "object", "rv", "requeues", "reason"):
            if hasattr(record, name):
                extra[name] = getattr(record, name)
        if message in ("error syncing, requeuing", "conflict, requeuing"):
            extra["backoff"] = self._backoff_of(fields.key)
        if message in SYNC_ENDS:
            extra["ends"] = True
        self.add(stage, self._text(message, record), self.line_formatter.format(record), **extra)

    def _text(self, message: str, r: Any) -> str:
        """The entry's one-line summary (the trace line beside it has every field)."""
        verbs = {"add": "ADDED", "update": "MODIFIED", "delete": "DELETED"}
        try:
            if message == "informer":
                return f"{r.kind} {r.object} {verbs.get(r.event, r.event)} (rv {r.rv})"
            if message == "event":
                return f"{r.type} {r.reason} {r.kind} {r.object}: {r.event_message}"
            if message in ("error syncing, requeuing", "conflict, requeuing"):
                return f"{r.key}: retry #{r.requeues}: {getattr(r, 'error', '')}"
            if hasattr(r, "key"):
                return f"{message}: {r.key}"
            if hasattr(r, "object"):
                return f"{message}: {r.object}"
        except AttributeError:
            pass
        text = message if not r.args else r.getMessage()
        # the reflector's own name prefixes its lines: the kind is shorter to read
        for name, kind in REFLECTOR_NAMES.items():
            text = text.replace(name, kind)
        return text

    def _backoff_of(self, key: str) -> float | None:
        """The delay the rate limiter gave the key's last retry (the worker logs after
        add_rate_limited, which passes it to add_after: see ``tap_adds``)."""
        delay = self.delays.get(key)
        return None if delay is None else round(delay, 4)

    def tap_adds(self, components: Components) -> None:
        """Show what the queue does on its own: a key delayed by its backoff (the rate
        limiter's delay, as ``add_rate_limited`` hands it to ``add_after``), and the add the
        delaying queue makes when that backoff is over (``--trace`` logs only the handlers'
        adds). Both wrap this one instance's methods, as ``demo.narration.tap_queue`` does."""
        queue: Any = components.controller.workqueue
        add, add_after = queue.add, queue.add_after

        def add_and_show(key: str) -> None:
            if threading.current_thread().name.startswith("workqueue-waiting"):
                self.add("queue", f"backoff over: {key} added again", "", key=key, message="re-add")
            add(key)

        def add_after_and_show(key: str, delay: float) -> None:
            self.delays[key] = delay
            add_after(key, delay)

        queue.add = add_and_show
        queue.add_after = add_after_and_show

    # -- kubesim's request log ----------------------------------------------------------------

    def poll_requests(self, sim: Any) -> None:
        """Turn the requests served since the last poll into entries: the controller's lists
        and watches (Reflector), its writes and Events, and the page's own requests."""
        log = sim.request_log
        start = 0
        if self._last_request is not None:
            for i in range(len(log) - 1, -1, -1):
                if log[i] is self._last_request:
                    start = i + 1
                    break
        for r in log[start:]:
            self._request(r)
        if log:
            self._last_request = log[-1]

    def _request(self, r: Any) -> None:
        target = "/".join(p for p in (r.namespace, r.name) if p) or "-"
        # the answer's time: a write's effect, or the end of a watch
        at = r.time + r.duration
        query = {k: v[-1] for k, v in parse_qs(r.query).items()}
        if r.user_agent == self.user_agent:
            if r.verb in WRITE_VERBS:
                self.add(
                    "apiserver", f"you: {r.verb.upper()} {r.resource} {target} -> {r.code}", at=at
                )
            return
        if r.user_agent != self.controller_agent:
            return
        if r.resource == "events":
            if r.verb in WRITE_VERBS:
                self.add(
                    "events", f"{r.verb.upper()} events {target} -> {r.code}", code=r.code, at=at
                )
            return
        if r.verb in ("list", "watch"):
            shown = ("resourceVersion", "resourceVersionMatch", "sendInitialEvents")
            params = " ".join(f"{k}={query[k]!r}" for k in shown if k in query)
            if r.verb == "watch":
                mode = "WatchList" if query.get("sendInitialEvents") == "true" else "watch"
                text = f"{mode} {r.resource} {params} ended after {r.duration:.1f}s -> {r.code}"
            else:
                text = f"LIST {r.resource} {params} -> {r.code}"
            self.add("reflector", text, code=r.code, resource=r.resource, at=at)
            return
        if r.verb in WRITE_VERBS:
            self.add(
                "writes", f"{r.verb.upper()} {r.resource} {target} -> {r.code}", code=r.code, at=at
            )

    # -- the state at one moment ----------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The informers, the queue and the workers as they are now."""
        components = self.components
        if components is None:
            return {}
        metrics = self._metrics()
        informers = {}
        for kind, informer in (
            ("Foo", components.foo_informer),
            ("Deployment", components.deployment_informer),
        ):
            resource = "foos" if kind == "Foo" else "deployments"
            objects: list[dict[str, Any]] = []
            for obj in informer.get_indexer().list():
                meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
                status = obj.get("status") or {}
                objects.append(
                    {
                        "key": f"{meta.get('namespace')}/{meta.get('name')}",
                        "rv": meta.get("resourceVersion"),
                        "replicas": spec.get("replicas"),
                        "available": status.get("availableReplicas"),
                        "owner": next(
                            (
                                f"{o.get('kind')}/{o.get('name')}"
                                for o in meta.get("ownerReferences") or []
                                if o.get("controller")
                            ),
                            "",
                        ),
                    }
                )
            m = metrics.get(resource, {})
            informers[kind] = {
                "resourceVersion": informer.last_sync_resource_version(),
                "synced": informer.has_synced(),
                "lists": m.get("informer_lists_total", 0),
                "relists": m.get("informer_relists_total", 0),
                "watches": m.get("informer_watches_total", 0),
                "watchEvents": m.get("informer_watch_events_total", 0),
                "fifo": m.get("informer_queued_items", 0),
                "objects": sorted(objects, key=lambda o: str(o["key"])),
            }
        queue = components.controller.workqueue
        snap = queue.snapshot()
        waiting = queue.waiting()
        keys = set(snap.dirty) | set(snap.processing) | {k for k, _ in waiting}
        requeues = {str(k): queue.num_requeues(k) for k in keys}
        workers = {}
        for thread in sorted(t.name for t in threading.enumerate()):
            if thread.startswith("foo-worker-"):
                key = self.worker_keys.get(thread)
                workers[thread] = key if key in snap.processing else None
        return {
            "informers": informers,
            "queue": {
                "queued": [str(k) for k in snap.queued],
                "dirty": sorted(str(k) for k in snap.dirty),
                "processing": sorted(str(k) for k in snap.processing),
                "waiting": [{"key": str(k), "left": round(s, 3)} for k, s in waiting],
                "requeues": requeues,
                "adds": metrics.get("foo", {}).get("workqueue_adds_total", 0),
                "retries": metrics.get("foo", {}).get("workqueue_retries_total", 0),
            },
            "workers": workers,
        }

    def _metrics(self) -> dict[str, dict[str, float]]:
        """Sample values by resource (informer metrics) or queue name (workqueue metrics)."""
        out: dict[str, dict[str, float]] = {}
        if self.registry is None:
            return out
        for family in self.registry.collect():
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                owner = sample.labels.get("resource") or sample.labels.get("name", "")
                out.setdefault(owner, {})[sample.name] = sample.value
        return out
