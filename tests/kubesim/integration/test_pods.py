"""Pods and ReplicaSets as kube-apiserver v1.36 stores them, through the official client.

A Pod created on a control plane without nodes is answered 201 and stays Pending, with the pod
spec's defaults (the same as a pod template's), the admission plugins' changes (ServiceAccount,
tolerations, priority) and its QoS class; what v1.36 refuses is refused with its status code
and message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from kubernetes import client

from kubesim import KubeSim

pytestmark = pytest.mark.kubesim(crds=[])


def pod(name: str, **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}], **spec},
    }


def replica_set(name: str, replicas: int = 2) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
            },
        },
    }


def plain(sim: KubeSim, obj) -> dict:
    return sim.api_client.sanitize_for_serialization(obj)


def status_of(err: client.ApiException) -> dict:
    return json.loads(err.body)


@pytest.fixture
def core(sim: KubeSim) -> client.CoreV1Api:
    api = client.CoreV1Api(sim.api_client)
    # kube-controller-manager's serviceaccounts controller made default's ServiceAccount
    assert api.read_namespaced_service_account("default", "default").metadata.name == "default"
    return api


def test_a_pod_without_a_node_is_created_pending_with_the_v1_36_defaults(sim, core):
    created = plain(sim, core.create_namespaced_pod("default", pod("web")))
    spec, status = created["spec"], created["status"]
    assert status == {"phase": "Pending", "qosClass": "BestEffort"}
    assert created["metadata"]["generation"] == 1
    assert "nodeName" not in spec
    # SetDefaults_PodSpec and SetDefaults_Pod
    assert spec["restartPolicy"] == "Always" and spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["terminationGracePeriodSeconds"] == 30 and spec["securityContext"] == {}
    assert spec["enableServiceLinks"] is True
    [container] = spec["containers"]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePolicy"] == "File"
    # admission: the default ServiceAccount and its token, the tolerations, the priority
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-")
    assert volume["projected"]["defaultMode"] == 420
    assert container["volumeMounts"] == [
        {
            "name": volume["name"],
            "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        }
    ]
    assert [(t["key"], t["tolerationSeconds"]) for t in spec["tolerations"]] == [
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 300),
    ]
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    # the Pod is listed and found by the field selectors a scheduler and a kubelet use
    listed = core.list_namespaced_pod("default", field_selector="status.phase=Pending")
    assert [p.metadata.name for p in listed.items] == ["web"]
    assert core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-1").items == []


def test_requests_default_to_limits_and_make_the_qos_class(sim, core):
    limits = {"cpu": "500m", "memory": "128Mi"}
    guaranteed = pod("g")
    guaranteed["spec"]["containers"][0]["resources"] = {"limits": limits}
    created = plain(sim, core.create_namespaced_pod("default", guaranteed))
    assert created["spec"]["containers"][0]["resources"] == {"limits": limits, "requests": limits}
    assert created["status"]["qosClass"] == "Guaranteed"
    burstable = pod("b")
    burstable["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "0.1"}}
    created = plain(sim, core.create_namespaced_pod("default", burstable))
    assert created["status"]["qosClass"] == "Burstable"


@pytest.mark.kubesim(crds=[], namespace_defaults=False)  # no serviceaccounts controller
def test_a_pod_whose_service_account_is_missing_is_forbidden(sim):
    core = client.CoreV1Api(sim.api_client)
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod("default", pod("web"))
    assert err.value.status == 403
    assert status_of(err.value)["message"] == (
        'pods "web" is forbidden: error looking up service account default/default: '
        'serviceaccount "default" not found'
    )
    assert core.list_namespaced_pod("default").items == []


def test_an_invalid_pod_is_refused_with_the_real_causes(sim, core):
    bad = pod("web", restartPolicy="Sometimes")
    bad["spec"]["containers"][0]["image"] = ""
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod("default", bad)
    assert err.value.status == 422
    causes = {(c["field"], c["reason"]) for c in status_of(err.value)["details"]["causes"]}
    assert causes == {
        ("spec.containers[0].image", "FieldValueRequired"),
        ("spec.restartPolicy", "FieldValueNotSupported"),
    }
    assert core.list_namespaced_pod("default").items == []


def test_a_pod_update_may_change_only_the_images_and_a_few_fields(sim, core):
    core.create_namespaced_pod("default", pod("web"))
    core.patch_namespaced_pod(
        "web", "default", {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}
    )
    assert core.read_namespaced_pod("web", "default").spec.containers[0].image == "nginx:1.26"
    with pytest.raises(client.ApiException) as err:
        core.patch_namespaced_pod("web", "default", {"spec": {"nodeName": "elsewhere"}})
    assert err.value.status == 422
    [cause] = status_of(err.value)["details"]["causes"]
    assert cause["field"] == "spec" and cause["reason"] == "FieldValueForbidden"
    assert (
        "pod updates may not change fields other than `spec.containers[*].image`"
        in (cause["message"])
    )


def test_a_pod_status_write_keeps_the_spec_and_the_qos_class(sim, core):
    core.create_namespaced_pod("default", pod("web"))
    body = plain(sim, core.read_namespaced_pod("web", "default"))
    body["spec"]["containers"][0]["image"] = "ignored:1"
    body["status"] = {"phase": "Running", "qosClass": "Guaranteed"}
    written = plain(sim, core.replace_namespaced_pod_status("web", "default", body))
    assert written["status"] == {"phase": "Running", "qosClass": "BestEffort"}
    assert written["spec"]["containers"][0]["image"] == "nginx:1.25"


def test_deleting_a_pod_answers_the_deleted_pod(sim, core):
    core.create_namespaced_pod("default", pod("web"))
    gone = core.delete_namespaced_pod("web", "default")
    assert gone.kind == "Pod" and gone.metadata.name == "web"
    assert core.list_namespaced_pod("default").items == []


def test_a_replica_set_is_defaulted_scaled_and_validated(sim):
    apps = client.AppsV1Api(sim.api_client)
    created = plain(sim, apps.create_namespaced_replica_set("default", replica_set("web")))
    assert created["status"] == {"replicas": 0}
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    scale = apps.patch_namespaced_replica_set_scale("web", "default", {"spec": {"replicas": 5}})
    assert (scale.spec.replicas, scale.status.selector) == (5, "app=web")
    assert apps.read_namespaced_replica_set("web", "default").metadata.generation == 2
    changed = replica_set("web")
    changed["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    changed["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(client.ApiException) as err:
        apps.patch_namespaced_replica_set("web", "default", changed)
    assert err.value.status == 422
    # the selector as Go prints a *LabelSelector, as the Deployment's message does
    assert [c["message"] for c in status_of(err.value)["details"]["causes"]] == [
        "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: other,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable"
    ]
    mismatched = replica_set("other")
    mismatched["spec"]["template"]["metadata"]["labels"] = {"app": "else"}
    with pytest.raises(client.ApiException) as err:
        apps.create_namespaced_replica_set("default", mismatched)
    assert err.value.status == 422
    assert [c["field"] for c in status_of(err.value)["details"]["causes"]] == [
        "spec.template.metadata.labels"
    ]


def test_a_pods_unknown_fields_are_found_by_its_schema(sim, core):
    body = pod("web")
    body["spec"]["bogus"] = 1
    body["spec"]["containers"][0]["imagePolicy"] = "x"
    # (the official client refuses unknown fields itself: the body goes over plain HTTP)
    request = urllib.request.Request(
        f"{sim.url}/api/v1/namespaces/default/pods?fieldValidation=Strict",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 400
    assert json.loads(err.value.read())["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        # in the body's order: the containers come before the bogus field
        'unknown field "spec.containers[0].imagePolicy", unknown field "spec.bogus"'
    )
    assert core.list_namespaced_pod("default").items == []


def test_the_deprecated_service_account_field_names_the_account(sim, core):
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    created = plain(sim, core.create_namespaced_pod("default", pod("web", serviceAccount="robot")))
    assert created["spec"]["serviceAccountName"] == created["spec"]["serviceAccount"] == "robot"


def test_a_token_bound_to_a_pod_needs_the_pod_and_its_service_account(sim, core):
    created = core.create_namespaced_pod("default", pod("web"))

    def token_for(ref: dict, account: str = "default"):
        body = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], bound_object_ref=ref)
        )
        return core.create_namespaced_service_account_token(account, "default", body)

    ref = {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": created.metadata.uid}
    assert token_for(ref).status.token
    with pytest.raises(client.ApiException) as err:
        token_for(dict(ref, name="missing"))
    assert err.value.status == 404
    with pytest.raises(client.ApiException) as err:
        token_for(dict(ref, uid="0000"))
    assert err.value.status == 409
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    with pytest.raises(client.ApiException) as err:
        token_for(ref, "robot")
    assert (err.value.status, status_of(err.value)["message"]) == (
        400,
        'cannot bind token for serviceaccount "robot" to pod running with different '
        "serviceaccount name.",
    )
