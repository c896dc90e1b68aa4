"""The Foo controller: sample-controller's controller.go, on our own informers and workqueue.

Read it top to bottom, as its Go twin: the constants; ``Controller``, whose ``__init__`` wires
event handlers that turn every Foo and Deployment change into a ``namespace/name`` key on a
rate-limited workqueue; ``run``, which waits for the caches and runs the workers
(``controller.worker``: each takes a key, calls ``reconcile`` and forgets or retries the key by
its ``Result``); and ``sync_handler``, the reconcile: read the Foo and its Deployment from the
listers (the cache, never the API), make the Deployment match the Foo, write the Foo's status.
The objects it writes come from the pure functions of ``controller.builders``, and the writes
go through ``controller.writes``. The reconcile is level-based: it never asks *what changed*,
only *what should be*, so a missed or merged event is harmless and a resync repairs drift.

Differences from sample-controller, each deliberate:

- a replica change updates the Deployment *as read* (with its resourceVersion), not a freshly
  built one: a concurrent writer gets a 409 instead of being overwritten;
- status also carries ``observedGeneration`` and a ``Ready`` condition, and is written only when
  it differs, so a converged Foo costs no API writes per resync;
- the status is written *before* a Deployment is created: the write is guarded by the Foo's
  resourceVersion, so it proves that the Foo still exists, and a Foo deleted while our cache
  still held it (the garbage collector's delete of its Deployment can overtake the Foo's own
  watch event) gets a 404 there instead of a new Deployment;
- the controller remembers what it wrote until its caches show it (``controller.expectations``)
  and does not write again from an older copy; a 409 that still happens (someone else wrote
  first) is a requeue, not an error, as controller-runtime users return ``Requeue: true``;
- the ``Synced`` event is recorded when a sync wrote something, not on every resync: upstream's
  would PATCH an Event every 30 s per Foo forever;
- a Foo that cannot be acted on (no ``deploymentName``, a name that cannot be a label value) and
  a Foo blocked by a Deployment it does not own get a ``Ready=False`` condition that says why,
  written once per change, and a Warning Event, where upstream only logs or retries;
- a Foo being deleted (``deletionTimestamp`` set) is left alone;
- with ``--sharding``, a Foo is synced only by the replica acting on its bucket (the ``gate``,
  ``controller.sharding``), each Deployment made carries its owner's bucket label, and a create
  that meets an unlabelled Deployment of the Foo (made before sharding) labels it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, NoReturn, cast

from client.errors import APIError, is_already_exists, is_not_found
from client.rest import RESTClient, resource_path
from controller.apis import Deployment, Foo, FooStatus, OwnerReference
from controller.builders import (
    READY,
    controller_of,
    deployment_name_index_func,
    desired_status,
    is_controlled_by,
    keep_transition_times,
    name_of,
    new_deployment,
    status_differs,
)
from controller.expectations import Expectations
from controller.interfaces import (
    DeploymentInformer,
    EventRecorderInterface,
    FooInformer,
    HandlerRegistration,
)
from controller.metrics import ReconcileMetrics
from controller.sharding.gate import EVERY_FOO, FooGate
from controller.shutdown import ShutdownBudget
from controller.trace import TRACE_LOGGER
from controller.validation import (
    ERR_INVALID_NAME,
    ERR_INVALID_SPEC,
    MESSAGE_NO_DEPLOYMENT_NAME,
    PROBLEM_LOG,
    Problem,
    foo_problem,
)
from controller.worker import Result, Workers
from controller.writes import TrackedWrites
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
    "DEPLOYMENT_NAME_INDEX",
    "ERR_INVALID_NAME",
    "ERR_INVALID_SPEC",
    "ERR_RESOURCE_EXISTS",
    "FIELD_MANAGER",
    "FOO_GVR",
    "MESSAGE_NO_DEPLOYMENT_NAME",
    "MESSAGE_RESOURCE_EXISTS",
    "MESSAGE_RESOURCE_SYNCED",
    "SUCCESS_SYNCED",
    "deployment_name_index_func",
]

log = logging.getLogger(__name__)

# The path of every key, one line per step (``--trace``, ``controller.trace``; docs/walkthrough.md
# follows it). Silent unless ``install_trace`` lowers the level; silent, a line costs one check.
trace = logging.getLogger(TRACE_LOGGER)

CONTROLLER_AGENT_NAME = "sample-controller"
# every write says who made it (managedFields)
FIELD_MANAGER = "sample-controller"

# SUCCESS_SYNCED is the reason of the Event recorded when a Foo is synced.
SUCCESS_SYNCED = "Synced"
# ERR_RESOURCE_EXISTS is the reason when a Deployment of the Foo's name exists but is not ours.
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = 'Resource "%s" already exists and is not managed by Foo'
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"

FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENT_GVR = ("apps", "v1", "deployments")

# The Foo informer's own index: Foos by the Deployment they name, "namespace/deploymentName".
DEPLOYMENT_NAME_INDEX = "byDeploymentName"


class ResourceExistsError(Exception):
    """The Deployment a Foo names is someone else's (sample-controller: ``fmt.Errorf``)."""


class FooGoneError(Exception):
    """The Foo's status write met a 404: deleted while our cache held it (sample-controller
    returns the error and retries)."""


class DeploymentGoneError(Exception):
    """The Deployment's update met a 404: deleted after our cache read it. As a 409, a
    requeue: its delete event enqueues the Foo again (controller-runtime's IgnoreNotFound)."""


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
        expectations: Expectations | None = None,
        gate: FooGate = EVERY_FOO,
    ) -> None:
        # Which Foos this replica syncs, and the labels of its Deployments (controller.sharding;
        # without sharding, every Foo and no label).
        self.gate = gate
        # Reads come from the caches (listers); writes go through self.writes, Events through
        # the recorder.
        self.recorder = recorder
        # Foos by spec.deploymentName; must be added before the informer starts.
        foo_informer.add_indexers({DEPLOYMENT_NAME_INDEX: deployment_name_index_func})
        self.foos_lister = foo_informer.lister()
        self.foos_indexer = foo_informer.get_indexer()
        self.deployments_lister = deployment_informer.lister()
        # workqueue is a rate-limited queue of "namespace/name" keys. It ensures a key is
        # processed by one worker at a time, and that a key added while it is being processed
        # is processed again afterwards (so no change is lost, and none is raced). An empty
        # queue is falsy: no `or` here.
        self.workqueue = (
            queue
            if queue is not None
            else RateLimitingQueue(sample_controller_rate_limiter(), name="foo")
        )
        # The workers: each takes a key off the queue and calls reconcile (controller.worker).
        self.workers = Workers(self.workqueue, self.reconcile, name="foo", log=log, metrics=metrics)
        # our writes that the caches do not show yet: no second write from an older copy
        self.expectations = expectations if expectations is not None else Expectations()
        self.writes = TrackedWrites(
            rest, self.expectations, self.workers, self.workqueue, field_manager=FIELD_MANAGER
        )
        log.info("setting up event handlers")
        # No Foo delete handler: the garbage collector removes the Deployment with its owner.
        on_foo = ResourceEventHandlerFuncs(
            add_func=self.enqueue_foo, update_func=self._on_foo_update
        )
        on_deployment = ResourceEventHandlerFuncs(
            add_func=self._on_deployment_add,
            update_func=self._on_deployment_update,
            delete_func=self._on_deployment_delete,
        )
        # synced once their informer is and our handlers have had its list
        self._registrations: list[HandlerRegistration] = [
            foo_informer.add_event_handler(on_foo),
            deployment_informer.add_event_handler(on_deployment),
        ]

    # -- handlers -----------------------------------------------------------------------------

    def _on_foo_update(self, old: Foo, new: Foo) -> None:
        # Every update is enqueued (resyncs too, as upstream), except the echo of our own
        # status write when no sync waited for it: the sync that wrote it had seen all it says.
        rv = new["metadata"].get("resourceVersion")
        if not self.expectations.observed("foos", name_of(new), rv):
            trace.info("own write", extra={"key": name_of(new), "rv": rv})
            return
        self.enqueue_foo(new)

    def _on_deployment_add(self, obj: Deployment) -> None:
        # the create we expected (if it was ours) is now in the cache
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        self.expectations.observed("deployments", name_of(obj), rv)
        self.handle_object(obj)

    def _on_deployment_update(self, old: Deployment, new: Deployment) -> None:
        # Periodic resync sends an update for every Deployment. Two versions of the same
        # Deployment always differ in resourceVersion, so equal ones mean nothing changed.
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        rv = new["metadata"].get("resourceVersion")
        self.expectations.observed("deployments", name_of(new), rv)
        self.handle_object(new)

    def _on_deployment_delete(self, obj: Any) -> None:
        last = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(last, dict):
            self.expectations.observed("deployments", name_of(last))
        self.handle_object(obj)

    def enqueue_foo(self, obj: Any) -> None:
        """Put the Foo's key on the queue; never pass objects, they may be stale by then."""
        try:
            key = meta_namespace_key_func(obj)
        except Exception as err:
            # a malformed object must not kill the listener
            log.error("cannot compute key for object: %s", err)
            return
        trace.info("enqueue", extra={"key": key})
        self.workqueue.add(key)

    def handle_object(self, obj: Any) -> None:
        """Enqueue the Foos a Deployment event concerns: the one that controls it, and those
        that name it without controlling it (it blocks them, or did until now).

        A deleted object may arrive as a tombstone (DeletedFinalStateUnknown) when the
        informer missed its deletion; its last known state is inside.
        """
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
            if not isinstance(obj, dict):
                log.error("tombstone contained object that is not a dict: %r", type(obj))
                return
            log.info("recovered deleted object from tombstone", extra={"object": name_of(obj)})
        meta = obj.get("metadata") or {}
        log.debug("processing object", extra={"object": name_of(obj)})
        owner = controller_of(obj)
        # Only Foos are of interest; the group is checked too, so a "Foo" of another API is
        # not mistaken for ours.
        if (
            owner is not None
            and owner.get("kind") == "Foo"
            and owner.get("apiVersion", "").split("/")[0] == FOO_GVR[0]
        ):
            try:
                foo = self.foos_lister.get(meta.get("namespace", ""), owner["name"])
            except NotFoundError:
                log.debug(
                    "ignore orphaned object", extra={"object": name_of(obj), "foo": owner["name"]}
                )
            else:
                trace.info(
                    "owner lookup", extra={"object": name_of(obj), "owner": f"Foo/{owner['name']}"}
                )
                self.enqueue_foo(foo)
        self._enqueue_blocked_foos(obj, owner)

    def _enqueue_blocked_foos(self, obj: Deployment, owner: OwnerReference | None) -> None:
        """Enqueue the Foos that name this Deployment but are not its controller.

        Such a Foo is blocked while the Deployment exists (``ErrResourceExists``), and its
        retries back off up to 1000 s; this event (the Deployment deleted, or adopted, or
        changed) may have unblocked it, so it is synced now, within the informer's latency.
        The owner found through the ownerReference is not looked up twice.
        """
        owner_uid = owner.get("uid") if owner is not None else None
        for foo in self.foos_indexer.by_index(DEPLOYMENT_NAME_INDEX, name_of(obj)):
            if owner_uid is not None and foo["metadata"].get("uid") == owner_uid:
                continue
            trace.info("index lookup", extra={"object": name_of(obj), "foo": name_of(foo)})
            self.enqueue_foo(foo)

    # -- run ----------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """Both caches are filled and our handlers have been given every object in them."""
        return all(r.has_synced() for r in self._registrations)

    def run(
        self,
        workers: int,
        stop: threading.Event,
        drain_timeout: float = 30.0,
        cache_sync_timeout: float | None = None,
        budget: ShutdownBudget | None = None,
    ) -> None:
        """Wait for the caches (the informers must have been started), run ``workers`` worker
        threads until ``stop`` is set, then drain within the ``budget`` (without one, of
        ``drain_timeout`` seconds): ``controller.worker.Workers.run``."""
        budget = budget if budget is not None else ShutdownBudget(drain_timeout)
        log.info("starting Foo controller")
        log.info("waiting for informer caches to sync")
        if not wait_for_cache_sync(stop, self, timeout=cache_sync_timeout):
            self.workqueue.shut_down()
            if stop.is_set():
                return
            raise TimeoutError("failed to wait for caches to sync")
        self.workers.run(workers, stop, budget)

    # -- reconcile ----------------------------------------------------------------------------

    def reconcile(self, key: str) -> Result:
        """``sync_handler``, and how it ended as the workers read it (controller-runtime's
        ``Reconcile``): a 409 or a Deployment gone meanwhile is a requeue, not an error (the
        cache was behind, and the event that catches it up enqueues the key again)."""
        try:
            self.sync_handler(key)
        except APIError as err:
            if err.code == 409:
                return Result(requeue=True, cause=str(err))
            return Result(error=err)
        except DeploymentGoneError as err:
            return Result(requeue=True, cause=str(err))
        except Exception as err:
            return Result(error=err)
        return Result()

    def sync_handler(self, key: str) -> None:
        """Converge the Deployment and status of the Foo with this key; raise to retry."""
        namespace, name = split_meta_namespace_key(key)
        try:
            foo = self.foos_lister.get(namespace, name)
        except NotFoundError:
            # The Foo is gone; its Deployment goes with it through garbage collection.
            self.expectations.forget("foos", key)
            log.info("foo no longer exists", extra={"key": key})
            return
        # Sharded: another replica's Foo is left alone (its key forgotten, not retried), and
        # ours is held for the whole sync, so its bucket is handed over only once it ends.
        with self.gate.acting_on(foo) as acting:
            if not acting:
                trace.info("not this replica's bucket", extra={"key": key})
                return
            if foo["metadata"].get("deletionTimestamp"):
                # Being deleted (a finalizer, or foreground deletion while the garbage collector
                # removes its Deployment): creating or repairing now would fight the deletion.
                log.info("foo is being deleted, nothing to do", extra={"key": key})
                return
            try:
                self._sync(key, foo)
            except FooGoneError:
                # deleted meanwhile; nothing left to report on (its Deployment, if we just made
                # one, goes with it through garbage collection)
                log.info("foo deleted during sync, status not written", extra={"key": key})

    def _sync(self, key: str, foo: Foo) -> None:
        namespace = foo["metadata"]["namespace"]
        problem = foo_problem(foo)
        deployment: Deployment | None = None
        if problem is None:
            try:
                deployment = self.deployments_lister.get(namespace, foo["spec"]["deploymentName"])
            except NotFoundError:
                deployment = None
        if self._cache_behind_our_writes(key, foo, problem is None, deployment):
            return

        if problem is not None:
            # Nothing can be done until the user fixes the Foo; retrying would not help.
            log.warning(
                PROBLEM_LOG.get(problem.reason, "foo cannot be acted on"),
                extra={"key": key, "reason": problem.reason, "problem": problem.message},
            )
            if self._update_foo_status(foo, desired_status(foo, None, problem)) is not None:
                self._event(foo, EVENT_TYPE_WARNING, problem.reason, problem.message)
            return

        # If the Deployment is not controlled by this Foo, say so in the status (once) and
        # in an Event, and retry with backoff: the user may delete or rename the other one,
        # and its Deployment events enqueue this Foo at once (DEPLOYMENT_NAME_INDEX). Never
        # touch it.
        if deployment is not None and not is_controlled_by(deployment, foo):
            self._blocked(foo)
        if deployment is None and self._blocked_outside_cache(foo):
            self._blocked(foo)

        if deployment is None:
            # Status first: the write is guarded by the Foo's resourceVersion, so it succeeds
            # only if the Foo still exists as cached. A Foo already deleted (the garbage
            # collector removing its Deployment can overtake the Foo's own watch event) gets
            # a 404 here (FooGoneError) instead of a new Deployment. The new Deployment has
            # the Foo's replicas and no status yet, so the status written (0 available) is
            # already the one desired_status would compute from it.
            written = self._update_foo_status(foo, desired_status(foo, None), force=True)
            if self._create_deployment(written if written is not None else foo) is not None:
                self._event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
            return

        wrote = False
        replicas = (foo.get("spec") or {}).get("replicas")
        if replicas is not None and replicas != (deployment.get("spec") or {}).get("replicas"):
            deployment = self._update_deployment_replicas(key, deployment, replicas)
            wrote = True

        status = desired_status(foo, deployment)
        if status_differs(foo, status):
            self._update_foo_status(foo, status)
            wrote = True
        if wrote:
            self._event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def _blocked(self, foo: Foo) -> NoReturn:
        """The Deployment of the Foo's name is someone else's: say so, then retry with backoff."""
        message = MESSAGE_RESOURCE_EXISTS % foo["spec"]["deploymentName"]
        blocked = Problem(ERR_RESOURCE_EXISTS, message)
        self._update_foo_status(foo, desired_status(foo, None, blocked, blocked=True))
        self._event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
        raise ResourceExistsError(message)

    def _blocked_outside_cache(self, foo: Foo) -> bool:
        """Sharded, a Foo already blocked: someone else's Deployment carries no bucket label,
        so it is in no replica's cache. Ask the API whether it is still there, rather than let
        the status flap through "not available" (and a create's 409) at every retry."""
        if not self.gate.deployment_labels(foo):
            return False
        conditions = (foo.get("status") or {}).get("conditions") or []
        if not any(
            c.get("type") == READY and c.get("reason") == ERR_RESOURCE_EXISTS for c in conditions
        ):
            return False
        existing = self._uncached_deployment(foo)
        return existing is not None and not is_controlled_by(existing, foo)

    def _uncached_deployment(self, foo: Foo) -> Deployment | None:
        """The Foo's Deployment as the API has it (sharded: one outside every cache)."""
        path = resource_path(*DEPLOYMENT_GVR, foo["metadata"]["namespace"])
        return cast(Deployment | None, self.writes.lookup(path, foo["spec"]["deploymentName"]))

    def _cache_behind_our_writes(
        self, key: str, foo: Foo, has_deployment_name: bool, deployment: Deployment | None
    ) -> bool:
        """Our last write of the Foo or of its Deployment is not cached yet: wait for its watch
        event, which enqueues the Foo again (writing from the older copy would get a 409)."""
        if self.expectations.stale("foos", key, foo["metadata"].get("resourceVersion")):
            # our last status write replaced this very copy
            trace.info("cache behind our write", extra={"key": key})
            return True
        if not has_deployment_name:
            return False
        deployment_key = f"{foo['metadata']['namespace']}/{foo['spec']['deploymentName']}"
        cached_rv = deployment["metadata"].get("resourceVersion") if deployment else None
        uid = foo["metadata"].get("uid")
        if self.expectations.stale("deployments", deployment_key, cached_rv, owner=uid):
            # the Deployment we created or updated is not in the cache yet
            trace.info("cache behind our write", extra={"key": key, "deployment": deployment_key})
            return True
        return False

    # -- writes (controller.writes: each under an expectation, within the shutdown budget) ---

    def _announce(self, logger: logging.Logger, msg: str, extra: dict[str, Any] | None) -> None:
        """Log the write about to be made, or raise AbandonedError past the drain deadline
        (``Workers.before_deadline``). ``extra`` None: only the check (a write the log does
        not announce)."""
        with self.workers.before_deadline(msg):
            if extra is not None:
                logger.info(msg, extra=extra)

    def _event(self, foo: Foo, event_type: str, reason: str, message: str) -> None:
        # as _announce: no Event recorded past the deadline
        with self.workers.before_deadline(reason):
            self.recorder.event(foo, event_type, reason, message)

    def _create_deployment(self, foo: Foo) -> Deployment | None:
        """Create the Foo's Deployment; None when one was there already, ours but outside our
        cache (sharded: see ``_label_existing``)."""
        namespace, deployment_name = foo["metadata"]["namespace"], foo["spec"]["deploymentName"]
        extra = {"key": name_of(foo), "deployment": deployment_name}
        self._announce(log, "creating deployment", extra)
        path = resource_path(*DEPLOYMENT_GVR, namespace)
        key, owner = f"{namespace}/{deployment_name}", foo["metadata"].get("uid")
        labels = self.gate.deployment_labels(foo)
        body = new_deployment(foo, labels)
        try:
            return cast(Deployment, self.writes.create("deployments", key, path, body, owner))
        except APIError as err:
            if not (labels and is_already_exists(err)):
                raise
        self._label_existing(foo, labels)
        return None

    def _label_existing(self, foo: Foo, labels: dict[str, str]) -> None:
        """Sharded: the create met a Deployment that no replica's cache holds, made before
        sharding (no bucket label) or under another bucket count. Ours (controlled by this
        Foo): give it the label, so it enters our cache, whose event syncs the Foo again.
        Someone else's: blocked, as ever. Nothing is duplicated, nothing not ours is touched."""
        existing = self._uncached_deployment(foo)
        if existing is None:
            # deleted since the 409: the next sync creates it
            raise DeploymentGoneError(
                f"{foo['metadata']['namespace']}/{foo['spec']['deploymentName']}"
            )
        if not is_controlled_by(existing, foo):
            self._blocked(foo)
        meta = existing["metadata"]
        have = meta.get("labels") or {}
        if any(have.get(k) != v for k, v in labels.items()):
            extra = {"key": name_of(foo), "deployment": name_of(existing), "labels": labels}
            self._announce(log, "labelling existing deployment", extra)
            # an update as read (resourceVersion kept): a concurrent change gets us a 409
            labelled = {**existing, "metadata": {**meta, "labels": {**have, **labels}}}
            path = resource_path(*DEPLOYMENT_GVR, meta["namespace"], meta["name"])
            self.writes.update("deployments", name_of(existing), path, labelled)

    def _update_deployment_replicas(
        self, key: str, deployment: Deployment, replicas: int
    ) -> Deployment:
        meta, was = deployment["metadata"], deployment["spec"].get("replicas")
        extra = {"key": key, "deployment": meta["name"], "replicas": replicas, "was": was}
        self._announce(log, "updating deployment replicas", extra)
        # Cached objects are shared: build a new object around a new spec, never assign into
        # the cached one. resourceVersion stays, so a concurrent change gets us a 409.
        updated = {**deployment, "spec": {**deployment["spec"], "replicas": replicas}}
        path = resource_path(*DEPLOYMENT_GVR, meta["namespace"], meta["name"])
        # (the Deployment's own events always reach handle_object: nothing to enqueue here)
        try:
            written = self.writes.update("deployments", name_of(deployment), path, updated)
        except APIError as err:
            if is_not_found(err):
                raise DeploymentGoneError(name_of(deployment)) from err
            raise
        return cast(Deployment, written)

    def _update_foo_status(self, foo: Foo, status: FooStatus, force: bool = False) -> Foo | None:
        """Write status through the status subresource when it differs; the Foo as written,
        or None when nothing changed. Raises FooGoneError when the Foo no longer exists.

        ``force`` writes an unchanged status too: the server makes no change (a no-op update
        keeps the resourceVersion) but still checks that the Foo exists at this version.
        """
        current = foo.get("status") or {}
        status = keep_transition_times(current, status)
        if current == status and not force:
            return None
        meta, key = foo["metadata"], name_of(foo)
        announced = None
        if trace.isEnabledFor(logging.INFO) and current != status:
            ready = [c.get("status") for c in status["conditions"] if c.get("type") == READY]
            available = status.get("availableReplicas")
            announced = {"key": key, "availableReplicas": available, "ready": ready[0]}
        self._announce(trace, "status write", announced)
        # UpdateStatus: a PUT of the whole Foo to /status, guarded by resourceVersion. Only the
        # status part is taken by the server; spec changes there are ignored.
        path = resource_path(*FOO_GVR, meta["namespace"], meta["name"], "status")
        try:
            written = self.writes.update("foos", key, path, {**foo, "status": status}, enqueue=key)
        except APIError as err:
            if is_not_found(err):
                raise FooGoneError(key) from err
            raise
        return None if current == status else cast(Foo, written)
