"""What a /status write keeps of the request's metadata, kind by kind.

Namespaces and Services have status strategies that reset spec alone
(``newNamespace.Spec = oldNamespace.Spec``): a merge patch to their /status that carries
annotations or labels stores them. A Deployment's keeps its labels, a custom resource's all
of its metadata.
"""

from __future__ import annotations

import json

from tests.kubesim.integration.test_api import deployment, raw

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_a_namespace_status_patch_keeps_its_metadata_changes(sim):
    patch = {
        "metadata": {"annotations": {"note": "kept"}, "labels": {"team": "a"}},
        "spec": {"finalizers": []},  # reset: only /finalize changes them
        "status": {"phase": "Active"},
    }
    code, _, body = raw(sim, "PATCH", "/api/v1/namespaces/default/status", patch, MERGE)
    ns = json.loads(body)
    assert code == 200
    assert ns["metadata"]["annotations"] == {"note": "kept"}
    assert ns["metadata"]["labels"]["team"] == "a"
    assert ns["spec"] == {"finalizers": ["kubernetes"]}


def test_a_service_status_patch_keeps_metadata_and_drops_spec(sim):
    svc = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    created = json.loads(raw(sim, "POST", "/api/v1/namespaces/default/services", svc)[2])
    patch = {
        "metadata": {"annotations": {"note": "kept"}, "uid": "not-its-uid"},
        "spec": {"ports": [{"port": 81}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}},
    }
    path = "/api/v1/namespaces/default/services/web/status"
    code, _, body = raw(sim, "PATCH", path, patch, MERGE)
    # (a uid in the body is a precondition: another one is a conflict)
    assert code == 409
    del patch["metadata"]["uid"]
    code, _, body = raw(sim, "PATCH", path, patch, MERGE)
    got = json.loads(body)
    assert code == 200
    assert got["metadata"]["annotations"] == {"note": "kept"}
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert got["spec"]["ports"][0]["port"] == 80
    assert got["status"]["loadBalancer"]["ingress"] == [{"ip": "192.0.2.1"}]


def test_a_deployment_status_patch_keeps_its_labels(sim):
    # deploymentStatusStrategy resets spec and labels (annotations go through: the deployment
    # controller writes its revision annotation with the status)
    raw(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment("web"))
    patch = {"metadata": {"labels": {"added": "no"}}, "status": {"replicas": 1}}
    path = "/apis/apps/v1/namespaces/default/deployments/web/status"
    code, _, body = raw(sim, "PATCH", path, patch, MERGE)
    got = json.loads(body)
    assert code == 200 and got["status"]["replicas"] == 1
    assert "added" not in (got["metadata"].get("labels") or {})
