"""client.features: client-go's KUBE_FEATURE_ gates (features/envvar.go, envvar_test.go)."""

from __future__ import annotations

import logging

import pytest

from client.features import (
    WATCH_LIST_CLIENT,
    EnvVarFeatureGates,
    feature_gates,
    parse_bool,
    replace_feature_gates,
)


def test_watch_list_client_is_on_by_default_as_in_client_go_1_35():
    assert EnvVarFeatureGates(environ={}).enabled(WATCH_LIST_CLIENT) is True


@pytest.mark.parametrize("text", ["false", "False", "FALSE", "f", "F", "0"])
def test_every_spelling_of_false_that_parse_bool_takes_turns_it_off(text):
    gates = EnvVarFeatureGates(environ={"KUBE_FEATURE_WatchListClient": text})
    assert gates.enabled(WATCH_LIST_CLIENT) is False


@pytest.mark.parametrize("text", ["true", "True", "TRUE", "t", "T", "1"])
def test_every_spelling_of_true_keeps_it_on(text):
    gates = EnvVarFeatureGates(environ={"KUBE_FEATURE_WatchListClient": text})
    assert gates.enabled(WATCH_LIST_CLIENT) is True


@pytest.mark.parametrize("text", ["no", "off", "", " false", "yes"])
def test_a_value_parse_bool_refuses_is_logged_and_the_default_stands(text, caplog):
    gates = EnvVarFeatureGates(environ={"KUBE_FEATURE_WatchListClient": text})
    with caplog.at_level(logging.ERROR, logger="client.features"):
        assert gates.enabled(WATCH_LIST_CLIENT) is True
    assert "cannot set feature gate 'WatchListClient'" in caplog.text


def test_the_environment_is_read_once_at_the_first_question():
    environ = {"KUBE_FEATURE_WatchListClient": "false"}
    gates = EnvVarFeatureGates(environ=environ)
    assert gates.enabled(WATCH_LIST_CLIENT) is False
    environ["KUBE_FEATURE_WatchListClient"] = "true"
    assert gates.enabled(WATCH_LIST_CLIENT) is False


def test_an_unknown_feature_is_a_programming_error():
    with pytest.raises(KeyError, match="NoSuchFeature"):
        EnvVarFeatureGates(environ={}).enabled("NoSuchFeature")


def test_replace_feature_gates_returns_the_previous_ones():
    mine = EnvVarFeatureGates(environ={})
    previous = replace_feature_gates(mine)
    try:
        assert feature_gates() is mine
    finally:
        assert replace_feature_gates(previous) is mine
    assert feature_gates() is previous


def test_parse_bool_is_gos():
    assert [parse_bool(t) for t in ("1", "t", "0", "f")] == [True, True, False, False]
    with pytest.raises(ValueError):
        parse_bool("yes")
