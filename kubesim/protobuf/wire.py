"""Protocol-buffer wire format: varints, tags and length-delimited fields, nothing more.

The encoding k8s.io/apimachinery/pkg/runtime/serializer/protobuf relies on (through gogo
protobuf's generated Marshal/Unmarshal): every field is ``tag = number << 3 | wire type``
followed by a varint (wire type 0) or a varint length and that many bytes (wire type 2).
Kubernetes messages use no other wire types; 64-bit and 32-bit fixed values (1 and 5) are
skipped when read so an unknown field of that kind does not break decoding.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

_UINT64 = (1 << 64) - 1


class ProtobufError(ValueError):
    """The bytes are not a protobuf message this codec can read (kube-apiserver: 400)."""


def varint(value: int) -> bytes:
    """Encode ``value`` as a base-128 varint; negative values take ten bytes, as in Go."""
    value &= _UINT64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Read an unsigned varint at ``pos``; return ``(value, position after it)``."""
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & _UINT64, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint longer than ten bytes")


def signed(value: int) -> int:
    """Reinterpret a varint's unsigned 64 bits as Go's int64 (int32 fields are sign-extended)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def tag(number: int, wire_type: int) -> bytes:
    """The key that precedes a field on the wire."""
    return varint(number << 3 | wire_type)


def varint_field(number: int, value: int) -> bytes:
    """A whole varint field: key and value."""
    return tag(number, VARINT) + varint(value)


def bytes_field(number: int, data: bytes) -> bytes:
    """A whole length-delimited field: key, length and payload."""
    return tag(number, LENGTH_DELIMITED) + varint(len(data)) + data


def iter_fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field number, wire type, value)`` for each field of a message, in wire order.

    The value is an int for varints and fixed-width fields, and the payload bytes for
    length-delimited fields.
    """
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire_type == VARINT:
            value, pos = read_varint(buf, pos)
            yield number, wire_type, value
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(buf, pos)
            if pos + length > end:
                raise ProtobufError(f"field {number} runs past the end of the message")
            yield number, wire_type, buf[pos : pos + length]
            pos += length
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if pos + size > end:
                raise ProtobufError(f"field {number} runs past the end of the message")
            yield number, wire_type, int.from_bytes(buf[pos : pos + size], "little")
            pos += size
        else:
            raise ProtobufError(f"unsupported wire type {wire_type} for field {number}")


def unpack_varints(data: bytes) -> list[int]:
    """The values of a packed repeated varint field (proto3 style; accepted when reading)."""
    values = []
    pos = 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        values.append(value)
    return values
