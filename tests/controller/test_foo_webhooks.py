"""controller.webhooks: Foo's defaulting and validation, read from a real informer store with
the controller's index."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from controller.builders import deployment_name_index_func
from controller.foo_controller import DEPLOYMENT_NAME_INDEX
from controller.webhooks import WARNING_NO_REPLICAS, FooDefaulter, FooValidator
from informer.lister import Lister
from informer.store import Indexer
from runtime.webhook.admission import Request, defaulting_handler, validating_handler
from runtime.webhook.jsonpatch import apply_patch


def foo(name: str, deployment_name: str | None = None, uid: str | None = None, **spec: Any) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if uid:
        meta["uid"] = uid
    body: dict[str, Any] = dict(spec)
    if deployment_name is not None:
        body["deploymentName"] = deployment_name
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": meta,
        "spec": body,
    }


def deployment(name: str, owner: dict | None = None) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "kind": "Foo",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"].get("uid", ""),
                "controller": True,
            }
        ]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}


def request(operation: str, obj: dict | None = None, old: dict | None = None) -> Request:
    raw: dict[str, Any] = {"uid": "u", "operation": operation, "namespace": "ns"}
    source = obj or old or {}
    raw["name"] = source.get("metadata", {}).get("name", "")
    if obj is not None:
        raw["object"] = obj
    if old is not None:
        raw["oldObject"] = old
    return Request.from_dict(raw)


class Cache:
    def __init__(self, synced: bool = True) -> None:
        self.foos = Indexer(indexers={DEPLOYMENT_NAME_INDEX: deployment_name_index_func})
        self.deployments = Indexer()
        self.synced = synced

    def validator(self):
        return validating_handler(
            FooValidator(
                self.foos, Lister(self.deployments, "deployments", "apps"), lambda: self.synced
            )
        )


# -- defaulting -------------------------------------------------------------------------------


def patched(obj: dict, name: str = "") -> dict:
    response = defaulting_handler(FooDefaulter())(request("CREATE", obj)).complete("u")
    assert response["allowed"] is True
    if "patch" not in response:
        return obj
    return apply_patch(obj, json.loads(base64.b64decode(response["patch"])))


def test_deployment_name_defaults_to_the_foos_name():
    assert patched(foo("web", replicas=1))["spec"] == {"replicas": 1, "deploymentName": "web"}


def test_a_foo_without_a_spec_gets_one():
    obj = foo("web")
    del obj["spec"]
    assert patched(obj)["spec"] == {"deploymentName": "web"}


def test_a_given_deployment_name_is_kept():
    assert patched(foo("web", "other"))["spec"] == {"deploymentName": "other"}


def test_a_generate_name_create_is_left_to_the_schema():
    obj = foo("", replicas=1)
    obj["metadata"] = {"generateName": "web-", "namespace": "ns"}
    assert patched(obj)["spec"] == {"replicas": 1}


# -- validation -------------------------------------------------------------------------------


def test_a_free_name_is_allowed():
    answer = Cache().validator()(request("CREATE", foo("a", "web", replicas=1)))
    assert answer.allowed and answer.warnings == []


def test_a_foo_without_replicas_is_allowed_with_a_warning():
    answer = Cache().validator()(request("CREATE", foo("a", "web")))
    assert answer.allowed and answer.warnings == [WARNING_NO_REPLICAS]


def test_another_foos_deployment_name_is_denied_naming_that_foo():
    cache = Cache()
    cache.foos.add(foo("first", "web", uid="u1"))
    answer = cache.validator()(request("CREATE", foo("second", "web", replicas=1)))
    assert (answer.allowed, answer.code) == (False, 403)
    assert answer.message == (
        'spec.deploymentName: Foo "first" in namespace "ns" already names Deployment "web"'
    )


def test_the_same_name_in_another_namespace_is_no_conflict():
    cache = Cache()
    other = foo("first", "web", uid="u1")
    other["metadata"]["namespace"] = "elsewhere"
    cache.foos.add(other)
    assert cache.validator()(request("CREATE", foo("second", "web", replicas=1))).allowed


def test_someone_elses_deployment_is_denied_naming_its_controller():
    cache = Cache()
    cache.deployments.add(deployment("web", owner=foo("old", "web", uid="u-old")))
    answer = cache.validator()(request("CREATE", foo("new", "web", replicas=1)))
    assert not answer.allowed
    assert answer.message == (
        'spec.deploymentName: Deployment "web" already exists in namespace "ns" and is not '
        'controlled by this Foo (controlled by Foo "old")'
    )


def test_an_unowned_deployment_is_denied():
    cache = Cache()
    cache.deployments.add(deployment("web"))
    answer = cache.validator()(request("CREATE", foo("new", "web", replicas=1)))
    assert answer.message.endswith("is not controlled by this Foo")


def test_the_foos_own_deployment_is_fine_on_update():
    cache = Cache()
    mine = foo("a", "web", uid="u-a", replicas=1)
    cache.foos.add(mine)
    cache.deployments.add(deployment("web", owner=mine))
    scaled = foo("a", "web", uid="u-a", replicas=3)
    answer = cache.validator()(request("UPDATE", scaled, mine))
    assert answer.allowed and answer.warnings == []


def test_a_rename_onto_a_taken_name_is_denied_but_an_old_conflict_is_a_warning():
    cache = Cache()
    cache.foos.add(foo("first", "web", uid="u1"))
    old = foo("second", "mine", uid="u2", replicas=1)
    renamed = foo("second", "web", uid="u2", replicas=1)
    assert not cache.validator()(request("UPDATE", renamed, old)).allowed
    # the conflict was there before (written while the webhook was off): warn, allow
    scaled = foo("second", "web", uid="u2", replicas=2)
    answer = cache.validator()(request("UPDATE", scaled, renamed))
    assert answer.allowed
    assert answer.warnings == [
        'spec.deploymentName: Foo "first" in namespace "ns" already names Deployment "web"'
    ]


def test_a_delete_is_always_allowed():
    cache = Cache()
    cache.foos.add(foo("first", "web", uid="u1"))
    assert cache.validator()(request("DELETE", old=foo("second", "web"))).allowed


def test_an_unsynced_cache_answers_503_rather_than_guess():
    answer = Cache(synced=False).validator()(request("CREATE", foo("a", "web", replicas=1)))
    assert (answer.allowed, answer.code, answer.reason) == (False, 503, "ServiceUnavailable")


@pytest.mark.parametrize("value", [None, 5])
def test_a_missing_or_mistyped_name_is_left_to_the_schema(value):
    obj = foo("a", replicas=1)
    if value is not None:
        obj["spec"]["deploymentName"] = value
    assert Cache(synced=False).validator()(request("CREATE", obj)).allowed
