"""Hash ranges of KEP-5866 ("Sharded List and Watch"): FNV-1a 64, shardRange(), and matching.

Twin of k8s.io/apimachinery/pkg/sharding: ``hash.go`` (HashField), ``types.go``
(ShardRangeRequirement), ``accessor.go`` (ResolveFieldValue) and ``selector.go`` (Matches,
HexLess, String). One implementation serves both ends of the wire, as client.labels does: kubesim
filters lists and watches with it when its ShardedListAndWatch gate is on, and the controller
computes the same ranges, formats the ``shardSelector`` it sends, and filters on its own side
when a server ignores the parameter. The parser of the selector lives with the server
(kubesim/registry/sharding.py), as upstream's lives in k8s.io/apiserver/pkg/sharding: a client
only ever formats one.

The wire form, as kube-apiserver v1.36 parses it:

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
        || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')

- the hash is the 64-bit FNV-1a of the field's string (its UTF-8 bytes, as Go's ``[]byte(s)``);
- a range holds ``start <= hash < end`` over ``[0, 2**64)``; the bounds are ``0x`` and exactly 16
  lowercase hex digits, except the exclusive end of the whole space, ``0x10000000000000000``;
- several ranges are joined with `` || `` and must name the same field; an object matches when
  its hash is in any of them.

Upstream compares hex strings (HexLess: the shorter string is smaller, else lexicographic).
Because every bound is normalised to 16 digits (or is the 17-digit 2**64), that order is exactly
the integers' order, so this module keeps bounds as ints and compares them as ints.

Pure functions and frozen values only: importing it loads nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FIELD_NAMESPACE",
    "FIELD_UID",
    "FIELDS",
    "HASH_SPACE_END",
    "ShardRange",
    "bucket_range",
    "field_value",
    "fnv1a64",
    "format_bound",
    "format_selector",
    "hash_field",
    "matches",
]

# FNV-1a's 64-bit parameters (draft-eastlake-fnv; Go's hash/fnv offset64 and prime64).
FNV64_OFFSET_BASIS = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

# The exclusive upper bound of the hash space: 2**64, written 0x10000000000000000 on the wire.
HASH_SPACE_END = 1 << 64

# The field paths a shardRange() may hash: CEL-style, rooted at "object." (not the
# fieldSelector form "metadata.uid"). Upstream supports exactly these two.
FIELD_UID = "object.metadata.uid"
FIELD_NAMESPACE = "object.metadata.namespace"
FIELDS = (FIELD_UID, FIELD_NAMESPACE)


def fnv1a64(value: str) -> int:
    """The 64-bit FNV-1a hash of ``value``'s UTF-8 bytes (Go: fnv.New64a, Write, Sum64)."""
    h = FNV64_OFFSET_BASIS
    for byte in value.encode("utf-8"):
        h = ((h ^ byte) * FNV64_PRIME) & _MASK64
    return h


def hash_field(value: str) -> str:
    """The hash as 16 lowercase hex digits, without ``0x`` (HashField's ``%016x``)."""
    return f"{fnv1a64(value):016x}"


def format_bound(value: int) -> str:
    """A range bound in its wire form: ``0x`` and 16 lowercase hex digits, or the 17-digit
    ``0x10000000000000000`` for the end of the space. Raises ValueError outside [0, 2**64]."""
    if not 0 <= value <= HASH_SPACE_END:
        raise ValueError(f"a shard range bound must be within [0, 2**64], got {value}")
    return f"0x{value:016x}"


@dataclass(frozen=True)
class ShardRange:
    """One ``shardRange(field, start, end)``: the objects whose field hashes into
    ``[start, end)``. apimachinery's ``sharding.ShardRangeRequirement``, with the bounds as ints
    rather than hex strings."""

    start: int
    end: int
    field: str = FIELD_UID

    def __post_init__(self) -> None:
        if self.field not in FIELDS:
            raise ValueError(f"unsupported field path {self.field!r}; supported: {FIELDS}")
        if not 0 <= self.start < self.end <= HASH_SPACE_END:
            raise ValueError(
                f"a shard range needs 0 <= start < end <= 2**64, got [{self.start}, {self.end})"
            )

    def contains(self, hash_value: int) -> bool:
        """Whether a hash falls in the range: start inclusive, end exclusive."""
        return self.start <= hash_value < self.end

    def __str__(self) -> str:
        # selector.go's String(): shardRange(%s, '%s', '%s'), the form the server parses.
        return f"shardRange({self.field}, '{format_bound(self.start)}', '{format_bound(self.end)}')"


def format_selector(ranges: Iterable[ShardRange]) -> str:
    """The ``shardSelector`` query value for ranges: each ``shardRange(...)``, joined with
    `` || `` (selector.go's String()). Raises ValueError for no range (upstream rejects an empty
    selector; omit the parameter to list everything) or for ranges on different fields."""
    ranges = list(ranges)
    if not ranges:
        raise ValueError("no shard range: omit shardSelector to select everything")
    if len({r.field for r in ranges}) > 1:
        raise ValueError("all shard ranges must use the same field")
    return " || ".join(str(r) for r in ranges)


def bucket_range(index: int, count: int, field: str = FIELD_UID) -> ShardRange:
    """The ``index``-th of ``count`` contiguous, equal slices of the hash space.

    Bound ``i`` is ``floor(i * 2**64 / count)``, so the slices tile ``[0, 2**64)`` with no gap
    or overlap for any count, and the last one ends at 2**64. This is how upstream's tests and
    client helpers split the space (``calculateShardRange``, ``shardRangeBoundary``); for a power
    of two count the bounds are the round ones (``0x8000000000000000`` for one half).
    """
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"need 0 <= index < count, got index {index} of {count}")
    return ShardRange(index * HASH_SPACE_END // count, (index + 1) * HASH_SPACE_END // count, field)


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The string a shard range hashes for an object dict (ResolveFieldValue): its
    metadata.uid or metadata.namespace, "" when absent (a cluster-scoped object's namespace)."""
    meta = obj.get("metadata") or {}
    if field == FIELD_UID:
        return str(meta.get("uid") or "")
    if field == FIELD_NAMESPACE:
        return str(meta.get("namespace") or "")
    raise ValueError(f"unsupported field path: {field!r}")


def matches(ranges: Iterable[ShardRange], obj: Mapping[str, Any]) -> bool:
    """Whether an object falls in any of the ranges (selector.go's Matches: the field is
    hashed once; no range at all matches everything, as sharding.Everything())."""
    ranges = tuple(ranges)
    if not ranges:
        return True
    field = ranges[0].field
    if any(r.field != field for r in ranges):
        raise ValueError(f"inconsistent shard keys: {[r.field for r in ranges]}")
    h = fnv1a64(field_value(obj, field))
    return any(r.contains(h) for r in ranges)
