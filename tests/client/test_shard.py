"""client.shard: FNV-1a 64, shard ranges, the selector's wire form, matching (KEP-5866)."""

from __future__ import annotations

import uuid

import pytest

from client.shard import (
    FIELD_NAMESPACE,
    FIELD_UID,
    HASH_SPACE_END,
    ShardRange,
    bucket_range,
    field_value,
    fnv1a64,
    format_bound,
    format_selector,
    hash_field,
    matches,
)


# The FNV test vectors (draft-eastlake-fnv's appendix; the FNV site's test suite), FNV-1a 64.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0xCBF29CE484222325),
        ("a", 0xAF63DC4C8601EC8C),
        ("b", 0xAF63DF4C8601F1A5),
        ("c", 0xAF63DE4C8601EFF2),
        ("foobar", 0x85944171F73967E8),
    ],
)
def test_fnv1a64_matches_the_published_vectors(text, expected):
    assert fnv1a64(text) == expected


def fnv_of_bytes(data: bytes) -> int:
    """FNV-1a 64 written from the spec, to compare the module's choice of bytes against."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) % 2**64
    return h


def test_hash_is_over_utf8_bytes_and_formats_as_16_lowercase_hex_digits():
    # Go hashes []byte(s): "é" is the two bytes c3 a9, not the one code point e9.
    assert fnv1a64("é") == fnv_of_bytes(b"\xc3\xa9") != fnv_of_bytes(b"\xe9")
    assert hash_field("") == "cbf29ce484222325"
    assert hash_field("a") == "af63dc4c8601ec8c"
    # 16 digits even when the hash is small: HashField's %016x
    assert all(len(hash_field(str(i))) == 16 for i in range(200))


def test_bounds_and_ranges_in_wire_form():
    assert format_bound(0) == "0x0000000000000000"
    assert format_bound(1 << 63) == "0x8000000000000000"
    assert format_bound(HASH_SPACE_END) == "0x10000000000000000"
    for bad in (-1, HASH_SPACE_END + 1):
        with pytest.raises(ValueError):
            format_bound(bad)
    assert str(ShardRange(0, 1 << 63)) == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    )
    assert format_selector(
        [ShardRange(0, 1 << 62, FIELD_NAMESPACE), ShardRange(1 << 63, 3 << 62, FIELD_NAMESPACE)]
    ) == (
        "shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000')"
        " || shardRange(object.metadata.namespace, '0x8000000000000000', '0xc000000000000000')"
    )


def test_invalid_ranges_and_selectors_are_refused():
    for start, end in ((5, 5), (6, 5), (-1, 5), (0, HASH_SPACE_END + 1)):
        with pytest.raises(ValueError):
            ShardRange(start, end)
    with pytest.raises(ValueError, match="unsupported field path"):
        ShardRange(0, 1, "object.metadata.name")
    with pytest.raises(ValueError, match="omit shardSelector"):
        format_selector([])
    with pytest.raises(ValueError, match="same field"):
        format_selector([ShardRange(0, 1), ShardRange(1, 2, FIELD_NAMESPACE)])


def test_start_is_inclusive_and_end_exclusive():
    r = ShardRange(10, 20)
    assert [h for h in range(8, 23) if r.contains(h)] == list(range(10, 20))
    top = ShardRange((1 << 64) - 1, HASH_SPACE_END)
    assert top.contains((1 << 64) - 1) and not top.contains(0)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16, 100])
def test_buckets_tile_the_hash_space(count):
    ranges = [bucket_range(i, count) for i in range(count)]
    assert ranges[0].start == 0 and ranges[-1].end == HASH_SPACE_END
    assert all(a.end == b.start for a, b in zip(ranges, ranges[1:], strict=False))
    if count == 2:
        assert [(r.start, r.end) for r in ranges] == [(0, 1 << 63), (1 << 63, 1 << 64)]
    with pytest.raises(ValueError):
        bucket_range(count, count)


def test_every_uid_falls_in_exactly_one_bucket():
    objs = [{"metadata": {"uid": str(uuid.uuid4())}} for _ in range(300)]
    buckets = [[bucket_range(i, 5)] for i in range(5)]
    for obj in objs:
        assert sum(matches(b, obj) for b in buckets) == 1
    # uuid4s spread: no bucket of five is empty among 300 (each holds ~60)
    assert all(any(matches(b, o) for o in objs) for b in buckets)


def test_matches_any_range_of_one_field():
    obj = {"metadata": {"uid": "u-1", "namespace": "team-a"}}
    h = fnv1a64("u-1")
    assert matches([ShardRange(h, h + 1)], obj)
    assert not matches([ShardRange(0, h)], obj)
    assert matches([ShardRange(0, h), ShardRange(h, h + 1)], obj)
    assert matches([ShardRange(fnv1a64("team-a"), fnv1a64("team-a") + 1, FIELD_NAMESPACE)], obj)
    assert matches([], obj)  # no range: everything, as sharding.Everything()
    with pytest.raises(ValueError, match="inconsistent shard keys"):
        matches([ShardRange(0, 1), ShardRange(1, 2, FIELD_NAMESPACE)], obj)


def test_field_value_of_a_cluster_scoped_object_is_empty():
    assert field_value({"metadata": {"name": "n"}}, FIELD_NAMESPACE) == ""
    assert field_value({"metadata": {"uid": "x"}}, FIELD_UID) == "x"
    # the empty string hashes to the offset basis, like any other value
    assert matches([ShardRange(0xCBF29CE484222325, 0xCBF29CE484222326, FIELD_NAMESPACE)], {})
    with pytest.raises(ValueError):
        field_value({}, "metadata.uid")
