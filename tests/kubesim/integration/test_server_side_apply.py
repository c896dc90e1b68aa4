"""Server-side apply and managedFields over HTTP, as kube-apiserver v1.36 answers them.

The facts are a real kube-apiserver's, as recorded against v1.36 (a create records one
Update entry for its field manager; a conflicting apply is 409 FieldManagerConflict on
".spec.replicas"; force takes it over; a body naming another object is 400) and the
apiserver's fieldmanager tests.
"""

from __future__ import annotations

import json
import re

import pytest

from kubesim import KubeSim
from tests.helpers import wait_for
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, VERSION, deployment, raw

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
FOOS = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
RFC3339_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture
def sim():
    with KubeSim(crds=[FOO_CRD], deployment_status_delay=0.05) as s:
        yield s


def call(sim, method: str, path: str, body=None, headers=None) -> tuple[int, dict]:
    code, _, out = raw(sim, method, path, body, headers)
    return code, json.loads(out)


def apply(sim, path: str, body: dict, manager: str, force: bool = False) -> tuple[int, dict]:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return call(sim, "PATCH", path + query, json.dumps(body).encode(), APPLY)


def managers(obj: dict) -> list[tuple[str, str, str]]:
    return [
        (e.get("manager", ""), e["operation"], e.get("subresource", ""))
        for e in obj["metadata"].get("managedFields") or []
    ]


def applied_deployment(replicas: int | None = None, image: str = "nginx:latest", **extra) -> dict:
    spec: dict = {"selector": {"matchLabels": {"app": "web"}}}
    spec["template"] = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "nginx", "image": image}]},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    spec.update(extra)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": spec,
    }


def test_a_create_records_one_update_entry_for_its_field_manager(sim):
    code, obj = call(sim, "POST", DEPLOYMENTS + "?fieldManager=creator", deployment("web"))
    assert code == 201
    (entry,) = obj["metadata"]["managedFields"]
    assert list(entry) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == (
        "creator",
        "Update",
        "apps/v1",
    )
    assert RFC3339_SECONDS.match(entry["time"]) and entry["fieldsType"] == "FieldsV1"
    fields = entry["fieldsV1"]
    assert fields["f:spec"]["f:replicas"] == {}
    # defaults are the creator's too (decoding defaults them upstream), keyed list items too
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["."] == {} and "f:imagePullPolicy" in container
    # without fieldManager: the User-Agent up to its first "/"
    body = deployment("db")
    code, obj = call(sim, "POST", DEPLOYMENTS, body, {"User-Agent": "my-tool/1.2 (linux)"})
    assert managers(obj) == [("my-tool", "Update", "")]
    # a GET shows them; a list item too
    code, got = call(sim, "GET", f"{DEPLOYMENTS}/db")
    assert got["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


def test_updates_take_ownership_and_the_status_loop_owns_status(sim):
    call(sim, "POST", DEPLOYMENTS + "?fieldManager=creator", deployment("web"))
    patch = json.dumps({"spec": {"replicas": 4}}).encode()
    merge = {"Content-Type": "application/merge-patch+json"}
    code, obj = call(sim, "PATCH", f"{DEPLOYMENTS}/web?fieldManager=scaler", patch, merge)
    assert code == 200
    by_manager = {e["manager"]: e for e in obj["metadata"]["managedFields"]}
    assert by_manager["scaler"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in by_manager["creator"]["fieldsV1"]["f:spec"]
    # the same change again is no write: same resourceVersion, same entries
    code, again = call(sim, "PATCH", f"{DEPLOYMENTS}/web?fieldManager=scaler", patch, merge)
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]

    def status_owned() -> bool:
        got = call(sim, "GET", f"{DEPLOYMENTS}/web")[1]
        return ("kube-controller-manager", "Update", "status") in managers(got)

    wait_for(status_owned, timeout=10)


def test_apply_creates_then_conflicts_then_forces(sim):
    code, obj = call(
        sim, "POST", DEPLOYMENTS + "?fieldManager=kubectl-client-side-apply", deployment("web")
    )
    assert code == 201
    code, status = apply(sim, f"{DEPLOYMENTS}/web", applied_deployment(replicas=3), "kubectl")
    assert code == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    assert status["details"]["causes"][0] == {
        "reason": "FieldManagerConflict",
        "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
        "field": ".spec.replicas",
    }
    # the conflict wrote nothing
    assert call(sim, "GET", f"{DEPLOYMENTS}/web")[1]["spec"]["replicas"] == 1
    code, obj = apply(sim, f"{DEPLOYMENTS}/web", applied_deployment(replicas=3), "kubectl", True)
    assert code == 200 and obj["spec"]["replicas"] == 3
    entries = {e["manager"]: e for e in obj["metadata"]["managedFields"]}
    assert entries["kubectl"]["operation"] == "Apply"
    assert entries["kubectl"]["fieldsV1"]["f:spec"]["f:replicas"] == {}
    assert "f:replicas" not in entries["kubectl-client-side-apply"]["fieldsV1"]["f:spec"]


def test_apply_of_a_missing_object_creates_it_owned_by_the_applier(sim):
    code, obj = apply(sim, f"{DEPLOYMENTS}/web", applied_deployment(replicas=2), "kubectl")
    assert code == 201
    assert managers(obj) == [("kubectl", "Apply", "")]
    assert obj["spec"]["replicas"] == 2 and obj["spec"]["strategy"]["type"] == "RollingUpdate"
    # kubesim's deployment status loop writes the status 50 ms after the create: once it has,
    # nothing else writes the object
    settled = wait_for(
        lambda: (
            (d := call(sim, "GET", f"{DEPLOYMENTS}/web")[1]).get("status", {}).get("readyReplicas")
            == 2
            and d
        ),
        message="the Deployment's status",
    )
    # the same apply again changes nothing: no write
    code, again = apply(sim, f"{DEPLOYMENTS}/web", applied_deployment(replicas=2), "kubectl")
    assert code == 200
    assert again["metadata"]["resourceVersion"] == settled["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == settled["metadata"]["managedFields"]


def test_apply_merges_by_list_map_keys_and_removes_what_is_no_longer_applied(sim):
    first = applied_deployment(replicas=1)
    first["metadata"]["labels"] = {"team": "a", "tier": "web"}
    apply(sim, f"{DEPLOYMENTS}/web", first, "kubectl")
    sidecar = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "sidecar", "image": "envoy", "ports": [{"containerPort": 9901}]}
                    ]
                }
            }
        },
    }
    code, obj = apply(sim, f"{DEPLOYMENTS}/web", sidecar, "mesh")
    assert code == 200
    containers = obj["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["nginx", "sidecar"]
    mesh = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "mesh")
    item = mesh["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"][
        'k:{"name":"sidecar"}'
    ]
    assert 'k:{"containerPort":9901,"protocol":"TCP"}' in item["f:ports"]
    # kubectl stops applying a label: it goes; the sidecar, which mesh owns, stays
    second = applied_deployment(replicas=1)
    second["metadata"]["labels"] = {"team": "a"}
    code, obj = apply(sim, f"{DEPLOYMENTS}/web", second, "kubectl")
    assert obj["metadata"]["labels"] == {"team": "a"}
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == [
        "nginx",
        "sidecar",
    ]


def test_apply_refusals(sim):
    body = json.dumps(applied_deployment()).encode()
    # no fieldManager: 422 on PatchOptions
    code, status = call(sim, "PATCH", f"{DEPLOYMENTS}/web", body, APPLY)
    assert code == 422 and status["details"]["causes"][0]["field"] == "fieldManager"
    # force is for apply only
    merge = {"Content-Type": "application/merge-patch+json"}
    code, status = call(sim, "PATCH", f"{DEPLOYMENTS}/web?force=true", b"{}", merge)
    assert code == 422 and status["details"]["causes"][0] == {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: may not be specified for non-apply patch",
        "field": "force",
    }
    # a body naming another object: 400, whether the URL's object exists or not
    call(sim, "POST", DEPLOYMENTS, deployment("other"))
    other = applied_deployment()
    other["metadata"]["name"] = "other"
    for target in ("web", "other-missing"):
        code, status = apply(sim, f"{DEPLOYMENTS}/{target}", other, "kubectl")
        assert code == 400 and status["reason"] == "BadRequest"
        assert status["message"] == (
            f"the name of the object (other) does not match the name on the URL ({target})"
        )
    # managedFields may not be applied
    with_fields = applied_deployment()
    with_fields["metadata"]["managedFields"] = [{"manager": "x", "operation": "Apply"}]
    code, status = apply(sim, f"{DEPLOYMENTS}/web", with_fields, "kubectl")
    assert code == 400 and status["message"] == "metadata.managedFields must be nil"


def test_apply_to_status_owns_the_status_fields(sim):
    foo = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": "f"},
        "spec": {"deploymentName": "f", "replicas": 1},
    }
    code, obj = apply(sim, f"{FOOS}/f", foo, "owner")
    assert code == 201
    # an applier owns the fields of its configuration: a granular map is no member
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields == {"f:spec": {"f:deploymentName": {}, "f:replicas": {}}}
    # while a create is compared with an empty custom resource: spec appears as a member
    code, created = call(sim, "POST", FOOS + "?fieldManager=c", dict(foo, metadata={"name": "g"}))
    created_fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert created_fields == {"f:spec": {".": {}, "f:deploymentName": {}, "f:replicas": {}}}
    status = dict(foo, status={"availableReplicas": 1})
    code, obj = apply(sim, f"{FOOS}/f/status", status, "ctrl")
    assert code == 200 and obj["status"] == {"availableReplicas": 1}
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")
    assert entry["fieldsV1"] == {"f:status": {"f:availableReplicas": {}}}
    # a main-resource apply of status owns nothing there (status is its subresource's)
    code, obj = apply(sim, f"{FOOS}/f", status, "owner")
    owner = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "owner")
    assert "f:status" not in owner["fieldsV1"]


def test_a_request_can_reset_managed_fields(sim):
    call(sim, "POST", DEPLOYMENTS + "?fieldManager=creator", deployment("web"))
    patch = json.dumps({"metadata": {"managedFields": [{}]}}).encode()
    merge = {"Content-Type": "application/merge-patch+json"}
    code, obj = call(sim, "PATCH", f"{DEPLOYMENTS}/web", patch, merge)
    assert code == 200 and "managedFields" not in obj["metadata"]
