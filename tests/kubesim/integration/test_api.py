"""kubesim over HTTP through the official client: discovery, CRUD, errors, subresources, paging.

Every expectation here is a kube-apiserver behaviour recorded against a real server or
the API concepts docs; the official client (CoreV1Api, AppsV1Api, CustomObjectsApi,
CoordinationV1Api, ApiextensionsV1Api) does the talking, as our informers and controller will.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from controller.foo_controller import FOO_GVR
from tests.helpers import wait_for

GROUP, VERSION, PLURAL = FOO_GVR

FOO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    # a *.k8s.io group needs the API review's annotation (KEP-1111), or "unapproved, ..."
    "metadata": {
        "name": "foos.samplecontroller.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "unapproved, example API"},
    },
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "deploymentName": {"type": "string"},
                                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"availableReplicas": {"type": "integer"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def deployment(name: str, replicas: int = 1, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }


def foo(name: str, replicas: int = 1, labels: dict | None = None) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


pytestmark = pytest.mark.kubesim(crds=[FOO_CRD])


@pytest.fixture
def apps(sim):
    return client.AppsV1Api(sim.api_client)


@pytest.fixture
def core(sim):
    return client.CoreV1Api(sim.api_client)


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


def raw(sim, method: str, path: str, body=None, headers=None) -> tuple[int, dict, bytes]:
    """One plain HTTP request (for status codes and bodies the client would hide)."""
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    hdrs.update(headers or {})
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    out = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), out


def status_of(exc: ApiException) -> dict:
    return json.loads(exc.body)


# ---- discovery ---------------------------------------------------------------------------------


def test_discovery_lists_builtin_groups_and_crd_group(sim):
    code, _, body = raw(sim, "GET", "/apis")
    assert code == 200
    groups = {g["name"]: g for g in json.loads(body)["groups"]}
    assert {"apps", "coordination.k8s.io", "apiextensions.k8s.io", GROUP} <= set(groups)
    assert groups[GROUP]["preferredVersion"]["version"] == VERSION
    code, _, body = raw(sim, "GET", "/apis/apps/v1")
    names = {r["name"]: r for r in json.loads(body)["resources"]}
    assert names["deployments"]["kind"] == "Deployment"
    assert names["deployments/status"]["verbs"] == ["get", "patch", "update"]
    assert names["deployments/scale"]["group"] == "autoscaling"
    code, _, body = raw(sim, "GET", "/api")
    assert json.loads(body)["versions"] == ["v1"]
    core = {r["name"] for r in json.loads(raw(sim, "GET", "/api/v1")[2])["resources"]}
    assert {"namespaces", "events", "namespaces/status"} <= core
    assert client.VersionApi(sim.api_client).get_code().major == "1"


def test_unknown_paths_answer_like_the_real_server(sim):
    code, hdrs, body = raw(sim, "GET", "/apis/nope.example.com/v1/things")
    assert (code, body) == (404, b"404 page not found\n")
    assert hdrs["Content-Type"].startswith("text/plain")
    code, _, body = raw(sim, "GET", f"/apis/{GROUP}/{VERSION}/bars")
    assert (code, body) == (404, b"404 page not found\n")
    code, _, body = raw(sim, "GET", "/api/v1/nosuchresources")
    status = json.loads(body)
    # go-restful's ServiceErrorHandler: NewGenericServerResponse, whose details are empty
    assert code == 404 and status["reason"] == "NotFound" and status["details"] == {}
    assert raw(sim, "OPTIONS", "/apis/apps/v1/deployments")[0] == 405
    assert raw(sim, "HEAD", "/apis/apps/v1/namespaces/default/deployments")[0] == 200
    assert raw(sim, "GET", "/api/v1/namespaces", headers={"Accept": "text/html"})[0] == 406


# ---- namespaces, create/get/update -------------------------------------------------------------


def test_default_namespaces_exist_with_name_label(core):
    names = {n.metadata.name: n for n in core.list_namespace().items}
    assert {"default", "kube-system"} <= set(names)
    assert names["default"].metadata.labels["kubernetes.io/metadata.name"] == "default"
    assert names["default"].status.phase == "Active"


def test_create_fills_system_fields_and_defaults_deployments(apps):
    d = deployment("web")
    d["metadata"]["uid"] = "mine"
    d["metadata"]["generation"] = 7
    created = apps.create_namespaced_deployment("default", d)
    m = created.metadata
    assert m.uid != "mine" and len(m.uid) == 36
    assert m.generation == 1
    assert m.creation_timestamp is not None
    assert int(m.resource_version) > 0
    spec = created.spec
    assert spec.strategy.type == "RollingUpdate"
    assert spec.strategy.rolling_update.max_surge == "25%"
    assert spec.revision_history_limit == 10 and spec.progress_deadline_seconds == 600
    c = spec.template.spec.containers[0]
    assert c.image_pull_policy == "Always"  # :latest
    assert c.termination_message_path == "/dev/termination-log"
    assert spec.template.spec.scheduler_name == "default-scheduler"


def test_generate_name_gets_five_char_suffix(core):
    ns = core.create_namespace({"metadata": {"generateName": "test-"}})
    assert ns.metadata.name.startswith("test-") and len(ns.metadata.name) == 10


def test_resource_version_is_global_and_monotonic(sim, apps, core):
    rv1 = int(
        apps.create_namespaced_deployment("default", deployment("a")).metadata.resource_version
    )
    rv2 = int(core.create_namespace({"metadata": {"name": "other"}}).metadata.resource_version)
    rv3 = int(apps.create_namespaced_deployment("other", deployment("b")).metadata.resource_version)
    # (the new namespace's default ServiceAccount and kube-root-ca.crt, written by kubesim's
    # controllers whenever they get to it, may already have moved the global counter on)
    assert rv1 < rv2 < rv3 <= sim.resource_version


def test_generation_bumps_on_spec_and_deployment_annotations_only(apps):
    d = apps.create_namespaced_deployment("default", deployment("web"))
    raw_d = client.ApiClient().sanitize_for_serialization(d)
    raw_d["metadata"]["labels"] = {"x": "y"}
    d2 = apps.replace_namespaced_deployment("web", "default", raw_d)
    assert (
        d2.metadata.generation == 1 and d2.metadata.resource_version != d.metadata.resource_version
    )
    d3 = apps.patch_namespaced_deployment(
        "web", "default", {"metadata": {"annotations": {"a": "b"}}}
    )
    assert d3.metadata.generation == 2
    d4 = apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 3}})
    assert d4.metadata.generation == 3


def test_noop_write_keeps_resource_version(apps, custom):
    d = apps.create_namespaced_deployment("default", deployment("web"))
    same = apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    assert same.metadata.resource_version == d.metadata.resource_version
    f = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    again = custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", f)
    assert again["metadata"]["resourceVersion"] == f["metadata"]["resourceVersion"]


def test_stale_update_is_409_conflict_with_status(apps):
    d = apps.create_namespaced_deployment("default", deployment("web"))
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 2}})
    body = client.ApiClient().sanitize_for_serialization(d)
    with pytest.raises(ApiException) as ei:
        apps.replace_namespaced_deployment("web", "default", body)
    st = status_of(ei.value)
    assert ei.value.status == 409
    assert st["reason"] == "Conflict"
    assert st["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert st["message"].startswith('Operation cannot be fulfilled on deployments.apps "web"')
    # a merge patch carrying a stale resourceVersion is a precondition too
    with pytest.raises(ApiException) as ei:
        apps.patch_namespaced_deployment(
            "web", "default", {"metadata": {"resourceVersion": d.metadata.resource_version}}
        )
    assert ei.value.status == 409


def test_already_exists_and_not_found_status_shapes(apps, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    with pytest.raises(ApiException) as ei:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    st = status_of(ei.value)
    assert (ei.value.status, st["reason"]) == (409, "AlreadyExists")
    assert st["details"] == {"name": "f", "group": GROUP, "kind": "foos"}
    assert st["message"] == 'foos.samplecontroller.k8s.io "f" already exists'
    with pytest.raises(ApiException) as ei:
        apps.read_namespaced_deployment("missing", "default")
    st = status_of(ei.value)
    assert st == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "missing" not found',
        "reason": "NotFound",
        "details": {"name": "missing", "group": "apps", "kind": "deployments"},
        "code": 404,
    }


def test_missing_namespace_404_on_create_and_get_but_empty_list(apps):
    with pytest.raises(ApiException) as ei:
        apps.create_namespaced_deployment("nowhere", deployment("web"))
    st = status_of(ei.value)
    assert ei.value.status == 404
    assert st["details"] == {"name": "nowhere", "kind": "namespaces"}
    with pytest.raises(ApiException) as ei:
        apps.read_namespaced_deployment("web", "nowhere")
    assert ei.value.status == 404
    assert apps.list_namespaced_deployment("nowhere").items == []


def test_put_rules_differ_per_kind(sim, apps, custom):
    f = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    del f["metadata"]["resourceVersion"]
    with pytest.raises(ApiException) as ei:
        custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", f)
    st = status_of(ei.value)
    assert (ei.value.status, st["reason"], st["details"]["kind"]) == (422, "Invalid", "foos")
    assert st["details"]["causes"][0]["field"] == "metadata.resourceVersion"
    # Deployments: an unconditional update
    apps.create_namespaced_deployment("default", deployment("web"))
    d = deployment("web", replicas=4)
    assert apps.replace_namespaced_deployment("web", "default", d).spec.replicas == 4
    # PUT to a missing Foo is 404; another name in the body is 400; another uid is 409
    with pytest.raises(ApiException) as ei:
        custom.replace_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "nope", foo("nope")
        )
    assert ei.value.status == 404
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    got["metadata"]["name"] = "g"
    with pytest.raises(ApiException) as ei:
        custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", got)
    assert ei.value.status == 400
    got["metadata"]["name"] = "f"
    got["metadata"]["uid"] = "other"
    with pytest.raises(ApiException) as ei:
        custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", got)
    assert ei.value.status == 409


def test_create_with_resource_version_is_500(sim):
    body = foo("f")
    body["metadata"]["resourceVersion"] = "5"
    code, _, out = raw(sim, "POST", f"/apis/{GROUP}/{VERSION}/namespaces/default/foos", body)
    assert code == 500 and "reason" not in json.loads(out)


def test_post_to_item_url_is_create_and_put_on_collection_rejected(sim):
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    assert raw(sim, "POST", base + "/foo-a", foo("foo-a"))[0] == 201
    assert raw(sim, "POST", base + "/foo-a", foo("foo-a"))[0] == 409
    assert raw(sim, "PUT", base, foo("foo-a"))[0] == 400
    assert (
        raw(sim, "PUT", "/apis/apps/v1/namespaces/default/deployments", deployment("x"))[0] == 405
    )


# ---- status subresource ------------------------------------------------------------------------


def test_status_subresource_for_crs(custom):
    f = foo("f")
    f["status"] = {"availableReplicas": 9}
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, f)
    assert "status" not in created
    created["status"] = {"availableReplicas": 3}
    created["spec"]["replicas"] = 2
    upd = custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", created)
    assert (
        "status" not in upd and upd["spec"]["replicas"] == 2 and upd["metadata"]["generation"] == 2
    )
    upd["status"] = {"availableReplicas": 2}
    upd["spec"]["replicas"] = 5
    upd["metadata"]["labels"] = {"ignored": "yes"}
    st = custom.replace_namespaced_custom_object_status(GROUP, VERSION, "default", PLURAL, "f", upd)
    assert st["status"] == {"availableReplicas": 2}
    assert st["spec"]["replicas"] == 2 and not st["metadata"].get("labels")
    assert st["metadata"]["generation"] == 2  # status writes never bump generation
    patched = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", PLURAL, "f", {"status": {"availableReplicas": 1}}
    )
    assert patched["status"]["availableReplicas"] == 1


def test_deployment_status_subresource(apps):
    apps.create_namespaced_deployment("default", deployment("web"))
    d = client.ApiClient().sanitize_for_serialization(
        apps.read_namespaced_deployment("web", "default")
    )
    d["status"] = {"replicas": 5}
    upd = apps.replace_namespaced_deployment("web", "default", d)
    assert upd.status.replicas is None
    d = client.ApiClient().sanitize_for_serialization(upd)
    d["status"] = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    d["spec"]["replicas"] = 9
    st = apps.replace_namespaced_deployment_status("web", "default", d)
    assert st.status.available_replicas == 1 and st.spec.replicas == 1


def test_scale_subresource(apps):
    apps.create_namespaced_deployment("default", deployment("web", replicas=2))
    sc = apps.read_namespaced_deployment_scale("web", "default")
    assert sc.spec.replicas == 2 and sc.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 4


@pytest.mark.kubesim(crds=[], deployment_status_delay=0.05)
def test_deployment_status_loop_reports_replicas_ready(sim, apps):
    apps.create_namespaced_deployment("default", deployment("web", replicas=3))

    def web(done: Callable[[Any], bool]) -> Callable[[], Any]:
        def check() -> Any:
            d = apps.read_namespaced_deployment("web", "default")
            return d if done(d.status) else None

        return check

    d = wait_for(
        web(lambda s: s.available_replicas == 3), timeout=3, message="3 available replicas"
    )
    assert d.status.ready_replicas == d.status.updated_replicas == d.status.replicas == 3
    assert d.status.observed_generation == 1
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    d = wait_for(
        web(lambda s: s.observed_generation == 2), timeout=3, message="generation 2 observed"
    )
    assert (d.status.observed_generation, d.status.available_replicas) == (2, 1)


def test_deployment_status_loop_off_by_default(sim, apps):
    apps.create_namespaced_deployment("default", deployment("web"))
    assert sim.wait_idle(2)
    assert apps.read_namespaced_deployment("web", "default").status.available_replicas is None


# ---- patches -----------------------------------------------------------------------------------


def test_merge_and_json_patch(custom):
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, foo("f", labels={"a": "1"})
    )
    out = custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "f", {"metadata": {"labels": {"a": None, "b": "2"}}}
    )
    assert out["metadata"]["labels"] == {"b": "2"}
    jp = "application/json-patch+json"  # CustomObjectsApi sends merge patches unless told
    out = custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        "f",
        [{"op": "replace", "path": "/spec/replicas", "value": 3}],
        _content_type=jp,
    )
    assert out["spec"]["replicas"] == 3
    with pytest.raises(ApiException) as ei:
        custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            "default",
            PLURAL,
            "f",
            [{"op": "test", "path": "/spec/replicas", "value": 9}],
            _content_type=jp,
        )
    assert ei.value.status == 422 and "details" not in status_of(ei.value)
    with pytest.raises(ApiException) as ei:
        custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            "default",
            PLURAL,
            "f",
            [{"op": "remove", "path": "/spec/nothing"}],
            _content_type=jp,
        )
    assert ei.value.status == 422
    # replace of a missing member succeeds (evanphx/json-patch), as on the real server
    out = custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        "f",
        [{"op": "replace", "path": "/spec/deploymentName", "value": "x"}],
        _content_type=jp,
    )
    assert out["spec"]["deploymentName"] == "x"


def test_patch_content_type_rules(sim):
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    raw(sim, "POST", base, foo("f"))
    hdr = {"Content-Type": "application/strategic-merge-patch+json"}
    code, _, body = raw(sim, "PATCH", base + "/f", {"spec": {}}, hdr)
    # the CRD handler's patch types, as kube-apiserver lists them (no strategic merge)
    assert code == 415 and json.loads(body)["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    assert json.loads(body)["reason"] == "UnsupportedMediaType"
    assert (
        raw(sim, "PATCH", base + "/f", {"spec": {}}, {"Content-Type": "application/json"})[0] == 415
    )
    # a built-in resource also takes strategic merge
    code, _, body = raw(
        sim, "PATCH", "/api/v1/namespaces/default/configmaps/x", {}, {"Content-Type": "text/plain"}
    )
    assert code == 415 and json.loads(body)["message"].endswith(
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )
    # a built-in create's body in a format no serializer reads: the serializers' media types
    cms = "/api/v1/namespaces/default/configmaps"
    code, _, body = raw(sim, "POST", cms, b"x", {"Content-Type": "text/plain"})
    assert code == 415 and json.loads(body)["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    # the scale subresource takes its resource's patch types, checked before anything else
    scale = "/apis/apps/v1/namespaces/default/deployments/missing/scale"
    code, _, body = raw(sim, "PATCH", scale, {}, {"Content-Type": "text/plain"})
    assert code == 415 and "strategic-merge-patch" in json.loads(body)["message"]
    mp = {"Content-Type": "application/merge-patch+json"}
    # a merge patch that is not an object: 400 on 1.36 (422 on 1.24: test_server_version.py)
    code, _, body = raw(sim, "PATCH", base + "/f", b"[1]", mp)
    assert code == 400 and json.loads(body)["message"] == (
        "error decoding patch: json: cannot unmarshal array into Go value of type "
        "map[string]interface {}"
    )
    code, _, body = raw(sim, "PATCH", base + "/f?fieldValidation=Ignore", b"[1]", mp)
    assert code == 400 and json.loads(body)["message"] == "Invalid JSON Patch"
    assert raw(sim, "PATCH", base + "/f", b"{nope", mp)[0] == 400
    assert raw(sim, "PATCH", base + "/missing", {"spec": {}}, mp)[0] == 404


def test_strategic_merge_patch_merges_containers_by_name_new_first(apps):
    d = deployment("web")
    d["spec"]["template"]["spec"]["containers"].append({"name": "b", "image": "b:1"})
    apps.create_namespaced_deployment("default", d)
    out = apps.patch_namespaced_deployment(  # the client sends dicts as strategic merge patch
        "web",
        "default",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "c", "image": "c:1"}, {"name": "b", "image": "b:2"}]
                    }
                }
            }
        },
    )
    cs = out.spec.template.spec.containers
    assert [c.name for c in cs] == ["c", "nginx", "b"]
    assert cs[2].image == "b:2" and cs[0].image_pull_policy == "IfNotPresent"
    out = apps.patch_namespaced_deployment(
        "web",
        "default",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "$patch": "delete"}]}}}},
    )
    assert [c.name for c in out.spec.template.spec.containers] == ["nginx", "b"]


# ---- delete ------------------------------------------------------------------------------------


def test_delete_without_finalizers_returns_success_status(sim, custom):
    f = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("f"))
    st = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert st == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "f", "group": GROUP, "kind": "foos", "uid": f["metadata"]["uid"]},
    }
    with pytest.raises(ApiException) as ei:
        custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert ei.value.status == 404


def test_delete_with_finalizers_keeps_object_until_they_are_removed(custom):
    body = foo("f")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    obj = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert obj["kind"] == "Foo" and obj["metadata"]["deletionTimestamp"]
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 0 and obj["metadata"]["generation"] == 2
    again = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    obj["metadata"]["finalizers"].append("example.com/another")
    with pytest.raises(ApiException) as ei:
        custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f", obj)
    assert ei.value.status == 422
    # the check runs twice (the generic BeforeUpdate and the kind's ValidateUpdate): two causes
    forbidden = {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"example.com/another"}',
        "field": "metadata.finalizers",
    }
    assert status_of(ei.value)["details"]["causes"] == [forbidden, forbidden]
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "f", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as ei:
        custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "f")
    assert ei.value.status == 404


def test_delete_preconditions_conflict_uses_kind(apps):
    apps.create_namespaced_deployment("default", deployment("web"))
    with pytest.raises(ApiException) as ei:
        apps.delete_namespaced_deployment(
            "web",
            "default",
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="x")),
        )
    st = status_of(ei.value)
    assert ei.value.status == 409 and st["details"]["kind"] == "Deployment"
    with pytest.raises(ApiException) as ei:
        apps.delete_namespaced_deployment("web", "default", propagation_policy="Bogus")
    assert ei.value.status == 422


def test_dry_run_create_and_delete_write_nothing(sim, apps):
    rv = sim.resource_version
    out = apps.create_namespaced_deployment("default", deployment("web"), dry_run="All")
    assert out.metadata.name == "web" and sim.resource_version == rv
    with pytest.raises(ApiException):
        apps.read_namespaced_deployment("web", "default")
    apps.create_namespaced_deployment("default", deployment("web"))
    apps.delete_namespaced_deployment("web", "default", dry_run="All")
    assert apps.read_namespaced_deployment("web", "default").metadata.name == "web"


# ---- CRDs --------------------------------------------------------------------------------------


def test_crd_lifecycle_makes_resource_servable_then_removes_it(sim):
    ext = client.ApiextensionsV1Api(sim.api_client)
    custom = client.CustomObjectsApi(sim.api_client)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "bars.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"plural": "bars", "kind": "Bar"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                },
                {
                    "name": "v2",
                    "served": True,
                    "storage": False,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                },
            ],
        },
    }
    created = ext.create_custom_resource_definition(crd)
    assert created.spec.names.list_kind == "BarList"
    assert {c.type: c.status for c in created.status.conditions}["Established"] == "True"
    custom.create_cluster_custom_object(
        "example.com",
        "v1",
        "bars",
        {
            "apiVersion": "example.com/v1",
            "kind": "Bar",
            "metadata": {"name": "b1"},
            "spec": {"x": 1},
        },
    )
    as_v2 = custom.get_cluster_custom_object("example.com", "v2", "bars", "b1")
    assert as_v2["apiVersion"] == "example.com/v2" and as_v2["spec"] == {"x": 1}
    lst = custom.list_cluster_custom_object("example.com", "v1", "bars")
    assert lst["kind"] == "BarList" and lst["items"][0]["kind"] == "Bar"
    assert lst["metadata"]["continue"] == ""
    ext.delete_custom_resource_definition("bars.example.com")
    assert sim.wait_idle(3)
    code, _, _ = raw(sim, "GET", "/apis/example.com/v1/bars")
    assert code == 404
    with pytest.raises(ApiException):
        ext.read_custom_resource_definition("bars.example.com")


# ---- leases and events -------------------------------------------------------------------------


def test_leases_put_to_missing_creates_and_have_no_generation(sim):
    coord = client.CoordinationV1Api(sim.api_client)
    lease = {
        "metadata": {"name": "leader", "namespace": "default"},
        "spec": {
            "holderIdentity": "a",
            "leaseDurationSeconds": 15,
            "renewTime": "2024-01-01T00:00:00.000000Z",
        },
    }
    code, _, body = raw(
        sim, "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/leader", lease
    )
    assert code == 201
    got = coord.read_namespaced_lease("leader", "default")
    assert got.metadata.generation is None and got.spec.holder_identity == "a"
    bad = dict(lease, metadata={"name": "bad"}, spec={"renewTime": "2024-01-01T00:00:01Z"})
    assert raw(sim, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", bad)[0] == 400


def test_events_create_and_namespace_mismatch(core):
    ev = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Foo", "name": "f", "namespace": "default"},
        "reason": "Synced",
        "message": "ok",
        "type": "Normal",
    }
    assert core.create_namespaced_event("default", ev).reason == "Synced"
    ev2 = dict(
        ev,
        metadata={"name": "e2"},
        involvedObject={"kind": "Foo", "name": "f", "namespace": "other"},
    )
    with pytest.raises(ApiException) as ei:
        core.create_namespaced_event("default", ev2)
    assert ei.value.status == 422 and status_of(ei.value)["details"]["kind"] == "Event"
    got = core.list_namespaced_event(
        "default", field_selector="reason=Synced,involvedObject.name=f"
    )
    assert [e.metadata.name for e in got.items] == ["e1"]


def test_namespace_delete_terminates_and_removes_contents(sim, core, apps):
    core.create_namespace({"metadata": {"name": "doomed"}})
    apps.create_namespaced_deployment("doomed", deployment("web"))
    code, _, body = raw(sim, "DELETE", "/api/v1/namespaces/doomed")
    ns = json.loads(body)  # the Namespace itself, not a Status
    assert code == 200 and ns["kind"] == "Namespace"
    assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]

    def removed() -> bool:
        try:
            core.read_namespace("doomed")
        except ApiException as e:
            assert e.status == 404
            return True
        return False

    wait_for(removed, timeout=3, message="the namespace removed")
    assert apps.list_namespaced_deployment("doomed").items == []


def test_namespace_held_by_finalizers_shows_the_deleters_conditions(sim, core):
    core.create_namespace({"metadata": {"name": "held"}})
    for name in ("a", "b"):
        cm = {"metadata": {"name": name, "finalizers": ["example.com/hold"]}}
        core.create_namespaced_config_map("held", cm)
    core.delete_namespace("held")

    def conditions() -> list[dict]:
        ns = json.loads(raw(sim, "GET", "/api/v1/namespaces/held")[2])
        return (ns.get("status") or {}).get("conditions") or []

    wait_for(conditions, timeout=3, message="the namespace's conditions")
    got = [(c["type"], c["status"], c["reason"], c["message"]) for c in conditions()]
    assert got == [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 2 resource instances",
        ),
        (
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: example.com/hold in 2 "
            "resource instances",
        ),
    ]
    assert all(c["lastTransitionTime"] for c in conditions())
    for name in ("a", "b"):
        core.patch_namespaced_config_map(name, "held", {"metadata": {"finalizers": None}})

    def removed() -> bool:
        return raw(sim, "GET", "/api/v1/namespaces/held")[0] == 404

    wait_for(removed, timeout=3, message="the namespace removed once its content is gone")


def test_delete_collection_returns_deleted_objects(sim, custom):
    for n, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, foo(n, labels={"tier": tier})
        )
    out = custom.delete_collection_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, label_selector="tier=x"
    )
    assert out["kind"] == "FooList" and [i["metadata"]["name"] for i in out["items"]] == ["a", "b"]
    left = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
    assert [i["metadata"]["name"] for i in left["items"]] == ["c"]


def test_apply_patch_creates_then_updates_what_it_applies(sim):
    # (this test once called apply a merge patch; kubesim now serves server-side apply, whose
    # own tests are in test_server_side_apply.py: here the verb's basic contract stays)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos/applied"
    body = json.dumps(foo("applied", replicas=2)).encode()  # JSON is YAML
    hdr = {"Content-Type": "application/apply-patch+yaml"}
    assert raw(sim, "PATCH", path, body, hdr)[0] == 422  # fieldManager is required
    code, _, out = raw(sim, "PATCH", path + "?fieldManager=test", body, hdr)
    assert code == 201 and json.loads(out)["spec"]["replicas"] == 2
    yaml_body = f"apiVersion: {GROUP}/{VERSION}\nkind: Foo\nmetadata:\n  name: applied\n"
    yaml_body += "spec:\n  deploymentName: applied\n  replicas: 3\n"
    code, _, out = raw(sim, "PATCH", path + "?fieldManager=test", yaml_body.encode(), hdr)
    assert code == 200 and json.loads(out)["spec"]["replicas"] == 3
    # an applied body is a whole object: without its apiVersion it is refused, as upstream's
    # structured merge manager refuses it
    code, _, out = raw(sim, "PATCH", path + "?fieldManager=test", b"spec:\n  replicas: 4\n", hdr)
    assert (
        code == 400 and "Incorrect version specified in apply patch" in json.loads(out)["message"]
    )


def test_system_namespaces_may_not_be_deleted(core):
    with pytest.raises(ApiException) as ei:
        core.delete_namespace("default")
    assert ei.value.status == 403 and status_of(ei.value)["reason"] == "Forbidden"
