"""Field sets and the typed walks of server-side apply (kubesim/registry/fieldpath.py).

The cases follow structured-merge-diff's tests: fieldpath's serialize_test.go (FieldsV1 form),
typed's toset/compare/merge tests (associative lists by key, sets, atomic values, the
empty/null leaf rule) and merge's multiple_appliers_test.go (list order after an apply).
"""

from __future__ import annotations

import pytest

from kubesim.registry import fieldpath as fp
from kubesim.registry.fieldmanager import FieldManager
from kubesim.views.openapi import builtin_schemas

MEMBER = {".": {}}


@pytest.fixture(scope="module")
def deployment_type() -> fp.Type:
    fm = FieldManager(builtin_schemas())
    return fm.types.named("io.k8s.api.apps.v1.Deployment")


def _pod_spec(t: fp.Type) -> fp.Type:
    return t.field("spec").field("template").field("spec")


def test_fields_v1_round_trip_writes_members_as_empty_objects_and_dot_first():
    s = {"f:spec": {"f:replicas": MEMBER}, "f:metadata": {"f:labels": {".": {}, "f:app": MEMBER}}}
    out = fp.to_fields_v1(s)
    assert out == {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:replicas": {}}}
    assert list(out) == ["f:metadata", "f:spec"]
    assert list(out["f:metadata"]["f:labels"]) == [".", "f:app"]
    assert fp.from_fields_v1(out) == s
    with pytest.raises(ValueError):
        fp.from_fields_v1({"spec": {}})
    with pytest.raises(ValueError):
        fp.from_fields_v1([])


def test_to_field_set_keys_list_maps_and_sets_and_keeps_atomics_whole(deployment_type):
    value = {
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx",
                            "args": ["-v"],
                            "ports": [{"containerPort": 80}],
                            "resources": {},
                        }
                    ]
                }
            },
        },
        "metadata": {"finalizers": ["a"]},
    }
    s = fp.to_field_set(value, deployment_type)
    container = s["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert container == {
        ".": {},
        "f:name": MEMBER,
        "f:image": MEMBER,
        # an atomic list and an empty map are leaves
        "f:args": MEMBER,
        "f:resources": MEMBER,
        # a missing key field takes its default: upstream keys the port as TCP
        "f:ports": {
            'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": MEMBER}
        },
    }
    # a LabelSelector is atomic (+structType=atomic upstream)
    assert s["f:spec"]["f:selector"] == MEMBER
    # a granular map is not itself a member
    assert "." not in s["f:spec"]
    # finalizers are a set: one v: element per value
    assert s["f:metadata"]["f:finalizers"] == {'v:"a"': MEMBER}


def test_compare_adds_a_new_map_as_a_member_and_reports_modified_and_removed(deployment_type):
    old = {"metadata": {}, "spec": {"replicas": 1, "paused": True}}
    new = {"metadata": {"labels": {"a": "1"}}, "spec": {"replicas": 2}}
    added, modified, removed = fp.compare(old, new, deployment_type)
    assert added == {"f:metadata": {"f:labels": {".": {}, "f:a": MEMBER}}}
    assert modified == {"f:spec": {"f:replicas": MEMBER}}
    assert removed == {"f:spec": {"f:paused": MEMBER}}
    # two empty values compare as leaves: {} -> missing is a removal of the leaf
    assert fp.compare({"spec": {"strategy": {}}}, {"spec": {}}, deployment_type)[2] == {
        "f:spec": {"f:strategy": MEMBER}
    }
    assert fp.compare(new, new, deployment_type) == (None, None, None)


def test_compare_walks_list_items_by_key(deployment_type):
    pod = _pod_spec(deployment_type)
    old = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}
    new = {"containers": [{"name": "b", "image": "2"}, {"name": "c", "image": "1"}]}
    added, modified, removed = fp.compare(old, new, pod)
    assert added == {
        "f:containers": {'k:{"name":"c"}': {".": {}, "f:name": MEMBER, "f:image": MEMBER}}
    }
    assert modified == {"f:containers": {'k:{"name":"b"}': {"f:image": MEMBER}}}
    assert removed == {
        "f:containers": {'k:{"name":"a"}': {".": {}, "f:name": MEMBER, "f:image": MEMBER}}
    }


@pytest.mark.parametrize(
    ("live", "applied", "merged"),
    [
        # new items after the live ones the configuration does not name
        (["a", "b"], ["b", "c"], ["a", "b", "c"]),
        # shared items take the applied order; others keep their place
        (["a", "b", "c"], ["c", "b"], ["a", "c", "b"]),
        (["x", "a", "y", "b"], ["b", "a"], ["x", "y", "b", "a"]),
        ([], ["a"], ["a"]),
    ],
)
def test_merge_orders_list_items_as_structured_merge_diff(deployment_type, live, applied, merged):
    pod = _pod_spec(deployment_type)
    out = fp.merge(
        {"containers": [{"name": n, "image": "live"} for n in live]},
        {"containers": [{"name": n} for n in applied]},
        pod,
    )
    assert [c["name"] for c in out["containers"]] == merged
    # an item both name keeps the live fields the configuration does not set
    assert all(c["image"] == "live" for c in out["containers"] if c["name"] in live)


def test_merge_replaces_atomics_merges_sets_and_drops_nulls(deployment_type):
    live = {
        "metadata": {"finalizers": ["a"], "labels": {"x": "1", "y": "2"}},
        "spec": {"selector": {"matchLabels": {"a": "1", "b": "2"}}},
    }
    config = {
        "metadata": {"finalizers": ["b"], "labels": {"y": None}},
        "spec": {"selector": {"matchLabels": {"c": "3"}}},
    }
    out = fp.merge(live, config, deployment_type)
    assert out["metadata"] == {"finalizers": ["a", "b"], "labels": {"x": "1"}}
    assert out["spec"]["selector"] == {"matchLabels": {"c": "3"}}
    assert live["metadata"]["labels"] == {"x": "1", "y": "2"}  # inputs are not changed


def test_remove_items_keeps_what_another_set_owns_and_the_keys_of_kept_items(deployment_type):
    pod = _pod_spec(deployment_type)
    value = {"containers": [{"name": "a", "image": "1", "tty": True}, {"name": "b", "image": "2"}]}
    drop = fp.to_field_set(value, pod)
    # another manager owns a's image: a stays with its key and that field, b goes
    keep = {"f:containers": {'k:{"name":"a"}': {"f:image": MEMBER}}}
    assert fp.remove_items(value, drop, keep, pod) == {"containers": [{"name": "a", "image": "1"}]}
    assert fp.remove_items(value, drop, {}, pod) == {"containers": []}


def test_set_algebra():
    a = {"f:a": MEMBER, "f:b": {".": {}, "f:c": MEMBER}}
    b = {"f:b": MEMBER, "f:d": MEMBER}
    assert fp.union(a, b) == {"f:a": MEMBER, "f:b": {".": {}, "f:c": MEMBER}, "f:d": MEMBER}
    # removing a member keeps its children
    assert fp.difference(a, b) == {"f:a": MEMBER, "f:b": {"f:c": MEMBER}}
    assert fp.intersection(a, b) == {"f:b": MEMBER}
    assert fp.filter_subtree(a, "f:b") == {"f:b": {".": {}, "f:c": MEMBER}}
    assert fp.overlaps(a, b) and not fp.overlaps(a, {"f:d": MEMBER})


def test_path_strings_are_fieldpath_path_strings():
    assert fp.path_string(("f:spec", "f:replicas")) == ".spec.replicas"
    containers = ("f:spec", "f:containers", 'k:{"name":"app"}', "f:image")
    assert fp.path_string(containers) == '.spec.containers[name="app"].image'
    port = ("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')
    assert fp.path_string(port) == '.ports[containerPort=80,protocol="TCP"]'
    assert fp.path_string(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert fp.leaf_paths({"f:b": MEMBER, "f:a": {".": {}, "f:c": MEMBER}}) == [
        ("f:a",),
        ("f:a", "f:c"),
        ("f:b",),
    ]
