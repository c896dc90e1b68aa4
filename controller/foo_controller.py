"""The Foo controller: sample-controller's controller.go, on our own informers and workqueue.

Read it top to bottom, as its Go twin:

1. the constants for Event reasons and messages;
2. ``Controller``, wired in ``__init__``: event handlers on the Foo and Deployment informers turn
   every change into a ``namespace/name`` key on a rate-limited workqueue;
3. ``run`` waits for the caches, starts the workers and, on stop, drains the queue;
4. ``run_worker`` / ``process_next_work_item`` take one key at a time and decide, from the
   result of ``sync_handler``, whether to forget the key or to retry it with backoff;
5. ``sync_handler`` is the reconcile: read the Foo and its Deployment from the listers (the
   cache, never the API), make the Deployment match the Foo, and write the Foo's status.

The reconcile is level-based: it never asks *what changed*, only *what should be*, so a missed
or merged event is harmless and a resync (every Foo re-enqueued every 30 s) repairs drift.

Differences from sample-controller, each deliberate:

- a replica change updates the Deployment *as read* (with its resourceVersion), not a freshly
  built one: a concurrent writer gets a 409 instead of being overwritten;
- status also carries ``observedGeneration`` and a ``Ready`` condition, and is written only when
  it differs, so a converged Foo costs no API writes per resync;
- the ``Synced`` event is recorded when a sync wrote something, not on every resync: upstream's
  would PATCH an Event every 30 s per Foo forever;
- an empty ``deploymentName`` gets a Warning Event and a ``Ready=False`` condition, once per
  generation, where upstream only logs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from client.errors import APIError, is_not_found
from client.rest import RESTClient, resource_path
from controller.apis import (
    Condition,
    Deployment,
    DeploymentSpec,
    Foo,
    FooStatus,
    OwnerReference,
)
from controller.interfaces import (
    DeploymentInformer,
    EventRecorderInterface,
    FooInformer,
    HandlerRegistration,
)
from controller.metrics import ReconcileMetrics
from controller.trace import TRACE_LOGGER
from informer.lister import NotFoundError
from informer.shared_informer import ResourceEventHandlerFuncs, wait_for_cache_sync
from informer.store import (
    DeletedFinalStateUnknown,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from tools.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from workqueue import RateLimitingQueue, sample_controller_rate_limiter

__all__ = [
    "CONTROLLER_AGENT_NAME",
    "Controller",
    "DEPLOYMENT_GVR",
    "ERR_RESOURCE_EXISTS",
    "FIELD_MANAGER",
    "FOO_GVR",
    "MESSAGE_RESOURCE_EXISTS",
    "MESSAGE_RESOURCE_SYNCED",
    "SUCCESS_SYNCED",
    "new_deployment",
]

log = logging.getLogger(__name__)

# The path of every key, one line per step (``--trace``, ``controller.trace``; docs/walkthrough.md
# follows it). Silent unless ``install_trace`` lowers the level; silent, a line costs one check.
trace = logging.getLogger(TRACE_LOGGER)

CONTROLLER_AGENT_NAME = "sample-controller"
FIELD_MANAGER = "sample-controller"  # every write says who made it (managedFields)

# SUCCESS_SYNCED is the reason of the Event recorded when a Foo is synced.
SUCCESS_SYNCED = "Synced"
# ERR_RESOURCE_EXISTS is the reason when a Deployment of the Foo's name exists but is not ours.
ERR_RESOURCE_EXISTS = "ErrResourceExists"
# ERR_INVALID_SPEC is the reason when a Foo cannot be acted on as written.
ERR_INVALID_SPEC = "InvalidSpec"
MESSAGE_RESOURCE_EXISTS = 'Resource "%s" already exists and is not managed by Foo'
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"
MESSAGE_NO_DEPLOYMENT_NAME = "spec.deploymentName must be specified"

FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
FOO_API_VERSION = "samplecontroller.k8s.io/v1alpha1"
DEPLOYMENT_GVR = ("apps", "v1", "deployments")

READY = "Ready"


class ResourceExistsError(Exception):
    """The Deployment a Foo names exists and is controlled by someone else (sample-controller
    returns ``fmt.Errorf(MessageResourceExists)``)."""


class Controller:
    """Keeps each Foo's Deployment in line with the Foo and reports back in its status.

    sample-controller twin: ``Controller`` of controller.go; what differs is listed in the
    module docstring (update as read, status only on change, threads instead of goroutines).
    """

    def __init__(
        self,
        rest: RESTClient,
        foo_informer: FooInformer,
        deployment_informer: DeploymentInformer,
        recorder: EventRecorderInterface,
        queue: RateLimitingQueue | None = None,
        metrics: ReconcileMetrics | None = None,
    ) -> None:
        self.rest = rest  # API writes (reads come from the listers)
        self.foos_lister = foo_informer.lister()  # the Foo cache
        self.deployments_lister = deployment_informer.lister()  # the Deployment cache
        self.recorder = recorder  # Events on Foos
        # workqueue is a rate-limited queue of "namespace/name" keys. It ensures a key is
        # processed by one worker at a time, and that a key added while it is being processed
        # is processed again afterwards (so no change is lost, and none is raced).
        self.workqueue = (
            queue
            if queue is not None  # (an empty queue is falsy: no `or` here)
            else RateLimitingQueue(sample_controller_rate_limiter(), name="foo")
        )
        self.metrics = metrics  # reconcile counters; None in unit tests
        # handler registrations: synced once their informer is and our handlers have had its list
        self._registrations: list[HandlerRegistration] = []
        self._in_flight: dict[str, float] = {}  # key -> monotonic start, while a worker syncs it
        self._in_flight_lock = threading.Lock()
        self._workers: list[threading.Thread] = []  # started by run()

        log.info("setting up event handlers")
        self._registrations.append(
            foo_informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self.enqueue_foo,
                    update_func=lambda old, new: self.enqueue_foo(new),
                    # no delete handler: the garbage collector removes the Deployment with its owner
                )
            )
        )
        self._registrations.append(
            deployment_informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self.handle_object,
                    update_func=self._on_deployment_update,
                    delete_func=self.handle_object,
                )
            )
        )

    # -- handlers -----------------------------------------------------------------------------

    def _on_deployment_update(self, old: Deployment, new: Deployment) -> None:
        # Periodic resync sends an update for every Deployment. Two versions of the same
        # Deployment always differ in resourceVersion, so equal ones mean nothing changed.
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        self.handle_object(new)

    def enqueue_foo(self, obj: Any) -> None:
        """Put the Foo's key on the queue; never pass objects, they may be stale by then."""
        try:
            key = meta_namespace_key_func(obj)
        except Exception as err:  # noqa: BLE001 - a malformed object must not kill the listener
            log.error("cannot compute key for object: %s", err)
            return
        trace.info("enqueue", extra={"key": key})
        self.workqueue.add(key)

    def handle_object(self, obj: Any) -> None:
        """Enqueue the Foo that controls obj (a Deployment), if there is one.

        A deleted object may arrive as a tombstone (DeletedFinalStateUnknown) when the
        informer missed its deletion; its last known state is inside.
        """
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
            if not isinstance(obj, dict):
                log.error("tombstone contained object that is not a dict: %r", type(obj))
                return
            log.info("recovered deleted object from tombstone", extra={"object": _name_of(obj)})
        meta = obj.get("metadata") or {}
        log.debug("processing object", extra={"object": _name_of(obj)})
        owner = controller_of(obj)
        if owner is None:
            return
        # Only Foos are of interest; the group is checked too, so a "Foo" of another API is
        # not mistaken for ours.
        if owner.get("kind") != "Foo" or owner.get("apiVersion", "").split("/")[0] != FOO_GVR[0]:
            return
        try:
            foo = self.foos_lister.get(meta.get("namespace", ""), owner["name"])
        except NotFoundError:
            log.debug(
                "ignore orphaned object", extra={"object": _name_of(obj), "foo": owner["name"]}
            )
            return
        trace.info("owner lookup", extra={"object": _name_of(obj), "owner": f"Foo/{owner['name']}"})
        self.enqueue_foo(foo)

    # -- the loop -----------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """Both caches are filled and our handlers have been given every object in them."""
        return all(r.has_synced() for r in self._registrations)

    def run(
        self,
        workers: int,
        stop: threading.Event,
        drain_timeout: float = 30.0,
        cache_sync_timeout: float | None = None,
    ) -> None:
        """Wait for the caches, run ``workers`` worker threads until ``stop`` is set, then drain.

        The informers must have been started (``factory.start``). On stop, the queue refuses new
        keys, the workers finish what is queued and in flight (up to ``drain_timeout``), and
        ``run`` returns.
        """
        log.info("starting Foo controller")
        log.info("waiting for informer caches to sync")
        if not wait_for_cache_sync(stop, self, timeout=cache_sync_timeout):
            self.workqueue.shut_down()
            if stop.is_set():
                return
            raise TimeoutError("failed to wait for caches to sync")
        log.info("starting workers", extra={"count": workers})
        # run_worker returns only once the queue has shut down and is empty: an error in a
        # sync is caught in process_next_work_item, so (unlike Go's wait.Until) no restart
        # loop is needed to survive one.
        threads = [
            threading.Thread(target=self.run_worker, name=f"foo-worker-{i}", daemon=True)
            for i in range(workers)
        ]
        self._workers = threads
        for t in threads:
            t.start()
        log.info("started workers")
        stop.wait()
        log.info("shutting down workers")
        drained = threading.Thread(
            target=self.workqueue.shut_down_with_drain, name="queue-drain", daemon=True
        )
        drained.start()
        drained.join(drain_timeout)
        if drained.is_alive():
            log.warning(
                "in-flight work did not finish within the graceful shutdown timeout",
                extra={"timeout": drain_timeout},
            )
            self.workqueue.shut_down()
        end = time.monotonic() + max(drain_timeout, 0.1)
        for t in threads:
            t.join(max(0.0, end - time.monotonic()))

    def run_worker(self) -> None:
        """Process items until the queue shuts down."""
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Take one key, sync it, and decide its fate; False when the queue has shut down."""
        key, shutdown = self.workqueue.get()
        if shutdown:
            return False
        trace.info("dequeue", extra={"key": key})
        # done() tells the queue we are finished with this key, whatever happens, so that it
        # can be handed out again (it may have been re-added while we worked on it).
        start = time.monotonic()
        with self._in_flight_lock:
            self._in_flight[key] = start
        try:
            self.sync_handler(key)
        except Exception as err:  # noqa: BLE001 - every error is retried, none kills the worker
            self.workqueue.add_rate_limited(key)
            self._observe("error", start)
            # A 409 means our cache was a step behind the server (our own previous write, or a
            # create racing the watch): expected, harmless and retried, so a warning, not an
            # error that pages someone.
            level = (
                logging.WARNING if isinstance(err, APIError) and err.code == 409 else logging.ERROR
            )
            log.log(
                level,
                "error syncing, requeuing",
                extra={"key": key, "error": str(err), "requeues": self.workqueue.num_requeues(key)},
            )
            return True
        else:
            # Success: stop tracking the key's failures, so its next error starts the backoff
            # from the base delay again.
            self.workqueue.forget(key)
            self._observe("success", start)
            log.info(
                "successfully synced",
                extra={"key": key, "duration": round(time.monotonic() - start, 6)},
            )
            return True
        finally:
            with self._in_flight_lock:
                self._in_flight.pop(key, None)
            self.workqueue.done(key)

    def longest_running_sync(self) -> float:
        """Seconds the oldest in-flight sync has been running (0 when none): a wedge detector."""
        with self._in_flight_lock:
            oldest = min(self._in_flight.values(), default=None)
        return 0.0 if oldest is None else time.monotonic() - oldest

    def workers_started(self) -> int:
        return len(self._workers)

    def workers_alive(self) -> int:
        """Worker threads still running; fewer than started (before shutdown) means one died."""
        return sum(t.is_alive() for t in self._workers)

    def _observe(self, result: str, start: float) -> None:
        if self.metrics is not None:
            self.metrics.observe(result, time.monotonic() - start)

    # -- reconcile ----------------------------------------------------------------------------

    def sync_handler(self, key: str) -> None:
        """Converge the Deployment and status of the Foo with this key; raise to retry."""
        namespace, name = split_meta_namespace_key(key)
        try:
            foo = self.foos_lister.get(namespace, name)
        except NotFoundError:
            # The Foo is gone; its Deployment goes with it through garbage collection.
            log.info("foo no longer exists", extra={"key": key})
            return

        deployment_name = (foo.get("spec") or {}).get("deploymentName") or ""
        if not deployment_name:
            # Nothing can be done until the user fixes the spec; retrying would not help.
            log.warning("deployment name must be specified", extra={"key": key})
            status = desired_status(foo, None, invalid=MESSAGE_NO_DEPLOYMENT_NAME)
            if self._update_foo_status(foo, status):
                self.recorder.event(
                    foo, EVENT_TYPE_WARNING, ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME
                )
            return

        wrote = False
        try:
            deployment = self.deployments_lister.get(namespace, deployment_name)
        except NotFoundError:
            deployment = self._create_deployment(foo)
            wrote = True

        # If the Deployment is not controlled by this Foo, warn and retry with backoff: the
        # user may delete or rename the other one. Never touch it.
        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % deployment_name
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)

        replicas = (foo.get("spec") or {}).get("replicas")
        if replicas is not None and replicas != (deployment.get("spec") or {}).get("replicas"):
            log.info(
                "updating deployment replicas",
                extra={
                    "key": key,
                    "deployment": deployment_name,
                    "replicas": replicas,
                    "was": (deployment.get("spec") or {}).get("replicas"),
                },
            )
            deployment = self._update_deployment_replicas(deployment, replicas)
            wrote = True

        if self._update_foo_status(foo, desired_status(foo, deployment)):
            wrote = True
        if wrote:
            self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def _create_deployment(self, foo: Foo) -> Deployment:
        namespace = foo["metadata"]["namespace"]
        log.info(
            "creating deployment",
            extra={
                "key": f"{namespace}/{foo['metadata']['name']}",
                "deployment": foo["spec"]["deploymentName"],
            },
        )
        created = self.rest.request(
            "POST",
            resource_path(*DEPLOYMENT_GVR, namespace),
            params={"fieldManager": FIELD_MANAGER},
            body=new_deployment(foo),
        )
        return cast(Deployment, created)

    def _update_deployment_replicas(self, deployment: Deployment, replicas: int) -> Deployment:
        # Cached objects are shared: build a new object around a new spec, never assign into
        # the cached one. resourceVersion stays, so a concurrent change gets us a 409.
        updated = {**deployment, "spec": {**deployment["spec"], "replicas": replicas}}
        meta = deployment["metadata"]
        written = self.rest.request(
            "PUT",
            resource_path(*DEPLOYMENT_GVR, meta["namespace"], meta["name"]),
            params={"fieldManager": FIELD_MANAGER},
            body=updated,
        )
        return cast(Deployment, written)

    def _update_foo_status(self, foo: Foo, status: FooStatus) -> bool:
        """Write status through the status subresource when it differs; True when written."""
        current = foo.get("status") or {}
        status = _keep_transition_times(current, status)
        if current == status:
            return False
        meta = foo["metadata"]
        if trace.isEnabledFor(logging.INFO):
            trace.info(
                "status write",
                extra={
                    "key": _name_of(foo),
                    "availableReplicas": status.get("availableReplicas"),
                    "ready": next(
                        (
                            c.get("status")
                            for c in status.get("conditions") or []
                            if c.get("type") == READY
                        ),
                        None,
                    ),
                },
            )
        # UpdateStatus: a PUT of the whole Foo to /status, guarded by resourceVersion. Only the
        # status part is taken by the server; spec changes there are ignored.
        updated = {**foo, "status": status}
        try:
            self.rest.request(
                "PUT",
                resource_path(*FOO_GVR, meta["namespace"], meta["name"], "status"),
                params={"fieldManager": FIELD_MANAGER},
                body=updated,
            )
        except APIError as err:
            if is_not_found(err):
                # deleted meanwhile; nothing left to report on (its Deployment, if we just made
                # one, goes with it through garbage collection)
                log.info(
                    "foo deleted during sync, status not written",
                    extra={"key": f"{meta['namespace']}/{meta['name']}"},
                )
                return False
            raise
        return True


def controller_of(obj: Foo | Deployment) -> OwnerReference | None:
    """The ownerReference with controller=true (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Deployment, owner: Foo) -> bool:
    """metav1.IsControlledBy: the controller ownerReference points at this very owner (uid)."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == owner["metadata"].get("uid")


def new_deployment(foo: Foo) -> Deployment:
    """The Deployment a Foo asks for (sample-controller's newDeployment)."""
    labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
    spec: DeploymentSpec = {
        "selector": {"matchLabels": dict(labels)},
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
        },
    }
    replicas = (foo.get("spec") or {}).get("replicas")
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": foo["spec"]["deploymentName"],
            "namespace": foo["metadata"]["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": FOO_API_VERSION,
                    "kind": "Foo",
                    "name": foo["metadata"]["name"],
                    "uid": foo["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def desired_status(
    foo: Foo, deployment: Deployment | None, invalid: str | None = None
) -> FooStatus:
    """The status a Foo should show, given its Deployment as last seen.

    Keeps the fields we do not own (anything another writer added) and replaces ours.
    """
    status = FooStatus(**(foo.get("status") or {}))
    generation = (foo.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    if invalid is not None:
        condition = _condition("False", ERR_INVALID_SPEC, invalid, generation)
    else:
        available = int(((deployment or {}).get("status") or {}).get("availableReplicas") or 0)
        desired = (foo.get("spec") or {}).get("replicas")
        desired = 1 if desired is None else desired
        status["availableReplicas"] = available
        if available >= desired:
            condition = _condition(
                "True",
                "DeploymentAvailable",
                f"{available}/{desired} replicas available",
                generation,
            )
        else:
            condition = _condition(
                "False",
                "DeploymentNotAvailable",
                f"{available}/{desired} replicas available",
                generation,
            )
    others = [c for c in status.get("conditions") or [] if c.get("type") != READY]
    status["conditions"] = others + [condition]
    return status


def _condition(status: str, reason: str, message: str, generation: int | None) -> Condition:
    cond: Condition = {
        "type": READY,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def _keep_transition_times(current: FooStatus, desired: FooStatus) -> FooStatus:
    """lastTransitionTime changes only when a condition's status does (API conventions)."""
    old = {c.get("type"): c for c in current.get("conditions") or []}
    conditions = []
    for cond in desired.get("conditions") or []:
        prev = old.get(cond.get("type"))
        if prev is not None and prev.get("status") == cond.get("status"):
            # a condition another writer made may have no time: it is kept as found
            kept = cast(str, prev.get("lastTransitionTime"))
            cond = {**cond, "lastTransitionTime": kept}
        conditions.append(cond)
    return {**desired, "conditions": conditions}


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
