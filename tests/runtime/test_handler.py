"""Event handlers and the informer adapter (runtime.handler, runtime.source): which requests an
event puts on the queue."""

from __future__ import annotations

from informer.store import DeletedFinalStateUnknown
from runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from runtime.handler import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    group_of,
)
from runtime.predicate import Funcs, GenerationChangedPredicate
from runtime.reconcile import Request, request_for
from runtime.source import EventHandlerAdapter


class Recorder:
    def __init__(self) -> None:
        self.items: list = []

    def add(self, item) -> None:
        self.items.append(item)


def obj(name, namespace="ns", owners=(), generation=1):
    meta = {"name": name, "namespace": namespace, "generation": generation}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"metadata": meta}


def ref(name, kind="Bar", api_version="tutorial.example.com/v1", controller=True):
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": name,
        "controller": controller,
    }


def test_request_prints_as_namespaced_name_and_merges_in_a_set():
    assert str(Request("ns", "a")) == "ns/a"
    assert str(Request("", "cluster-wide")) == "cluster-wide"
    assert request_for(obj("a")) == Request("ns", "a")
    assert len({Request("ns", "a"), Request("ns", "a")}) == 1


def test_group_of_an_api_version():
    assert group_of("apps/v1") == "apps"
    assert group_of("v1") == ""


def test_enqueue_request_for_object():
    q = Recorder()
    h = EnqueueRequestForObject()
    h.create(CreateEvent(obj("a")), q)
    h.update(UpdateEvent(obj("b"), obj("b")), q)
    h.delete(DeleteEvent(obj("c")), q)
    h.generic(GenericEvent(obj("d")), q)
    assert q.items == [Request("ns", n) for n in "abcd"]


def test_enqueue_request_for_owner_only_controller():
    q = Recorder()
    h = EnqueueRequestForOwner("tutorial.example.com", "Bar", only_controller=True)
    owned = obj("cm", owners=[ref("mine"), ref("other", controller=False)])
    h.create(CreateEvent(owned), q)
    assert q.items == [Request("ns", "mine")]

    # another kind, or the same kind in another group, is not an owner of ours
    q.items.clear()
    h.create(CreateEvent(obj("cm", owners=[ref("x", kind="Baz")])), q)
    h.create(CreateEvent(obj("cm", owners=[ref("x", api_version="other.io/v1")])), q)
    h.create(CreateEvent(obj("cm")), q)
    assert q.items == []
    # any version of the group matches
    h.create(CreateEvent(obj("cm", owners=[ref("y", api_version="tutorial.example.com/v2")])), q)
    assert q.items == [Request("ns", "y")]


def test_enqueue_request_for_owner_every_owner_and_both_sides_of_an_update():
    q = Recorder()
    h = EnqueueRequestForOwner("tutorial.example.com", "Bar")
    old = obj("cm", owners=[ref("before")])
    new = obj("cm", owners=[ref("after", controller=False)])
    h.update(UpdateEvent(old, new), q)
    # the owner that lost the object hears of it too
    assert q.items == [Request("ns", "after"), Request("ns", "before")]


def test_a_cluster_scoped_owner_gets_a_request_without_namespace():
    q = Recorder()
    h = EnqueueRequestForOwner("", "Node", namespaced=False)
    h.delete(DeleteEvent(obj("pod", owners=[ref("node-1", kind="Node", api_version="v1")])), q)
    assert q.items == [Request("", "node-1")]


def test_map_func_requests_are_enqueued_once_per_update():
    q = Recorder()
    h = EnqueueRequestsFromMapFunc(
        lambda o: [Request("ns", "x"), Request("ns", o["metadata"]["name"])]
    )
    h.update(UpdateEvent(obj("a"), obj("b")), q)
    assert sorted(q.items) == [Request("ns", "a"), Request("ns", "b"), Request("ns", "x")]
    q.items.clear()
    h.create(CreateEvent(obj("x")), q)
    assert q.items == [Request("ns", "x")]


def test_the_adapter_applies_every_predicate_and_unwraps_tombstones():
    q = Recorder()
    not_b = Funcs(lambda e: e.object["metadata"]["name"] != "b")
    adapter = EventHandlerAdapter(
        EnqueueRequestForObject(), q, (GenerationChangedPredicate(), not_b)
    )
    adapter.on_add(obj("a"), True)
    adapter.on_add(obj("b"), False)
    # a resync, same generation: dropped
    adapter.on_update(obj("a"), obj("a"))
    adapter.on_update(obj("a"), obj("a", generation=2))
    assert q.items == [Request("ns", "a"), Request("ns", "a")]

    seen: list[DeleteEvent] = []
    adapter = EventHandlerAdapter(
        EnqueueRequestForObject(), q, (Funcs(delete_func=lambda e: seen.append(e) or True),)
    )
    adapter.on_delete(DeletedFinalStateUnknown("ns/gone", obj("gone")))
    assert seen == [DeleteEvent(obj("gone"), delete_state_unknown=True)]
    assert q.items[-1] == Request("ns", "gone")
