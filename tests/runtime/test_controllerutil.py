"""controllerutil (runtime.controllerutil): the owner reference, create_or_update, finalizers."""

from __future__ import annotations

import pytest

from client.rest import RESTClient, resource_path
from runtime.context import background
from runtime.controllerutil import (
    AlreadyOwnedError,
    add_finalizer,
    contains_finalizer,
    create_or_update,
    remove_finalizer,
    set_controller_reference,
)
from tests.helpers import wait_for
from tests.runtime.helpers import CONFIGMAPS, configmap, new_manager, running

# As envtest: no default ServiceAccount or kube-root-ca.crt in each namespace, so a list of
# ConfigMaps holds the test's own only.
pytestmark = pytest.mark.kubesim(namespace_defaults=False)


def bar(name: str = "b", uid: str = "u-1", namespace: str = "default") -> dict:
    return {
        "apiVersion": "tutorial.example.com/v1",
        "kind": "Bar",
        "metadata": {"name": name, "uid": uid, "namespace": namespace},
    }


def test_set_controller_reference_adds_then_replaces_its_own():
    cm = configmap("c")
    set_controller_reference(bar(), cm)
    assert cm["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "tutorial.example.com/v1",
            "kind": "Bar",
            "name": "b",
            "uid": "u-1",
            "blockOwnerDeletion": True,
            "controller": True,
        }
    ]
    # the same owner again, recreated under a new uid: replaced, not added
    set_controller_reference(bar(uid="u-2"), cm)
    (ref,) = cm["metadata"]["ownerReferences"]
    assert ref["uid"] == "u-2"
    # other, non-controlling owners are kept
    cm["metadata"]["ownerReferences"].append({"apiVersion": "v1", "kind": "Pod", "name": "p"})
    set_controller_reference(bar(uid="u-3"), cm)
    assert [r["kind"] for r in cm["metadata"]["ownerReferences"]] == ["Bar", "Pod"]


def test_set_controller_reference_refuses_an_object_another_controls():
    cm = configmap("c")
    set_controller_reference(bar("first"), cm)
    before = [dict(r) for r in cm["metadata"]["ownerReferences"]]
    with pytest.raises(AlreadyOwnedError) as err:
        set_controller_reference(bar("second"), cm)
    assert str(err.value) == "Object default/c is already owned by another Bar controller first"
    assert err.value.owner["name"] == "first"
    assert cm["metadata"]["ownerReferences"] == before


def test_set_controller_reference_refuses_an_owner_it_cannot_refer_to():
    with pytest.raises(ValueError, match="cross-namespace owner references are disallowed"):
        set_controller_reference(bar(namespace="other"), configmap("c"))
    cluster_scoped = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    with pytest.raises(ValueError, match="cluster-scoped resource must not have"):
        set_controller_reference(bar(), cluster_scoped)
    with pytest.raises(ValueError, match="no apiVersion or kind"):
        set_controller_reference({"metadata": {"name": "x", "uid": "u"}}, configmap("c"))


def test_finalizers():
    cm = configmap("c")
    assert not contains_finalizer(cm, "f")
    assert add_finalizer(cm, "f") and not add_finalizer(cm, "f")
    assert add_finalizer(cm, "g")
    assert cm["metadata"]["finalizers"] == ["f", "g"]
    assert contains_finalizer(cm, "f")
    assert remove_finalizer(cm, "f") and not remove_finalizer(cm, "f")
    assert cm["metadata"]["finalizers"] == ["g"]


def test_create_or_update(sim):
    api = RESTClient(sim.new_api_client())
    manager = new_manager(sim)
    client = manager.get_client()
    ctx = background()

    def set_data(value: str):
        def mutate(obj: dict) -> None:
            obj["data"] = {"k": value}

        return mutate

    with running(manager):
        obj = configmap("c")
        assert create_or_update(ctx, client, CONFIGMAPS, obj, set_data("1")) == "created"
        assert obj["metadata"]["uid"]  # the object as the server answered
        wait_for(lambda: client.list(ctx, CONFIGMAPS), message="the create cached")

        obj = configmap("c")
        assert create_or_update(ctx, client, CONFIGMAPS, obj, set_data("1")) == "unchanged"
        assert create_or_update(ctx, client, CONFIGMAPS, obj, set_data("2")) == "updated"
        stored = api.request("GET", resource_path(*CONFIGMAPS, "default", "c"))
        assert stored["data"] == {"k": "2"}

        def rename(obj: dict) -> None:
            obj["metadata"]["name"] = "other"

        with pytest.raises(ValueError, match="cannot mutate object name"):
            create_or_update(ctx, client, CONFIGMAPS, configmap("new"), rename)
    # the refused mutation wrote nothing
    assert not [r for r in sim.request_log if r.verb == "create" and "other" in r.name]
