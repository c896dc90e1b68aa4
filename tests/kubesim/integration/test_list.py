"""kubesim list semantics: selectors, paging with consistent snapshots, resourceVersion rules."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, deployment, foo, raw

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD], history_size=50)


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


def names(lst) -> list[str]:
    items = lst["items"] if isinstance(lst, dict) else lst.items
    return [i["metadata"]["name"] if isinstance(i, dict) else i.metadata.name for i in items]


def make_foos(custom, n: int, ns: str = "default") -> None:
    for i in range(n):
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            ns,
            PLURAL,
            foo(f"foo-{i:02d}", labels={"tier": "a" if i % 2 else "b", "i": str(i)}),
        )


def test_label_selectors_equality_and_set_based(custom):
    make_foos(custom, 6)

    def ls(selector: str) -> list[str]:
        return names(
            custom.list_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, label_selector=selector
            )
        )

    assert ls("tier=a") == ["foo-01", "foo-03", "foo-05"]
    assert ls("tier!=a") == ["foo-00", "foo-02", "foo-04"]
    assert ls("i in (1,2),tier") == ["foo-01", "foo-02"]
    assert ls("i notin (0,1,2,3)") == ["foo-04", "foo-05"]
    assert ls("!missing,tier==b") == ["foo-00", "foo-02", "foo-04"]
    with pytest.raises(ApiException) as ei:
        ls("tier in (a")
    assert ei.value.status == 400


def test_field_selectors(sim, custom):
    make_foos(custom, 3)
    client.CoreV1Api(sim.api_client).create_namespace({"metadata": {"name": "other"}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "other", PLURAL, foo("foo-01"))
    got = custom.list_cluster_custom_object(
        GROUP, VERSION, PLURAL, field_selector="metadata.name=foo-01"
    )
    assert sorted(i["metadata"]["namespace"] for i in got["items"]) == ["default", "other"]
    got = custom.list_cluster_custom_object(
        GROUP, VERSION, PLURAL, field_selector="metadata.namespace!=default"
    )
    assert names(got) == ["foo-01"]
    with pytest.raises(ApiException) as ei:
        custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, field_selector="spec.replicas=1")
    assert ei.value.status == 400


def test_paging_pins_first_page_snapshot(custom):
    make_foos(custom, 5)
    p1 = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, limit=2)
    assert names(p1) == ["foo-00", "foo-01"]
    assert p1["metadata"]["remainingItemCount"] == 3
    token, rv = p1["metadata"]["continue"], p1["metadata"]["resourceVersion"]
    # writes between pages are invisible to the rest of this list
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("foo-03a"))
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "foo-04")
    p2 = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=2, _continue=token
    )
    assert names(p2) == ["foo-02", "foo-03"] and p2["metadata"]["resourceVersion"] == rv
    p3 = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=2, _continue=p2["metadata"]["continue"]
    )
    assert names(p3) == ["foo-04"] and p3["metadata"]["continue"] == ""
    assert "remainingItemCount" not in p3["metadata"]


def test_paging_with_selector_may_end_with_empty_page(custom):
    make_foos(custom, 4)
    p1 = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=2, label_selector="tier=b"
    )
    assert names(p1) == ["foo-00", "foo-02"] and "remainingItemCount" not in p1["metadata"]
    p2 = custom.list_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        limit=2,
        label_selector="tier=b",
        _continue=p1["metadata"]["continue"],
    )
    assert names(p2) == [] and p2["metadata"]["continue"] == ""


def test_typed_lists_omit_item_kind_and_continue(sim):
    apps = client.AppsV1Api(sim.api_client)
    apps.create_namespaced_deployment("default", deployment("web"))
    code, _, body = raw(sim, "GET", "/apis/apps/v1/deployments")
    lst = json.loads(body)
    assert lst["kind"] == "DeploymentList" and "continue" not in lst["metadata"]
    assert "kind" not in lst["items"][0] and "apiVersion" not in lst["items"][0]
    code, _, body = raw(sim, "GET", f"/apis/{GROUP}/{VERSION}/foos")
    assert json.loads(body)["metadata"]["continue"] == ""


def test_resource_version_zero_ignores_limit(custom):
    make_foos(custom, 4)
    lst = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=1, resource_version="0"
    )
    assert len(lst["items"]) == 4 and lst["metadata"]["continue"] == ""


def test_exact_resource_version_reads_the_past(custom):
    make_foos(custom, 2)
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["metadata"][
        "resourceVersion"
    ]
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "foo-00")
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "foo-01", {"spec": {"replicas": 7}}
    )
    old = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, resource_version=rv, resource_version_match="Exact"
    )
    assert names(old) == ["foo-00", "foo-01"] and old["items"][1]["spec"]["replicas"] == 1
    assert old["metadata"]["resourceVersion"] == rv


def test_resource_version_match_validation(sim):
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    assert raw(sim, "GET", base + "?resourceVersionMatch=Exact")[0] == 422
    assert raw(sim, "GET", base + "?resourceVersionMatch=Exact&resourceVersion=0")[0] == 422
    assert raw(sim, "GET", base + "?resourceVersionMatch=Bogus&resourceVersion=1")[0] == 422
    sim.rest.list_wait_timeout = 0.2
    future = sim.resource_version + 1000
    code, _, body = raw(sim, "GET", base + f"?resourceVersionMatch=Exact&resourceVersion={future}")
    # 1.36 waits for the RV, as the cache does, then 504 (1.24's 500: test_server_version.py)
    st = json.loads(body)
    assert (code, st["reason"]) == (504, "Timeout")
    assert st["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    assert raw(sim, "GET", base + "?continue=bogus")[0] == 400
    code, _, body = raw(sim, "GET", base + "?resourceVersion=abc")
    assert (code, json.loads(body)["reason"]) == (400, "BadRequest")
    assert json.loads(body)["message"] == (
        'invalid resource version: resourceVersion: Invalid value: "abc": '
        'strconv.ParseUint: parsing "abc": invalid syntax'
    )


def test_continue_token_older_than_etcd_compaction_is_410_with_a_fresh_token(sim, custom):
    make_foos(custom, 3)
    p1 = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, limit=1)
    for i in range(120):  # more writes than any watch window: etcd's history still has them
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "foo-00", {"spec": {"replicas": i % 9 + 1}}
        )
    p2 = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=1, _continue=p1["metadata"]["continue"]
    )
    assert names(p2) == ["foo-01"]
    sim.faults.compact()  # etcd compaction (every 5 minutes on a real server)
    with pytest.raises(ApiException) as ei:
        custom.list_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, limit=1, _continue=p2["metadata"]["continue"]
        )
    st = json.loads(ei.value.body)
    assert (ei.value.status, st["reason"]) == (410, "Expired")
    assert st["message"].startswith("The provided continue parameter is too old")
    # the Status carries a token that continues after the same key at the latest RV
    p3 = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=1, _continue=st["metadata"]["continue"]
    )
    assert names(p3) == ["foo-02"] and p3["metadata"]["resourceVersion"] == str(
        sim.resource_version
    )


def test_exact_list_below_etcd_compaction_is_410(sim, custom):
    make_foos(custom, 1)
    rv = sim.resource_version
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("later"))
    sim.faults.compact()
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    code, _, body = raw(sim, "GET", base + f"?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert code == 410
    assert json.loads(body)["message"] == "The resourceVersion for the provided list is too old."


def test_legacy_resource_version_with_limit_is_an_exact_paged_read(custom):
    make_foos(custom, 3)
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["metadata"][
        "resourceVersion"
    ]
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "foo-00")
    # resourceVersion=N with a limit and no resourceVersionMatch: etcd at exactly N, paged
    page = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, limit=2, resource_version=rv
    )
    assert names(page) == ["foo-00", "foo-01"] and page["metadata"]["resourceVersion"] == rv
    assert page["metadata"]["continue"]
    # without a limit (or with NotOlderThan) the watch cache answers: now, limit ignored
    now = custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, resource_version=rv
    )
    assert names(now) == ["foo-01", "foo-02"] and now["metadata"]["resourceVersion"] != rv
    nt = custom.list_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        limit=1,
        resource_version=rv,
        resource_version_match="NotOlderThan",
    )
    assert names(nt) == ["foo-01", "foo-02"] and nt["metadata"]["continue"] == ""


def test_continue_allows_resource_version_zero_only(sim, custom):
    make_foos(custom, 2)
    p1 = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, limit=1)
    token = p1["metadata"]["continue"]
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos?limit=1&continue={token}"
    code, _, body = raw(sim, "GET", base + "&resourceVersion=0")
    assert code == 200 and names(json.loads(body)) == ["foo-01"]
    code, _, body = raw(sim, "GET", base + f"&resourceVersion={sim.resource_version}")
    assert code == 400
    assert json.loads(body)["message"] == (
        "specifying resource version is not allowed when using continue"
    )
    code, _, body = raw(sim, "GET", base + "&resourceVersion=0&resourceVersionMatch=NotOlderThan")
    assert code == 422
    assert json.loads(body)["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            "field": "resourceVersionMatch",
        }
    ]


def test_cache_list_ahead_of_the_server_waits_then_504(sim):
    sim.rest.list_wait_timeout = 0.3
    future = sim.resource_version + 5
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    code, _, body = raw(sim, "GET", base + f"?resourceVersion={future}")
    st = json.loads(body)
    assert (code, st["reason"]) == (504, "Timeout")
    assert st["message"] == f"Too large resource version: {future}, current: {future - 5}"
    assert st["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
