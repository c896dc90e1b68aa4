"""The Foo controller written the kubebuilder way: a Reconcile on the Builder and the cached Client.

kubebuilder twin: a scaffolded ``FooReconciler`` (``Reconcile`` and ``SetupWithManager``) with
its ``cmd/main.go``, as the kubebuilder book writes an operator. Same Foo, same Deployment, same
status as ``controller/`` (the sample-controller way); the informers, listers, workqueue and
event handlers that controller.go spells out are the Builder's here (``runtime.builder``), and
the reads go through the cache (``runtime.client``); tests/examples/test_foo_kubebuilder.py
runs the same behaviour tests against both.

Where it differs from the sample-controller way, and why:

- the Deployment is created when the cache has none (a 409 if someone made one meanwhile: never
  adopted), then kept by server-side apply with ``force`` on every reconcile: the server merges
  and takes back the fields another writer changed, where controller.go compares the replicas
  and updates the object as read;
- the Deployment is created without first writing the status as the proof that the Foo still
  exists (controller.go's order): a Foo deleted meanwhile leaves a Deployment whose owner is
  gone, which the garbage collector deletes;
- no expectations (``runtime.expectations``): a reconcile from a cache older than its own last
  write sends a no-op apply or meets a 409, which is a requeue;
- the status is written when it differs, with a plain update as read (a 409 is a requeue);
- the Synced Event is recorded when the Deployment was created or the status changed; the
  blocked Foo's Warning Event and Ready=False condition are the sample-controller way's;
- a Foo whose blocker goes away hears of it through a field index of Foos by
  ``spec.deploymentName`` and a map function (``watches``), where controller.go looks the
  Foos up in its own indexer;
- sharded, a Deployment made before sharding (outside every cache) is met as a 409 and retried,
  where controller.go labels it into the cache (``runtime.sharding.owned``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client.errors import APIError, is_already_exists, is_conflict, is_not_found
from controller.apis import DEPLOYMENT_GVR, FOO_GVR, Foo, FooStatus
from controller.builders import (
    desired_status,
    is_controlled_by,
    keep_transition_times,
    new_deployment,
)
from controller.validation import Problem, foo_problem
from runtime.builder import Builder
from runtime.context import Context, background
from runtime.controllerutil import set_controller_reference
from runtime.flags import build_parser, parse_options
from runtime.handler import EnqueueRequestsFromMapFunc
from runtime.manager import Manager, run_process
from runtime.options import Options
from runtime.reconcile import Request, Result, request_for
from tools.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorderInterface

FIELD_MANAGER = "foo-kubebuilder"
# the sample-controller way's Event reasons and wording (controller/foo_controller.py)
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = 'Resource "%s" already exists and is not managed by Foo'
SUCCESS_SYNCED = "Synced"
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"
# the field index of Foos by the Deployment they name
DEPLOYMENT_NAME_FIELD = "spec.deploymentName"
REQUIRES = [(FOO_GVR, "apply crds/foo-crd.yaml (make install-crd)")]


class FooReconciler:
    """Keeps each Foo's Deployment as the Foo says, and reports back in its status (a kubebuilder
    ``FooReconciler``, on controller-runtime)."""

    def __init__(self, manager: Manager) -> None:
        self.client = manager.get_client().with_field_owner(FIELD_MANAGER)
        self.recorder: EventRecorderInterface = manager.event_recorder(FIELD_MANAGER)

    def setup_with_manager(self, manager: Manager) -> None:
        """Reconcile a Foo when it changes, when its Deployment does, and when a Deployment of
        the name it asks for does (someone else's going away unblocks it)."""
        cache = manager.get_cache()
        cache.index_field(FOO_GVR, DEPLOYMENT_NAME_FIELD, _deployment_name)

        def foos_naming(deployment: Any) -> list[Request]:
            meta = deployment["metadata"]
            fields = {DEPLOYMENT_NAME_FIELD: meta["name"]}
            foos = cache.list(background(), FOO_GVR, meta["namespace"], matching_fields=fields)
            return [request_for(f) for f in foos]

        (
            Builder(manager)
            .named("foo")
            .for_(FOO_GVR)
            .owns(DEPLOYMENT_GVR)
            .watches(DEPLOYMENT_GVR, EnqueueRequestsFromMapFunc(foos_naming))
            .complete(self)
        )

    def reconcile(self, ctx: Context, request: Request) -> Result:
        try:
            return self._reconcile(ctx, request)
        except APIError as err:
            # our cache was behind (409), or an object went meanwhile (404): its event follows
            if is_conflict(err) or is_already_exists(err) or is_not_found(err):
                return Result(requeue=True, cause=str(err))
            return Result(error=err)

    def _reconcile(self, ctx: Context, request: Request) -> Result:
        try:
            foo = self.client.get(ctx, FOO_GVR, request.namespace, request.name)
        except APIError as err:
            if is_not_found(err):
                return Result()  # deleted: the garbage collector takes its Deployment
            raise
        if foo["metadata"].get("deletionTimestamp"):
            return Result()
        problem = foo_problem(foo)
        if problem is not None:
            # only an edit of the Foo can help: say so once, no retry
            if self._update_status(ctx, foo, desired_status(foo, None, problem)):
                self._event(ctx, foo, EVENT_TYPE_WARNING, problem.reason, problem.message)
            return Result()

        name = foo["spec"]["deploymentName"]
        try:
            deployment = self.client.get(ctx, DEPLOYMENT_GVR, request.namespace, name)
        except APIError as err:
            if not is_not_found(err):
                raise
            deployment = None
        if deployment is not None and not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % name
            blocked = Problem(ERR_RESOURCE_EXISTS, message)
            self._update_status(ctx, foo, desired_status(foo, None, blocked, blocked=True))
            self._event(ctx, foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            return Result(error=ResourceExistsError(message))

        desired: dict[str, Any] = dict(new_deployment(foo))
        desired["metadata"] = {**desired["metadata"], "ownerReferences": []}
        set_controller_reference(foo, desired)
        if deployment is None:
            deployment = self.client.create(ctx, DEPLOYMENT_GVR, desired)
            created = True
        else:
            deployment = self.client.apply(ctx, DEPLOYMENT_GVR, desired, force=True)
            created = False
        changed = self._update_status(ctx, foo, desired_status(foo, deployment))
        if created or changed:
            self._event(ctx, foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        return Result()

    def _update_status(self, ctx: Context, foo: Foo, status: FooStatus) -> bool:
        """Write ``status`` unless the Foo shows it already; whether it was written."""
        current: FooStatus = foo.get("status") or {}
        status = keep_transition_times(current, status)
        if status == current:
            return False
        self.client.update_status(ctx, FOO_GVR, {**foo, "status": status})
        return True

    def _event(self, ctx: Context, foo: Any, event_type: str, reason: str, message: str) -> None:
        ctx.err(reason)  # nothing recorded past the drain deadline
        self.recorder.event(foo, event_type, reason, message)


class ResourceExistsError(Exception):
    """The Deployment a Foo names is someone else's: retried with backoff, never written
    (sample-controller's ``ErrResourceExists``)."""


def _deployment_name(foo: Any) -> list[str]:
    name = (foo.get("spec") or {}).get("deploymentName")
    return [name] if name else []


def main(argv: Sequence[str] | None = None) -> int:
    """The process flags, the reconciler on a manager, run until a signal (cmd/main.go)."""
    parser = build_parser(
        "foo-kubebuilder", "Keeps a Deployment for every Foo, the kubebuilder way."
    )
    options = parse_options(argv, parser, Options)
    return run_process(options, lambda m: FooReconciler(m).setup_with_manager(m), REQUIRES)
