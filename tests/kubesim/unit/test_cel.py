"""kubesim.validation.cel: x-kubernetes-validations compiled on the CRD, evaluated on the CR."""

from __future__ import annotations

import pytest

from kubesim.api.resources import ResourceInfo
from kubesim.validation import cel
from kubesim.validation.schema import SchemaValidator

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {
                    "rule": "self.replicas <= 5",
                    "messageExpression": "'replicas ' + string(self.replicas) + ' is over 5'",
                },
                {"rule": "self.replicas >= 0"},
            ],
            "properties": {
                "deploymentName": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "deploymentName is immutable"}
                    ],
                },
                "replicas": {"type": "integer"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "x-kubernetes-validations": [
                            {
                                "rule": "self.number == oldSelf.number",
                                "message": "a port keeps its number",
                                "reason": "FieldValueForbidden",
                            }
                        ],
                        "properties": {
                            "name": {"type": "string"},
                            "number": {"type": "integer"},
                        },
                    },
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "self.size() < 4", "fieldPath": ".x"}
                        ],
                    },
                },
            },
        }
    },
}


def spec(**fields):
    return {"spec": {"deploymentName": "d", "replicas": 1, **fields}}


def test_a_valid_object_has_no_causes():
    assert cel.validate(SCHEMA, spec(), None) == []


def test_message_expression_words_the_failure_and_objects_are_not_shown():
    causes = cel.validate(SCHEMA, spec(replicas=9), None)
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: replicas 9 is over 5",
            "field": "spec",
        }
    ]


def test_without_a_message_the_rule_itself_is_quoted():
    causes = cel.validate(SCHEMA, spec(replicas=-1), None)
    assert causes[0]["message"] == "Invalid value: failed rule: self.replicas >= 0"


def test_a_transition_rule_needs_an_old_value():
    # on create (no old object) the immutability rule is not evaluated at all
    assert cel.validate(SCHEMA, spec(deploymentName="new"), None) == []
    causes = cel.validate(SCHEMA, spec(deploymentName="new"), spec())
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "new": deploymentName is immutable',
            "field": "spec.deploymentName",
        }
    ]
    assert cel.validate(SCHEMA, spec(), spec()) == []


def test_list_map_items_correlate_by_key_and_reason_chooses_the_error():
    old = spec(ports=[{"name": "http", "number": 80}])
    new = spec(ports=[{"name": "web", "number": 81}, {"name": "http", "number": 8080}])
    causes = cel.validate(SCHEMA, new, old)
    # "web" is new (no old value); "http" is the old one renumbered
    assert causes == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: a port keeps its number",
            "field": "spec.ports[1]",
        }
    ]


def test_map_values_and_field_path():
    causes = cel.validate(SCHEMA, spec(labels={"a": "long-value"}), None)
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "long-value": failed rule: self.size() < 4',
            "field": "spec.labels[a].x",
        }
    ]


def test_an_evaluation_error_is_reported_with_the_rule():
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.missing == 1"}]}
    causes = cel.validate(schema, {"present": 1}, None)
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: no such key: missing evaluating rule: self.missing == 1",
            "field": "<nil>",
        }
    ]


def test_a_rule_that_does_not_compile_is_refused_on_the_crd():
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.replicas <= "}]}
    causes = cel.check_schema(schema, "spec.versions[0].schema.openAPIV3Schema")
    assert len(causes) == 1
    cause = causes[0]
    assert cause["field"] == (
        "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule"
    )
    assert cause["message"].startswith(
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas <= ", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:18: '
        "Syntax error: mismatched input '<EOF>' expecting"
    )
    assert cause["message"].endswith("\n | self.replicas <= \n | .................^")


@pytest.mark.parametrize(
    ("rule", "detail"),
    [
        ("'a string'", "cel expression must evaluate to a bool"),
        ("undeclared == 1", "undeclared reference to 'undeclared'"),
    ],
)
def test_rules_of_the_wrong_type_or_names_are_refused(rule, detail):
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}
    causes = cel.check_schema(schema, "s")
    assert len(causes) == 1 and detail in causes[0]["message"]


def test_a_message_expression_must_compile_to_a_string():
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "true", "messageExpression": "1 + 1"}],
    }
    causes = cel.check_schema(schema, "s")
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "1 + 1": messageExpression must evaluate to a string',
            "field": "s.x-kubernetes-validations[0].messageExpression",
        }
    ]


def test_rules_are_not_run_on_an_object_the_schema_already_refused():
    info = ResourceInfo("g", "v1", "foos", "Foo", True, custom=True, schema=SCHEMA)
    causes = SchemaValidator()(info, {"spec": {"replicas": "many"}})
    assert [c["reason"] for c in causes] == ["FieldValueTypeInvalid", "FieldValueInvalid"]
    assert causes[1]["field"] == "<nil>"
    assert "some validation rules were not checked" in causes[1]["message"]
