"""When a step of ``make demo`` is over: the cluster has converged, and the controller has seen
every change of it and finished with it, so the step's lines are all printed before its tables.

No client-go twin: part of the demo. With the workload chain on, one user action sets off a
dozen writes by other hands (the ReplicaSet, its Pods, the simulated node's kubelet, the
Deployment's status), each reaching the controller as a watch event at its own moment. A step
that printed its tables as soon as the Foo's status said "available" would leave the echo of
the controller's last status write, and the syncs it causes, to be printed under the next
step's headline. So the demo waits, by polling the API and the controller with a deadline
(never by sleeping a guessed time), until:

- the namespace has converged (``converged``): every Foo's status reports its replicas
  available for its current generation; every Deployment's status is complete for its
  generation, and its Pods, found through its ReplicaSets (``demo.workloads``), are as many as
  it wants and all Running and Ready; nothing is left whose owner is gone (the garbage
  collector's work in progress);
- the controller has handled the current version of every Foo and Deployment, and every
  deletion (``Handled``): each of its event handlers on the two informers (the ``--trace``
  printer is one of them, so the ``watch`` lines are printed) has returned from that
  notification;
- its workqueue holds no key: none queued, none in process, none waiting out a backoff;
- and the objects' resourceVersions are the same after these checks as before them, so that
  nothing was written while they ran.

Not waited for: an Event the controller recorded and its sender has not written yet (its
``api`` line may come under the next headline; the demo's steps record their Events in the
step's first sync, long before the Pods run).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from client.rest import RESTClient, resource_path
from controller.main import Components
from demo.workloads import controller_uid, pod_ready, pod_status, workloads

__all__ = ["Handled", "converged", "wait_settled"]

Object = dict[str, Any]

FOOS = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENTS = ("apps", "v1", "deployments")
REPLICA_SETS = ("apps", "v1", "replicasets")
PODS = ("", "v1", "pods")

# how often the demo looks again, and how long a step may take to settle (a Pod runs after
# --status-delay seconds, 1 by default; a loaded machine takes longer)
POLL = 0.05
TIMEOUT = 60.0


class Handled:
    """The last notification each of the controller's event handlers has finished, per object.

    ``tap`` wraps the handlers registered on an informer before it starts (the demo calls it
    from ``run``'s ``on_start``); each wrapper notes ``(event, resourceVersion)`` after the
    handler it wraps has returned, so "handled" means the handler's work (its enqueue, its
    ``--trace`` line) is done.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # kind -> how many handlers its informer has (each known by its registration index)
        self._listeners: dict[str, int] = {}
        # (kind, listener index, "namespace/name") -> (event, resourceVersion)
        self._last: dict[tuple[str, int, str], tuple[str, str]] = {}

    def tap(self, kind: str, registrations: list[Any]) -> None:
        """Wrap each registration's handler (``informer.shared_informer``'s
        ResourceEventHandlerRegistration: its ``handler`` is what its thread calls)."""
        for index, registration in enumerate(registrations):
            registration.handler = _Noting(registration.handler, self, kind, index)
        with self._lock:
            self._listeners[kind] = len(registrations)

    def note(self, kind: str, listener: int, event: str, obj: Any) -> None:
        if not isinstance(obj, dict):
            # a tombstone (informer.store.DeletedFinalStateUnknown) carries the last known state
            obj = getattr(obj, "obj", None)
        meta = (obj.get("metadata") or {}) if isinstance(obj, dict) else {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        with self._lock:
            self._last[(kind, listener, key)] = (event, str(meta.get("resourceVersion") or ""))

    def behind(self, kind: str, namespace: str, current: dict[str, Object]) -> str | None:
        """An object of ``kind`` in ``namespace`` some handler has not finished with (None:
        none): one of ``current`` (the server's objects there, by key) whose version a handler
        has not returned from, or one gone from the server whose deletion a handler has not."""
        with self._lock:
            count = self._listeners.get(kind, 0)
            last = dict(self._last)
        for key, obj in current.items():
            rv = str(obj["metadata"].get("resourceVersion"))
            for i in range(count):
                entry = last.get((kind, i, key))
                if entry is None or entry[0] == "delete" or entry[1] != rv:
                    return key
        for (k, _, key), (event, _) in last.items():
            gone = key.startswith(f"{namespace}/") and key not in current
            if k == kind and gone and event != "delete":
                return key
        return None


class _Noting:
    """A handler that tells ``Handled`` when the handler it wraps has finished a notification."""

    def __init__(self, inner: Any, handled: Handled, kind: str, index: int):
        self.inner, self.handled, self.kind, self.index = inner, handled, kind, index

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.inner.on_add(obj, is_in_initial_list)
        self.handled.note(self.kind, self.index, "add", obj)

    def on_update(self, old: Any, new: Any) -> None:
        self.inner.on_update(old, new)
        self.handled.note(self.kind, self.index, "update", new)

    def on_delete(self, obj: Any) -> None:
        self.inner.on_delete(obj)
        self.handled.note(self.kind, self.index, "delete", obj)


def tap_handlers(components: Components) -> Handled:
    """Watch the controller's handlers on both informers finish their notifications."""
    handled = Handled()
    handled.tap("Foo", components.foo_informer.handler_registrations())
    handled.tap("Deployment", components.deployment_informer.handler_registrations())
    return handled


def converged(api: RESTClient, namespace: str) -> tuple[str | None, dict[str, list[Object]]]:
    """What the namespace still lacks to be converged (None: nothing), and the objects read,
    by kind (their resourceVersions, for the check that nothing moved)."""
    foos = api.request("GET", resource_path(*FOOS, namespace))["items"]
    deployments = api.request("GET", resource_path(*DEPLOYMENTS, namespace))["items"]
    replica_sets = api.request("GET", resource_path(*REPLICA_SETS, namespace))["items"]
    pods = api.request("GET", resource_path(*PODS, namespace))["items"]
    read = {"Foo": foos, "Deployment": deployments, "ReplicaSet": replica_sets, "Pod": pods}
    found, orphans = workloads(deployments, replica_sets, pods)
    # the garbage collector's work in progress: dependents whose owner is gone
    owners = {str(o["metadata"].get("uid")) for o in (*deployments, *replica_sets)}
    orphans += [o for o in replica_sets if controller_uid(o) not in (None, *owners)]
    orphans = [o for o in orphans if controller_uid(o) is not None]
    if orphans:
        names = ", ".join(o["metadata"]["name"] for o in orphans)
        return f"the garbage collector to remove {names} (their owner is gone)", read
    for foo in foos:
        name, status = foo["metadata"]["name"], foo.get("status") or {}
        if status.get("observedGeneration") != foo["metadata"].get("generation"):
            return f"Foo {name}'s status to observe its generation", read
        if status.get("availableReplicas") != foo["spec"].get("replicas", 1):
            return f"Foo {name} to report its replicas available", read
    for workload in found:
        d, name = workload.deployment, workload.name
        want, st = int(d["spec"].get("replicas", 1)), d.get("status") or {}
        counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
        generation = int(d["metadata"].get("generation") or 0)
        if int(st.get("observedGeneration") or 0) < generation or any(
            int(st.get(c) or 0) != want for c in counts
        ):
            return f"Deployment {name}'s status to complete", read
        running = [p for p in workload.pods if pod_status(p) == "Running" and pod_ready(p)]
        if len(workload.pods) != want or len(running) != want:
            return f"{want} Pods of {name} Running and Ready", read
    return None, read


def wait_settled(
    api: RESTClient,
    handled: Handled,
    components: Components,
    namespace: str = "default",
    also: Callable[[], str | None] = lambda: None,
    timeout: float = TIMEOUT,
) -> None:
    """Return once the step is over (see the module's docstring); ``also``: one more
    condition, what it still waits for or None. SystemExit naming what never came."""
    queue: Any = components.controller.workqueue
    deadline = time.monotonic() + timeout
    waiting_for: str | None = "the first look"
    while time.monotonic() < deadline:
        waiting_for, before = converged(api, namespace)
        waiting_for = waiting_for or also() or _controller_behind(handled, queue, namespace, before)
        if waiting_for is None:
            _, after = converged(api, namespace)
            if _versions(after) == _versions(before):
                return
            waiting_for = "the objects to stop changing"
        time.sleep(POLL)
    raise SystemExit(f"demo: timed out waiting for {waiting_for}")


def _controller_behind(
    handled: Handled, queue: Any, namespace: str, objects: dict[str, list[Object]]
) -> str | None:
    """What the controller has not finished yet (None: it has handled the current version of
    every Foo and Deployment, every deletion, and has no key to work on)."""
    for kind in ("Foo", "Deployment"):
        current = {_key(o): o for o in objects[kind]}
        behind = handled.behind(kind, namespace, current)
        if behind:
            return f"the controller to handle the last change of {kind} {behind}"
    snapshot = queue.snapshot()
    busy = sorted({*snapshot.dirty, *snapshot.processing, *(k for k, _ in queue.waiting())})
    if busy:
        return f"the controller's workqueue to be done with {', '.join(map(str, busy))}"
    return None


def _key(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _versions(objects: dict[str, list[Object]]) -> set[tuple[str, str]]:
    return {
        (str(o["metadata"].get("uid")), str(o["metadata"].get("resourceVersion")))
        for group in objects.values()
        for o in group
    }
