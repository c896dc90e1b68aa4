"""What kubesim writes besides the object itself: ?pretty=true and the metadata-only views.

``Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`` (and the List form,
and v1beta1, and protobuf) is what client-go's metadata client and metadata informers send;
the answer carries only ``metadata``, typed ``meta.k8s.io/v1``, for get, list and watch.
``pretty`` indents JSON as the apiserver's pretty serializer does, also for curl and browsers.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from kubesim import KubeSim, protobuf
from tests.kubesim.integration.test_api import FOO_CRD, deployment, foo, raw

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
PB = "application/vnd.kubernetes.protobuf"


def meta_accept(kind: str, version: str = "v1", media: str = "application/json") -> str:
    return f"{media};as={kind};g=meta.k8s.io;v={version}"


# client-go's metadata client, as it lists (it adds plain JSON last)
METADATA_CLIENT_LIST = ",".join(
    [
        meta_accept("PartialObjectMetadataList", media=PB),
        meta_accept("PartialObjectMetadataList"),
        "application/json",
    ]
)


@pytest.fixture
def sim():
    with KubeSim(crds=[FOO_CRD]) as s:
        raw(s, "POST", DEPLOYMENTS, deployment("web", labels={"app": "web"}))
        raw(s, "POST", DEPLOYMENTS, deployment("db"))
        raw(s, "POST", FOOS, foo("f1"))
        yield s


def test_pretty_true_indents_json_like_marshal_indent(sim):
    code, hdrs, body = raw(sim, "GET", f"{DEPLOYMENTS}/web?pretty=true")
    assert (code, hdrs["Content-Type"]) == (200, "application/json")
    obj = json.loads(body)
    assert body == json.dumps(obj, indent=2).encode()
    assert body.startswith(b'{\n  "kind": "Deployment",\n  "apiVersion": "apps/v1",\n')
    _, _, compact = raw(sim, "GET", f"{DEPLOYMENTS}/web")
    # json.Encoder's compact form: one line, ended by the newline Encode writes
    assert json.loads(compact) == obj and compact.endswith(b"}\n") and b"\n" not in compact[:-1]
    assert not body.endswith(b"\n")  # MarshalIndent writes none


def test_pretty_applies_to_lists_tables_and_errors_but_not_to_protobuf(sim):
    _, _, body = raw(sim, "GET", f"{DEPLOYMENTS}?pretty=1")
    assert body.startswith(b'{\n  "kind": "DeploymentList"')
    table = "application/json;as=Table;g=meta.k8s.io;v=v1"
    _, _, body = raw(sim, "GET", f"{DEPLOYMENTS}?pretty=true", headers={"Accept": table})
    assert body.startswith(b'{\n  "kind": "Table"')
    code, _, body = raw(sim, "GET", f"{DEPLOYMENTS}/nope?pretty=true")
    assert code == 404 and body.startswith(b'{\n  "kind": "Status"')
    _, hdrs, body = raw(sim, "GET", f"{DEPLOYMENTS}/web?pretty=true", headers={"Accept": PB})
    assert hdrs["Content-Type"] == PB and protobuf.decode(body)["kind"] == "Deployment"


def test_curl_and_browsers_get_pretty_json_unless_they_say_otherwise(sim):
    _, _, body = raw(sim, "GET", f"{DEPLOYMENTS}/web", headers={"User-Agent": "curl/8.5.0"})
    assert body.startswith(b'{\n  "kind"')
    browser = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"}
    _, _, body = raw(sim, "GET", f"{DEPLOYMENTS}/web", headers=browser)
    assert body.startswith(b'{\n  "kind"')
    headers = {"User-Agent": "curl/8.5.0"}
    _, _, body = raw(sim, "GET", f"{DEPLOYMENTS}/web?pretty=false", headers=headers)
    assert body.startswith(b'{"kind"')


def test_get_as_partial_object_metadata(sim):
    code, hdrs, body = raw(
        sim, "GET", f"{DEPLOYMENTS}/web", headers={"Accept": meta_accept("PartialObjectMetadata")}
    )
    assert (code, hdrs["Content-Type"]) == (200, "application/json")
    obj = json.loads(body)
    full = json.loads(raw(sim, "GET", f"{DEPLOYMENTS}/web")[2])
    assert obj == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": full["metadata"],
    }
    # ObjectMeta in Go's field order
    assert list(obj["metadata"]) == [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "labels",
        "managedFields",
    ]


def test_list_as_partial_object_metadata_list_keeps_the_list_metadata(sim):
    code, hdrs, body = raw(
        sim, "GET", f"{DEPLOYMENTS}?limit=1", headers={"Accept": METADATA_CLIENT_LIST}
    )
    assert (code, hdrs["Content-Type"]) == (200, PB)
    lst = protobuf.decode(body)
    assert (lst["kind"], lst["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert lst["metadata"]["continue"] and lst["metadata"]["remainingItemCount"] == 1
    assert [set(i) for i in lst["items"]] == [{"metadata"}]
    accept = meta_accept("PartialObjectMetadataList")
    lst = json.loads(raw(sim, "GET", DEPLOYMENTS, headers={"Accept": accept})[2])
    assert [i["metadata"]["name"] for i in lst["items"]] == ["db", "web"]
    assert {(i["kind"], i["apiVersion"]) for i in lst["items"]} == {
        ("PartialObjectMetadata", "meta.k8s.io/v1")
    }
    assert list(lst["metadata"]) == ["resourceVersion"]


def test_v1beta1_variants(sim):
    accept = meta_accept("PartialObjectMetadataList", "v1beta1")
    lst = json.loads(raw(sim, "GET", DEPLOYMENTS, headers={"Accept": accept})[2])
    assert lst["apiVersion"] == "meta.k8s.io/v1beta1"
    assert lst["items"][0]["apiVersion"] == "meta.k8s.io/v1beta1"
    accept = meta_accept("PartialObjectMetadataList", "v1beta1", PB)
    lst = protobuf.decode(raw(sim, "GET", DEPLOYMENTS, headers={"Accept": accept})[2])
    assert lst["apiVersion"] == "meta.k8s.io/v1beta1" and len(lst["items"]) == 2


def test_custom_resources_have_metadata_views_even_in_protobuf(sim):
    accept = meta_accept("PartialObjectMetadata", media=PB)
    code, hdrs, body = raw(sim, "GET", f"{FOOS}/f1", headers={"Accept": accept})
    assert (code, hdrs["Content-Type"]) == (200, PB)
    assert protobuf.decode(body)["metadata"]["name"] == "f1"
    lst = json.loads(raw(sim, "GET", FOOS, headers={"Accept": METADATA_CLIENT_LIST[len(PB) :]})[2])
    assert lst["kind"] == "PartialObjectMetadataList"


def test_the_wrong_shape_for_the_endpoint_is_406(sim):
    accept = meta_accept("PartialObjectMetadata") + ",application/json"
    code, _, body = raw(sim, "GET", DEPLOYMENTS, headers={"Accept": accept})
    status = json.loads(body)
    assert (code, status["reason"]) == (406, "NotAcceptable")
    assert status["message"] == (
        "you requested PartialObjectMetadata, but the requested object is a list "
        "(*apps.DeploymentList)"
    )
    accept = meta_accept("PartialObjectMetadataList") + ",application/json"
    code, _, body = raw(sim, "GET", f"{FOOS}/f1", headers={"Accept": accept})
    assert code == 406
    assert json.loads(body)["message"] == (
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*unstructured.Unstructured)"
    )


def _watch(sim: KubeSim, query: str, accept: str) -> tuple[str, bytes]:
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("GET", DEPLOYMENTS + query, headers={"Accept": accept})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert resp.status == 200
    return resp.getheader("Content-Type") or "", data


INITIAL = (
    "?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true"
    "&resourceVersionMatch=NotOlderThan"
)


def test_watch_as_partial_object_metadata_bookmarks_included(sim):
    ctype, data = _watch(sim, INITIAL, meta_accept("PartialObjectMetadata"))
    events = [json.loads(line) for line in data.splitlines()]
    assert ctype == "application/json"
    assert [(e["type"], e["object"]["kind"]) for e in events] == [
        ("ADDED", "PartialObjectMetadata"),
        ("ADDED", "PartialObjectMetadata"),
        ("BOOKMARK", "PartialObjectMetadata"),
    ]
    assert set(events[0]["object"]) == {"kind", "apiVersion", "metadata"}
    assert events[2]["object"]["metadata"] == {
        "resourceVersion": events[2]["object"]["metadata"]["resourceVersion"],
        "creationTimestamp": None,
        "annotations": {"k8s.io/initial-events-end": "true"},
    }
    ctype, data = _watch(sim, INITIAL, meta_accept("PartialObjectMetadata", media=PB))
    assert ctype == f"{PB};stream=watch"
    kinds = [o["kind"] for _, o in protobuf.iter_watch_events(data)]
    assert kinds == ["PartialObjectMetadata"] * 3


def test_a_watch_asking_for_the_list_form_gets_whole_objects(sim):
    # The real watch encoder logs the failed transform and sends the object itself.
    _, data = _watch(sim, "?watch=1&timeoutSeconds=1", meta_accept("PartialObjectMetadataList"))
    events = [json.loads(line) for line in data.splitlines()]
    assert {e["object"]["kind"] for e in events} == {"Deployment"}
