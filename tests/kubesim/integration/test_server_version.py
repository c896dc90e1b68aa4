"""kubesim as kube-apiserver v1.36 (the default) and, with ``server_version="1.24"``, as v1.24.

Each test states one answer that changed between the two releases recorded in
shared/KUBE_APISERVER_FACTS.md, and checks it on both: the controller has to cope with the
older server's answers, so kubesim keeps them behind the switch.
"""

from __future__ import annotations

import json

import pytest

from kubesim import KubeSim
from kubesim.__main__ import build_parser
from tests.kubesim.integration.test_api import FOO_CRD, raw

V1_24 = pytest.mark.kubesim(crds=[FOO_CRD], server_version="1.24")


def test_an_unknown_release_is_refused():
    with pytest.raises(ValueError, match="server_version must be one of 1.24, 1.36"):
        KubeSim(server_version="1.30")


def test_the_cli_switch_names_the_release():
    assert build_parser().parse_args([]).emulate == "1.36"
    assert build_parser().parse_args(["--emulate", "1.24"]).emulate == "1.24"


def test_version_has_the_emulation_fields(sim):
    code, _, body = raw(sim, "GET", "/version")
    info = json.loads(body)
    assert code == 200
    assert (info["major"], info["minor"]) == ("1", "36")
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "36")
    assert info["gitVersion"].startswith("v1.36.")


@V1_24
def test_version_as_v1_24_has_no_emulation_fields(sim):
    info = json.loads(raw(sim, "GET", "/version")[2])
    assert (info["major"], info["minor"]) == ("1", "24")
    assert "emulationMajor" not in info and "emulationMinor" not in info
    assert info["gitVersion"].startswith("v1.24.")


# ---- error shapes ------------------------------------------------------------------------------

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"


def foo_body(name: str, **spec) -> dict:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": name, "replicas": 1, **spec},
    }


@V1_24
def test_v1_24_bad_resource_version_on_a_list_is_500(sim):
    code, _, body = raw(sim, "GET", FOOS + "?resourceVersion=abc")
    st = json.loads(body)
    assert (code, st["reason"]) == (500, "InternalError")
    assert 'strconv.ParseUint: parsing "abc": invalid syntax' in st["message"]


@V1_24
def test_v1_24_exact_list_at_a_future_resource_version_is_500_at_once(sim):
    sim.rest.list_wait_timeout = 30  # v1.24 does not wait: the test would time out if it did
    future = sim.resource_version + 1000
    code, _, body = raw(sim, "GET", FOOS + f"?resourceVersionMatch=Exact&resourceVersion={future}")
    assert code == 500
    assert json.loads(body)["message"].endswith("required revision is a future revision")


def test_exact_list_waits_for_a_resource_version_that_arrives(sim):
    """1.36 serves it once the RV is reached (the wait is the cache's, not a refusal)."""
    import threading

    target = sim.resource_version + 1
    timer = threading.Timer(0.2, lambda: raw(sim, "POST", FOOS, foo_body("late")))
    timer.start()
    try:
        code, _, body = raw(
            sim, "GET", FOOS + f"?resourceVersionMatch=Exact&resourceVersion={target}"
        )
    finally:
        timer.join()
    assert code == 200 and json.loads(body)["metadata"]["resourceVersion"] == str(target)


@V1_24
def test_v1_24_merge_patch_array_is_422_on_patch(sim):
    raw(sim, "POST", FOOS, foo_body("f"))
    mp = {"Content-Type": "application/merge-patch+json"}
    code, _, body = raw(sim, "PATCH", FOOS + "/f", b"[1]", mp)
    st = json.loads(body)
    assert (code, st["reason"]) == (422, "Invalid")
    assert [c["field"] for c in st["details"]["causes"]] == ["patch"]


@V1_24
def test_v1_24_type_error_is_field_value_invalid(sim):
    code, _, body = raw(sim, "POST", FOOS, foo_body("f", replicas="three"))
    assert code == 422
    assert json.loads(body)["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "three": spec.replicas in body must be of type integer: '
            '"string"',
            "field": "spec.replicas",
        }
    ]
