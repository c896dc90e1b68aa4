"""The Foo controller: sample-controller's controller.go, on our own informers and workqueue.

Read it top to bottom, as its Go twin: the constants; ``Controller``, whose ``__init__`` wires
event handlers that turn every Foo and Deployment change into a ``namespace/name`` key on a
rate-limited workqueue; ``run``, which waits for the caches and runs the workers
(``runtime.worker``: each takes a key, calls ``reconcile``, forgets or retries the key by its
``Result``); and ``sync_handler``: read the Foo and its Deployment from the listers (the cache,
never the API), make the Deployment match the Foo, write the Foo's status, each write handed
``ctx`` as in Go (``runtime.context``: bounded once shutting down). The objects come from the
pure ``controller.builders``. The reconcile is level-based: it asks *what should be*, never
*what changed*, so a missed or merged event is harmless and a resync repairs drift.

Differences from sample-controller, each deliberate (docs/architecture.md has the long form):

- a replica change updates the Deployment *as read*: a concurrent writer gets a 409, not lost;
- status also carries ``observedGeneration`` and a ``Ready`` condition, written only when it
  differs, so a converged Foo costs no API writes per resync;
- status is written *before* a Deployment is created: guarded by the Foo's resourceVersion, it
  proves the Foo still exists (a deleted one gets a 404, not a new Deployment);
- what it wrote is remembered until the caches show it (``runtime.expectations``), never
  written again from an older copy; a 409 that still happens is a requeue;
- ``Synced`` is recorded when a sync created or scaled the Deployment, not for a status write
  that follows the Deployment's progress, nor every resync (30 s per Foo forever);
- a Foo that cannot be acted on, or is blocked by a Deployment it does not own, gets a
  ``Ready=False`` condition saying why and a Warning Event, where upstream only logs;
- a Foo being deleted (``deletionTimestamp``) is left alone;
- with ``--sharding``, only the replica acting on a Foo's bucket syncs it (``gate``), and its
  Deployment carries the bucket label (``runtime.sharding``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, NoReturn, cast

from client.rest import RESTClient, resource_path
from controller.apis import (
    DEPLOYMENT_GVR,
    DEPLOYMENT_NAME_INDEX,
    FOO_GVR,
    Deployment,
    DeploymentInformer,
    Foo,
    FooInformer,
    FooStatus,
    OwnerReference,
)
from controller.builders import (
    READY,
    blocked_before,
    controller_of,
    deployment_name_index_func,
    desired_status,
    is_controlled_by,
    keep_transition_times,
    name_of,
    new_deployment,
    status_differs,
)
from controller.validation import PROBLEM_LOG, Problem, foo_problem
from informer.interfaces import HandlerRegistration
from informer.lister import NotFoundError
from informer.shared_informer import ResourceEventHandlerFuncs
from informer.store import (
    DeletedFinalStateUnknown,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from runtime.context import Context
from runtime.expectations import Expectations
from runtime.log import log_v4
from runtime.metrics.reconcile import ReconcileMetrics
from runtime.sharding.gate import EVERY_OBJECT, Gate
from runtime.sharding.owned import NotOwnedError, create_or_label, lookup
from runtime.shutdown import ShutdownBudget
from runtime.trace import TRACE_LOGGER
from runtime.worker import Result, Workers, result_of
from runtime.writes import GoneError, TrackedWrites
from tools.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorderInterface
from workqueue import RateLimitingQueue, sample_controller_rate_limiter

log = logging.getLogger(__name__)

# The path of every key, one line per step (``--trace``, ``runtime.trace``; docs/walkthrough.md
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


class ResourceExistsError(Exception):
    """The Deployment a Foo names is someone else's (sample-controller: ``fmt.Errorf``)."""


class FooGoneError(Exception):
    """The Foo's status write met a 404: deleted while our cache held it (no client-go twin)."""


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
        gate: Gate = EVERY_OBJECT,
    ) -> None:
        # Which Foos this replica syncs, and its Deployments' labels (runtime.sharding).
        self.gate = gate
        # Reads come from the listers; writes go through self.writes, Events the recorder.
        self.recorder = recorder
        # Foos by spec.deploymentName; must be added before the informer starts.
        foo_informer.add_indexers({DEPLOYMENT_NAME_INDEX: deployment_name_index_func})
        self.foos_lister = foo_informer.lister()
        self.foos_indexer = foo_informer.get_indexer()
        self.deployments_lister = deployment_informer.lister()
        # workqueue is a rate-limited queue of "namespace/name" keys. It ensures a key is
        # processed by one worker at a time, and that a key added while it is being processed
        # is processed again afterwards (so no change is lost, and none is raced).
        if queue is None:
            queue = RateLimitingQueue(sample_controller_rate_limiter(), name="foo")
        self.workqueue = queue
        # The workers: each takes a key off the queue and calls reconcile (runtime.worker).
        self.workers = Workers(queue, self.reconcile, name="foo", log=log, metrics=metrics)
        # our writes that the caches do not show yet: no second write from an older copy
        self.expectations = expectations if expectations is not None else Expectations()
        self.writes = TrackedWrites(rest, self.expectations, queue, field_manager=FIELD_MANAGER)
        log.info("setting up event handlers")
        # No Foo delete handler: the garbage collector removes the Deployment with its owner.
        on_foo = ResourceEventHandlerFuncs(self.enqueue_foo, self._on_foo_update)
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
        # the create or update we expected (if it was ours) is now in the cache
        rv = obj["metadata"].get("resourceVersion")
        self.expectations.observed("deployments", name_of(obj), rv)
        self.handle_object(obj)

    def _on_deployment_update(self, old: Deployment, new: Deployment) -> None:
        # Periodic resync sends an update for every Deployment. Two versions of the same
        # Deployment always differ in resourceVersion, so equal ones mean nothing changed.
        if old["metadata"].get("resourceVersion") != new["metadata"].get("resourceVersion"):
            self._on_deployment_add(new)

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
        that name it without controlling it. A deleted one may come as a tombstone
        (DeletedFinalStateUnknown: the informer missed its deletion), its last state inside."""
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
            if not isinstance(obj, dict):
                log.error("tombstone contained object that is not a dict: %r", type(obj))
                return
            log.info("recovered deleted object from tombstone", extra={"object": name_of(obj)})
        log.debug("processing object", extra={"object": name_of(obj)})
        owner = controller_of(obj)
        # Only Foos are of interest; the group too, so a "Foo" of another API is not ours.
        if (
            owner
            and owner.get("kind") == "Foo"
            and owner.get("apiVersion", "").startswith(FOO_GVR[0] + "/")
        ):
            try:
                foo = self.foos_lister.get(obj["metadata"].get("namespace", ""), owner["name"])
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
        """Enqueue the Foos that name this Deployment but are not its controller: blocked
        while it exists (``ErrResourceExists``), retried with backoff up to 1000 s; this event
        (the Deployment deleted, adopted or changed) may have unblocked them, so they are
        synced now. The owner found through the ownerReference is not looked up twice."""
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
        ``drain_timeout`` seconds): ``runtime.worker.Workers.run``."""
        log.info("starting Foo controller")
        budget = budget or ShutdownBudget(drain_timeout)
        self.workers.run(workers, stop, budget, self, cache_sync_timeout)

    # -- reconcile ----------------------------------------------------------------------------

    def reconcile(self, ctx: Context, key: str) -> Result:
        """``sync_handler``, and how it ended as the workers read it (controller-runtime's
        ``Reconcile``): a 409 or a Deployment gone meanwhile is a requeue, not an error (the
        cache was behind, and the event that catches it up enqueues the key again)."""
        return result_of(lambda: self.sync_handler(ctx, key))

    def sync_handler(self, ctx: Context, key: str) -> None:
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
                self._sync(ctx, key, foo)
            except FooGoneError:
                # deleted meanwhile (a Deployment just made goes with it through the GC)
                log.info("foo deleted during sync, status not written", extra={"key": key})

    def _sync(self, ctx: Context, key: str, foo: Foo) -> None:
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
            if self._update_foo_status(ctx, foo, desired_status(foo, None, problem)) is not None:
                self._event(ctx, foo, EVENT_TYPE_WARNING, problem.reason, problem.message)
            return

        # A Deployment not controlled by this Foo: say so in the status (once) and an Event, and
        # retry with backoff (its events enqueue this Foo: DEPLOYMENT_NAME_INDEX). Never touch it.
        if deployment is not None and not is_controlled_by(deployment, foo):
            self._blocked(ctx, foo)
        if deployment is None and self._blocked_outside_cache(ctx, foo):
            self._blocked(ctx, foo)

        if deployment is None:
            # Status first, guarded by the Foo's resourceVersion: a Foo already deleted gets a
            # 404 here (FooGoneError) instead of a new Deployment (module docstring). The new
            # Deployment has no status yet, so 0 available is already the desired status.
            written = self._update_foo_status(ctx, foo, desired_status(foo, None), force=True)
            if self._create_deployment(ctx, written if written is not None else foo) is not None:
                self._event(ctx, foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
            return

        replicas = (foo.get("spec") or {}).get("replicas")
        scaled = replicas is not None and replicas != (deployment.get("spec") or {}).get("replicas")
        if scaled:
            deployment = self._update_deployment_replicas(ctx, key, deployment, cast(int, replicas))

        status = desired_status(foo, deployment)
        if status_differs(foo, status):
            self._update_foo_status(ctx, foo, status)
        # Synced says the Deployment was made to match the Foo; a status write follows it
        if scaled:
            self._event(ctx, foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def _blocked(self, ctx: Context, foo: Foo) -> NoReturn:
        """The Deployment of the Foo's name is someone else's: say so, then retry with backoff."""
        message = MESSAGE_RESOURCE_EXISTS % foo["spec"]["deploymentName"]
        blocked = Problem(ERR_RESOURCE_EXISTS, message)
        self._update_foo_status(ctx, foo, desired_status(foo, None, blocked, blocked=True))
        self._event(ctx, foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
        raise ResourceExistsError(message)

    def _blocked_outside_cache(self, ctx: Context, foo: Foo) -> bool:
        """Sharded, a Foo already blocked: someone else's Deployment carries no bucket label,
        so it is in no replica's cache. Ask the API whether it is still there, rather than let
        the status flap through "not available" (and a create's 409) at every retry."""
        if not (self.gate.owned_labels(foo) and blocked_before(foo, ERR_RESOURCE_EXISTS)):
            return False
        path = resource_path(*DEPLOYMENT_GVR, foo["metadata"]["namespace"])
        existing = lookup(ctx, self.writes, path, foo["spec"]["deploymentName"])
        return existing is not None and not is_controlled_by(existing, foo)

    def _cache_behind_our_writes(
        self, key: str, foo: Foo, has_deployment_name: bool, deployment: Deployment | None
    ) -> bool:
        """Our last write of the Foo (its status) or of its Deployment (created or updated) is
        not cached yet: wait for its watch event, which enqueues the Foo again (writing from
        the older copy would get a 409)."""
        behind = self.expectations.stale("foos", key, foo["metadata"].get("resourceVersion"))
        if not behind and has_deployment_name:
            deployment_key = f"{foo['metadata']['namespace']}/{foo['spec']['deploymentName']}"
            cached_rv = deployment["metadata"].get("resourceVersion") if deployment else None
            uid = foo["metadata"].get("uid")
            behind = self.expectations.stale("deployments", deployment_key, cached_rv, owner=uid)
        if behind:
            trace.info("cache behind our write", extra={"key": key})
        return behind

    # -- writes (runtime.writes: each under an expectation, bounded by ctx) ----------------

    def _event(self, ctx: Context, foo: Foo, event_type: str, reason: str, message: str) -> None:
        # as every write: nothing recorded past the drain deadline (AbandonedError)
        ctx.err(reason)
        self.recorder.event(foo, event_type, reason, message)

    def _create_deployment(self, ctx: Context, foo: Foo) -> Deployment | None:
        """Create the Foo's Deployment; None when one was there already, ours but outside our
        cache (sharded: labelled now, so that it enters the cache)."""
        namespace, deployment_name = foo["metadata"]["namespace"], foo["spec"]["deploymentName"]
        ctx.err("creating deployment")
        log_v4(log, "creating deployment", {"key": name_of(foo), "deployment": deployment_name})
        path = resource_path(*DEPLOYMENT_GVR, namespace)
        key, owner = f"{namespace}/{deployment_name}", foo["metadata"].get("uid")
        labels = self.gate.owned_labels(foo)
        body = new_deployment(foo, labels)
        # Sharded, the create may meet a Deployment no replica's cache holds (made before
        # sharding): someone else's is blocked, as ever; ours is labelled into our cache.
        try:
            ours = lambda existing: is_controlled_by(existing, foo)  # noqa: E731
            created = create_or_label(
                ctx, self.writes, "deployments", key, path, body, owner, labels, ours
            )
        except NotOwnedError:
            self._blocked(ctx, foo)
        return cast(Deployment | None, created)

    def _update_deployment_replicas(
        self, ctx: Context, key: str, deployment: Deployment, replicas: int
    ) -> Deployment:
        meta, was = deployment["metadata"], deployment["spec"].get("replicas")
        ctx.err("updating deployment replicas")
        extra = {"key": key, "deployment": meta["name"], "replicas": replicas, "was": was}
        log_v4(log, "updating deployment replicas", extra)
        # Cached objects are shared: build a new object around a new spec, never assign into
        # the cached one. resourceVersion stays, so a concurrent change gets us a 409.
        updated = {**deployment, "spec": {**deployment["spec"], "replicas": replicas}}
        path = resource_path(*DEPLOYMENT_GVR, meta["namespace"], meta["name"])
        # (its own events reach handle_object: nothing to enqueue; gone meanwhile: a requeue)
        written = self.writes.update(ctx, "deployments", name_of(deployment), path, updated)
        return cast(Deployment, written)

    def _update_foo_status(
        self, ctx: Context, foo: Foo, status: FooStatus, force: bool = False
    ) -> Foo | None:
        """Write status through the status subresource when it differs (``force``: also when
        not, which changes nothing but checks the Foo exists at this version); the Foo as
        written, or None when nothing changed. FooGoneError when the Foo no longer exists."""
        current = foo.get("status") or {}
        status = keep_transition_times(current, status)
        if current == status and not force:
            return None
        meta, key = foo["metadata"], name_of(foo)
        ctx.err("status write")
        if trace.isEnabledFor(logging.INFO) and current != status:
            ready = [c.get("status") for c in status["conditions"] if c.get("type") == READY][0]
            extra = {"key": key, "availableReplicas": status.get("availableReplicas")}
            trace.info("status write", extra={**extra, "ready": ready})
        # UpdateStatus: a PUT of the Foo to /status, guarded by resourceVersion (status only).
        path = resource_path(*FOO_GVR, meta["namespace"], meta["name"], "status")
        try:
            written = self.writes.update(ctx, "foos", key, path, {**foo, "status": status}, key)
        except GoneError as err:
            raise FooGoneError(key) from err
        return None if current == status else cast(Foo, written)
