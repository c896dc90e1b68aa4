"""kubesim's format checks and field-error wording, against apimachinery's own messages."""

from __future__ import annotations

import pytest

from kubesim.api import errors
from kubesim.api.resources import BUILTIN_RESOURCES
from kubesim.registry import strategy
from kubesim.validation import content, metavalidation

EVENT = next(r for r in BUILTIN_RESOURCES if r.kind == "Event")


def test_regex_error_lists_examples_as_upstream_joins_them():
    assert content.regex_error("msg", "x+") == "msg (regex used for validation is 'x+')"
    assert content.regex_error("msg", "x+", "a", "b") == (
        "msg (e.g. 'a',  or 'b', regex used for validation is 'x+')"
    )


def test_label_keys():
    assert content.is_label_key("example.com/name") == []
    assert content.is_label_key("/name") == ["prefix part must be non-empty"]
    assert content.is_label_key("Example.com/name")[0].startswith(
        "prefix part a lowercase RFC 1123 subdomain"
    )
    assert content.is_label_key("a/b/c")[0].startswith("a valid label key must consist of")
    assert content.is_label_key("n" * 64) == ["name part must be no more than 63 characters"]
    assert content.is_label_key("x\n") != []  # Go's $ does not match before a newline


def test_dns_labels_and_subdomains():
    assert content.is_dns1123_label("a.b") == ["must not contain dots"]
    assert content.is_dns1123_subdomain("a.b") == []
    assert content.is_dns1123_subdomain("x" * 254)[0] == "must be no more than 253 characters"
    assert content.is_dns1035_label("1a") != [] and content.is_dns1035_label("a1") == []


def test_generate_name_prefixes_may_end_with_a_dash():
    assert metavalidation.name_is_dns_subdomain("web-", True) == []
    assert metavalidation.name_is_dns_subdomain("web-", False) != []


@pytest.mark.parametrize(
    "value,shown",
    [
        ('a"b\\c\n', '"a\\"b\\\\c\\n"'),
        ("é", '"é"'),
        ("\x01", '"\\x01"'),
        (7, "7"),
        (None, "null"),
        ({"b": "2", "a": "1"}, 'map[string]string{"a":"1", "b":"2"}'),
        (["x", "y"], '[]string{"x", "y"}'),
        (errors.GoStringer("25%"), "25%"),
    ],
)
def test_bad_values_print_as_go_prints_them(value, shown):
    assert errors.go_value(value) == shown


def test_time_fields_are_stored_as_the_go_types_write_them():
    ev = {
        "firstTimestamp": "2024-05-06T07:08:09.987654+02:00",  # metav1.Time: seconds, UTC
        "eventTime": "2024-05-06T07:08:09.000010Z",  # metav1.MicroTime: six digits, UTC
        "series": {"lastObservedTime": "2024-12-31T23:59:59.500000-01:00"},
    }
    strategy.canonical_times(EVENT, ev)
    assert ev == {
        "firstTimestamp": "2024-05-06T05:08:09Z",
        "eventTime": "2024-05-06T07:08:09.000010Z",
        "series": {"lastObservedTime": "2025-01-01T00:59:59.500000Z"},
    }
    with pytest.raises(errors.ApiError) as ei:
        strategy.canonical_times(EVENT, {"lastTimestamp": "yesterday"})
    assert ei.value.code == 400
