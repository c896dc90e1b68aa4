"""The Foo controller: sample-controller's controller.go, on our own informers and workqueue.

Read it top to bottom, as its Go twin:

1. the constants for Event reasons and messages;
2. ``Controller``, wired in ``__init__``: event handlers on the Foo and Deployment informers turn
   every change into a ``namespace/name`` key on a rate-limited workqueue, and an index of Foos
   by the Deployment they name finds the Foos a foreign Deployment blocks;
3. ``run`` waits for the caches, starts the workers and, on stop, drains the queue within the
   shutdown budget (``controller.shutdown``);
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
- the status is written *before* a Deployment is created: the write is guarded by the Foo's
  resourceVersion, so it proves that the Foo still exists, and a Foo deleted while our cache
  still held it (the garbage collector's delete of its Deployment can overtake the Foo's own
  watch event) gets a 404 there instead of a new Deployment;
- the controller remembers what it wrote until its caches show it (``controller.expectations``)
  and does not write again from an older copy; a 409 that still happens (someone else wrote
  first) is a requeue, not an error, as controller-runtime users return ``Requeue: true``;
- a worker does not wait for the last write of a sync (the Deployment create, or the status
  write): a free writer thread makes it while the worker takes the next key, and the key stays
  in the queue's processing set until the write has landed (``controller.writebehind``);
- the ``Synced`` event is recorded when a sync wrote something, not on every resync: upstream's
  would PATCH an Event every 30 s per Foo forever;
- a Foo that cannot be acted on (no ``deploymentName``, a name that cannot be a label value) and
  a Foo blocked by a Deployment it does not own get a ``Ready=False`` condition that says why,
  written once per change, and a Warning Event, where upstream only logs or retries;
- a Foo being deleted (``deletionTimestamp`` set) is left alone.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
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
from controller.expectations import Expectations
from controller.interfaces import (
    DeploymentInformer,
    EventRecorderInterface,
    FooInformer,
    HandlerRegistration,
)
from controller.metrics import ReconcileMetrics
from controller.shutdown import ShutdownBudget
from controller.trace import TRACE_LOGGER
from controller.validation import (
    ERR_INVALID_NAME,
    ERR_INVALID_SPEC,
    MESSAGE_NO_DEPLOYMENT_NAME,
    Problem,
    foo_problem,
)
from controller.writebehind import WRITERS_PER_WORKER, WriteBehind
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
MESSAGE_RESOURCE_EXISTS = 'Resource "%s" already exists and is not managed by Foo'
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"

FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
FOO_API_VERSION = "samplecontroller.k8s.io/v1alpha1"
DEPLOYMENT_GVR = ("apps", "v1", "deployments")

# The Foo informer's own index: Foos by the Deployment they name, "namespace/deploymentName".
DEPLOYMENT_NAME_INDEX = "byDeploymentName"

READY = "Ready"

# The write that ends a sync, left unmade for a writer thread (``controller.writebehind``).
LastWrite = Callable[[], None]

REQUEST_TIMEOUT = 60.0  # seconds a write may take, until the shutdown budget says less


class ResourceExistsError(Exception):
    """The Deployment a Foo names exists and is controlled by someone else (sample-controller
    returns ``fmt.Errorf(MessageResourceExists)``)."""


class FooGoneError(Exception):
    """The Foo's status write met a 404: it was deleted while our cache still held it (no
    client-go twin; sample-controller returns the error and retries)."""


class DeploymentGoneError(Exception):
    """The Deployment's update met a 404: it was deleted after our cache read it (the garbage
    collector, its Foo being deleted, or a user). Like a 409, the cache was behind: its delete
    event enqueues the Foo again, so it is a requeue, not an error (controller-runtime's
    ``client.IgnoreNotFound``)."""


class AbandonedError(Exception):
    """The shutdown budget's drain deadline has passed: the sync stops before its next write
    (no client-go twin: a Go process ends its goroutines by exiting)."""


def deployment_name_index_func(obj: Any) -> list[str]:
    """The Foo's index value: ``namespace/spec.deploymentName``, none without a name.

    client-go twin: an ``IndexFunc`` such as ``MetaNamespaceIndexFunc``. It is what lets a
    Deployment event find the Foos that *name* it, where the ownerReference only finds the Foo
    that *controls* it: a Foo blocked by someone else's Deployment is not its owner.
    """
    name = (obj.get("spec") or {}).get("deploymentName")
    if not name:
        return []
    return [f"{(obj.get('metadata') or {}).get('namespace', '')}/{name}"]


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
    ) -> None:
        self.rest = rest  # API writes (reads come from the listers)
        # Foos by spec.deploymentName; must be added before the informer starts.
        foo_informer.add_indexers({DEPLOYMENT_NAME_INDEX: deployment_name_index_func})
        self.foos_lister = foo_informer.lister()  # the Foo cache
        self.foos_indexer = foo_informer.get_indexer()  # the same cache, by index
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
        # our writes that the caches do not show yet: no second write from an older copy
        self.expectations = expectations if expectations is not None else Expectations()
        # handler registrations: synced once their informer is and our handlers have had its list
        self._registrations: list[HandlerRegistration] = []
        self._in_flight: dict[str, float] = {}  # key -> monotonic start, while a worker syncs it
        # guards _in_flight and _abandoned: a key starts, or the drain deadline passes, first
        self._in_flight_lock = threading.Lock()
        self._abandoned = False  # the drain deadline has passed: start nothing, write nothing
        self._budget: ShutdownBudget | None = None  # set by run(); bounds writes once stopping
        self._workers: list[threading.Thread] = []  # started by run()
        self._writers: WriteBehind | None = None  # started by run(): the syncs' last writes

        log.info("setting up event handlers")
        self._registrations.append(
            foo_informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self.enqueue_foo,
                    update_func=self._on_foo_update,
                    # no delete handler: the garbage collector removes the Deployment with its owner
                )
            )
        )
        self._registrations.append(
            deployment_informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self._on_deployment_add,
                    update_func=self._on_deployment_update,
                    delete_func=self._on_deployment_delete,
                )
            )
        )

    # -- handlers -----------------------------------------------------------------------------

    def _on_foo_update(self, old: Foo, new: Foo) -> None:
        # Every update is enqueued (resyncs too, as upstream), except the echo of our own
        # status write when no sync waited for it: the sync that wrote it had seen all it says.
        rv = new["metadata"].get("resourceVersion")
        if not self.expectations.observed("foos", _name_of(new), rv):
            trace.info("own write", extra={"key": _name_of(new), "rv": rv})
            return
        self.enqueue_foo(new)

    def _on_deployment_add(self, obj: Deployment) -> None:
        # the create we expected (if it was ours) is now in the cache
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        self.expectations.observed("deployments", _name_of(obj), rv)
        self.handle_object(obj)

    def _on_deployment_update(self, old: Deployment, new: Deployment) -> None:
        # Periodic resync sends an update for every Deployment. Two versions of the same
        # Deployment always differ in resourceVersion, so equal ones mean nothing changed.
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        self.expectations.observed(
            "deployments", _name_of(new), new["metadata"].get("resourceVersion")
        )
        self.handle_object(new)

    def _on_deployment_delete(self, obj: Any) -> None:
        last = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(last, dict):
            self.expectations.observed("deployments", _name_of(last))
        self.handle_object(obj)

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
            log.info("recovered deleted object from tombstone", extra={"object": _name_of(obj)})
        meta = obj.get("metadata") or {}
        log.debug("processing object", extra={"object": _name_of(obj)})
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
                    "ignore orphaned object", extra={"object": _name_of(obj), "foo": owner["name"]}
                )
            else:
                trace.info(
                    "owner lookup", extra={"object": _name_of(obj), "owner": f"Foo/{owner['name']}"}
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
        for foo in self.foos_indexer.by_index(DEPLOYMENT_NAME_INDEX, _name_of(obj)):
            if owner_uid is not None and foo["metadata"].get("uid") == owner_uid:
                continue
            trace.info("index lookup", extra={"object": _name_of(obj), "foo": _name_of(foo)})
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
        budget: ShutdownBudget | None = None,
    ) -> None:
        """Wait for the caches, run ``workers`` worker threads until ``stop`` is set, then drain.

        The informers must have been started (``factory.start``). On stop, the queue refuses new
        keys and the workers finish what is queued and in flight, until the ``budget``'s drain
        deadline (without a budget, one of ``drain_timeout`` seconds). Past it, no key is
        started, the syncs still in flight are abandoned (they make no further write), and
        ``run`` returns without waiting for them.
        """
        budget = budget if budget is not None else ShutdownBudget(drain_timeout)
        self._budget = budget
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
        # Writer threads: a worker leaves the last write of a sync to a free one and takes the
        # next key meanwhile (controller.writebehind, which says why two per worker).
        writers = self._writers = WriteBehind(WRITERS_PER_WORKER * workers, name="foo-writer")
        threads = [
            threading.Thread(
                target=self.run_worker, args=(writers,), name=f"foo-worker-{i}", daemon=True
            )
            for i in range(workers)
        ]
        self._workers = threads
        for t in threads:
            t.start()
        log.info("started workers")
        stop.wait()
        budget.begin()
        log.info("shutting down workers")
        drained = threading.Thread(
            target=self.workqueue.shut_down_with_drain, name="queue-drain", daemon=True
        )
        drained.start()
        # Draining ends when nothing is in flight; the workers then take what is still queued.
        drained.join(budget.left(budget.drain_deadline))
        for t in threads:
            t.join(budget.left(budget.drain_deadline))
        if drained.is_alive() or any(t.is_alive() for t in threads):
            abandoned = self._abandon()
            log.warning(
                "in-flight work did not finish within the graceful shutdown timeout",
                extra={"timeout": budget.timeout, "abandoned": ",".join(abandoned)},
            )
            self.workqueue.shut_down()  # releases the drain; get() still hands out what is queued
            return
        writers.stop(budget.left(budget.drain_deadline))

    def _abandon(self) -> list[str]:
        """Pass the drain deadline: no key starts from now on; returns the keys in flight."""
        with self._in_flight_lock:
            self._abandoned = True
            return sorted(self._in_flight)

    def run_worker(self, writers: WriteBehind | None = None) -> None:
        """Process items until the queue shuts down (or the drain deadline passes), leaving
        the last write of a sync to ``writers`` when one of them is free."""
        while True:
            while self.process_next_work_item(writers):
                pass
            # The queue is shut down and empty, but a last write still in flight may put its
            # key back (the key was added again while it was held): a worker that had made the
            # write itself would take it now, so wait for the writers and take what they put
            # back.
            budget = self._budget
            if writers is None or self._past_drain_deadline():
                return
            timeout = budget.left(budget.drain_deadline) if budget and budget.started else None
            if not writers.wait_idle(timeout) or len(self.workqueue) == 0:
                return

    def process_next_work_item(self, writers: WriteBehind | None = None) -> bool:
        """Take one key, sync it, and decide its fate; False when the worker should stop.

        The sync's last write, if it has one, is left to one of ``writers``
        (``controller.writebehind``) when one is free: the key is finished (forgotten or
        requeued, then ``done``) once that write has landed, and until then it stays in the
        queue's processing set, so nobody else syncs it. With no free writer the worker makes
        the write itself.
        """
        if self._past_drain_deadline():  # (checked again below: get() may block past it)
            return False
        key, shutdown = self.workqueue.get()
        if shutdown:
            return False
        start = time.monotonic()
        # Starting a key and passing the drain deadline exclude each other: after _abandon()
        # no key starts (client-go's queue hands out queued keys until it is empty, so the
        # refusal is here, and the queue keeps client-go's contract).
        with self._in_flight_lock:
            refused = self._past_drain_deadline()
            if not refused:
                self._in_flight[key] = start
                trace.info("dequeue", extra={"key": key})
        if refused:
            self.workqueue.done(key)
            return False
        try:
            last_write = self._begin_sync(key)
        except Exception as err:  # noqa: BLE001 - every error is retried, none kills the worker
            return self._finish(key, start, err)
        if last_write is None:
            return self._finish(key, start, None)
        # Nothing in the sync waits for the answer: a free writer makes the write while this
        # worker takes the next key. If none is free, the worker makes it, so there are never
        # more writes in flight than workers and writers together.
        if writers is not None and writers.try_submit(
            lambda: self._finish(key, start, _outcome(last_write))
        ):
            return True
        return self._finish(key, start, _outcome(last_write))

    def _finish(self, key: str, start: float, err: Exception | None) -> bool:
        """Forget or requeue the key as its sync ended (``err``), then mark it done; False
        when the drain deadline has cut the sync (the worker should stop)."""
        with self._in_flight_lock:  # in flight until its sync ended, not until it is logged
            self._in_flight.pop(key, None)
        # done() tells the queue we are finished with this key, whatever happens, so that it
        # can be handed out again (it may have been re-added while we worked on it).
        try:
            if err is None:
                # Success: stop tracking the key's failures, so its next error starts the
                # backoff from the base delay again.
                self.workqueue.forget(key)
                self._observe("success", start)
                log.info(
                    "successfully synced",
                    extra={"key": key, "duration": round(time.monotonic() - start, 6)},
                )
                return True
            if isinstance(err, AbandonedError):
                log.info("sync abandoned at the graceful shutdown deadline", extra={"key": key})
                return False
            if isinstance(err, APIError) and err.code != 409:
                self._retry_after_error(key, err, start)
                return True
            if isinstance(err, (APIError, DeploymentGoneError)):
                # A 409: someone wrote the object after the copy our sync read (a user, another
                # controller, or our own write when its expectation has expired); or the
                # Deployment we updated was deleted meanwhile. Not an error: the cache was
                # behind. Retry once it has caught up, as a controller-runtime reconciler
                # returns Requeue: true.
                self.workqueue.add_rate_limited(key)
                self._observe("requeue", start)
                log.debug(
                    "conflict, requeuing",
                    extra={
                        "key": key,
                        "error": str(err),
                        "requeues": self.workqueue.num_requeues(key),
                    },
                )
                return True
            if self._past_drain_deadline():  # a request cut at the deadline: no retry, no error
                log.info("sync abandoned at the graceful shutdown deadline", extra={"key": key})
                return False
            self._retry_after_error(key, err, start)
            return True
        finally:
            self.workqueue.done(key)

    def _retry_after_error(self, key: str, err: Exception, start: float) -> None:
        self.workqueue.add_rate_limited(key)
        self._observe("error", start)
        log.error(
            "error syncing, requeuing",
            extra={"key": key, "error": str(err), "requeues": self.workqueue.num_requeues(key)},
        )

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

    def writers_alive(self) -> int:
        """Writer threads still running: two per worker once run() has started them."""
        return self._writers.alive() if self._writers is not None else 0

    def _observe(self, result: str, start: float) -> None:
        if self.metrics is not None:
            self.metrics.observe(result, time.monotonic() - start)

    # -- reconcile ----------------------------------------------------------------------------

    def sync_handler(self, key: str) -> None:
        """Converge the Deployment and status of the Foo with this key; raise to retry."""
        last_write = self._begin_sync(key)
        if last_write is not None:
            last_write()

    def _begin_sync(self, key: str) -> LastWrite | None:
        """``sync_handler`` up to its last write, which it returns unmade (None: nothing left).

        The worker runs this part; the last write may be made by a writer thread
        (``process_next_work_item``): nothing in the sync waits for its answer.
        """
        namespace, name = split_meta_namespace_key(key)
        try:
            foo = self.foos_lister.get(namespace, name)
        except NotFoundError:
            # The Foo is gone; its Deployment goes with it through garbage collection.
            self.expectations.forget("foos", key)
            log.info("foo no longer exists", extra={"key": key})
            return None
        if foo["metadata"].get("deletionTimestamp"):
            # Being deleted (a finalizer, or foreground deletion while the garbage collector
            # removes its Deployment): creating or repairing now would fight the deletion.
            log.info("foo is being deleted, nothing to do", extra={"key": key})
            return None
        if self.expectations.stale("foos", key, foo["metadata"].get("resourceVersion")):
            # Our last status write replaced this very copy; its watch event will enqueue the
            # Foo again. Writing from this copy would be refused with a 409.
            trace.info("cache behind our write", extra={"key": key})
            return None
        try:
            return self._sync(key, foo)
        except FooGoneError:
            _log_foo_gone(key)
            return None

    def _sync(self, key: str, foo: Foo) -> LastWrite | None:
        namespace = foo["metadata"]["namespace"]
        problem = foo_problem(foo)
        if problem is not None:
            # Nothing can be done until the user fixes the Foo; retrying would not help.
            log.warning(
                _PROBLEM_LOG.get(problem.reason, "foo cannot be acted on"),
                extra={"key": key, "reason": problem.reason, "problem": problem.message},
            )
            if self._update_foo_status(foo, desired_status(foo, None, problem)) is not None:
                self._event(foo, EVENT_TYPE_WARNING, problem.reason, problem.message)
            return None

        deployment_name = foo["spec"]["deploymentName"]
        deployment_key = f"{namespace}/{deployment_name}"
        deployment: Deployment | None
        try:
            deployment = self.deployments_lister.get(namespace, deployment_name)
        except NotFoundError:
            deployment = None
        cached_rv = deployment["metadata"].get("resourceVersion") if deployment else None
        uid = foo["metadata"].get("uid")
        if self.expectations.stale("deployments", deployment_key, cached_rv, owner=uid):
            # The Deployment we created or updated is not in the cache yet; its event will
            # enqueue the Foo again.
            trace.info("cache behind our write", extra={"key": key, "deployment": deployment_key})
            return None

        # If the Deployment is not controlled by this Foo, say so in the status (once) and
        # in an Event, and retry with backoff: the user may delete or rename the other one,
        # and its Deployment events enqueue this Foo at once (DEPLOYMENT_NAME_INDEX). Never
        # touch it.
        if deployment is not None and not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % deployment_name
            blocked = Problem(ERR_RESOURCE_EXISTS, message)
            self._update_foo_status(foo, desired_status(foo, None, blocked, blocked=True))
            self._event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)

        if deployment is None:
            # Status first: the write is guarded by the Foo's resourceVersion, so it succeeds
            # only if the Foo still exists as cached. A Foo already deleted (the garbage
            # collector removing its Deployment can overtake the Foo's own watch event) gets
            # a 404 here (FooGoneError) instead of a new Deployment.
            written = self._update_foo_status(foo, desired_status(foo, None), force=True)
            created_for = written if written is not None else foo
            # The create ends the sync: the new Deployment has the Foo's replicas and no
            # status yet, so the status just written (0 available) is already the one
            # desired_status would compute from it.
            return lambda: self._create_deployment_and_report(created_for)

        wrote = False
        replicas = (foo.get("spec") or {}).get("replicas")
        if replicas is not None and replicas != (deployment.get("spec") or {}).get("replicas"):
            self._announce(
                log,
                "updating deployment replicas",
                {
                    "key": key,
                    "deployment": deployment_name,
                    "replicas": replicas,
                    "was": (deployment.get("spec") or {}).get("replicas"),
                },
            )
            deployment = self._update_deployment_replicas(deployment, replicas)
            wrote = True

        status = desired_status(foo, deployment)
        if _status_differs(foo, status):
            return lambda: self._write_status_and_report(key, foo, status)
        if wrote:
            self._event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        return None

    # -- the last write of a sync (made by a writer thread once run() has started them) ------

    def _create_deployment_and_report(self, foo: Foo) -> None:
        self._create_deployment(foo)
        self._event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def _write_status_and_report(self, key: str, foo: Foo, status: FooStatus) -> None:
        try:
            self._update_foo_status(foo, status)
        except FooGoneError:
            _log_foo_gone(key)
            return
        self._event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    # -- writes -------------------------------------------------------------------------------

    def _write(self, method: str, path: str, body: Any) -> Any:
        """One API write, unless the drain deadline has passed (AbandonedError).

        Once stopping, a write may take only until the drain deadline: one started during the
        drain is cut there, one started before is abandoned (it makes no further write).
        """
        self._raise_if_abandoned(path)
        timeout = REQUEST_TIMEOUT
        budget = self._budget
        if budget is not None and budget.started:
            timeout = max(0.001, min(timeout, budget.left(budget.drain_deadline)))
        return self.rest.request(
            method,
            path,
            params={"fieldManager": FIELD_MANAGER},
            body=body,
            timeout=timeout,
        )

    def _past_drain_deadline(self) -> bool:
        """The drain deadline has passed: by the clock already, before run() marks it."""
        if self._abandoned:
            return True
        budget = self._budget
        return budget is not None and budget.started and budget.left(budget.drain_deadline) <= 0

    def _raise_if_abandoned(self, what: str) -> None:
        if self._past_drain_deadline():
            raise AbandonedError(what)

    def _announce(self, logger: logging.Logger, msg: str, extra: dict[str, Any] | None) -> None:
        """Log the write about to be made, or raise AbandonedError past the drain deadline.

        Under the lock that passes the deadline (``_abandon``), so every write announced in
        the log was begun before the deadline's warning, and none after it. ``extra`` None:
        only the check (a write the log does not announce).
        """
        with self._in_flight_lock:
            self._raise_if_abandoned(msg)
            if extra is not None:
                logger.info(msg, extra=extra)

    def _event(self, foo: Foo, event_type: str, reason: str, message: str) -> None:
        with self._in_flight_lock:  # as _announce: no Event recorded past the deadline
            self._raise_if_abandoned(reason)
            self.recorder.event(foo, event_type, reason, message)

    def _create_deployment(self, foo: Foo) -> Deployment:
        namespace = foo["metadata"]["namespace"]
        self._announce(
            log,
            "creating deployment",
            {
                "key": f"{namespace}/{foo['metadata']['name']}",
                "deployment": foo["spec"]["deploymentName"],
            },
        )
        key = f"{namespace}/{foo['spec']['deploymentName']}"
        self.expectations.begin_create("deployments", key, owner=foo["metadata"].get("uid"))
        created = None
        try:
            created = self._write(
                "POST", resource_path(*DEPLOYMENT_GVR, namespace), new_deployment(foo)
            )
            return cast(Deployment, created)
        finally:
            produced = ((created or {}).get("metadata") or {}).get("resourceVersion")
            self.expectations.end_update("deployments", key, produced)

    def _update_deployment_replicas(self, deployment: Deployment, replicas: int) -> Deployment:
        # Cached objects are shared: build a new object around a new spec, never assign into
        # the cached one. resourceVersion stays, so a concurrent change gets us a 409.
        updated = {**deployment, "spec": {**deployment["spec"], "replicas": replicas}}
        meta = deployment["metadata"]
        path = resource_path(*DEPLOYMENT_GVR, meta["namespace"], meta["name"])
        # (the Deployment's own events always reach handle_object: nothing to enqueue here)
        try:
            written = self._tracked_update(
                "deployments", deployment, lambda: self._write("PUT", path, updated)
            )
        except APIError as err:
            if is_not_found(err):
                raise DeploymentGoneError(_name_of(deployment)) from err
            raise
        return cast(Deployment, written)

    def _update_foo_status(self, foo: Foo, status: FooStatus, force: bool = False) -> Foo | None:
        """Write status through the status subresource when it differs; the Foo as written,
        or None when nothing changed. Raises FooGoneError when the Foo no longer exists.

        ``force`` writes an unchanged status too: the server makes no change (a no-op update
        keeps the resourceVersion) but still checks that the Foo exists at this version.
        """
        current = foo.get("status") or {}
        status = _keep_transition_times(current, status)
        if current == status and not force:
            return None
        meta = foo["metadata"]
        announced = None
        if trace.isEnabledFor(logging.INFO) and current != status:
            announced = {
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
            }
        self._announce(trace, "status write", announced)
        # UpdateStatus: a PUT of the whole Foo to /status, guarded by resourceVersion. Only the
        # status part is taken by the server; spec changes there are ignored.
        path = resource_path(*FOO_GVR, meta["namespace"], meta["name"], "status")
        try:
            written = self._tracked_update(
                "foos", foo, lambda: self._write("PUT", path, {**foo, "status": status})
            )
        except APIError as err:
            if is_not_found(err):
                raise FooGoneError(_name_of(foo)) from err
            raise
        return None if current == status else cast(Foo, written)

    def _tracked_update(
        self, resource: str, old: Mapping[str, Any], write: Callable[[], Any]
    ) -> Any:
        """Run an update of ``old`` under an expectation (``controller.expectations``).

        Announced before it is sent, since its watch event may be handled before the response
        is read here; a Foo event held meanwhile that was not our echo is enqueued here, as
        the Foo handler would have.
        """
        key = _name_of(old)
        old_rv = (old.get("metadata") or {}).get("resourceVersion")
        if not old_rv:
            return write()
        self.expectations.begin_update(resource, key, old_rv)
        written = None
        try:
            written = write()
            return written
        finally:
            new_rv = ((written or {}).get("metadata") or {}).get("resourceVersion")
            if self.expectations.end_update(resource, key, new_rv) and resource == "foos":
                self.enqueue_foo(old)


# What the controller logs about a Foo it cannot act on, by reason.
_PROBLEM_LOG = {
    ERR_INVALID_SPEC: "deployment name must be specified",
    ERR_INVALID_NAME: "foo name cannot be a label value",
}


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
    foo: Foo,
    deployment: Deployment | None,
    problem: Problem | None = None,
    blocked: bool = False,
) -> FooStatus:
    """The status a Foo should show, given its Deployment as last seen.

    With a ``problem`` (why nothing can be done), ``Ready`` is False with its reason and
    message, and ``availableReplicas`` is left as it was; ``blocked`` (the Deployment of its
    name is someone else's) removes it: no replica is the Foo's, and none is claimed from the
    other Deployment. Keeps the fields we do not own (anything another writer added) and
    replaces ours.
    """
    status = FooStatus(**(foo.get("status") or {}))
    generation = (foo.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    if problem is not None:
        condition = _condition("False", problem.reason, problem.message, generation)
        if blocked:
            status.pop("availableReplicas", None)
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


def _status_differs(foo: Foo, status: FooStatus) -> bool:
    """``status`` would change the Foo's (``_update_foo_status`` writes it)."""
    current = foo.get("status") or {}
    return current != _keep_transition_times(current, status)


def _outcome(write: LastWrite) -> Exception | None:
    """Make the write; the error that ended it, or None."""
    try:
        write()
    except Exception as err:  # noqa: BLE001 - handed to Controller._finish, as a sync's error
        return err
    return None


def _log_foo_gone(key: str) -> None:
    # deleted meanwhile; nothing left to report on (its Deployment, if we just made one, goes
    # with it through garbage collection)
    log.info("foo deleted during sync, status not written", extra={"key": key})


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
