"""kubesim.validation.schema: OpenAPI v3 -> JSON Schema translation and pruning rules."""

from __future__ import annotations

from kubesim.api.resources import ResourceInfo
from kubesim.validation.schema import SchemaValidator, prune_and_default, to_json_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "port": {"x-kubernetes-int-or-string": True},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"n": {"type": "integer"}}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "opt": {"type": "string", "nullable": True},
            },
        },
    },
}


def test_translation_handles_int_or_string_and_nullable():
    js = to_json_schema(SCHEMA, root=True)
    assert "metadata" not in js["properties"]
    spec = js["properties"]["spec"]["properties"]
    assert spec["port"]["type"] == ["integer", "string"]
    assert spec["opt"]["type"] == ["string", "null"]


def test_pruning_walks_arrays_and_additional_properties():
    obj = {
        "apiVersion": "g/v1",
        "kind": "X",
        "metadata": {"name": "x", "anything": 1},
        "spec": {"items": [{"n": 1.0, "junk": 1}], "labels": {"a": "b"}, "gone": 1},
    }
    prune_and_default(obj, SCHEMA, root=True)
    assert obj["spec"] == {"items": [{"n": 1}], "labels": {"a": "b"}}
    assert obj["metadata"] == {"name": "x", "anything": 1}  # metadata is never pruned here


def test_validator_reports_array_paths_like_the_apiserver():
    info = ResourceInfo("g", "v1", "xs", "X", True, custom=True, schema=SCHEMA)
    obj = {
        "apiVersion": "g/v1",
        "kind": "X",
        "metadata": {"name": "x"},
        "spec": {"items": [{"n": 1}, {"n": "two"}], "port": True},
    }
    causes = SchemaValidator()(info, obj)
    assert sorted(c["field"] for c in causes) == ["spec.items[1].n", "spec.port"]
