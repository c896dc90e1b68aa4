"""Bodies and CRDs kube-apiserver v1.36 refuses: a custom resource without kind (400), one of
another kind than the URL (422 on "kind"), a v1 CRD without a schema (422 FieldValueRequired);
and the CRD status a create answers with (dry-run: not established yet)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.kubesim.integration.test_api import FOO_CRD, raw

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD])

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def foo(**top) -> dict:
    body = {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "f"},
        "spec": {"deploymentName": "f", "replicas": 1},
    }
    body.update(top)
    return {k: v for k, v in body.items() if v is not None}


def test_a_custom_resource_without_kind_is_400(sim):
    code, _, body = raw(sim, "POST", FOOS, foo(kind=None))
    st = json.loads(body)
    assert (code, st["reason"]) == (400, "BadRequest")
    assert st["message"] == "Object 'Kind' is missing in 'object has no kind field '"
    assert raw(sim, "GET", FOOS + "/f")[0] == 404


def test_a_custom_resource_of_another_kind_is_422_on_kind(sim):
    code, _, body = raw(sim, "POST", FOOS, foo(kind="Bar"))
    assert code == 422
    assert json.loads(body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Bar.samplecontroller.k8s.io "f" is invalid: kind: Invalid value: "Bar": '
        "must be Foo",
        "reason": "Invalid",
        "details": {
            "name": "f",
            "group": "samplecontroller.k8s.io",
            "kind": "Bar",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": 'Invalid value: "Bar": must be Foo',
                    "field": "kind",
                }
            ],
        },
        "code": 422,
    }
    # an update too: the custom resource's ValidateUpdate checks the type meta the same way
    assert raw(sim, "POST", FOOS, foo())[0] == 201
    got = json.loads(raw(sim, "GET", FOOS + "/f")[2])
    assert raw(sim, "PUT", FOOS + "/f", dict(got, kind="Bar"))[0] == 422


def bar_crd(**version_fields) -> dict:
    crd = copy.deepcopy(FOO_CRD)
    crd["metadata"]["name"] = "bars.samplecontroller.k8s.io"
    crd["spec"]["names"] = {
        "plural": "bars",
        "singular": "bar",
        "kind": "Bar",
        "shortNames": ["br"],
    }
    crd["spec"]["versions"][0].update(version_fields)
    return crd


def test_a_v1_crd_without_a_schema_is_422_field_value_required(sim):
    crd = bar_crd()
    del crd["spec"]["versions"][0]["schema"]
    code, _, body = raw(sim, "POST", CRDS, crd)
    assert code == 422
    assert json.loads(body)["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: schemas are required",
            "field": "spec.versions[0].schema.openAPIV3Schema",
        }
    ]


def test_a_crd_accepts_its_short_names(sim):
    code, _, body = raw(sim, "POST", CRDS, bar_crd())
    assert code == 201
    accepted = json.loads(body)["status"]["acceptedNames"]
    assert accepted["shortNames"] == ["br"] and accepted["kind"] == "Bar"
    discovery = json.loads(raw(sim, "GET", "/apis/samplecontroller.k8s.io/v1alpha1")[2])
    bars = next(r for r in discovery["resources"] if r["name"] == "bars")
    assert bars["shortNames"] == ["br"]


def test_a_dry_run_crd_create_is_not_established(sim):
    code, _, body = raw(sim, "POST", CRDS + "?dryRun=All", bar_crd())
    assert code == 201
    assert json.loads(body)["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1alpha1"],
    }
    assert raw(sim, "GET", CRDS + "/bars.samplecontroller.k8s.io")[0] == 404
