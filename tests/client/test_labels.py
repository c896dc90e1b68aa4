"""Label selector parsing and matching (apimachinery labels semantics)."""

import pytest

from client.labels import (
    SelectorParseError,
    parse_selector,
    selector_from_label_selector,
    selector_from_set,
)


@pytest.mark.parametrize(
    "text, labels, expected",
    [
        ("", {"a": "b"}, True),
        ("app=nginx", {"app": "nginx"}, True),
        ("app==nginx", {"app": "nginx"}, True),
        ("app=nginx", {"app": "redis"}, False),
        ("app!=nginx", {}, True),  # != matches a missing key, as upstream
        ("app!=nginx", {"app": "nginx"}, False),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("!app", {}, True),
        ("env in (prod, staging)", {"env": "staging"}, True),
        ("env in (prod)", {}, False),
        ("env notin (prod)", {}, True),
        ("env notin (prod,dev)", {"env": "dev"}, False),
        ("app=nginx,tier in (web)", {"app": "nginx", "tier": "web"}, True),
        ("app=nginx,tier in (web)", {"app": "nginx", "tier": "db"}, False),
        ("x>3", {"x": "4"}, True),
        ("x<3", {"x": "4"}, False),
        ("x>3", {"x": "abc"}, False),
        ("example.com/role=a", {"example.com/role": "a"}, True),
    ],
)
def test_parse_and_match(text, labels, expected):
    assert parse_selector(text).matches(labels) is expected


@pytest.mark.parametrize(
    "bad", ["app=", "=x", "a b=c", "env in (a", "x>y", "app=no spaces", ",", "-a=b"]
)
def test_invalid_selectors_raise(bad):
    if bad == "app=":  # an empty value is valid upstream
        assert parse_selector(bad).matches({"app": ""})
        return
    with pytest.raises(SelectorParseError):
        parse_selector(bad)


def test_string_form_round_trips():
    sel = parse_selector("b in (y,x),a=1,!c")
    assert str(sel) == "a=1,b in (x,y),!c"  # sorted by key; values sorted
    assert parse_selector(str(sel)) == sel


def test_from_set_and_label_selector():
    assert selector_from_set({"app": "nginx"}).matches({"app": "nginx", "x": "y"})
    sel = selector_from_label_selector(
        {
            "matchLabels": {"app": "nginx"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches({"app": "nginx", "tier": "web"})
    assert not sel.matches({"app": "nginx", "tier": "web", "legacy": "1"})
    assert selector_from_label_selector(None).matches({"anything": "x"})
    with pytest.raises(SelectorParseError):
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
