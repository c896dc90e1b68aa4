"""OpenAPI schemas of the built-in kinds that builtin_openapi.json does not describe.

kube-apiserver publishes a schema for every kind it serves (``k8s.io/kube-openapi``'s builder,
from the Go types). builtin_openapi.json carries the documented schemas of the kinds kubectl
users explore most; the other served kinds get theirs here, built from the protobuf tables
(kubesim/protobuf/: the same Go structs, with each field's JSON name, type, pointer-ness and
patch strategy). That is what kubectl's client-side and server-side field validation, its
strategic merge patches and managedFields need.

Deliberate differences from the real documents: no descriptions (``kubectl explain`` shows
the fields without their text), no enums, formats only for the integer widths and bytes, and
no list-type extensions beyond the patch merge key.
"""

from __future__ import annotations

from typing import Any

from kubesim.protobuf import schema as pb
from kubesim.protobuf.kinds import KINDS

__all__ = ["table_schemas"]

_SCHEMAS = "#/components/schemas/"
# table group -> OpenAPI definition prefix (the Go package path, reversed domain first)
_PREFIX = {
    "meta": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "core": "io.k8s.api.core.v1",
    "apps": "io.k8s.api.apps.v1",
    "batch": "io.k8s.api.batch.v1",
    "autoscaling": "io.k8s.api.autoscaling.v1",
    "autoscaling_v2": "io.k8s.api.autoscaling.v2",
    "networking": "io.k8s.api.networking.v1",
    "policy": "io.k8s.api.policy.v1",
    "storage": "io.k8s.api.storage.v1",
    "scheduling": "io.k8s.api.scheduling.v1",
    "node": "io.k8s.api.node.v1",
    "certificates": "io.k8s.api.certificates.v1",
    "admissionregistration": "io.k8s.api.admissionregistration.v1",
    "flowcontrol": "io.k8s.api.flowcontrol.v1",
    "discovery": "io.k8s.api.discovery.v1",
    "coordination": "io.k8s.api.coordination.v1",
    "events": "io.k8s.api.events.v1",
    "rbac": "io.k8s.api.rbac.v1",
    "resource": "io.k8s.api.resource.v1",
    "apiregistration": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}
# The value types, as kube-openapi names their definitions.
_VALUE_REFS = {
    "time": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "microtime": "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "intstr": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "fieldsv1": "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
}
_SCALARS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
    "rawext": {"type": "object"},
}
_VALUE_SCHEMAS: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "type": "string",
        "format": "int-or-string",
    },
}


def definition_name(message: str) -> str | None:
    """The OpenAPI definition of a protobuf table message ("core.Service"), if named here."""
    group, _, name = message.partition(".")
    prefix = _PREFIX.get(group)
    return f"{prefix}.{name}" if prefix else None


def _element(f: pb.Field) -> dict[str, Any] | None:
    if f.type == "message":
        name = definition_name(f.message or "")
        return {"allOf": [{"$ref": _SCHEMAS + name}]} if name else None
    if f.type in _VALUE_REFS:
        return {"allOf": [{"$ref": _SCHEMAS + _VALUE_REFS[f.type]}]}
    return dict(_SCALARS[f.type])


def _properties(message: pb.Message, out: dict[str, Any], wanted: list[str]) -> None:
    for f in message.fields:
        if f.inline and f.message:
            _properties(pb.MESSAGES[f.message], out, wanted)
            continue
        element = _element(f)
        if element is None:
            continue
        if f.type == "message" and f.message:
            wanted.append(f.message)
        if f.label == "repeated":
            prop: dict[str, Any] = {"type": "array", "items": element}
            if f.merge_key is not None:
                prop["x-kubernetes-patch-strategy"] = "merge"
                if f.merge_key:
                    prop["x-kubernetes-patch-merge-key"] = f.merge_key
        elif f.label == "map":
            prop = {"type": "object", "additionalProperties": element}
        else:
            prop = element
        out[f.json] = prop


def table_schemas(have: dict[str, dict]) -> dict[str, dict]:
    """Definitions for every protobuf kind not in ``have`` (and the types under them)."""
    out: dict[str, dict] = {}
    wanted: list[str] = []
    gvks: dict[str, list[dict[str, str]]] = {}
    for (api_version, kind), message in KINDS.items():
        name = definition_name(message)
        if name is None or name in have or message.startswith("meta."):
            continue
        group, _, version = api_version.rpartition("/")
        gvks.setdefault(name, []).append({"group": group, "kind": kind, "version": version})
        wanted.append(message)
    while wanted:
        message = wanted.pop()
        name = definition_name(message)
        if name is None or name in have or name in out:
            continue
        props: dict[str, Any] = {}
        _properties(pb.MESSAGES[message], props, wanted)
        if name in gvks:
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
        schema: dict[str, Any] = {"type": "object", "properties": dict(sorted(props.items()))}
        if name in gvks:
            schema["x-kubernetes-group-version-kind"] = gvks[name]
        out[name] = schema
    for name, schema in _VALUE_SCHEMAS.items():
        if name not in have:
            out[name] = schema
    return out
