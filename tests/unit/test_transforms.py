"""informer.transforms."""

from informer.transforms import transform_strip_managed_fields


def test_strips_managed_fields_and_keeps_the_rest():
    obj = {
        "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}], "labels": {"x": "y"}},
        "spec": {"replicas": 1},
    }
    out = transform_strip_managed_fields(obj)
    assert out == {"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"replicas": 1}}


def test_leaves_other_objects_alone():
    assert transform_strip_managed_fields({"metadata": {"name": "a"}}) == {
        "metadata": {"name": "a"}
    }
    assert transform_strip_managed_fields({}) == {}
    tombstone_like = object()
    assert transform_strip_managed_fields(tombstone_like) is tombstone_like
