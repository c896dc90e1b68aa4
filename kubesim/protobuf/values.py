"""The Kubernetes value types that have their own protobuf message and a plain JSON form.

metav1.Time and metav1.MicroTime (a Timestamp message; JSON RFC 3339 in UTC),
resource.Quantity (a message holding its string), intstr.IntOrString (type, intVal, strVal;
JSON a number or a string) and metav1.FieldsV1 (raw JSON bytes). The behaviour mirrors
k8s.io/apimachinery: ``time_proto.go`` drops the nanoseconds of a Time on both sides (its JSON
only has seconds), ``micro_time_proto.go`` keeps them, and a zero Time is an empty message
that JSON shows as ``null``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesim.protobuf.wire import ProtobufError, bytes_field, iter_fields, signed, varint_field

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_GO_ZERO_SECONDS = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)


def _timestamp(buf: bytes) -> tuple[int, int]:
    seconds = nanos = 0
    for number, _wire_type, value in iter_fields(buf):
        if number == 1 and isinstance(value, int):
            seconds = signed(value)
        elif number == 2 and isinstance(value, int):
            nanos = signed(value)
    return seconds, nanos


def parse_rfc3339(text: str) -> tuple[int, int]:
    """Seconds since the epoch and nanoseconds of an RFC 3339 time, any offset."""
    match = _RFC3339.match(text)
    if match is None:
        raise ProtobufError(f"not an RFC 3339 time: {text!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    offset = timedelta()
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    moment = datetime(
        int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC
    )
    delta = moment - offset - _EPOCH
    return delta.days * 86400 + delta.seconds, int((fraction or "").ljust(9, "0"))


def _format(seconds: int, micros: int | None) -> str:
    moment = _EPOCH + timedelta(seconds=seconds)
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
    text += f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    if micros is not None:
        text += f".{micros:06d}"
    return text + "Z"


def decode_time(buf: bytes) -> str | None:
    """metav1.Time: ``None`` (JSON null) for the zero time, else ``2006-01-02T15:04:05Z``."""
    if not buf:
        return None
    seconds, _nanos = _timestamp(buf)
    return _format(seconds, None)


def decode_micro_time(buf: bytes) -> str | None:
    """metav1.MicroTime: ``None`` for the zero time, else ``2006-01-02T15:04:05.000000Z``."""
    if not buf:
        return None
    seconds, nanos = _timestamp(buf)
    return _format(seconds, nanos // 1000)


def _encode_timestamp(value: Any, keep_nanos: bool) -> bytes:
    if value is None or value == "":
        return b""
    seconds, nanos = parse_rfc3339(str(value))
    if seconds == _GO_ZERO_SECONDS and nanos == 0:
        return b""
    if not keep_nanos:
        nanos = 0
    return varint_field(1, seconds) + varint_field(2, nanos)


def encode_time(value: Any) -> bytes:
    """The Timestamp message of a metav1.Time (seconds only, as Go writes it)."""
    return _encode_timestamp(value, keep_nanos=False)


def encode_micro_time(value: Any) -> bytes:
    """The Timestamp message of a metav1.MicroTime (seconds and nanoseconds)."""
    return _encode_timestamp(value, keep_nanos=True)


def decode_quantity(buf: bytes) -> str:
    """resource.Quantity: its string form (``"0"`` for an empty message, as Go prints zero)."""
    text = "0"
    for number, _wire_type, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            text = value.decode("utf-8", errors="replace")
    return text


def encode_quantity(value: Any) -> bytes:
    """The Quantity message; a JSON number (``cpu: 1``) is written as its decimal string."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return bytes_field(1, str(value).encode())


def decode_int_or_string(buf: bytes) -> int | str:
    """intstr.IntOrString: the string when type is 1 (String), else the int."""
    kind = int_val = 0
    str_val = ""
    for number, _wire_type, value in iter_fields(buf):
        if number == 1 and isinstance(value, int):
            kind = signed(value)
        elif number == 2 and isinstance(value, int):
            int_val = signed(value)
        elif number == 3 and isinstance(value, bytes):
            str_val = value.decode("utf-8", errors="replace")
    return str_val if kind == 1 else int_val


def encode_int_or_string(value: Any) -> bytes:
    """The IntOrString message: all three fields, as gogo writes them."""
    if isinstance(value, str):
        return varint_field(1, 1) + varint_field(2, 0) + bytes_field(3, value.encode())
    return varint_field(1, 0) + varint_field(2, int(value)) + bytes_field(3, b"")


def decode_fields_v1(buf: bytes) -> Any:
    """metav1.FieldsV1: the JSON object it holds (``None`` when empty)."""
    raw = b""
    for number, _wire_type, value in iter_fields(buf):
        if number == 1 and isinstance(value, bytes):
            raw = value
    return json.loads(raw) if raw else None


def encode_fields_v1(value: Any) -> bytes:
    """The FieldsV1 message: compact JSON bytes."""
    if value is None:
        return b""
    return bytes_field(1, json.dumps(value, separators=(",", ":")).encode())
