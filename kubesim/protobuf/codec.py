"""Kubernetes objects as protobuf: the envelope, messages, and watch frames.

The twin of k8s.io/apimachinery/pkg/runtime/serializer/protobuf (``protobuf.go``). A body is
the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message: typeMeta
{apiVersion 1, kind 2}, raw 2 (the object's own message), contentEncoding 3 and contentType 4.
Reading yields the JSON object a JSON client would have sent for the same Go value: fields
are emitted the way Go's encoding/json writes the struct (``omitempty`` drops zero scalars and
empty lists, pointers appear when set, non-pointer structs always appear, a zero Time is
``null``). Writing follows gogo's generated Marshal: fields in ascending number, non-pointer
fields always written (zero or not), pointers only when set, map entries sorted by key.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any

from kubesim.protobuf import jsonschema, values
from kubesim.protobuf.kinds import message_for
from kubesim.protobuf.schema import MESSAGES, Field
from kubesim.protobuf.wire import (
    LENGTH_DELIMITED,
    VARINT,
    ProtobufError,
    bytes_field,
    iter_fields,
    signed,
    unpack_varints,
    varint_field,
)

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_CONTENT_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"

_NUMERIC = frozenset({"int32", "int64", "bool"})
_DECODERS = {
    "time": values.decode_time,
    "microtime": values.decode_micro_time,
    "quantity": values.decode_quantity,
    "intstr": values.decode_int_or_string,
    "fieldsv1": values.decode_fields_v1,
    "jsonschema": jsonschema.decode_schema,
}
_ENCODERS = {
    "time": values.encode_time,
    "microtime": values.encode_micro_time,
    "quantity": values.encode_quantity,
    "intstr": values.encode_int_or_string,
    "fieldsv1": values.encode_fields_v1,
    "jsonschema": jsonschema.encode_schema,
}
# The zero value of each non-message type, as JSON shows it and as encode() takes it.
_ZERO: dict[str, Any] = {
    "string": "",
    "int32": 0,
    "int64": 0,
    "bool": False,
    "bytes": "",
    "time": None,
    "microtime": None,
    "quantity": "0",
    "intstr": 0,
    "rawext": None,
    "fieldsv1": None,
}


class UnsupportedKindError(ProtobufError):
    """The kind has no protobuf form (custom resources, Table, kinds kubesim does not know)."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"no protobuf schema for {api_version}/{kind}")
        self.api_version = api_version
        self.kind = kind


# ---------------------------------------------------------------------------- envelope


def decode(body: bytes) -> dict[str, Any]:
    """The JSON object of a ``k8s\\x00``-prefixed protobuf body.

    Raises :class:`ProtobufError` for a body that is not such a message and
    :class:`UnsupportedKindError` for a kind without a schema.
    """
    if not body.startswith(MAGIC):
        raise ProtobufError("provided data does not appear to be a protobuf message")
    if len(body) == len(MAGIC):
        raise ProtobufError("empty body")
    api_version = kind = content_encoding = content_type = ""
    raw = b""
    for number, wire_type, value in iter_fields(body[len(MAGIC) :]):
        if wire_type != LENGTH_DELIMITED or not isinstance(value, bytes):
            continue
        if number == 1:
            for sub, sub_type, text in iter_fields(value):
                if sub_type == LENGTH_DELIMITED and isinstance(text, bytes):
                    if sub == 1:
                        api_version = text.decode()
                    elif sub == 2:
                        kind = text.decode()
        elif number == 2:
            raw = value
        elif number == 3:
            content_encoding = value.decode()
        elif number == 4:
            content_type = value.decode()
    if content_encoding or content_type not in ("", CONTENT_TYPE):
        raise ProtobufError(f"unsupported raw content {content_type!r} {content_encoding!r}")
    if not kind:
        raise ProtobufError("Object 'Kind' is missing in the protobuf envelope")
    message = message_for(api_version, kind)
    if message is None:
        raise UnsupportedKindError(api_version, kind)
    obj: dict[str, Any] = {"kind": kind}
    if api_version:
        obj["apiVersion"] = api_version
    obj.update(decode_message(message, raw))
    return obj


def encode(obj: Mapping[str, Any]) -> bytes:
    """The ``k8s\\x00``-prefixed protobuf body of a JSON object that names its kind.

    Raises :class:`UnsupportedKindError` for a kind without a schema.
    """
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    message = message_for(api_version, kind)
    if message is None:
        raise UnsupportedKindError(api_version, kind)
    type_meta = bytes_field(1, api_version.encode()) + bytes_field(2, kind.encode())
    unknown = (
        bytes_field(1, type_meta)
        + bytes_field(2, encode_message(message, obj))
        + bytes_field(3, b"")
        + bytes_field(4, b"")
    )
    return MAGIC + unknown


# ---------------------------------------------------------------------------- watch


def encode_watch_event(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """One frame of a protobuf watch: a 4-byte big-endian length, then a metav1.WatchEvent.

    The event itself carries no envelope (the stream serializer is the raw one); its
    ``object.raw`` holds the object with envelope, as apiserver's watch handler writes it.
    """
    event = bytes_field(1, event_type.encode()) + bytes_field(2, bytes_field(1, encode(obj)))
    return len(event).to_bytes(4, "big") + event


def decode_watch_event(event: bytes) -> tuple[str, dict[str, Any]]:
    """The type and object of one WatchEvent message (a frame without its length prefix)."""
    decoded = decode_message("meta.WatchEvent", event)
    obj = decoded.get("object")
    if not isinstance(obj, dict):
        raise ProtobufError("watch event without an object")
    return str(decoded.get("type") or ""), obj


def iter_watch_events(data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """Decode every complete frame of a buffered protobuf watch stream."""
    pos = 0
    while pos + 4 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        if pos + 4 + length > len(data):
            break
        yield decode_watch_event(data[pos + 4 : pos + 4 + length])
        pos += 4 + length


# ---------------------------------------------------------------------------- messages


def decode_message(name: str, buf: bytes) -> dict[str, Any]:
    """A message's JSON object; unknown field numbers are skipped, as gogo's Unmarshal does."""
    message = MESSAGES[name]
    seen: dict[int, list[int | bytes]] = {}
    for number, wire_type, value in iter_fields(buf):
        f = message.by_number.get(number)
        if f is None:
            continue
        _check_wire_type(f, wire_type)
        seen.setdefault(number, []).append(value)
    out: dict[str, Any] = {}
    for f in message.fields:
        found = seen.get(f.number)
        if f.inline:
            out.update(decode_message(_message(f), _join(found)))
        elif f.label == "repeated":
            items = [_decode_one(f, v) for v in _elements(f, found or [])]
            if items or not f.omitempty:
                out[f.json] = items or None
        elif f.label == "map":
            entries = dict(sorted(_decode_entry(f, entry) for entry in found or []))
            if entries or not f.omitempty:
                out[f.json] = entries or None
        elif found is None:
            if f.pointer:
                if not f.omitempty:
                    out[f.json] = None
            else:
                zero = _zero(f)
                if _shown(f, zero):
                    out[f.json] = zero
        else:
            raw = _join(found) if f.type not in _NUMERIC and f.type != "string" else found[-1]
            value = _decode_one(f, raw)
            if f.pointer or _shown(f, value):
                out[f.json] = value
    return out


def encode_message(name: str, obj: Mapping[str, Any]) -> bytes:
    """A message's bytes from its JSON object; keys the schema does not know are dropped."""
    out = bytearray()
    for f in MESSAGES[name].wire_order:
        if f.inline:
            out += bytes_field(f.number, encode_message(_message(f), obj))
            continue
        value = obj.get(f.json)
        if f.label == "repeated":
            for item in value or ():
                out += _encode_one(f, item)
        elif f.label == "map":
            entries: Mapping[str, Any] = value or {}
            for key in sorted(entries):
                entry = bytes_field(1, str(key).encode()) + _encode_value(f, 2, entries[key])
                out += bytes_field(f.number, entry)
        elif value is None:
            if not f.pointer:
                out += _encode_one(f, _ZERO.get(f.type, {}))
        else:
            out += _encode_one(f, value)
    return bytes(out)


def _message(f: Field) -> str:
    assert f.message is not None
    return f.message


def _join(found: list[int | bytes] | None) -> bytes:
    """Repeated occurrences of a message field merge, like concatenated bytes do."""
    return b"".join(v for v in found or () if isinstance(v, bytes))


def _check_wire_type(f: Field, wire_type: int) -> None:
    numeric = f.type in _NUMERIC and f.label != "map"
    if wire_type == VARINT and numeric:
        return
    if wire_type == LENGTH_DELIMITED and (not numeric or f.label == "repeated"):
        return
    raise ProtobufError(f"field {f.json} ({f.number}) has wire type {wire_type}")


def _elements(f: Field, found: list[int | bytes]) -> list[int | bytes]:
    if f.type not in _NUMERIC:
        return found
    flat: list[int | bytes] = []
    for value in found:
        flat.extend(unpack_varints(value) if isinstance(value, bytes) else [value])
    return flat


def _shown(f: Field, value: Any) -> bool:
    """Whether Go's JSON encoder writes a non-pointer field holding ``value``."""
    if f.type in ("string", "int32", "int64", "bool", "bytes"):
        return not f.omitempty or value not in ("", 0, False)
    return True  # structs (messages, Time, Quantity, ...) are never dropped by omitempty


def _zero(f: Field) -> Any:
    """What Go's JSON encoder shows for a field left at its zero value."""
    if f.type == "message":
        return decode_message(_message(f), b"")
    return _ZERO[f.type]


def _decode_one(f: Field, value: int | bytes) -> Any:
    kind = f.type
    if isinstance(value, int):
        if kind == "bool":
            return value != 0
        number = signed(value)
        if kind == "int32":
            number = (number + (1 << 31)) % (1 << 32) - (1 << 31)
        return number
    if kind == "string":
        return value.decode("utf-8", errors="replace")
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "message":
        return decode_message(_message(f), value)
    if kind == "rawext":
        return _decode_raw_extension(value)
    return _DECODERS[kind](value)


def _decode_entry(f: Field, entry: int | bytes) -> tuple[str, Any]:
    key = ""
    raw: int | bytes | None = None
    for number, _wire_type, value in iter_fields(entry if isinstance(entry, bytes) else b""):
        if number == 1 and isinstance(value, bytes):
            key = value.decode("utf-8", errors="replace")
        elif number == 2:
            raw = value
    return key, _zero(f) if raw is None else _decode_one(f, raw)


def _encode_one(f: Field, value: Any) -> bytes:
    return _encode_value(f, f.number, value)


def _encode_value(f: Field, number: int, value: Any) -> bytes:
    kind = f.type
    if kind == "string":
        return bytes_field(number, str(value).encode())
    if kind in ("int32", "int64"):
        return varint_field(number, int(value))
    if kind == "bool":
        return varint_field(number, 1 if value else 0)
    if kind == "bytes":
        data = value if isinstance(value, bytes) else base64.b64decode(str(value))
        return bytes_field(number, data)
    if kind == "message":
        return bytes_field(number, encode_message(_message(f), value or {}))
    if kind == "rawext":
        return bytes_field(number, _encode_raw_extension(value))
    return bytes_field(number, _ENCODERS[kind](value))


def _decode_raw_extension(buf: bytes) -> Any:
    """runtime.RawExtension: its bytes are a whole protobuf object or JSON."""
    raw = None
    for number, _wire_type, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            raw = value
    if raw is None:
        return None
    if raw.startswith(MAGIC):
        return decode(raw)
    try:
        return json.loads(raw)
    except ValueError as err:
        raise ProtobufError("RawExtension holds neither protobuf nor JSON") from err


def _encode_raw_extension(value: Any) -> bytes:
    if value is None:
        return b""
    return bytes_field(1, json.dumps(value, separators=(",", ":")).encode())
