"""The Builder (runtime.builder) and the controller it makes (runtime.controller): what it refuses,
how its sources, predicates and handlers reach the reconciler, and the sharding gate."""

from __future__ import annotations

import threading
import uuid

import pytest

from client.rest import RESTClient, resource_path
from informer.shared_informer import SharedIndexInformer
from informer.testing import FakeListWatch
from runtime.builder import Builder, controller_managed_by
from runtime.context import Context, background
from runtime.controller import Controller
from runtime.handler import EnqueueRequestsFromMapFunc
from runtime.predicate import Funcs
from runtime.reconcile import Func, Request, Result
from runtime.sharding.assignment import bucket_of
from runtime.sharding.gate import ActingGate
from tests.helpers import wait_for
from tests.runtime.helpers import CONFIGMAPS, SECRETS, configmap, new_manager, running
from workqueue import RateLimitingQueue, default_controller_rate_limiter


class Recording:
    """A reconciler that records the requests it is given (thread-safe)."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def reconcile(self, ctx: Context, request: Request) -> Result:
        with self._lock:
            self.requests.append(request)
        return Result()

    def seen(self) -> set[Request]:
        with self._lock:
            return set(self.requests)


@pytest.fixture
def api(sim) -> RESTClient:
    return RESTClient(sim.new_api_client())


def test_what_the_builder_refuses(sim):
    manager = new_manager(sim)
    r = Recording()
    with pytest.raises(ValueError, match="non-nil Reconciler"):
        Builder(manager).for_(CONFIGMAPS).complete(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="should only be called once"):
        Builder(manager).for_(CONFIGMAPS).for_(SECRETS).complete(r)
    with pytest.raises(ValueError, match="Owns\\(\\) can only be used together with For\\(\\)"):
        Builder(manager).named("x").owns(SECRETS).complete(r)
    with pytest.raises(ValueError, match="one of For\\(\\) or Named\\(\\) must be called"):
        Builder(manager).complete(r)
    with pytest.raises(ValueError, match="at least 1"):
        Builder(manager).with_options(max_concurrent_reconciles=0)
    Builder(manager).named("twice").for_(CONFIGMAPS).complete(r)
    with pytest.raises(ValueError, match="controller with name twice already exists"):
        Builder(manager).named("twice").for_(SECRETS).complete(r)
    # the refused ones added nothing to the manager
    assert [c.name for c in manager._runnables if isinstance(c, Controller)] == ["twice"]


def test_a_builder_made_controller_reconciles_its_objects_and_their_owners(sim, api):
    manager = new_manager(sim, workers=3)
    r = Recording()
    skip = Funcs(lambda e: "skip" not in (e.object["metadata"].get("labels") or {}))
    controller = (
        controller_managed_by(manager)
        .for_(CONFIGMAPS)
        .owns(SECRETS)
        .with_event_filter(skip)
        .complete(r)
    )
    # the default name: the for_ kind, lowercased, from discovery
    assert controller.name == "configmap"
    assert controller.max_concurrent_reconciles == 3  # --workers
    with running(manager):
        assert controller.has_synced()
        # the workers start once the controller has seen its sources synced (they poll)
        wait_for(lambda: controller.workers.started() == 3, message="three workers")
        owner = api.request("POST", resource_path(*CONFIGMAPS, "default"), body=configmap("o"))
        api.request(
            "POST",
            resource_path(*CONFIGMAPS, "default"),
            body=configmap("skipped", labels={"skip": "yes"}),
        )
        wait_for(lambda: Request("default", "o") in r.seen(), message="the ConfigMap reconciled")

        # a Secret the ConfigMap controls enqueues the ConfigMap; one it does not, nothing
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}
        ref |= {"uid": owner["metadata"]["uid"], "controller": True}
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": "default"}}
        before = len(r.requests)
        api.request(
            "POST",
            resource_path(*SECRETS, "default"),
            body={
                **secret,
                "metadata": {**secret["metadata"], "name": "s", "ownerReferences": [ref]},
            },
        )
        wait_for(lambda: len(r.requests) > before, message="the owner reconciled again")
        assert r.requests[-1] == Request("default", "o")
        api.request(
            "POST",
            resource_path(*SECRETS, "default"),
            body={**secret, "metadata": {**secret["metadata"], "name": "orphan"}},
        )
    assert Request("default", "skipped") not in r.seen()
    assert Request("default", "orphan") not in r.seen()
    assert Request("default", "s") not in r.seen()
    success = manager.registry.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": "configmap", "result": "success"}
    )
    assert success and success >= 2


def test_watches_enqueues_what_its_handler_maps_to(sim, api):
    manager = new_manager(sim)
    r = Recording()
    by_annotation = EnqueueRequestsFromMapFunc(
        lambda s: [Request("default", s["metadata"].get("annotations", {}).get("for", ""))]
    )
    Builder(manager).named("mapped").watches(SECRETS, by_annotation).complete(r)
    with running(manager):
        api.request(
            "POST",
            resource_path(*SECRETS, "default"),
            body={"metadata": {"name": "s", "annotations": {"for": "target"}}},
        )
        wait_for(lambda: r.seen() == {Request("default", "target")}, message="the mapped request")


def test_sharded_only_objects_of_buckets_acted_on_are_reconciled_and_held_while_they_are():
    # an informer never started, its cache filled by hand
    informer = SharedIndexInformer(FakeListWatch(kind="ConfigMap", api_version="v1"))
    gate = ActingGate(2)
    # objects by bucket, of uids as the API server makes them
    by_bucket: dict[int, dict] = {}
    while len(by_bucket) < 2:
        uid = str(uuid.uuid4())
        obj = {"metadata": {"name": f"o-{uid[:8]}", "namespace": "ns", "uid": uid}}
        by_bucket.setdefault(bucket_of(obj, 2), obj)
    mine, theirs = by_bucket[0], by_bucket[1]
    informer.get_indexer().add(mine)
    informer.get_indexer().add(theirs)
    gate.start(frozenset({0}))
    held: list[frozenset[int]] = []

    def reconcile(ctx: Context, request: Request) -> Result:
        held.append(gate.busy(frozenset({0, 1})))
        return Result()

    queue = RateLimitingQueue(default_controller_rate_limiter(), name="gated")
    controller = Controller("gated", Func(reconcile), queue, [], 1, informer, gate)
    ctx = background()
    assert controller.reconcile_handler(ctx, Request("ns", theirs["metadata"]["name"])) == Result()
    assert held == []  # not ours: the reconciler was not called
    controller.reconcile_handler(ctx, Request("ns", mine["metadata"]["name"]))
    assert held == [frozenset({0})]  # ours: held through the gate while reconciled
    assert gate.busy(frozenset({0, 1})) == frozenset()
    # an object gone from the cache is reconciled (to find out it is gone), by any replica
    controller.reconcile_handler(ctx, Request("ns", "gone"))
    assert len(held) == 2
