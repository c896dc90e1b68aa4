"""The demo's lines: what the controller does, as the reader should see it.

No client-go twin: part of the demo. Every line comes from something the controller or the
server already reports, never from a second copy of its logic:

- ``watch`` lines are the controller's own ``--trace`` records (``runtime.trace``: one
  ``"informer"`` record per notification), rendered by ``Narrator``;
- ``sync`` and ``event`` lines are its log records (reconcile results, recorded Events);
- ``queue`` lines come from ``tap_queue``, which sees every key added to the workqueue, also
  the re-adds after a backoff;
- ``api`` lines are the writes in kubesim's request log (``RequestTap``).

The lines are told in causal order: a ``sync`` or ``event`` line reports writes that have
already been answered, and kubesim logs a request before it sends the answer, so the request
log is flushed (``RequestTap.flush``) before such a line is printed, and the writes come first.
A ``watch`` line of a Foo the controller itself wrote says so: ``tap_writes`` remembers the
resourceVersions of the controller's status writes, and the line waits for a write still in
flight, since its watch event may reach the informer before its answer reaches the writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from client.rest import RESTClient, resource_path
from controller.foo_controller import Controller
from demo.workloads import pod_ready_column, pod_restarts, pod_status
from runtime.manager import USER_AGENT

__all__ = [
    "DEPLOYMENTS",
    "FOOS",
    "Narrator",
    "RequestTap",
    "event_object",
    "headline",
    "print_lines",
    "print_tables",
    "say",
    "table",
    "tap_queue",
    "tap_writes",
]

FOOS = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENTS = ("apps", "v1", "deployments")


def foreign_deployment(name: str = "not-ours") -> dict[str, Any]:
    """A Deployment nobody owns: a Foo naming it is blocked (ErrResourceExists), as on a cluster
    where someone else made a Deployment of that name first (the demo's step 4, demo-ui's
    "collide" control)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "other"}},
            "template": {
                "metadata": {"labels": {"app": "other"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


_start = time.monotonic()
_print_lock = threading.Lock()  # lines from several threads must not interleave mid-line
# the request log's reader, flushed before a sync or event line (set by RequestTap.start)
_tap: RequestTap | None = None
# the controller's own writes of Foos, for their watch lines (set by tap_writes)
_own_writes: OwnWrites | None = None


def elapsed() -> float:
    """Seconds since the demo started (the first column of every line)."""
    return time.monotonic() - _start


def say(kind: str, text: str, after_writes: bool = False) -> None:
    """Print one line; ``after_writes``: it reports writes already answered, so the request
    log is flushed first (sync and event lines always are)."""
    if (after_writes or kind in ("sync", "event")) and _tap is not None:
        _tap.flush()
    with _print_lock:
        print(f"  {elapsed():6.2f}s  {kind:<7} {text}", flush=True)


def headline(text: str) -> None:
    with _print_lock:
        print(f"\n== {text}", flush=True)


def print_lines(*lines: str) -> None:
    """Print a block (a table) in one piece: watch lines from other threads wait for it."""
    with _print_lock:
        for line in lines:
            print(line)


# What a watch line of the controller's own write of a Foo says after its resourceVersion.
OWN_WRITE = "the controller's own status write"

# The informer's notification, as kubectl --watch names event types.
WATCH_VERBS = {"add": "ADDED", "update": "MODIFIED", "delete": "DELETED"}


class Narrator(logging.Handler):
    """Turns the controller's log and trace records into the demo's ``watch``, ``sync`` and
    ``event`` lines (no client-go twin: part of the demo)."""

    INTERESTING: dict[str, Callable[[Any], str]] = {
        "creating deployment": lambda r: f"{r.key}: creating deployment {r.deployment}",
        "updating deployment replicas": lambda r: (
            f"{r.key}: deployment {r.deployment} has {r.was} replicas, want {r.replicas}: updating"
        ),
        "successfully synced": lambda r: f"{r.key}: synced in {float(r.duration) * 1000:.2f} ms",
        "error syncing, requeuing": lambda r: (
            f"{r.key}: error, retry #{r.requeues} with backoff: {r.error}"
        ),
        "foo no longer exists": lambda r: f"{r.key}: Foo is gone, nothing to do",
        "foo deleted during sync, status not written": lambda r: (
            f"{r.key}: the status write found the Foo gone (404): nothing created, no Event"
        ),
        "foo is being deleted, nothing to do": lambda r: (
            f"{r.key}: Foo is being deleted, hands off"
        ),
    }

    def emit(self, record: logging.LogRecord) -> None:
        fields: Any = record  # the fields come from each call's extra={...}
        message = record.getMessage()
        if message == "informer":  # --trace: an informer notification
            verb = WATCH_VERBS.get(fields.event)
            if verb is None:  # a resync: nothing changed
                return
            own = (
                verb == "MODIFIED"
                and fields.kind == "Foo"
                and _own_writes is not None
                and _own_writes.wrote(fields.object, fields.rv)
            )
            cause = f": {OWN_WRITE}" if own else ""
            say("watch", f"{fields.kind} {fields.object} {verb} (rv {fields.rv}){cause}", own)
            return
        if message == "event":
            say(
                "event",
                f"{fields.type} {fields.reason} on {fields.kind} {fields.object}: "
                f"{fields.event_message}",
            )
            return
        render = self.INTERESTING.get(message)
        if render is not None:
            try:
                say("sync", render(record))
            except AttributeError:
                pass


class RequestTap(threading.Thread):
    """Prints each write the controller makes, from kubesim's request log (no client-go twin:
    part of the demo)."""

    def __init__(self, sim: Any, stop: threading.Event) -> None:
        super().__init__(name="demo-request-tap", daemon=True)
        self.sim, self.stop, self.seen = sim, stop, 0
        # one reader at a time: the tap's thread, or a sync line's flush
        self._lock = threading.Lock()

    def start(self) -> None:
        global _tap
        _tap = self
        super().start()

    def run(self) -> None:
        # the writes no sync line reports (an Event's own POST) still show within 20 ms
        while not self.stop.wait(0.02):
            self.flush()

    def flush(self) -> None:
        """Print the controller's writes logged since the last flush."""
        with self._lock:
            log = self.sim.request_log
            for r in log[self.seen :]:
                if r.user_agent == USER_AGENT and r.verb in ("create", "update", "patch", "delete"):
                    target = f"{r.namespace}/{r.name}" if r.name else r.namespace
                    say("api", f"{r.verb.upper():<6} {r.resource} {target} -> {r.code}")
            self.seen = len(log)


class OwnWrites:
    """The resourceVersions of the Foos the controller wrote, and its writes in flight (no
    client-go twin: part of the demo)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # "namespace/name" -> writes begun and not answered yet
        self._in_flight: dict[str, int] = {}
        # ("namespace/name", resourceVersion) of every Foo the controller wrote
        self._written: set[tuple[str, str]] = set()

    def begin(self, key: str) -> None:
        with self._changed:
            self._in_flight[key] = self._in_flight.get(key, 0) + 1

    def end(self, key: str, rv: str | None) -> None:
        with self._changed:
            self._in_flight[key] -= 1
            if rv:
                self._written.add((key, rv))
            self._changed.notify_all()

    def wrote(self, key: str, rv: str, timeout: float = 2.0) -> bool:
        """The controller wrote this version of the Foo: once its writes of the Foo in flight
        are answered (the watch event can come first), whether one of them returned ``rv``."""
        with self._changed:
            self._changed.wait_for(lambda: not self._in_flight.get(key), timeout)
            return (key, rv) in self._written


def tap_queue(controller: Controller) -> None:
    """Show each key put on the controller's workqueue: by the event handlers, and again when
    a backoff ends (the queue re-adds the key itself, which ``--trace`` does not show)."""
    queue: Any = controller.workqueue
    add = queue.add

    def narrated_add(key: str) -> None:
        say("queue", f"add {key}")
        add(key)

    queue.add = narrated_add  # handlers and the delaying queue both call self.add(key)


def tap_writes(controller: Controller) -> None:
    """Remember the resourceVersion of each Foo the controller writes (its status writes go
    through ``runtime.writes``), for the ``watch`` lines of their echoes."""
    global _own_writes
    own = _own_writes = OwnWrites()
    writes: Any = controller.writes
    update = writes.update

    def remembered_update(ctx: Any, resource: str, key: str, *args: Any, **kwargs: Any) -> Any:
        if resource != "foos":
            return update(ctx, resource, key, *args, **kwargs)
        own.begin(key)
        written = None
        try:
            written = update(ctx, resource, key, *args, **kwargs)
            return written
        finally:
            own.end(key, ((written or {}).get("metadata") or {}).get("resourceVersion"))

    writes.update = remembered_update


def age(timestamp: str | None) -> str:
    if not timestamp:
        return "<unknown>"
    created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    seconds = int((datetime.now(UTC) - created).total_seconds())
    return f"{seconds}s" if seconds < 120 else f"{seconds // 60}m"


def event_object(event: dict[str, Any]) -> str:
    """The OBJECT column of ``kubectl get events``: the kind lowercased, a slash, the name
    (``deployment/example-foo``), as kubectl's ``printEvent`` writes it. The object is
    ``involvedObject`` in core/v1 Events and ``regarding`` in events.k8s.io/v1."""
    ref = event.get("involvedObject") or event.get("regarding") or {}
    kind, name = str(ref.get("kind") or "").lower(), ref.get("name")
    return f"{kind}/{name}" if name else kind


def table(rows: list[list[Any]]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "    " + "   ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in rows
    )


def print_tables(api: RESTClient) -> None:
    """``kubectl get foos``, ``kubectl get deployments`` and ``kubectl get pods``, as kubectl
    would print them."""
    foos = api.request("GET", resource_path(*FOOS, "default"))["items"]
    rows: list[list[Any]] = [["NAME", "DEPLOYMENT", "DESIRED", "AVAILABLE", "READY", "AGE"]]
    for f in foos:
        status = f.get("status") or {}
        ready = next(
            (c["status"] for c in status.get("conditions") or [] if c["type"] == "Ready"), ""
        )
        rows.append(
            [
                f["metadata"]["name"],
                f["spec"].get("deploymentName", ""),
                f["spec"].get("replicas", ""),
                status.get("availableReplicas", ""),
                ready,
                age(f["metadata"].get("creationTimestamp")),
            ]
        )
    deps = api.request("GET", resource_path(*DEPLOYMENTS, "default"))["items"]
    # kubectl's columns for Deployments (the owner is in `kubectl get deployment -o yaml`)
    drows: list[list[Any]] = [["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]]
    for d in deps:
        st = d.get("status") or {}
        drows.append(
            [
                d["metadata"]["name"],
                f"{st.get('readyReplicas', 0)}/{d['spec'].get('replicas', 1)}",
                st.get("updatedReplicas", 0),
                st.get("availableReplicas", 0),
                age(d["metadata"].get("creationTimestamp")),
            ]
        )
    pods = api.request("GET", resource_path("", "v1", "pods", "default"))["items"]
    # kubectl's columns for Pods (a name is <deployment>-<pod-template-hash>-<suffix>)
    prows: list[list[Any]] = [["NAME", "READY", "STATUS", "RESTARTS", "AGE"]]
    for p in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        prows.append(
            [
                p["metadata"]["name"],
                pod_ready_column(p),
                pod_status(p),
                pod_restarts(p),
                age(p["metadata"].get("creationTimestamp")),
            ]
        )
    none = "    No resources found in default namespace."
    print_lines(
        "\n  $ kubectl get foos",
        table(rows) if len(rows) > 1 else none,
        "  $ kubectl get deployments",
        table(drows) if len(drows) > 1 else none,
        "  $ kubectl get pods",
        table(prows) if len(prows) > 1 else none,
    )
