"""apiextensions.k8s.io/v1 JSONSchemaProps on the wire: a CRD's openAPIV3Schema.

Twin of the JSONSchemaProps messages of k8s.io/apiextensions-apiserver
``pkg/apis/apiextensions/v1/generated.proto`` and of the hand-written JSON forms in
``marshal.go`` beside it. The schema notation of :mod:`kubesim.protobuf.schema` cannot say
these types: their JSON names (``$ref``, ``x-kubernetes-...``) are not identifiers, three of
them have a JSON form that depends on which field is set (``JSONSchemaPropsOrArray`` is an
object or an array, ``JSONSchemaPropsOrBool`` an object or a bool,
``JSONSchemaPropsOrStringArray`` an object or a list of strings), ``JSON`` holds raw JSON bytes,
and ``maximum``/``minimum``/``multipleOf`` are doubles (wire type fixed64). So the CRD tables
name the whole schema as one value type, ``jsonschema``, coded here.

Field order is the Go struct's, which is also the field numbers' order, so the JSON written
for a decoded schema has Go's key order.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from kubesim.protobuf.wire import (
    FIXED64,
    ProtobufError,
    bytes_field,
    iter_fields,
    tag,
    varint_field,
)

__all__ = ["decode_schema", "encode_schema"]

# (number, JSON name, kind): kind is one of the codecs below; "*" marks a Go pointer (written
# whenever set, even when zero).
_FIELDS: tuple[tuple[int, str, str], ...] = (
    (1, "id", "string"),
    (2, "$schema", "string"),
    (3, "$ref", "string*"),
    (4, "description", "string"),
    (5, "type", "string"),
    (6, "format", "string"),
    (7, "title", "string"),
    (8, "default", "json*"),
    (9, "maximum", "double*"),
    (10, "exclusiveMaximum", "bool"),
    (11, "minimum", "double*"),
    (12, "exclusiveMinimum", "bool"),
    (13, "maxLength", "int64*"),
    (14, "minLength", "int64*"),
    (15, "pattern", "string"),
    (16, "maxItems", "int64*"),
    (17, "minItems", "int64*"),
    (18, "uniqueItems", "bool"),
    (19, "multipleOf", "double*"),
    (20, "enum", "[json]"),
    (21, "maxProperties", "int64*"),
    (22, "minProperties", "int64*"),
    (23, "required", "[string]"),
    (24, "items", "orarray*"),
    (25, "allOf", "[schema]"),
    (26, "oneOf", "[schema]"),
    (27, "anyOf", "[schema]"),
    (28, "not", "schema*"),
    (29, "properties", "{schema}"),
    (30, "additionalProperties", "orbool*"),
    (31, "patternProperties", "{schema}"),
    (32, "dependencies", "{orstrings}"),
    (33, "additionalItems", "orbool*"),
    (34, "definitions", "{schema}"),
    (35, "externalDocs", "docs*"),
    (36, "example", "json*"),
    (37, "nullable", "bool"),
    (38, "x-kubernetes-preserve-unknown-fields", "bool*"),
    (39, "x-kubernetes-embedded-resource", "bool"),
    (40, "x-kubernetes-int-or-string", "bool"),
    (41, "x-kubernetes-list-map-keys", "[string]"),
    (42, "x-kubernetes-list-type", "string*"),
    (43, "x-kubernetes-map-type", "string*"),
    (44, "x-kubernetes-validations", "[rule]"),
)
_BY_NUMBER = {number: (name, kind) for number, name, kind in _FIELDS}
# ValidationRule: rule, message, messageExpression, reason (*string), fieldPath,
# optionalOldSelf (*bool).
_RULE = (
    (1, "rule", "string!"),
    (2, "message", "string"),
    (3, "messageExpression", "string"),
    (4, "reason", "string*"),
    (5, "fieldPath", "string"),
    (6, "optionalOldSelf", "bool*"),
)
_DOCS = ((1, "description", "string"), (2, "url", "string"))


# ---- decoding ---------------------------------------------------------------------------------


def _double(value: int | bytes) -> float | int:
    number = (
        struct.unpack("<d", int(value).to_bytes(8, "little"))[0] if isinstance(value, int) else 0.0
    )
    # Go's encoding/json writes an integral float64 without a fraction: 5, not 5.0
    return int(number) if float(number).is_integer() else number


def _raw_json(buf: bytes) -> Any:
    for number, _, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            try:
                return json.loads(value)
            except ValueError as err:
                raise ProtobufError("JSON field holds no JSON") from err
    return None


def _or_array(buf: bytes) -> Any:
    schema: Any = None
    many = []
    for number, _, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            schema = decode_schema(value)
        elif number == 2 and isinstance(value, bytes):
            many.append(decode_schema(value))
    return many if many else schema


def _or_bool(buf: bytes) -> Any:
    allows, schema = False, None
    for number, _, value in iter_fields(buf):
        if number == 1 and isinstance(value, int):
            allows = value != 0
        elif number == 2 and isinstance(value, bytes):
            schema = decode_schema(value)
    return schema if schema is not None else allows


def _or_strings(buf: bytes) -> Any:
    schema, strings = None, []
    for number, _, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            schema = decode_schema(value)
        elif number == 2 and isinstance(value, bytes):
            strings.append(value.decode())
    return strings if strings else schema


def _simple(buf: bytes, fields: tuple[tuple[int, str, str], ...]) -> dict[str, Any]:
    found: dict[int, int | bytes] = {}
    for number, _, value in iter_fields(buf):
        found[number] = value
    out: dict[str, Any] = {}
    for number, name, kind in fields:
        if number not in found:
            if kind.endswith("!"):
                out[name] = ""
            continue
        value = found[number]
        decoded: Any = value.decode() if isinstance(value, bytes) else value != 0
        if kind.endswith("*") or decoded or kind.endswith("!"):
            out[name] = decoded
    return out


def _decode_value(kind: str, value: int | bytes) -> Any:
    if kind == "string":
        return value.decode() if isinstance(value, bytes) else ""
    if kind == "bool":
        return value != 0
    if kind == "int64":
        return int(value) if isinstance(value, int) else 0
    if kind == "double":
        return _double(value)
    data = value if isinstance(value, bytes) else b""
    decoder = {
        "json": _raw_json,
        "schema": decode_schema,
        "orarray": _or_array,
        "orbool": _or_bool,
        "orstrings": _or_strings,
        "docs": lambda b: _simple(b, _DOCS),
        "rule": lambda b: _simple(b, _RULE),
    }[kind]
    return decoder(data)


def decode_schema(buf: bytes) -> dict[str, Any]:
    """A JSONSchemaProps message as the JSON object Go writes for it."""
    found: dict[int, list[int | bytes]] = {}
    for number, _, value in iter_fields(buf):
        if number in _BY_NUMBER:
            found.setdefault(number, []).append(value)
    out: dict[str, Any] = {}
    for number, name, kind in _FIELDS:
        values = found.get(number)
        if not values:
            continue
        pointer = kind.endswith("*")
        base = kind.rstrip("*")
        if base.startswith("["):
            out[name] = [_decode_value(base[1:-1], v) for v in values]
        elif base.startswith("{"):
            entries = {}
            for entry in values:
                key, raw = "", b""
                for n, _, v in iter_fields(entry if isinstance(entry, bytes) else b""):
                    if n == 1 and isinstance(v, bytes):
                        key = v.decode()
                    elif n == 2 and isinstance(v, bytes):
                        raw = v
                entries[key] = _decode_value(base[1:-1], raw)
            out[name] = dict(sorted(entries.items()))
        else:
            value = _decode_value(base, values[-1])
            if pointer or value not in ("", False, 0):
                out[name] = value
    return out


# ---- encoding ---------------------------------------------------------------------------------


def _json_field(number: int, value: Any) -> bytes:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return bytes_field(number, bytes_field(1, raw))


def _encode_value(kind: str, number: int, value: Any) -> bytes:
    if kind == "string":
        return bytes_field(number, str(value).encode())
    if kind == "bool":
        return varint_field(number, 1 if value else 0)
    if kind == "int64":
        return varint_field(number, int(value))
    if kind == "double":
        return tag(number, FIXED64) + struct.pack("<d", float(value))
    if kind == "json":
        return _json_field(number, value)
    if kind == "schema":
        return bytes_field(number, encode_schema(value if isinstance(value, dict) else {}))
    if kind == "orarray":
        if isinstance(value, list):
            inner = b"".join(bytes_field(2, encode_schema(v)) for v in value)
        else:
            inner = bytes_field(1, encode_schema(value or {}))
        return bytes_field(number, inner)
    if kind == "orbool":
        if isinstance(value, dict):
            inner = varint_field(1, 1) + bytes_field(2, encode_schema(value))
        else:
            inner = varint_field(1, 1 if value else 0)
        return bytes_field(number, inner)
    if kind == "orstrings":
        if isinstance(value, list):
            inner = b"".join(bytes_field(2, str(v).encode()) for v in value)
        else:
            inner = bytes_field(1, encode_schema(value or {}))
        return bytes_field(number, inner)
    fields = _DOCS if kind == "docs" else _RULE
    inner = b"".join(
        _encode_value(k.rstrip("*!"), n, value[name])
        for n, name, k in fields
        if isinstance(value, dict) and value.get(name) is not None
    )
    return bytes_field(number, inner)


def encode_schema(obj: dict[str, Any]) -> bytes:
    """The JSONSchemaProps message of a schema's JSON object; unknown keys are dropped."""
    out = bytearray()
    for number, name, kind in _FIELDS:
        if name not in obj or obj[name] is None:
            continue
        value = obj[name]
        base = kind.rstrip("*")
        if base.startswith("["):
            for item in value or ():
                out += _encode_value(base[1:-1], number, item)
        elif base.startswith("{"):
            for key in sorted(value or {}):
                entry = bytes_field(1, str(key).encode()) + _encode_value(base[1:-1], 2, value[key])
                out += bytes_field(number, entry)
        else:
            out += _encode_value(base, number, value)
    return bytes(out)
