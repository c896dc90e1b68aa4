"""managedFields and server-side apply, in-process (kubesim/registry/fieldmanager.py).

The cases follow structured-merge-diff's merge tests (multiple_appliers_test.go,
update_test.go, conflict_test.go) and the apiserver's managedfields tests (capmanagers_test.go,
managedfieldsupdater_test.go: one entry per manager, time moved only by a change;
fieldmanager_test.go: reset with [] or [{}], stripped identity fields).
"""

from __future__ import annotations

import copy

import pytest

from kubesim.api import errors
from kubesim.api.resources import Registry
from kubesim.registry.fieldmanager import MAX_UPDATE_MANAGERS, FieldManager
from kubesim.views.openapi import builtin_schemas


@pytest.fixture(scope="module")
def fm() -> FieldManager:
    return FieldManager(builtin_schemas())


@pytest.fixture(scope="module")
def info():
    found = Registry().lookup("apps", "v1", "deployments")
    assert found is not None
    return found


def deployment(replicas: int = 1, **spec) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "u", "resourceVersion": "1"},
        "spec": {"replicas": replicas, **spec},
        "status": {},
    }


def config(**spec) -> dict:
    meta = {"name": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def entries(obj: dict) -> dict[str, dict]:
    return {
        f"{e.get('manager', '')}/{e['operation']}": e["fieldsV1"]
        for e in obj["metadata"].get("managedFields") or []
    }


def created(fm, info, manager: str = "creator", **spec) -> dict:
    obj = deployment(**spec)
    fm.update(info, None, obj, manager)
    return obj


def test_a_create_records_one_update_entry_without_identity_fields(fm, info):
    obj = created(fm, info)
    (entry,) = obj["metadata"]["managedFields"]
    assert entry["manager"] == "creator" and entry["operation"] == "Update"
    assert entry["apiVersion"] == "apps/v1" and entry["fieldsType"] == "FieldsV1"
    assert list(entry) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
    # name, namespace, uid, resourceVersion and metadata itself are never owned
    assert entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_an_update_takes_changed_fields_from_other_managers(fm, info):
    live = created(fm, info, paused=True)
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 5
    fm.update(info, live, new, "scaler")
    assert entries(new) == {
        "creator/Update": {"f:spec": {"f:paused": {}}},
        "scaler/Update": {"f:spec": {"f:replicas": {}}},
    }
    # a removed field leaves every set; an entry left empty is removed
    newer = copy.deepcopy(new)
    del newer["spec"]["paused"]
    fm.update(info, new, newer, "other")
    assert entries(newer) == {"scaler/Update": {"f:spec": {"f:replicas": {}}}}


def test_updates_by_one_manager_share_an_entry_whose_time_moves_only_on_change(fm, info):
    live = created(fm, info)
    live["metadata"]["managedFields"][0]["time"] = "2020-01-01T00:00:00Z"
    same = copy.deepcopy(live)
    fm.update(info, live, same, "creator")
    assert same["metadata"]["managedFields"] == live["metadata"]["managedFields"]
    new = copy.deepcopy(live)
    new["spec"]["paused"] = True
    fm.update(info, live, new, "creator")
    (entry,) = new["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:spec": {"f:paused": {}, "f:replicas": {}}}
    assert entry["time"] != "2020-01-01T00:00:00Z"


@pytest.mark.parametrize("reset", [[], [{}]])
def test_an_empty_managed_fields_list_resets_them(fm, info, reset):
    live = created(fm, info)
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = reset
    fm.update(info, live, new, "creator", requested=reset)
    assert "managedFields" not in new["metadata"]


def test_status_is_owned_through_status_only(fm, info):
    live = created(fm, info)
    new = copy.deepcopy(live)
    new["status"] = {"replicas": 1}
    fm.update(info, live, new, "main")
    assert entries(new) == entries(live)
    fm.update(info, live, new, "kcm", sub="status")
    (status_entry,) = [e for e in new["metadata"]["managedFields"] if e.get("subresource")]
    assert status_entry["subresource"] == "status" and status_entry["manager"] == "kcm"
    assert status_entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_more_than_ten_updaters_fold_the_oldest_into_ancient_changes(fm, info):
    obj = created(fm, info)
    for i in range(MAX_UPDATE_MANAGERS + 2):
        new = copy.deepcopy(obj)
        new["metadata"].setdefault("labels", {})[f"l{i}"] = "x"
        fm.update(info, obj, new, f"m{i:02d}")
        for e in new["metadata"]["managedFields"]:
            # (times one second apart, as upstream sorts by them)
            e.setdefault("time", "")
        new["metadata"]["managedFields"][-1]["time"] = f"2030-01-01T00:00:{i:02d}Z"
        obj = new
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == MAX_UPDATE_MANAGERS
    assert "ancient-changes" in managers


def test_apply_owns_exactly_what_it_applies_and_conflicts_on_changed_owned_fields(fm, info):
    live = created(fm, info, "kubectl-client-side-apply", replicas=1, paused=False)
    with pytest.raises(errors.ApiError) as ei:
        fm.apply(info, live, config(replicas=3), "kubectl", force=False)
    assert ei.value.code == 409
    body = ei.value.body
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    assert body["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
                "field": ".spec.replicas",
            }
        ]
    }
    # the same value is no conflict: both own it
    shared = fm.apply(info, live, config(replicas=1), "kubectl", force=False)
    assert entries(shared) == {
        "kubectl/Apply": {"f:spec": {"f:replicas": {}}},
        "kubectl-client-side-apply/Update": {"f:spec": {"f:paused": {}, "f:replicas": {}}},
    }
    # Apply entries come first (sorted by operation)
    assert shared["metadata"]["managedFields"][0]["operation"] == "Apply"
    # force takes the field over
    forced = fm.apply(info, live, config(replicas=3), "kubectl", force=True)
    assert forced["spec"]["replicas"] == 3
    assert entries(forced) == {
        "kubectl/Apply": {"f:spec": {"f:replicas": {}}},
        "kubectl-client-side-apply/Update": {"f:spec": {"f:paused": {}}},
    }


def test_conflicts_with_several_managers_are_listed_by_manager(fm, info):
    live = created(fm, info, "a", replicas=1)
    new = copy.deepcopy(live)
    new["spec"]["paused"] = True
    fm.update(info, live, new, "b")
    with pytest.raises(errors.ApiError) as ei:
        fm.apply(info, new, config(replicas=2, paused=False), "c", force=False)
    assert ei.value.body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "a" using apps/v1:\n- .spec.replicas\n'
        'conflicts with "b" using apps/v1:\n- .spec.paused'
    )
    assert [c["field"] for c in ei.value.body["details"]["causes"]] == [
        ".spec.replicas",
        ".spec.paused",
    ]


def test_apply_removes_what_it_no_longer_applies_unless_another_manager_owns_it(fm, info):
    live = created(fm, info, "creator")
    first = fm.apply(info, live, config(paused=True, minReadySeconds=5), "kubectl", force=False)
    assert first["spec"]["paused"] is True
    second = fm.apply(info, first, config(minReadySeconds=5), "kubectl", force=False)
    assert "paused" not in second["spec"]
    assert entries(second)["kubectl/Apply"] == {"f:spec": {"f:minReadySeconds": {}}}
    # another applier of the same value shares it: dropping it from one config keeps it
    both = fm.apply(info, second, config(minReadySeconds=5), "other", force=False)
    kept = fm.apply(info, both, config(replicas=1), "kubectl", force=False)
    assert kept["spec"]["minReadySeconds"] == 5


def test_two_appliers_merge_list_items_by_key(fm, info):
    live = created(fm, info)

    def containers(*names: str) -> dict:
        return {"template": {"spec": {"containers": [{"name": n, "image": n} for n in names]}}}

    a = fm.apply(info, live, config(**containers("a")), "ma", force=False)
    ab = fm.apply(info, a, config(**containers("b")), "mb", force=False)
    assert [c["name"] for c in ab["spec"]["template"]["spec"]["containers"]] == ["a", "b"]
    b = fm.apply(info, ab, config(**containers()), "ma", force=False)
    assert [c["name"] for c in b["spec"]["template"]["spec"]["containers"]] == ["b"]


def test_apply_refuses_another_version_and_managed_fields_in_the_body(fm, info):
    with pytest.raises(errors.ApiError) as ei:
        fm.apply(info, None, dict(config(), apiVersion="apps/v1beta1"), "m", force=False)
    assert ei.value.code == 400 and ei.value.body["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, "
        "expected: apps/v1"
    )
    body = config()
    body["metadata"]["managedFields"] = []
    with pytest.raises(errors.ApiError) as ei:
        fm.apply(info, None, body, "m", force=False)
    assert ei.value.code == 400 and ei.value.body["message"] == "metadata.managedFields must be nil"


def test_entries_a_write_does_not_touch_are_written_back_as_they_were(fm, info):
    live = created(fm, info)
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = live["metadata"]["managedFields"]
    new["status"] = {"replicas": 1}
    fm.update(info, live, new, "kcm", sub="status")
    creator, status_entry = new["metadata"]["managedFields"]
    # (the hot path: the stored entry itself, neither decoded nor encoded again)
    assert creator is live["metadata"]["managedFields"][0]
    assert status_entry["manager"] == "kcm"
