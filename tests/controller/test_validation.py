"""controller.validation: Foos the controller cannot act on, found before any request."""

from __future__ import annotations

import pytest

from controller.validation import (
    ERR_INVALID_NAME,
    ERR_INVALID_SPEC,
    MESSAGE_NO_DEPLOYMENT_NAME,
    foo_problem,
    label_value_errors,
)


@pytest.mark.parametrize(
    "value",
    ["", "a", "a" * 63, "my-foo", "my.foo_1", "A-Z.z_9", "0"],
)
def test_valid_label_values(value):
    assert label_value_errors(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("a" * 64, ["must be no more than 63 characters"]),
        ("-a", ["a valid label"]),
        ("a-", ["a valid label"]),
        ("a b", ["a valid label"]),
        ("a/b", ["a valid label"]),
        ("." + "a" * 63, ["must be no more than 63 characters", "a valid label"]),
    ],
)
def test_invalid_label_values(value, errors):
    found = label_value_errors(value)
    assert len(found) == len(errors)
    assert all(f.startswith(e) for f, e in zip(found, errors, strict=True))


def foo(name="example", deployment_name="web"):
    return {"metadata": {"name": name}, "spec": {"deploymentName": deployment_name}}


def test_a_foo_the_controller_can_act_on_has_no_problem():
    assert foo_problem(foo()) is None
    assert foo_problem(foo("a" * 63)) is None


def test_no_deployment_name_is_an_invalid_spec():
    assert foo_problem(foo(deployment_name="")) == (ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME)
    assert foo_problem({"metadata": {"name": "x"}}) == (
        ERR_INVALID_SPEC,
        MESSAGE_NO_DEPLOYMENT_NAME,
    )


def test_a_name_longer_than_a_label_value_is_an_invalid_name():
    # 64-253 characters: a valid Foo name (DNS subdomain), not a valid label value
    for length in (64, 253):
        problem = foo_problem(foo("f" * length))
        assert problem is not None and problem.reason == ERR_INVALID_NAME
        assert f"({length} characters)" in problem.message
        assert "'controller' label" in problem.message
        assert "shorter name" in problem.message
