"""The exact bytes on the wire: Go's JSON encoding, the unserved-resource 404, OpenAPI's Accept.

kube-apiserver writes compact JSON with Go's ``json.Encoder`` (a newline after the value,
``<``, ``>``, ``&``, U+2028 and U+2029 escaped) and indented JSON with ``json.MarshalIndent``
(escaped, no newline). A path no go-restful route of a built-in group-version matches gets
``NewGenericServerResponse(404)``. Clients that compare error bodies byte for byte, or parse
streams line by line, see the difference.
"""

from __future__ import annotations

import json

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_api import FOO_CRD, raw

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
GENERIC_404 = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
    b'"message":"the server could not find the requested resource","reason":"NotFound",'
    b'"details":{},"code":404}\n'
)


@pytest.fixture(scope="module")
def sim():
    with KubeSim(crds=[FOO_CRD]) as s:
        yield s


def _configmap(name: str, data: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


# ---- Go's JSON encoding ------------------------------------------------------------------------


def test_compact_bodies_end_with_the_encoders_newline(sim):
    code, _, created = raw(sim, "POST", CONFIGMAPS, _configmap("nl", {"k": "v"}))
    assert code == 201 and created.endswith(b"}\n") and created.count(b"\n") == 1
    for path in (f"{CONFIGMAPS}/nl", CONFIGMAPS, "/api/v1", "/apis"):
        code, _, body = raw(sim, "GET", path)
        assert code == 200 and body.endswith(b"}\n") and b"\n" not in body[:-1], path
    # an error Status negotiated as JSON is the same encoder's
    code, _, body = raw(sim, "GET", f"{CONFIGMAPS}/missing", headers={"Accept": "application/json"})
    assert code == 404 and body.endswith(b"}\n")


def test_html_characters_and_line_separators_are_escaped_as_go_does(sim):
    value = "<a href='x'>&amp;</a>\u2028\u2029é"
    code, _, created = raw(sim, "POST", CONFIGMAPS, _configmap("html", {"k": value}))
    assert code == 201
    escaped = b'"k":"\\u003ca href=\'x\'\\u003e\\u0026amp;\\u003c/a\\u003e\\u2028\\u2029\xc3\xa9"'
    for body in (created, raw(sim, "GET", f"{CONFIGMAPS}/html")[2], raw(sim, "GET", CONFIGMAPS)[2]):
        assert escaped in body
        assert b"<" not in body and b">" not in body and b"&" not in body
    # the value itself is unchanged for any JSON reader
    assert json.loads(raw(sim, "GET", f"{CONFIGMAPS}/html")[2])["data"]["k"] == value
    # json.MarshalIndent escapes too
    pretty = raw(sim, "GET", f"{CONFIGMAPS}/html?pretty=true")[2]
    assert b"\\u003ca href" in pretty and not pretty.endswith(b"\n")


def test_watch_events_carry_the_escaped_object(sim):
    raw(sim, "POST", CONFIGMAPS, _configmap("watched", {"k": "a<b"}))
    code, _, body = raw(sim, "GET", f"{CONFIGMAPS}?watch=true&timeoutSeconds=1")
    assert code == 200
    line = next(x for x in body.split(b"\n") if b'"watched"' in x)
    assert b'"k":"a\\u003cb"' in line


def test_an_error_message_quoting_html_is_escaped(sim):
    # a name with < is refused; the message quotes it, escaped as Go's encoder writes it
    code, _, body = raw(sim, "POST", CONFIGMAPS, _configmap("a<b", {}))
    assert code == 422 and b'\\"a\\u003cb\\"' in body and b"<" not in body


# ---- the unserved-resource 404 -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/widgets",
        "/api/v1/namespaces/default/widgets",
        "/api/v1/namespaces/no-such-namespace/widgets",
        "/api/v1/namespaces/default/widgets/w",
        "/apis/apps/v1/namespaces/default/bogus",
        "/apis/apps/v1/deployments/web",
    ],
)
def test_an_unserved_resource_gets_go_restfuls_404(sim, path):
    code, hdrs, body = raw(sim, "GET", path)
    assert (code, hdrs["Content-Type"], body) == (404, "application/json", GENERIC_404)


def test_an_unknown_subresource_of_a_builtin_is_the_same_404(sim):
    raw(sim, "POST", CONFIGMAPS, _configmap("sub", {}))
    assert raw(sim, "GET", f"{CONFIGMAPS}/sub/bogus")[2] == GENERIC_404
    assert raw(sim, "GET", "/api/v1/namespaces/default/bogus")[2] == GENERIC_404
    # the Namespace's own subresources are still served
    assert raw(sim, "GET", "/api/v1/namespaces/default/status")[0] == 200


def test_a_crd_groups_misses_stay_plain_text(sim):
    foos = "/apis/samplecontroller.k8s.io/v1alpha1"
    code, _, body = raw(sim, "GET", f"{foos}/namespaces/default/bars")
    assert (code, body) == (404, b"404 page not found\n")


# ---- /openapi/v3 -------------------------------------------------------------------------------


def test_openapi_v3_document_is_negotiated_as_handler3_does(sim):
    path = "/openapi/v3/apis/apps/v1"
    for accept in (None, "application/json", "*/*", "application/*"):
        headers = {"Accept": accept} if accept else {}
        code, hdrs, body = raw(sim, "GET", path, headers=headers)
        assert (code, hdrs["Content-Type"]) == (200, "application/json"), accept
        assert not body.endswith(b"\n")  # json.Marshal's bytes
    # nothing it serves: 406, no body
    code, hdrs, body = raw(sim, "GET", path, headers={"Accept": "text/html"})
    assert (code, body) == (406, b"") and "Content-Type" not in hdrs


# ---- DELETE answers what the registry returns ----------------------------------------------


@pytest.mark.parametrize(
    ("plural", "kind", "body"),
    [
        ("services", "Service", {"spec": {"ports": [{"port": 80}]}}),
        ("serviceaccounts", "ServiceAccount", {}),
    ],
)
def test_delete_returns_the_object_where_the_registry_sets_return_deleted_object(
    sim, plural, kind, body
):
    path = f"/api/v1/namespaces/default/{plural}"
    doc = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "gone"}, **body}
    created = json.loads(raw(sim, "POST", path, doc)[2])
    code, _, answer = raw(sim, "DELETE", f"{path}/gone?dryRun=All")
    assert code == 200 and json.loads(answer)["kind"] == kind
    assert raw(sim, "GET", f"{path}/gone")[0] == 200  # the dry run kept it
    code, _, answer = raw(sim, "DELETE", f"{path}/gone")
    deleted = json.loads(answer)
    # the object as it was last stored: same resourceVersion, no deletionTimestamp
    assert code == 200 and (deleted["kind"], deleted["apiVersion"]) == (kind, "v1")
    assert deleted["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert "deletionTimestamp" not in deleted["metadata"]
    assert raw(sim, "GET", f"{path}/gone")[0] == 404


def test_the_official_client_reads_a_deleted_service(sim):
    from kubernetes import client

    core = client.CoreV1Api(sim.api_client)
    core.create_namespaced_service(
        "default", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}
    )
    answer = core.delete_namespaced_service("svc", "default")
    assert answer.kind == "Service" and answer.metadata.name == "svc"


def test_other_kinds_still_answer_a_success_status(sim):
    raw(sim, "POST", CONFIGMAPS, _configmap("status", {}))
    status = json.loads(raw(sim, "DELETE", f"{CONFIGMAPS}/status")[2])
    assert (status["kind"], status["status"]) == ("Status", "Success")
