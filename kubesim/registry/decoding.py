"""The 400 a body gets when its JSON does not fit the kind's Go types.

Twin of the decode step of kube-apiserver's handlers: the body is unmarshalled into the Go
struct by sigs.k8s.io/json (encoding/json's decoder), whose first ``UnmarshalTypeError``
becomes ``<Kind> in version "<v>" cannot be handled as a <Kind>: json: cannot unmarshal
<JSON type> into Go struct field <Struct>.<path> of type <Go type>`` (a 400, before any
defaulting or validation). The Go types are read from the protobuf tables (the same structs);
the JSON path is the dotted field path from the object's root, without list indices, as the
decoder reports it.

Deliberate differences: only the types the tables name are checked (scalars, structs, lists,
maps); a Quantity, IntOrString or Time of the wrong JSON type gets the same wording with the
Go type name, where their own UnmarshalJSON would word it differently.
"""

from __future__ import annotations

from typing import Any

from kubesim.api import errors
from kubesim.protobuf.kinds import message_for
from kubesim.protobuf.schema import MESSAGES, Field, Message

__all__ = ["check_decodable"]

_INT_RANGE = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
_VALUE_GO_TYPES = {
    "time": "v1.Time",
    "microtime": "v1.MicroTime",
    "quantity": "resource.Quantity",
    "intstr": "intstr.IntOrString",
}


class _Mismatch(Exception):
    def __init__(self, json_type: str, struct: str, path: str, go_type: str) -> None:
        super().__init__(json_type)
        self.text = (
            f"json: cannot unmarshal {json_type} into Go struct field {struct}.{path} of type "
            f"{go_type}"
        )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _package(message: str) -> str:
    """The Go package name a table's message lives in ("v1", "v2" for autoscaling/v2)."""
    return "v2" if message.startswith("autoscaling_v2.") else "v1"


def _go_element(f: Field) -> str:
    if f.type == "message" and f.message:
        return f"{_package(f.message)}.{f.message.partition('.')[2]}"
    if f.type == "bytes":
        return "[]uint8"
    return _VALUE_GO_TYPES.get(f.type, f.type)


def _go_type(f: Field) -> str:
    """A list's or map's Go type."""
    element = _go_element(f)
    return f"[]{element}" if f.label == "repeated" else f"map[string]{element}"


def _check_element(f: Field, value: Any, struct: str, path: str) -> None:
    """One value of a field's element type (the field itself, or a list item, or a map value)."""
    if value is None:
        return
    kind = f.type
    if kind == "message" and f.message:
        if not isinstance(value, dict):
            raise _Mismatch(_json_type(value), struct, path, _go_element(f))
        _check_message(MESSAGES[f.message], value, path)
        return
    ok = {
        "string": isinstance(value, str),
        "bytes": isinstance(value, str),
        "bool": isinstance(value, bool),
        "time": isinstance(value, str),
        "microtime": isinstance(value, str),
        "quantity": isinstance(value, (str, int, float)) and not isinstance(value, bool),
        "intstr": isinstance(value, (str, int)) and not isinstance(value, bool),
    }.get(kind, True)
    if kind in _INT_RANGE:
        low, high = _INT_RANGE[kind]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Mismatch(_json_type(value), struct, path, _go_element(f))
        if isinstance(value, float) and not value.is_integer() or not low <= value <= high:
            raise _Mismatch(f"number {value}", struct, path, _go_element(f))
        return
    if not ok:
        raise _Mismatch(_json_type(value), struct, path, _go_element(f))


def _check_message(message: Message, obj: dict, path: str) -> None:
    struct = message.name.partition(".")[2]
    fields = _json_fields(message)
    for key, value in obj.items():
        f = fields.get(key)
        if f is None or value is None:
            continue  # unknown fields are the field validation's business
        where = f"{path}.{key}" if path else key
        if f.label == "repeated" and f.type != "bytes":
            if not isinstance(value, list):
                raise _Mismatch(_json_type(value), struct, where, _go_type(f))
            for item in value:
                _check_element(f, item, struct, where)
        elif f.label == "map":
            if not isinstance(value, dict):
                raise _Mismatch(_json_type(value), struct, where, _go_type(f))
            for item in value.values():
                _check_element(f, item, struct, where)
        else:
            _check_element(f, value, struct, where)


def _json_fields(message: Message) -> dict[str, Field]:
    """A message's fields by JSON name, embedded (inline) structs' fields included."""
    out: dict[str, Field] = {}
    for f in message.fields:
        if f.inline and f.message:
            out.update(_json_fields(MESSAGES[f.message]))
        else:
            out[f.json] = f
    return out


def check_decodable(api_version: str, kind: str, version: str, obj: dict) -> None:
    """Raise the decoder's 400 when ``obj`` does not fit the kind's Go struct."""
    message = message_for(api_version, kind)
    if message is None or message not in MESSAGES:
        return
    body = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion", "metadata")}
    try:
        _check_message(MESSAGES[message], body, "")
    except _Mismatch as mismatch:
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {mismatch.text}'
        ) from None
