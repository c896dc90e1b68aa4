"""kubesim.registry.sharding: the shardSelector parser, with upstream's accepted inputs and its
error messages (k8s.io/apiserver/pkg/sharding/parser.go and parser_test.go)."""

from __future__ import annotations

import pytest

from kubesim.api import errors
from kubesim.api.shard import (
    FIELD_NAMESPACE,
    FIELD_UID,
    HASH_SPACE_END,
    ShardRange,
    format_selector,
)
from kubesim.registry.sharding import ShardSelectorError, parse, request_shard_ranges

UID = "object.metadata.uid"
LOW = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
HIGH = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
HALF = 1 << 63

ACCEPTED = [
    # parser_test.go's accepted inputs, and the ranges they mean
    (LOW, [ShardRange(0, HALF)]),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
        [ShardRange(0, HASH_SPACE_END)],
    ),
    (
        "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
        [ShardRange(0xAA, 0xFF, FIELD_NAMESPACE)],
    ),
    (f"{LOW} || {HIGH}", [ShardRange(0, HALF), ShardRange(HALF, HASH_SPACE_END)]),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || "
        "shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a') || "
        "shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f')",
        [ShardRange(0, 5), ShardRange(5, 10), ShardRange(10, 15)],
    ),
    (
        "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
        [ShardRange(0, HALF)],
    ),
    (
        "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
        [ShardRange(0, HALF)],
    ),
    # CEL's own syntax: double quotes, parentheses, a comment, newlines
    (
        'shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")',
        [ShardRange(0, HALF)],
    ),
    (f"({LOW}) || (({HIGH}))", [ShardRange(0, HALF), ShardRange(HALF, HASH_SPACE_END)]),
    (f"{LOW} // lower half\n||\n{HIGH}", [ShardRange(0, HALF), ShardRange(HALF, HASH_SPACE_END)]),
]


@pytest.mark.parametrize(("text", "ranges"), ACCEPTED, ids=range(len(ACCEPTED)))
def test_accepted_selectors(text, ranges):
    assert list(parse(text)) == ranges


@pytest.mark.parametrize(
    "text",
    [
        # parser_test.go's round trips: Parse(s).String() == s
        LOW,
        HIGH,
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
        "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
        f"{LOW} || {HIGH}",
    ],
)
def test_the_formatter_writes_what_the_parser_reads(text):
    assert format_selector(parse(text)) == text


def test_many_ranges_keep_their_order():
    # cel-go balances a || chain into a tree; the walk still yields the ranges left to right
    ranges = [ShardRange(i, i + 1) for i in range(0, 22, 2)]
    assert list(parse(format_selector(ranges))) == ranges


REJECTED = [
    # (input, upstream's message); parser_test.go's rejected inputs first
    ("", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
    (" \t", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
    (
        "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
        "hexStart must have '0x' prefix, got \"0000000000000000\"",
    ),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
        "hexEnd must have '0x' prefix, got \"8000000000000000\"",
    ),
    (
        "shardRange(object.metadata.uid, '0x', '0x8000000000000000')",
        "hexStart: hex value is required after '0x'",
    ),
    (
        "shardRange(object.metadata.name, '0x00', '0x80')",
        'unsupported field path "object.metadata.name"; supported: object.metadata.uid, '
        "object.metadata.namespace",
    ),
    (
        "shardRange(object.metadata.labels, '0x00', '0x80')",
        'unsupported field path "object.metadata.labels"; supported: object.metadata.uid, '
        "object.metadata.namespace",
    ),
    (
        "invalidFunc(object.metadata.uid, '0x00', '0x80')",
        'unsupported function "invalidFunc"; only shardRange() and || are allowed',
    ),
    (
        "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
        'hexStart: hex value too long (18 chars, max 17): "000000000000000000"',
    ),
    (
        "shardRange(object.metadata.uid, '0x0g', '0x80')",
        'hexStart: invalid hex character "g" in "0x0g"',
    ),
    (
        "shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', "
        "'0xf')",
        'unsupported function "_&&_"; only shardRange() and || are allowed',
    ),
    (
        "shardRange(object.metadata.uid, 0, 8)",
        "hexStart must be a string literal, got int64",
    ),
    (
        "object.metadata.uid > '0x0'",
        'unsupported function "_>_"; only shardRange() and || are allowed',
    ),
    (
        "shardRange(object.metadata.uid, '0x0')",
        "shardRange() requires exactly 3 arguments, got 2",
    ),
    (
        "shardRange(object.metadata.uid, hex(0), '0x8')",
        "hexStart must be a string literal (e.g. '0xff'), got expression kind 4",
    ),
    (
        f"{LOW} || shardRange(object.metadata.namespace, '0x8000000000000000', "
        "'0x10000000000000000')",
        'all shard ranges must use the same field, got "object.metadata.uid" and '
        '"object.metadata.namespace"',
    ),
    (
        "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
        'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean '
        '"0x0000000000000000"?)',
    ),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0xff')",
        'hexEnd must be a 0x-prefixed 16-digit hex value, got "0xff" (did you mean '
        '"0x00000000000000ff"?)',
    ),
    (
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
        "shard range start 0x8000000000000000 must be less than end 0x8000000000000000",
    ),
    (
        "shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')",
        "shard range start 0xffffffffffffffff must be less than end 0x0000000000000000",
    ),
    # the rest of parser.go's checks
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x1ffffffffffffffff')",
        "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got "
        '"0x1ffffffffffffffff"',
    ),
    (
        "shardRange(object.metadata.uid, '0x800000000000000A', '0x10000000000000000')",
        'hexStart: invalid hex character "A" in "0x800000000000000A"',
    ),
    (
        "shardRange(object.metadata.uid, '0X0000000000000000', '0x8000000000000000')",
        "hexStart must have '0x' prefix, got \"0X0000000000000000\"",
    ),
    (
        "shardRange(object.metadata.uid, 0x0, '0x8000000000000000')",
        "hexStart must be a string literal, got int64",
    ),
    (
        "shardRange(object.metadata.uid, b'0x0000000000000000', '0x8000000000000000')",
        "hexStart must be a string literal, got []uint8",
    ),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', true)",
        "hexEnd must be a string literal, got bool",
    ),
    (
        "shardRange('object.metadata.uid', '0x0000000000000000', '0x8000000000000000')",
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), got "
        "expression kind 1",
    ),
    (
        "shardRange(object.metadata['uid'], '0x0000000000000000', '0x8000000000000000')",
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), got "
        "expression kind 4",
    ),
    (
        "shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        'unsupported field path "metadata.uid"; supported: object.metadata.uid, '
        "object.metadata.namespace",
    ),
    (
        "object.metadata.uid",
        "unexpected expression kind 3; expected shardRange() call or || operator",
    ),
    ("uid", "unexpected expression kind 2; expected shardRange() call or || operator"),
    ("'0x0'", "unexpected expression kind 1; expected shardRange() call or || operator"),
    (f"[{LOW}]", "unexpected expression kind 5; expected shardRange() call or || operator"),
    (f"{LOW} || true", "unexpected expression kind 1; expected shardRange() call or || operator"),
    (f"!{LOW}", 'unsupported function "!_"; only shardRange() and || are allowed'),
    # CEL syntax errors (the words after "Syntax error:" are cel-go's ANTLR wording, approximated)
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'",
        "CEL parse error: Syntax error: mismatched input '<EOF>' expecting {')', ','}",
    ),
    (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') |"
        " shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
        "CEL parse error: Syntax error: token recognition error at: '|'",
    ),
    (
        f"{LOW} {HIGH}",
        "CEL parse error: Syntax error: mismatched input 'shardRange' expecting <EOF>",
    ),
    (
        "shardRange(object.metadata.uid, 0x8000000000000000, '0x10000000000000000')",
        "CEL parse error: invalid int literal",
    ),
]


@pytest.mark.parametrize(("text", "message"), REJECTED, ids=range(len(REJECTED)))
def test_rejected_selectors_with_upstreams_messages(text, message):
    with pytest.raises(ShardSelectorError) as ei:
        parse(text)
    assert str(ei.value) == message


def test_a_request_carries_ranges_only_with_the_gate_on():
    query = {"shardSelector": LOW}
    assert request_shard_ranges(query, enabled=True) == (LOW, (ShardRange(0, HALF, FIELD_UID),))
    # gate off: ignored, even when malformed; absent or empty: no filtering
    assert request_shard_ranges(query, enabled=False) is None
    assert request_shard_ranges({"shardSelector": "nonsense("}, enabled=False) is None
    assert request_shard_ranges({}, enabled=True) is None
    assert request_shard_ranges({"shardSelector": ""}, enabled=True) is None


def test_a_malformed_selector_is_a_400_bad_request_with_the_parsers_message():
    with pytest.raises(errors.ApiError) as ei:
        request_shard_ranges({"shardSelector": "shardRange(object.metadata.uid)"}, enabled=True)
    assert ei.value.code == 400
    assert ei.value.body["reason"] == "BadRequest"
    assert ei.value.body["message"] == "shardRange() requires exactly 3 arguments, got 1"
