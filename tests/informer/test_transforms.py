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


def test_intern_strings_shares_equal_short_values_and_keeps_the_object_equal():
    import copy
    import json

    from informer.transforms import INTERN_MAX_LENGTH, transform_intern_strings

    def decoded(name):  # what a decoder hands over: fresh strings everywhere
        return json.loads(
            json.dumps(
                {
                    "apiVersion": "apps/v1",
                    "metadata": {"name": name, "labels": {"app": "nginx"}},
                    "spec": {
                        "containers": [{"image": "nginx:latest", "args": ["--one", ["--two"]]}]
                    },
                    "status": {"message": "x" * (INTERN_MAX_LENGTH + 1), "replicas": 1},
                }
            )
        )

    a, b = decoded("a"), decoded("b")
    before = copy.deepcopy(a)
    assert transform_intern_strings(a) is a and a == before
    transform_intern_strings(b)
    assert a["apiVersion"] is b["apiVersion"]
    assert a["metadata"]["labels"]["app"] is b["metadata"]["labels"]["app"]
    image = a["spec"]["containers"][0]
    assert image["image"] is b["spec"]["containers"][0]["image"]
    assert image["args"][1][0] is b["spec"]["containers"][0]["args"][1][0]  # nested lists too
    assert a["status"]["message"] is not b["status"]["message"]  # long ones are left alone
    assert transform_intern_strings(a) == before  # idempotent
    assert transform_intern_strings("tombstone") == "tombstone"


def test_intern_strings_leaves_the_objects_resource_version_unshared_and_interns_the_rest():
    """A resourceVersion belongs to one version of one object: interning it would share nothing
    and only keep an entry in the interpreter's interned-strings table while it is cached."""
    import json
    import sys
    import uuid

    from informer.transforms import UNSHARED_METADATA, transform_intern_strings

    rv, uid = f"rv-{uuid.uuid4()}", str(uuid.uuid4())
    body = {
        "metadata": {
            "name": "web",
            "namespace": "default",
            UNSHARED_METADATA: rv,
            "ownerReferences": [{"uid": uid, "name": "owner"}],
            "labels": {"app": "nginx"},
        },
        "spec": {"template": {"metadata": {"labels": {"app": "nginx"}}}},
    }
    a, b = json.loads(json.dumps(body)), json.loads(json.dumps(body))
    transform_intern_strings(a)
    transform_intern_strings(b)
    assert a == b == body
    assert list(a["metadata"]) == list(body["metadata"])  # in place: the key order is kept
    # the resourceVersion stays each decoded object's own string, out of the interned table
    assert a["metadata"]["resourceVersion"] is not b["metadata"]["resourceVersion"]
    assert sys.intern(f"rv-{rv[3:]}") is not a["metadata"]["resourceVersion"]
    # everything else in the metadata is still shared, at any depth, and below it too
    for path in (("name",), ("namespace",), ("labels", "app")):
        x, y = a["metadata"], b["metadata"]
        for step in path:
            x, y = x[step], y[step]
        assert x is y, path
    assert a["metadata"]["ownerReferences"][0]["uid"] is b["metadata"]["ownerReferences"][0]["uid"]
    template_app = a["spec"]["template"]["metadata"]["labels"]["app"]
    assert template_app is b["spec"]["template"]["metadata"]["labels"]["app"]
    assert template_app is a["metadata"]["labels"]["app"]
    assert transform_intern_strings(a) == body  # idempotent
    no_metadata = {"metadata": None, "kind": "x"}
    assert transform_intern_strings(dict(no_metadata)) == no_metadata


def test_chain_applies_transforms_in_order():
    from informer.transforms import chain_transforms, transform_intern_strings

    chained = chain_transforms(transform_strip_managed_fields, transform_intern_strings)
    obj = {"metadata": {"name": "a", "managedFields": [{}]}}
    assert chained(obj) == {"metadata": {"name": "a"}}
    assert chain_transforms(lambda o: o + [1], lambda o: o + [2])([]) == [1, 2]
