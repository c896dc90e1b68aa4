"""kubesim.registry.patch: merge patch, JSON patch and strategic merge patch rules."""

from __future__ import annotations

import pytest

from kubesim.api import errors
from kubesim.registry.patch import apply_json_patch, apply_merge_patch, apply_strategic_merge_patch


def test_merge_patch_merges_maps_deletes_nulls_and_replaces_lists():
    base = {"a": {"b": 1, "c": 2}, "l": [1, 2], "k": 1}
    out = apply_merge_patch(base, {"a": {"b": None, "d": 4}, "l": [3], "k": None})
    assert out == {"a": {"c": 2, "d": 4}, "l": [3]}
    assert base == {"a": {"b": 1, "c": 2}, "l": [1, 2], "k": 1}  # input untouched


def test_json_patch_ops_and_failures():
    doc = {"a": [1, 2], "m": {"x": 1}}
    out = apply_json_patch(
        doc,
        [
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "add", "path": "/a/0", "value": 0},
            {"op": "remove", "path": "/m/x"},
            {"op": "replace", "path": "/m/new", "value": "ok"},  # missing member: evanphx adds it
            {"op": "copy", "from": "/a/1", "path": "/c"},
            {"op": "move", "from": "/c", "path": "/m/moved"},
            {"op": "test", "path": "/m/moved", "value": 1},
        ],
    )
    assert out == {"a": [0, 1, 2, 3], "m": {"new": "ok", "moved": 1}}
    assert doc == {"a": [1, 2], "m": {"x": 1}}
    for bad in (
        [{"op": "test", "path": "/a/0", "value": 9}],
        [{"op": "remove", "path": "/nope"}],
        [{"op": "frobnicate", "path": "/a"}],
        [{"op": "replace", "path": "/a/7", "value": 1}],
    ):
        with pytest.raises(errors.ApiError) as ei:
            apply_json_patch(doc, bad)
        assert ei.value.code == 422 and "details" not in ei.value.body


def test_strategic_merge_patch_lists_by_merge_key_new_first():
    base = {
        "spec": {
            "containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}],
            "args": ["x"],
        }
    }
    out = apply_strategic_merge_patch(
        base,
        {"spec": {"containers": [{"name": "c"}, {"name": "b", "image": "b:2"}], "args": ["y"]}},
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["c", "a", "b"]
    assert out["spec"]["containers"][2]["image"] == "b:2"
    assert out["spec"]["args"] == ["y"]  # lists without a merge key are replaced
    out = apply_strategic_merge_patch(
        out, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["c", "b"]
    out = apply_strategic_merge_patch(out, {"spec": {"$patch": "replace", "replicas": 1}})
    assert out["spec"] == {"replicas": 1}


def test_strategic_merge_patch_finalizers_merge_as_a_set():
    out = apply_strategic_merge_patch(
        {"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b", "a"]}}
    )
    assert out["metadata"]["finalizers"] == ["b", "a"]
