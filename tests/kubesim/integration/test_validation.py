"""kubesim CRD schema validation, pruning and defaulting, as kube-apiserver answers."""

from __future__ import annotations

import copy
import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, foo

CRD = copy.deepcopy(FOO_CRD)
_spec = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
_spec["required"] = ["deploymentName"]
_spec["properties"].update(
    {
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "tag": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
        "size": {"type": "integer", "default": 3},
        "note": {"type": "string", "nullable": True},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    }
)


pytestmark = pytest.mark.kubesim(crds=[CRD])


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


def create(custom, body):
    return custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)


def invalid(custom, body) -> dict:
    with pytest.raises(ApiException) as ei:
        create(custom, body)
    assert ei.value.status == 422
    st = json.loads(ei.value.body)
    assert st["reason"] == "Invalid" and st["details"]["kind"] == "Foo"
    return st


def test_maximum_violation_has_one_cause_with_real_message(custom):
    st = invalid(custom, foo("f", replicas=20))
    assert st["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": (
                "Invalid value: 20: spec.replicas in body should be less than or equal to 10"
            ),
            "field": "spec.replicas",
        }
    ]
    assert st["message"] == (
        'Foo.samplecontroller.k8s.io "f" is invalid: spec.replicas: Invalid value: 20: '
        "spec.replicas in body should be less than or equal to 10"
    )


def test_one_cause_per_bad_field(custom):
    body = foo("f", replicas=0)
    body["spec"].update(mode="medium", tag="TOOLONGTAG")
    del body["spec"]["deploymentName"]
    causes = {c["field"]: c for c in invalid(custom, body)["details"]["causes"]}
    assert set(causes) == {"spec.replicas", "spec.mode", "spec.tag", "spec.deploymentName"}
    assert causes["spec.deploymentName"]["reason"] == "FieldValueRequired"
    assert causes["spec.mode"]["reason"] == "FieldValueNotSupported"
    assert causes["spec.replicas"]["message"].endswith("should be greater than or equal to 1")


def test_type_error_is_field_value_type_invalid(custom):
    # 1.36's reason; v1.24 said FieldValueInvalid (test_server_version.py)
    st = invalid(custom, foo("f", replicas="three"))
    c = st["details"]["causes"][0]
    assert (c["reason"], c["field"]) == ("FieldValueTypeInvalid", "spec.replicas")
    assert c["message"] == (
        'Invalid value: "three": spec.replicas in body must be of type integer: "string"'
    )


def test_a_fractional_integer_gets_the_type_error_and_the_range_check(custom):
    # kube-openapi's type and number validators both run: the type error on the field, and
    # the number validator's lossless-conversion check, a plain error reported at the root
    st = invalid(custom, foo("f", replicas=1.5))
    assert st["details"]["causes"] == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": "Invalid value: 1.5: spec.replicas in body must be of type integer: "
            '"number"',
            "field": "spec.replicas",
        },
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": Checked value must be of type integer (default format) '
            "in spec.replicas",
            "field": "<nil>",
        },
    ]
    assert st["message"].endswith(
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) '
        "in spec.replicas]"
    )


def test_pattern(custom):
    body = foo("f")
    body["spec"]["tag"] = "ab1"
    assert "should match" in invalid(custom, body)["details"]["causes"][0]["message"]


def test_pruning_defaults_nulls_and_integral_floats(custom):
    body = foo("f")
    body["spec"].update(unknown=1, replicas=2.0, note=None, extra={"any": {"thing": 1}})
    body["spec"]["mode"] = None
    body["topLevelJunk"] = True
    out = create(custom, body)
    assert "topLevelJunk" not in out and "unknown" not in out["spec"]
    assert out["spec"]["replicas"] == 2 and isinstance(out["spec"]["replicas"], int)
    assert "mode" not in out["spec"]  # explicit null on a non-nullable field is dropped
    assert out["spec"]["note"] is None  # nullable keeps it
    assert out["spec"]["extra"] == {"any": {"thing": 1}}
    assert out["spec"]["size"] == 3  # default


def test_updates_and_status_are_validated_too(custom):
    create(custom, foo("f"))
    with pytest.raises(ApiException) as ei:
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "f", {"spec": {"replicas": 11}}
        )
    assert ei.value.status == 422
    with pytest.raises(ApiException) as ei:
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, "default", PLURAL, "f", {"status": {"availableReplicas": "x"}}
        )
    assert ei.value.status == 422
