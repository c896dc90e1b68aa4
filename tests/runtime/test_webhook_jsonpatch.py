"""runtime.webhook.jsonpatch: the patch takes the original to the current document, exactly."""

from __future__ import annotations

import pytest

from runtime.webhook.jsonpatch import apply_patch, create_patch, pointer


def test_equal_documents_need_no_patch():
    doc = {"a": [1, {"b": True}], "c": None}
    assert create_patch(doc, {"a": [1, {"b": True}], "c": None}) == []


def test_added_removed_and_replaced_members_in_sorted_order():
    before = {"spec": {"replicas": 1, "old": "x"}, "keep": 1}
    after = {"spec": {"replicas": 2, "new": "y", "deploymentName": "d"}, "keep": 1}
    assert create_patch(before, after) == [
        {"op": "remove", "path": "/spec/old"},
        {"op": "add", "path": "/spec/deploymentName", "value": "d"},
        {"op": "add", "path": "/spec/new", "value": "y"},
        {"op": "replace", "path": "/spec/replicas", "value": 2},
    ]


def test_keys_with_slash_and_tilde_are_escaped():
    before = {"metadata": {"labels": {}}}
    after = {"metadata": {"labels": {"example.com/a~b": "v"}}}
    ops = create_patch(before, after)
    assert ops == [{"op": "add", "path": "/metadata/labels/example.com~1a~0b", "value": "v"}]
    assert apply_patch(before, ops) == after
    assert pointer("a/b", "c~d", 0) == "/a~1b/c~0d/0"


def test_a_bool_is_not_the_number_one():
    assert create_patch({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"l": [1, 2, 3]}, {"l": [1, 5, 3]}),  # same length: element by element
        ({"l": [1, 2, 3]}, {"l": [1, 2]}),  # shorter: replaced whole
        ({"l": []}, {"l": [{"x": 1}]}),
        ({"o": {"x": 1}}, {"o": [1]}),  # a type change
        ({"a": {"b": {"c": 1}}}, {}),
    ],
)
def test_applying_the_patch_gives_the_current_document(before, after):
    assert apply_patch(before, create_patch(before, after)) == after


def test_apply_refuses_a_path_that_does_not_fit():
    with pytest.raises(ValueError, match="missing member"):
        apply_patch({}, [{"op": "replace", "path": "/x", "value": 1}])
