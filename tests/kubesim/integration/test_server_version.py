"""kubesim as kube-apiserver v1.36 (the default) and, with ``server_version="1.24"``, as v1.24.

Each test states one answer that changed between the two releases seen in
recordings of real v1.24 and v1.36 servers, and checks it on both: the controller has to
cope with the older server's answers, so kubesim keeps them behind the switch.
"""

from __future__ import annotations

import json

import pytest

from kubesim import KubeSim
from kubesim.__main__ import build_parser
from tests.kubesim.integration.test_api import FOO_CRD, raw

V1_24 = pytest.mark.kubesim(crds=[FOO_CRD], server_version="1.24")


def test_an_unknown_release_is_refused():
    with pytest.raises(ValueError, match="server_version must be one of 1.24, 1.36"):
        KubeSim(server_version="1.30")


def test_the_cli_switch_names_the_release():
    assert build_parser().parse_args([]).emulate == "1.36"
    assert build_parser().parse_args(["--emulate", "1.24"]).emulate == "1.24"


def test_version_has_the_emulation_fields(sim):
    code, _, body = raw(sim, "GET", "/version")
    info = json.loads(body)
    assert code == 200
    assert (info["major"], info["minor"]) == ("1", "36")
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "36")
    # the minimum compatibility version: one minor below the binary's, by default
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == ("1", "35")
    assert info["gitVersion"].startswith("v1.36.")
    # version.Info's field order, written by WriteRawJSON (MarshalIndent: no final newline)
    assert list(info)[:6] == [
        "major",
        "minor",
        "emulationMajor",
        "emulationMinor",
        "minCompatibilityMajor",
        "minCompatibilityMinor",
    ]
    assert body.startswith(b'{\n  "major": "1",\n') and body.endswith(b"}")


@V1_24
def test_version_as_v1_24_has_no_emulation_fields(sim):
    info = json.loads(raw(sim, "GET", "/version")[2])
    assert (info["major"], info["minor"]) == ("1", "24")
    assert "emulationMajor" not in info and "emulationMinor" not in info
    assert "minCompatibilityMajor" not in info
    assert info["gitVersion"].startswith("v1.24.")


# ---- error shapes ------------------------------------------------------------------------------

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"


def foo_body(name: str, **spec) -> dict:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": name, "replicas": 1, **spec},
    }


@V1_24
def test_v1_24_bad_resource_version_on_a_list_is_500(sim):
    code, _, body = raw(sim, "GET", FOOS + "?resourceVersion=abc")
    st = json.loads(body)
    assert (code, st["reason"]) == (500, "InternalError")
    assert 'strconv.ParseUint: parsing "abc": invalid syntax' in st["message"]


@V1_24
def test_v1_24_exact_list_at_a_future_resource_version_is_500_at_once(sim):
    sim.rest.list_wait_timeout = 30  # v1.24 does not wait: the test would time out if it did
    future = sim.resource_version + 1000
    code, _, body = raw(sim, "GET", FOOS + f"?resourceVersionMatch=Exact&resourceVersion={future}")
    assert code == 500
    assert json.loads(body)["message"].endswith("required revision is a future revision")


def test_exact_list_waits_for_a_resource_version_that_arrives(sim):
    """1.36 serves it once the RV is reached (the wait is the cache's, not a refusal)."""
    import threading

    target = sim.resource_version + 1
    timer = threading.Timer(0.2, lambda: raw(sim, "POST", FOOS, foo_body("late")))
    timer.start()
    try:
        code, _, body = raw(
            sim, "GET", FOOS + f"?resourceVersionMatch=Exact&resourceVersion={target}"
        )
    finally:
        timer.join()
    assert code == 200 and json.loads(body)["metadata"]["resourceVersion"] == str(target)


@V1_24
def test_v1_24_merge_patch_array_is_422_on_patch(sim):
    raw(sim, "POST", FOOS, foo_body("f"))
    mp = {"Content-Type": "application/merge-patch+json"}
    code, _, body = raw(sim, "PATCH", FOOS + "/f", b"[1]", mp)
    st = json.loads(body)
    assert (code, st["reason"]) == (422, "Invalid")
    assert [c["field"] for c in st["details"]["causes"]] == ["patch"]


@V1_24
def test_v1_24_type_error_is_field_value_invalid(sim):
    code, _, body = raw(sim, "POST", FOOS, foo_body("f", replicas="three"))
    assert code == 422
    assert json.loads(body)["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "three": spec.replicas in body must be of type integer: '
            '"string"',
            "field": "spec.replicas",
        }
    ]


# ---- discovery and objects ---------------------------------------------------------------------


def test_discovery_has_singular_name_and_storage_version_hash_on_every_resource(sim):
    for path in ("/api/v1", "/apis/apps/v1", "/apis/samplecontroller.k8s.io/v1alpha1"):
        for r in json.loads(raw(sim, "GET", path)[2])["resources"]:
            assert "singularName" in r, r
            if "/" not in r["name"]:
                assert r["storageVersionHash"], r
    apps = {r["name"]: r for r in json.loads(raw(sim, "GET", "/apis/apps/v1")[2])["resources"]}
    core = {r["name"]: r for r in json.loads(raw(sim, "GET", "/api/v1")[2])["resources"]}
    # as a real server's discovery shows them (sha256 of "group/version/kind", 8 bytes, base64)
    assert apps["deployments"]["storageVersionHash"] == "8aSe+NMegvE="
    assert core["configmaps"]["storageVersionHash"] == "qFsyl6wFWjQ="
    assert "storageVersionHash" not in apps["deployments/status"]


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    },
}


def test_deployment_template_creation_timestamp_is_omitted(sim):
    code, _, body = raw(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT)
    assert code == 201
    assert json.loads(body)["spec"]["template"]["metadata"] == {"labels": {"app": "web"}}


@V1_24
def test_v1_24_deployment_template_creation_timestamp_is_null(sim):
    body = json.loads(
        raw(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT)[2]
    )
    assert body["spec"]["template"]["metadata"] == {
        "labels": {"app": "web"},
        "creationTimestamp": None,
    }


def test_core_event_without_them_has_null_event_time_and_empty_reporting_fields(sim):
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
    }
    code, _, body = raw(sim, "POST", "/api/v1/namespaces/default/events", event)
    assert code == 201
    got = json.loads(body)
    assert (got["eventTime"], got["reportingComponent"], got["reportingInstance"]) == (None, "", "")


def _create_in_terminating_namespace(sim) -> dict:
    raw(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": "doomed"}})
    cm = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    assert raw(sim, "POST", "/api/v1/namespaces/doomed/configmaps", cm)[0] == 201
    assert raw(sim, "DELETE", "/api/v1/namespaces/doomed")[0] == 200
    code, _, body = raw(
        sim, "POST", "/api/v1/namespaces/doomed/configmaps", {"metadata": {"name": "late"}}
    )
    assert code == 403
    return json.loads(body)["details"]


def test_create_in_a_terminating_namespace_names_the_object(sim):
    details = _create_in_terminating_namespace(sim)
    assert (details["name"], details["kind"]) == ("late", "configmaps")
    assert details["causes"][0]["reason"] == "NamespaceTerminating"


@V1_24
def test_v1_24_create_in_a_terminating_namespace_names_no_object(sim):
    details = _create_in_terminating_namespace(sim)
    assert "name" not in details and details["kind"] == "configmaps"


def test_openapi_v2_is_one_swagger_document_of_every_group_version(sim):
    code, headers, body = raw(sim, "GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and headers["Content-Type"] == "application/json"
    doc = json.loads(body)
    assert doc["swagger"] == "2.0" and doc["info"]["version"].startswith("v1.36.")
    deployment = doc["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert (
        deployment["properties"]["spec"]["$ref"]
        == "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    )
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["definitions"]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    # kubectl looks for fieldValidation among a patch's parameters to leave validation to us
    assert {"name": "fieldValidation", "in": "query", "type": "string"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation"
    ).items()
    foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{namespace}/foos/{name}"
    assert doc["paths"][foos]["get"]["responses"]["200"]["schema"] == {
        "$ref": "#/definitions/io.k8s.samplecontroller.v1alpha1.Foo"
    }
    assert "#/components/" not in json.dumps(doc)


@V1_24
def test_v1_24_openapi_v2_is_labelled_text_plain(sim):
    code, headers, body = raw(sim, "GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert json.loads(body)["swagger"] == "2.0"


WATCH_LIST = (
    "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
    "&allowWatchBookmarks=true&timeoutSeconds=1"
)


def test_watch_list_is_served(sim):
    code, _, body = raw(sim, "GET", FOOS + WATCH_LIST)
    assert code == 200
    last = json.loads(body.splitlines()[-1])
    assert last["type"] == "BOOKMARK"
    assert last["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


@V1_24
def test_v1_24_refuses_watch_list_with_the_422(sim):
    code, _, body = raw(sim, "GET", FOOS + WATCH_LIST)
    st = json.loads(body)
    assert (code, st["reason"], st["details"]["kind"]) == (422, "Invalid", "ListOptions")
    assert {c["field"] for c in st["details"]["causes"]} == {"resourceVersionMatch"}
