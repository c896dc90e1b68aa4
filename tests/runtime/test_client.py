"""The Client (runtime.client): reads from the cache, writes through REST, each write bounded by
``ctx`` and made as its field owner; sharded, what it makes for an owner carries its bucket."""

from __future__ import annotations

import pytest

from client.errors import APIError, is_conflict, is_not_found
from client.rest import RESTClient, resource_path
from runtime.client import (
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    Client,
    Patch,
    merge_from,
)
from runtime.context import AbandonedError, Context, background
from runtime.sharding.gate import ActingGate
from runtime.shutdown import ShutdownBudget
from tests.helpers import wait_for
from tests.runtime.helpers import CONFIGMAPS, configmap, new_manager, running

# As envtest: no default ServiceAccount or kube-root-ca.crt in each namespace, so a list of
# ConfigMaps holds the test's own only.
pytestmark = pytest.mark.kubesim(namespace_defaults=False)

DEPLOYMENTS = ("apps", "v1", "deployments")


@pytest.fixture
def api(sim) -> RESTClient:
    return RESTClient(sim.new_api_client())


def server_copy(api: RESTClient, name: str) -> dict | None:
    try:
        return api.request("GET", resource_path(*CONFIGMAPS, "default", name))
    except APIError as err:
        if is_not_found(err):
            return None
        raise


def writes_by(sim, field_manager: str) -> list:
    return [r for r in sim.request_log if f"fieldManager={field_manager}" in r.query]


def test_reads_come_from_the_cache_and_writes_go_to_the_api(sim, api):
    manager = new_manager(sim)
    client = manager.get_client().with_field_owner("test-owner")
    ctx = background()
    with running(manager):
        created = client.create(ctx, CONFIGMAPS, configmap("a", {"k": "1"}))
        assert created["metadata"]["uid"]
        assert server_copy(api, "a")["data"] == {"k": "1"}
        # the cache catches up through its watch: the read is no GET of the object
        got = wait_for(
            lambda: client.get(ctx, CONFIGMAPS, "default", "a"), message="a in the cache"
        )
        assert not [
            r
            for r in sim.request_log
            if r.verb == "get" and r.resource == "configmaps" and r.user_agent == "runtime-test"
        ]

        got["data"] = {"k": "2"}
        updated = client.update(ctx, CONFIGMAPS, got)
        assert updated["data"] == {"k": "2"}
        # an update of a stale copy is the server's 409
        with pytest.raises(APIError) as err:
            client.update(ctx, CONFIGMAPS, {**got, "data": {"k": "3"}})
        assert is_conflict(err.value)

        patched = client.patch(ctx, CONFIGMAPS, got, merge_from(got, {**got, "data": {"k": "4"}}))
        assert patched["data"] == {"k": "4"}
        ops = [{"op": "add", "path": "/data/j", "value": "5"}]
        assert client.patch(ctx, CONFIGMAPS, got, Patch(JSON_PATCH, ops))["data"] == {
            "k": "4",
            "j": "5",
        }
        smp = {"metadata": {"labels": {"x": "y"}}}
        labelled = client.patch(ctx, CONFIGMAPS, got, Patch(STRATEGIC_MERGE_PATCH, smp))
        assert labelled["metadata"]["labels"] == {"x": "y"}

        client.delete(ctx, CONFIGMAPS, got, propagation_policy="Foreground")
        assert server_copy(api, "a") is None
        wait_for(lambda: not client.list(ctx, CONFIGMAPS, "default"), message="the delete cached")
    # every write said who made it
    assert {r.verb for r in writes_by(sim, "test-owner")} == {"create", "update", "patch"}
    (delete,) = [r for r in sim.request_log if r.verb == "delete" and r.resource == "configmaps"]


def test_merge_from_sends_what_changed_and_null_for_what_went():
    before = {"data": {"a": "1", "b": "2"}, "metadata": {"labels": {"x": "1"}}}
    after = {"data": {"a": "1", "c": "3"}, "metadata": {"labels": {"x": "1"}}}
    assert merge_from(before, after) == Patch(MERGE_PATCH, {"data": {"b": None, "c": "3"}})


def test_server_side_apply_owns_fields_and_force_takes_them(sim, api):
    manager = new_manager(sim)
    client = manager.get_client().with_field_owner("applier")
    ctx = background()
    with running(manager):
        applied = client.apply(ctx, CONFIGMAPS, configmap("cfg", {"a": "1", "b": "2"}))
        assert applied["data"] == {"a": "1", "b": "2"}
        # a field applied before and named no more is removed
        assert client.apply(ctx, CONFIGMAPS, configmap("cfg", {"a": "1"}))["data"] == {"a": "1"}
        # someone else changes a field we own: applying it again is a conflict...
        api.request(
            "PATCH",
            resource_path(*CONFIGMAPS, "default", "cfg"),
            params={"fieldManager": "someone"},
            body={"data": {"a": "theirs"}},
            content_type=MERGE_PATCH,
        )
        with pytest.raises(APIError) as err:
            client.apply(ctx, CONFIGMAPS, configmap("cfg", {"a": "1"}))
        assert err.value.code == 409 and "someone" in err.value.message
        # ...unless forced
        forced = client.apply(ctx, CONFIGMAPS, configmap("cfg", {"a": "1"}), force=True)
        assert forced["data"] == {"a": "1"}
    applies = [r for r in writes_by(sim, "applier") if r.verb == "patch"]
    assert len(applies) == 4 and "force=true" in applies[-1].query


def test_status_is_written_through_its_subresource(sim, api):
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    manager = new_manager(sim)
    client = manager.get_client()
    ctx = background()
    with running(manager):
        created = client.create(ctx, DEPLOYMENTS, deployment)
        # a status update leaves the spec alone
        body = {**created, "spec": {**created["spec"], "replicas": 9}}
        body["status"] = {"observedGeneration": 1}
        written = client.update_status(ctx, DEPLOYMENTS, body)
        assert written["status"]["observedGeneration"] == 1
        assert written["spec"]["replicas"] == 1
        patched = client.patch_status(
            ctx, DEPLOYMENTS, created, Patch(MERGE_PATCH, {"status": {"replicas": 4}})
        )
        assert patched["status"]["replicas"] == 4
    assert {r.resource for r in sim.request_log if r.verb in ("update", "patch")} == {
        "deployments/status"
    }


def test_no_write_past_the_drain_deadline(sim):
    manager = new_manager(sim)
    client = manager.get_client()
    budget = ShutdownBudget(0.0)
    budget.begin()
    with pytest.raises(AbandonedError):
        client.create(Context(budget), CONFIGMAPS, configmap("late"))
    assert not [r for r in sim.request_log if r.resource == "configmaps"]


def test_sharded_what_is_made_for_a_reconciled_owner_carries_its_bucket(sim, api):
    manager = new_manager(sim)
    gate = ActingGate(4)
    client = Client(manager.rest, manager.get_cache(), gate, field_owner="sharded")
    owner = {"apiVersion": "tutorial.example.com/v1", "kind": "Bar", "name": "b", "uid": "u-1"}
    owned = configmap("owned", ownerReferences=[{**owner, "controller": True}])
    bucket = gate.owned_labels({"metadata": {"uid": "u-1"}})
    assert bucket  # the bucket label of the owner's uid

    # a kind no Builder reconciles: no label
    assert client.owned_labels(owned) == {}
    client.shard_owned_by("tutorial.example.com", "Bar")
    assert client.owned_labels(owned) == bucket
    # a copy with another field owner shares what is sharded
    assert client.with_field_owner("x").owned_labels(owned) == bucket
    # an owner that does not control the object gives it no bucket
    not_controller = configmap("x", ownerReferences=[{**owner, "controller": False}])
    assert client.owned_labels(not_controller) == {}

    ctx = background()
    created = client.create(ctx, CONFIGMAPS, owned)
    assert created["metadata"]["labels"] == bucket
    applied = client.apply(
        ctx, CONFIGMAPS, configmap("applied", ownerReferences=owned["metadata"]["ownerReferences"])
    )
    assert applied["metadata"]["labels"] == bucket
    # the caller's object is left as it was
    assert "labels" not in owned["metadata"]
