"""kubesim.registry.selection: field selectors per resource and continue tokens."""

from __future__ import annotations

import pytest

from kubesim.api import errors
from kubesim.api.resources import BUILTIN_RESOURCES, ResourceInfo
from kubesim.registry.selection import build_filter, decode_continue, encode_continue

EVENTS = next(r for r in BUILTIN_RESOURCES if r.plural == "events")
FOOS = ResourceInfo("g", "v1", "foos", "Foo", True, custom=True)


def test_field_selectors_on_events_and_unsupported_fields():
    ev = {
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"name": "f"},
        "reason": "R",
        "source": {"component": "ctl"},
    }
    assert build_filter(EVENTS, None, None, "involvedObject.name=f,reason!=X,source=ctl")(ev)
    assert not build_filter(EVENTS, None, None, "reason==X")(ev)
    with pytest.raises(errors.ApiError) as ei:
        build_filter(FOOS, None, None, "spec.replicas=1")
    assert ei.value.code == 400 and "not a known field selector" in ei.value.body["message"]


def test_empty_selectors_filter_nothing():
    assert build_filter(FOOS, None, "", "") is None


def test_continue_token_round_trip_and_garbage():
    tok = encode_continue(42, "ns", "name")
    assert decode_continue(tok, True) == (42, ("ns", "name"))
    for bad in ("bogus", "e30", encode_continue(42, "ns", "n")[:-3]):
        with pytest.raises(errors.ApiError) as ei:
            decode_continue(bad, True)
        assert ei.value.code == 400
