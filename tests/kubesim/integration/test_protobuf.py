"""kubesim speaks protobuf where kube-apiserver does: bodies, answers, errors and watches.

kubectl's typed commands send ``Content-Type: application/vnd.kubernetes.protobuf`` and
``Accept: application/vnd.kubernetes.protobuf,application/json``. The recorded kubectl bodies
under tests/kubesim/data/protobuf must create exactly what the same objects sent as JSON create.
Custom resources have no protobuf form: a mixed Accept gets JSON, protobuf alone 406 (its
Status in protobuf), a protobuf body 400.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlparse

import pytest

from kubesim import KubeSim, protobuf
from kubesim.protobuf.wire import bytes_field
from tests.kubesim.integration.test_api import FOO_CRD, deployment, foo, raw

PB = "application/vnd.kubernetes.protobuf"
TYPED = f"{PB},application/json"
DATA = Path(__file__).resolve().parents[1] / "data" / "protobuf"
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"

_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ConfigMap": "/api/v1/namespaces/default/configmaps",
    "Secret": "/api/v1/namespaces/default/secrets",
    "ServiceAccount": "/api/v1/namespaces/default/serviceaccounts",
    "Service": "/api/v1/namespaces/default/services",
    "Deployment": DEPLOYMENTS,
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
}
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp")


@pytest.fixture
def sim():
    with KubeSim(crds=[FOO_CRD]) as s:
        yield s


@pytest.fixture(scope="module")
def twins():
    """Two servers: one fed kubectl's protobuf bodies, one the same objects as JSON."""
    with KubeSim() as pb, KubeSim() as js:
        yield pb, js


def _read_back(sim: KubeSim, path: str, name: str) -> dict:
    code, _, body = raw(sim, "GET", f"{path}/{name}")
    assert code == 200, body
    obj = json.loads(body)
    for field in _SERVER_SET:
        obj["metadata"].pop(field)
    # each managedFields entry's time is the server's clock too (the two creates can fall in
    # different seconds); its manager, operation and fields are compared
    for entry in obj["metadata"].get("managedFields") or []:
        entry.pop("time")
    # a Service's ClusterIP is drawn at random from the service CIDR by each server
    if obj.get("kind") == "Service":
        assert obj["spec"].pop("clusterIP") == obj["spec"].pop("clusterIPs")[0]
    return obj


@pytest.mark.parametrize(
    "fixture", sorted(DATA.glob("kubectl*.bin")), ids=lambda p: p.stem.replace("kubectl", "")
)
def test_kubectl_protobuf_bodies_create_what_the_same_json_creates(twins, fixture: Path):
    pb_sim, json_sim = twins
    body = fixture.read_bytes()
    sent = json.loads(fixture.with_suffix(".json").read_text())
    path = _PATHS[sent["kind"]]
    for field in ("name", "namespace"):
        sent["metadata"].pop(field, None)
    name = fixture.stem.replace(".", "-").lower()  # one object per fixture and kubectl
    pb_body = protobuf.decode(body)
    pb_body["metadata"].pop("namespace", None)
    pb_body["metadata"]["name"] = name
    headers = {"Content-Type": PB, "Accept": TYPED}
    code, hdrs, out = raw(pb_sim, "POST", path, protobuf.encode(pb_body), headers)
    assert code == 201, out
    assert hdrs["Content-Type"] == PB
    assert protobuf.decode(out)["metadata"]["name"] == name
    sent["metadata"]["name"] = name
    code, _, out = raw(json_sim, "POST", path, sent)
    assert code == 201, out
    assert _read_back(pb_sim, path, name) == _read_back(json_sim, path, name)


def test_builtin_answers_are_protobuf_when_asked_first(sim):
    code, _, _ = raw(sim, "POST", DEPLOYMENTS, deployment("web", labels={"app": "web"}))
    assert code == 201
    code, hdrs, body = raw(sim, "GET", f"{DEPLOYMENTS}/web", headers={"Accept": TYPED})
    assert (code, hdrs["Content-Type"]) == (200, PB)
    _, _, as_json = raw(sim, "GET", f"{DEPLOYMENTS}/web")
    decoded = protobuf.decode(body)
    # protobuf cannot tell an absent Time from the zero one, which the decoder writes as null;
    # v1.36's JSON omits the template's zero creationTimestamp (omitzero)
    template_meta = decoded["spec"]["template"]["metadata"]
    assert template_meta.pop("creationTimestamp") is None
    assert decoded == json.loads(as_json)
    code, hdrs, body = raw(sim, "GET", DEPLOYMENTS, headers={"Accept": PB})
    lst = protobuf.decode(body)
    assert (lst["kind"], lst["apiVersion"]) == ("DeploymentList", "apps/v1")
    assert [i["metadata"]["name"] for i in lst["items"]] == ["web"]
    assert "kind" not in lst["items"][0]  # typed list items carry no TypeMeta
    code, hdrs, _ = raw(sim, "GET", DEPLOYMENTS, headers={"Accept": f"{PB};q=0.5,application/json"})
    assert hdrs["Content-Type"] == "application/json"


def test_scale_speaks_protobuf_too(sim):
    raw(sim, "POST", DEPLOYMENTS, deployment("web"))
    code, hdrs, body = raw(sim, "GET", f"{DEPLOYMENTS}/web/scale", headers={"Accept": PB})
    scale = protobuf.decode(body)
    assert (code, scale["kind"], scale["spec"]) == (200, "Scale", {"replicas": 1})
    scale["spec"]["replicas"] = 3
    code, _, body = raw(
        sim,
        "PUT",
        f"{DEPLOYMENTS}/web/scale",
        protobuf.encode(scale),
        {"Content-Type": PB, "Accept": PB},
    )
    assert code == 200 and protobuf.decode(body)["spec"]["replicas"] == 3


def test_errors_are_negotiated_like_answers(sim):
    code, hdrs, body = raw(sim, "GET", f"{DEPLOYMENTS}/nope", headers={"Accept": TYPED})
    status = protobuf.decode(body)
    assert (code, hdrs["Content-Type"]) == (404, PB)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotFound", 404)
    assert status["message"] == 'deployments.apps "nope" not found'
    code, hdrs, body = raw(sim, "GET", "/api/v1/namespaces", headers={"Accept": "text/html"})
    assert (code, hdrs["Content-Type"]) == (406, "application/json")
    assert body.startswith(b'{\n  "kind": "Status",')  # WriteRawJSON indents


def test_protobuf_body_errors_are_bad_requests(sim):
    headers = {"Content-Type": PB}
    cases = {
        b"": "empty data (<empty>)",
        b"k8s\x00": "empty body (6b387300)",
        b'{"kind":"Deployment"}': (
            "provided data does not appear to be a protobuf message, expected prefix "
            '[107 56 115 0] ({"kind":"Deployment"})'
        ),
    }
    for body, why in cases.items():
        code, _, out = raw(sim, "POST", DEPLOYMENTS, body, headers)
        status = json.loads(out)
        assert (code, status["reason"]) == (400, "BadRequest")
        assert status["message"] == (
            f"the object provided is unrecognized (must be of type Deployment): {why}"
        )


def test_custom_resources_answer_protobuf_requests_as_the_real_server(sim):
    code, _, _ = raw(sim, "POST", FOOS, foo("f1"))
    assert code == 201
    code, hdrs, body = raw(sim, "GET", f"{FOOS}/f1", headers={"Accept": TYPED})
    assert (code, hdrs["Content-Type"]) == (200, "application/json")
    assert json.loads(body)["kind"] == "Foo"
    code, hdrs, body = raw(sim, "GET", f"{FOOS}/f1", headers={"Accept": PB})
    status = protobuf.decode(body)  # the 406 itself is written in protobuf
    assert (code, hdrs["Content-Type"], status["reason"]) == (406, PB, "NotAcceptable")
    assert status["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )
    code, _, out = raw(sim, "POST", FOOS, _foo_envelope(), {"Content-Type": PB, "Accept": TYPED})
    status = protobuf.decode(out)  # errors may be protobuf even where objects may not
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'Foo in version "v1alpha1" cannot be handled as a Foo: object '
        "*unstructured.Unstructured does not implement the protobuf marshalling interface and "
        "cannot be encoded to a protobuf message"
    )


def _foo_envelope() -> bytes:
    """A protobuf envelope naming a custom kind (no client can fill its raw bytes)."""
    type_meta = bytes_field(1, b"samplecontroller.k8s.io/v1alpha1") + bytes_field(2, b"Foo")
    return protobuf.MAGIC + bytes_field(1, type_meta) + bytes_field(2, b"")


def _watch(sim: KubeSim, path: str, accept: str) -> tuple[int, str, bytes]:
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", path, headers={"Accept": accept})
    resp = conn.getresponse()
    data = resp.read()  # the stream ends at timeoutSeconds
    conn.close()
    return resp.status, resp.getheader("Content-Type") or "", data


def test_protobuf_watch_streams_length_prefixed_watch_events(sim):
    raw(sim, "POST", DEPLOYMENTS, deployment("web"))
    rv = json.loads(raw(sim, "GET", f"{DEPLOYMENTS}/web")[2])["metadata"]["resourceVersion"]
    raw(sim, "DELETE", f"{DEPLOYMENTS}/web")
    query = (
        "?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan"
    )
    raw(sim, "POST", DEPLOYMENTS, deployment("db"))
    code, ctype, data = _watch(sim, DEPLOYMENTS + query, f"{PB};stream=watch")
    assert (code, ctype) == (200, f"{PB};stream=watch")
    events = list(protobuf.iter_watch_events(data))
    assert [(t, o["kind"], o["metadata"].get("name")) for t, o in events] == [
        ("ADDED", "Deployment", "db"),
        ("BOOKMARK", "Deployment", None),
    ]
    assert events[1][1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    code, ctype, data = _watch(
        sim, f"{DEPLOYMENTS}?watch=1&timeoutSeconds=1&resourceVersion={rv}", PB
    )
    assert [t for t, _ in protobuf.iter_watch_events(data)] == ["DELETED", "ADDED"]


def test_a_yaml_watch_is_not_acceptable(sim):
    headers = {"Accept": "application/yaml"}
    code, hdrs, body = raw(sim, "GET", "/api/v1/namespaces?watch=1", headers=headers)
    assert (code, hdrs["Content-Type"]) == (406, "application/yaml")  # the Status in YAML
    assert b"reason: NotAcceptable" in body
