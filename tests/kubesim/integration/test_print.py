"""kubesim over HTTP: Tables as kubectl asks for them, and the /openapi/v3 documents.

The rendering itself is checked in tests/kubesim/unit/test_table.py and
test_kubesim_openapi.py; these check the wiring a client sees: the Accept header and
``?includeObject`` of every verb, the watch stream's header-once Tables, and the OpenAPI
endpoints' URLs, hashes and headers.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest
from kubernetes import client

from kubesim import KubeSim

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _lease(name: str, holder: str = "me") -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"holderIdentity": holder},
    }


@pytest.fixture
def sim():
    with KubeSim() as s:
        yield s


def _request(sim, method: str, path: str, body=None, accept: str = TABLE):
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    headers = {"Accept": accept}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    out = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), out


def test_every_verb_answers_a_table_with_the_requested_object(sim):
    code, _, body = _request(sim, "POST", LEASES, _lease("a"))
    created = json.loads(body)
    assert code == 201 and created["kind"] == "Table"
    assert created["rows"][0]["cells"][:2] == ["a", "me"]
    assert created["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    code, _, body = _request(sim, "GET", f"{LEASES}?includeObject=Object")
    listed = json.loads(body)
    assert [c["name"] for c in listed["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert listed["metadata"]["resourceVersion"]
    assert listed["rows"][0]["object"]["spec"] == {"holderIdentity": "me"}
    code, _, body = _request(sim, "GET", f"{LEASES}/a?includeObject=None")
    assert json.loads(body)["rows"][0]["object"] is None
    code, _, body = _request(sim, "GET", f"{LEASES}?includeObject=All")
    assert code == 400 and "includeObject: Invalid value" in json.loads(body)["message"]
    # includeObject means nothing to a JSON answer, so it is not checked there
    code, _, _ = _request(sim, "GET", f"{LEASES}?includeObject=All", accept="application/json")
    assert code == 200


def test_a_table_watch_sends_the_columns_once(sim):
    coord = client.CoordinationV1Api(sim.api_client)
    coord.create_namespaced_lease("default", _lease("w"))
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", f"{LEASES}?watch=true&resourceVersion=0", headers={"Accept": TABLE})
    resp = conn.getresponse()
    assert resp.status == 200
    first = json.loads(resp.readline())  # one event per line of the chunked stream
    coord.patch_namespaced_lease("w", "default", {"spec": {"holderIdentity": "you"}})
    second = json.loads(resp.readline())
    conn.close()
    assert first["type"] == "ADDED" and second["type"] == "MODIFIED"
    assert [c["name"] for c in first["object"]["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert second["object"]["columnDefinitions"] is None
    assert second["object"]["rows"][0]["cells"][:2] == ["w", "you"]


def test_openapi_v3_urls_hashes_and_headers(sim):
    code, _, body = _request(sim, "GET", "/openapi/v3", accept="application/json")
    root = json.loads(body)
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    code, headers, body = _request(sim, "GET", url, accept="application/json")
    assert code == 200 and headers["Content-Type"] == "application/json"
    assert headers["Etag"] == '"' + url.split("hash=")[1] + '"'
    doc = json.loads(body)
    assert "io.k8s.api.apps.v1.Deployment" in doc["components"]["schemas"]
    code, _, _ = _request(sim, "GET", "/openapi/v3/apis/nope/v1", accept="application/json")
    assert code == 404
    # v1.36 serves /openapi/v2 too (test_server_version.py checks the document)
    code, headers, _ = _request(sim, "GET", "/openapi/v2", accept="application/json")
    assert code == 200 and headers["Content-Type"] == "application/json"
