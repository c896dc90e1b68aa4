"""Custom resource schema handling: pruning, defaulting and validation against openAPIV3Schema.

Twin of apiextensions-apiserver's structural-schema pruning (pkg/apiserver/schema/pruning),
defaulting (schema/defaulting) and ValidateCustomResource (pkg/apiserver/validation). The
checking itself is done by ``jsonschema`` (a well-kept validator; OpenAPI v3.0 schemas are
draft-4 JSON Schema plus a few extensions we translate). What kube-apiserver does on top, and so
do we:

- unknown fields are pruned silently (unless x-kubernetes-preserve-unknown-fields);
- an explicit null for a non-nullable field is dropped, not rejected;
- 2.0 is accepted for an integer field (and stored as 2);
- ``default`` values are filled in for missing properties;
- errors become 422 causes, one per field, shaped as the real server's (FieldValueInvalid for
  range/pattern errors, FieldValueTypeInvalid for type errors on 1.36 where 1.24 said
  FieldValueInvalid, FieldValueRequired, FieldValueNotSupported for enum, FieldValueTooLong
  for maxLength).
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

from jsonschema import Draft4Validator, validators

from kubesim.api.resources import ResourceInfo
from kubesim.api.version import DEFAULT_SERVER_VERSION, ServerVersion
from kubesim.validation import cel

__all__ = ["SchemaValidator", "prune_and_default", "to_json_schema"]

_ROOT_KEEP = ("apiVersion", "kind", "metadata")
# the error types after which the CEL rules are not run (hasBlockingErr)
_BLOCKING = (
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
)


def _is_integer(checker, instance) -> bool:
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())


_Validator = validators.extend(
    Draft4Validator,
    type_checker=Draft4Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


def to_json_schema(schema: Any, root: bool = False) -> Any:
    """Translate an OpenAPI v3 structural schema to draft-4 JSON Schema."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k.startswith("x-kubernetes-") or k in (
            "nullable",
            "default",
            "format",
            "example",
            "externalDocs",
            "description",
        ):
            continue
        if k in ("properties", "patternProperties", "definitions"):
            out[k] = {pk: to_json_schema(pv) for pk, pv in v.items()}
        elif k in ("items", "additionalProperties", "not"):
            out[k] = to_json_schema(v)
        elif k in ("allOf", "anyOf", "oneOf"):
            out[k] = [to_json_schema(s) for s in v]
        else:
            out[k] = v
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["type"] = ["integer", "string"]
    if schema.get("nullable") and "type" in out:
        t = out["type"]
        out["type"] = (t if isinstance(t, list) else [t]) + ["null"]
        if "enum" in out:
            out["enum"] = list(out["enum"]) + [None]
    if root:
        props = dict(out.get("properties") or {})
        for k in _ROOT_KEEP:
            props.pop(k, None)
        if props or "properties" in out:
            out["properties"] = props
        if "required" in out:
            out["required"] = [r for r in out["required"] if r not in _ROOT_KEEP] or None
            if out["required"] is None:
                del out["required"]
    return out


def prune_and_default(value: Any, schema: dict | None, root: bool = False) -> Any:
    """Drop unknown fields and non-nullable nulls, fill defaults, coerce 2.0 -> 2 (in place)."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") or addl is True
        embedded = schema.get("x-kubernetes-embedded-resource")
        for k in list(value):
            if (root or embedded) and k in _ROOT_KEEP:
                continue
            sub = props.get(k) if props else None
            if sub is None and isinstance(addl, dict):
                sub = addl
            if sub is None:
                if not preserve:
                    del value[k]
                continue
            v = value[k]
            if v is None and not sub.get("nullable"):
                del value[k]
                continue
            value[k] = prune_and_default(v, sub)
        for k, sub in (props or {}).items():
            if k not in value and isinstance(sub, dict) and "default" in sub:
                value[k] = prune_and_default(copy.deepcopy(sub["default"]), sub)
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [prune_and_default(v, items) for v in value]
        return value
    if isinstance(value, float) and value.is_integer() and schema.get("type") == "integer":
        return int(value)
    return value


def _field(path) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _js(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


_GO_TYPES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def _causes(error, type_reason: str = "FieldValueTypeInvalid") -> list[dict]:
    """One jsonschema error -> kube-apiserver causes (field.Error as JSON).

    type_reason: the reason of a type error, FieldValueTypeInvalid (field.TypeInvalid, as
    1.36's kube-openapi validation reports it) or FieldValueInvalid (1.24). Both read
    "Invalid value: ...".
    """
    path = _field(error.absolute_path)
    v, val = error.validator, error.validator_value
    inst = error.instance
    if v == "required":
        missing = [r for r in val if not isinstance(inst, dict) or r not in inst]
        return [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": f"{path}.{r}" if path else r,
            }
            for r in missing
        ]
    if v == "enum":
        allowed = ", ".join(_js(a) for a in val if a is not None)
        return [
            {
                "reason": "FieldValueNotSupported",
                "message": f"Unsupported value: {_js(inst)}: supported values: {allowed}",
                "field": path,
            }
        ]
    if v == "maxLength":
        return [
            {
                "reason": "FieldValueTooLong",
                "message": f"Too long: must have at most {val} bytes",
                "field": path,
            }
        ]
    if v == "type":
        want = val if isinstance(val, str) else val[0]
        detail = f'{path} in body must be of type {want}: "{_GO_TYPES.get(type(inst), "unknown")}"'
        return [
            {
                "reason": type_reason,
                "message": f"Invalid value: {_js(inst)}: {detail}",
                "field": path,
            }
        ] + _range_check(want, error.schema.get("format") or "", inst, path)
    elif v == "maximum":
        op = "less than" if error.schema.get("exclusiveMaximum") else "less than or equal to"
        detail = f"{path} in body should be {op} {val}"
    elif v == "minimum":
        op = "greater than" if error.schema.get("exclusiveMinimum") else "greater than or equal to"
        detail = f"{path} in body should be {op} {val}"
    elif v == "pattern":
        detail = f"{path} in body should match '{val}'"
    elif v == "minLength":
        detail = f"{path} in body should be at least {val} chars long"
    else:
        detail = f"{path} in body {error.message}"
    return [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {_js(inst)}: {detail}",
            "field": path,
        }
    ]


def _range_check(want: str, fmt: str, inst: Any, path: str) -> list[dict]:
    """The second error a fractional number for an integer field gets.

    kube-openapi's numberValidator runs beside the type validator (SchemaValidator merges
    every validator's result) and first asks IsValueValidAgainstRange whether the value
    converts to the integer type without loss. That error is a plain ``error``, not an
    ``errors.Validation``, so apiextensions' kubeOpenAPIResultToFieldErrors turns it into
    ``field.Invalid(fldPath, "", ...)`` at the root path, which the custom resource
    validator passes as nil: the cause's field is ``<nil>``.
    """
    if want != "integer" or not isinstance(inst, float) or inst.is_integer():
        return []
    kind = f"with format {fmt}" if fmt else "(default format)"
    return [
        {
            "reason": "FieldValueInvalid",
            "message": f'Invalid value: "": Checked value must be of type integer {kind} in {path}',
            "field": "<nil>",
        }
    ]


class SchemaValidator:
    """callable(info, obj) -> causes; prunes and defaults obj in place first.

    Compiled validators are cached per schema object (ResourceInfos are replaced, not mutated,
    when a CRD changes, so identity is a safe cache key while the info is alive).
    """

    def __init__(self, version: ServerVersion | None = None) -> None:
        version = version or ServerVersion.parse(DEFAULT_SERVER_VERSION)
        # the reason a type error is reported with, by release (api/version.py)
        self._type_reason = (
            "FieldValueTypeInvalid" if version.type_errors_are_type_invalid else "FieldValueInvalid"
        )
        self._lock = threading.Lock()  # guards _cache
        self._cache: dict[int, tuple[dict, Any]] = {}  # id(schema) -> (schema, validator)

    def _compiled(self, schema: dict):
        key = id(schema)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] is schema:
                return hit[1]
            validator = _Validator(to_json_schema(schema, root=True))
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = (schema, validator)
            return validator

    def __call__(self, info: ResourceInfo, obj: dict, old: dict | None = None) -> list[dict]:
        """The causes of a 422 for obj (pruned and defaulted in place); old: the stored
        object on update, for the CEL rules' oldSelf."""
        schema = info.schema
        if not schema:
            return []
        prune_and_default(obj, schema, root=True)
        causes: list[dict] = []
        seen: set[str] = set()
        errors = sorted(
            self._compiled(schema).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))
        )
        for err in errors:
            for c in _causes(err, self._type_reason):
                if c["field"] in seen:
                    continue
                seen.add(c["field"])
                causes.append(c)
        # x-kubernetes-validations (validation/cel.py), unless the object is too broken for
        # the rules to read it (the custom resource strategy's hasBlockingErr)
        if not cel.has_rules(schema):
            return causes
        if any(c["reason"] in _BLOCKING for c in causes):
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: null: some validation rules were not checked "
                    "because the object was invalid; correct the existing errors to complete "
                    "validation",
                    "field": "<nil>",
                }
            )
        else:
            causes += cel.validate(schema, obj, old)
        return causes
