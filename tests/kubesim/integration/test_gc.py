"""kubesim garbage collection and finalizers, observed as a controller would see them."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.helpers import wait_for
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, deployment, foo

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD])


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


@pytest.fixture
def apps(sim):
    return client.AppsV1Api(sim.api_client)


def owned_deployment(name: str, owner: dict, block: bool = True) -> dict:
    d = deployment(name)
    d["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": block,
        }
    ]
    return d


def gone(read, timeout: float = 3.0) -> bool:
    """Poll until read() raises 404 (True); fail the test if it still reads after ``timeout``."""

    def not_found() -> bool:
        try:
            read()
        except ApiException as e:
            if e.status == 404:
                return True
            raise
        return False

    return wait_for(not_found, timeout=timeout, message="the object to be deleted")


def test_background_delete_removes_dependents(sim, custom, apps):
    owner = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    apps.create_namespaced_deployment("default", owned_deployment("web", owner))
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert gone(lambda: apps.read_namespaced_deployment("web", "default"))


def test_dependent_of_owner_that_never_existed_is_deleted(sim, apps):
    fake = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"},
    }
    apps.create_namespaced_deployment("default", owned_deployment("web", fake))
    assert gone(lambda: apps.read_namespaced_deployment("web", "default"))


def test_dependent_with_a_live_owner_only_loses_the_dangling_reference(sim, custom, apps):
    a = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    b = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("b"))
    d = owned_deployment("web", a)
    d["metadata"]["ownerReferences"].append(
        dict(
            d["metadata"]["ownerReferences"][0],
            name="b",
            uid=b["metadata"]["uid"],
            controller=False,
        )
    )
    apps.create_namespaced_deployment("default", d)
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "a")

    def one_owner_left():
        refs = apps.read_namespaced_deployment("web", "default").metadata.owner_references
        return refs if len(refs) == 1 else None

    refs = wait_for(one_owner_left, timeout=3, message="the deleted owner's reference removed")
    assert [r.name for r in refs] == ["b"]


def test_foreground_deletes_dependents_before_the_owner(sim, custom, apps):
    owner = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    apps.create_namespaced_deployment("default", owned_deployment("web", owner))
    out = custom.delete_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "f", propagation_policy="Foreground"
    )
    assert (
        out["metadata"]["finalizers"] == ["foregroundDeletion"]
        and out["metadata"]["deletionTimestamp"]
    )
    assert gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f"))
    with pytest.raises(ApiException) as ei:  # the dependent went first
        apps.read_namespaced_deployment("web", "default")
    assert ei.value.status == 404


def test_orphan_removes_owner_references_key_and_keeps_dependent(sim, custom, apps):
    owner = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    apps.create_namespaced_deployment("default", owned_deployment("web", owner))
    out = custom.delete_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "f", propagation_policy="Orphan"
    )
    assert out["metadata"]["finalizers"] == ["orphan"]
    assert gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f"))
    d = apps.read_namespaced_deployment("web", "default")
    assert d.metadata.owner_references is None
    raw_d = client.ApiClient().sanitize_for_serialization(d)
    assert "ownerReferences" not in raw_d["metadata"]


def test_removing_last_finalizer_emits_only_deleted_with_last_state(sim, custom):
    body = foo("f")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    rv = sim.resource_version
    w = sim.storage.watch(("samplecontroller.k8s.io", "foos"), None, rv, False)
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "f", {"metadata": {"finalizers": None}}
    )
    items = w.drain(1)
    assert [t for t, _ in items] == ["DELETED"]
    last = items[0][1].obj
    assert (
        last["metadata"]["finalizers"] == ["example.com/hold"]
        and last["metadata"]["deletionTimestamp"]
    )
    sim.storage.unwatch(w)
