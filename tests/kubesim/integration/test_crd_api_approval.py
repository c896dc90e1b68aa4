"""CRDs in the community's protected groups (``*.k8s.io``, ``*.kubernetes.io``, KEP-1111).

apiextensions-apiserver refuses a v1 CRD there without the ``api-approved.kubernetes.io``
annotation, and its apiapproval controller reports the annotation in the
``KubernetesAPIApprovalPolicyConformant`` condition: the project's own Foo CRD is an
"unapproved" example API, so a real v1.36 shows it False, UnapprovedAnnotation.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from tests.kubesim.integration.test_api import raw

pytestmark = pytest.mark.kubesim(crds=[])

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FOO_CRD = yaml.safe_load(Path("crds/foo-crd.yaml").read_text())
ANNOTATION = "api-approved.kubernetes.io"


def _crd(group: str, annotations: dict | None = None) -> dict:
    crd = copy.deepcopy(FOO_CRD)
    crd["metadata"] = {"name": f"foos.{group}", "annotations": annotations or {}}
    crd["spec"]["group"] = group
    return crd


def _condition(crd: dict) -> dict | None:
    conds = crd["status"]["conditions"]
    return next((c for c in conds if c["type"] == "KubernetesAPIApprovalPolicyConformant"), None)


def test_the_projects_foo_crd_is_unapproved(sim):
    code, _, body = raw(sim, "POST", CRDS, FOO_CRD)
    assert code == 201
    crd = json.loads(body)
    cond = _condition(crd)
    assert (cond["status"], cond["reason"]) == ("False", "UnapprovedAnnotation")
    assert cond["message"] == "not approved: " + json.dumps(
        FOO_CRD["metadata"]["annotations"][ANNOTATION]
    )
    assert cond["lastTransitionTime"]
    # the controller's condition is there beside the naming controller's
    types = [c["type"] for c in crd["status"]["conditions"]]
    assert types == ["KubernetesAPIApprovalPolicyConformant", "NamesAccepted", "Established"]


def test_an_approved_crd_is_conformant_and_an_update_moves_the_condition(sim):
    url = "https://github.com/kubernetes/enhancements/pull/1111"
    code, _, body = raw(sim, "POST", CRDS, _crd("x.k8s.io", {ANNOTATION: "unapproved"}))
    assert code == 201 and _condition(json.loads(body))["reason"] == "UnapprovedAnnotation"
    patch = {"metadata": {"annotations": {ANNOTATION: url}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    code, _, body = raw(sim, "PATCH", f"{CRDS}/foos.x.k8s.io", patch, headers)
    cond = _condition(json.loads(body))
    assert code == 200
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "ApprovedAnnotation",
        f"approved in {url}",
    )


@pytest.mark.parametrize("group", ["k8s.io", "apps.k8s.io", "x.kubernetes.io"])
def test_a_protected_group_without_the_annotation_is_refused(sim, group):
    code, _, body = raw(sim, "POST", CRDS, _crd(group))
    status = json.loads(body)
    assert code == 422
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": 'Required value: protected groups must have approval annotation "'
            + ANNOTATION
            + '", see https://github.com/kubernetes/enhancements/pull/1111',
            "field": f"metadata.annotations[{ANNOTATION}]",
        }
    ]
    assert raw(sim, "GET", f"{CRDS}/foos.{group}")[0] == 404


def test_an_annotation_neither_url_nor_unapproved_is_invalid(sim):
    code, _, body = raw(sim, "POST", CRDS, _crd("y.k8s.io", {ANNOTATION: "yes please"}))
    cause = json.loads(body)["details"]["causes"][0]
    assert code == 422 and cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith('Invalid value: "yes please": protected groups must')


def test_removing_the_annotation_later_is_refused(sim):
    assert raw(sim, "POST", CRDS, _crd("z.k8s.io", {ANNOTATION: "unapproved"}))[0] == 201
    patch = {"metadata": {"annotations": {ANNOTATION: None}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    code, _, body = raw(sim, "PATCH", f"{CRDS}/foos.z.k8s.io", patch, headers)
    assert code == 422 and "FieldValueRequired" in body.decode()


def test_other_groups_need_nothing_and_get_no_condition(sim):
    code, _, body = raw(sim, "POST", CRDS, _crd("example.com"))
    assert code == 201 and _condition(json.loads(body)) is None
