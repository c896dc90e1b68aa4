"""kubesim's shardSelector (KEP-5866) over HTTP, with the ShardedListAndWatch gate on and off.

With the gate on, a list returns only the objects whose FNV-1a hash of the uid (or namespace)
falls in the selector's ranges and echoes the selector in metadata.shardInfo, on every page; a
watch sends only their events; a malformed selector is a 400. With it off (the default, as in
v1.36), the parameter is ignored. These are the checks of upstream's integration and e2e tests
(test/integration/apiserver/sharding_test.go, test/e2e/apimachinery/sharding.go), on kubesim.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
import uuid
from urllib.parse import urlencode

import pytest
from kubernetes import client

from kubesim.api.shard import (
    FIELD_NAMESPACE,
    FIELD_UID,
    HASH_SPACE_END,
    ShardRange,
    bucket_range,
    fnv1a64,
    format_selector,
    matches,
)
from tests.helpers import ROOT
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, foo, raw
from tests.kubesim.integration.test_watch import RawWatch

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD], sharded_list_and_watch=True)

FOOS = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
ALL_FOOS = f"/apis/{GROUP}/{VERSION}/foos"
LOWER = [bucket_range(0, 2)]
UPPER = [bucket_range(1, 2)]


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


def get(sim, path: str, **query) -> tuple[int, dict]:
    code, _, body = raw(sim, "GET", f"{path}?{urlencode(query)}" if query else path)
    return code, json.loads(body)


def make_foos(custom, n: int, ns: str = "default", prefix: str = "foo") -> dict[str, dict]:
    """n Foos; their stored objects by uid."""
    made = {}
    for i in range(n):
        labels = {"tier": "a" if i % 2 else "b"}
        obj = custom.create_namespaced_custom_object(
            GROUP, VERSION, ns, PLURAL, foo(f"{prefix}-{i:02d}", labels=labels)
        )
        made[obj["metadata"]["uid"]] = obj
    return made


def uids(lst: dict) -> list[str]:
    return [i["metadata"]["uid"] for i in lst["items"]]


# ---- lists ---------------------------------------------------------------------------------


def test_lists_by_uid_partition_the_objects_and_echo_the_selector(sim, custom):
    made = make_foos(custom, 24)
    seen: dict[str, int] = {}
    for shard in range(4):
        selector = format_selector([bucket_range(shard, 4)])
        code, lst = get(sim, FOOS, shardSelector=selector)
        assert code == 200
        assert lst["metadata"]["shardInfo"] == {"selector": selector}
        for item in lst["items"]:
            assert matches([bucket_range(shard, 4)], item), item["metadata"]["uid"]
            assert item["metadata"]["uid"] not in seen
            seen[item["metadata"]["uid"]] = shard
    assert set(seen) == set(made)
    # a list without the parameter is not sharded, and says so by carrying no shardInfo
    code, plain = get(sim, FOOS)
    assert code == 200 and "shardInfo" not in plain["metadata"] and len(plain["items"]) == 24


def test_two_complementary_ranges_return_everything_exactly_once(sim, custom):
    made = make_foos(custom, 16)
    # Split the space at one object's own hash: start is inclusive, so it belongs to the upper
    # half, and end is exclusive, so not to the lower one.
    pivot_uid = sorted(made)[0]
    pivot = fnv1a64(pivot_uid)
    below, above = ShardRange(0, pivot), ShardRange(pivot, HASH_SPACE_END)
    lower = uids(get(sim, FOOS, shardSelector=format_selector([below]))[1])
    upper = uids(get(sim, FOOS, shardSelector=format_selector([above]))[1])
    assert pivot_uid in upper and pivot_uid not in lower
    assert sorted(lower + upper) == sorted(made)
    # the same two ranges joined with || are the whole collection again
    both = get(sim, FOOS, shardSelector=format_selector([below, above]))[1]
    assert sorted(uids(both)) == sorted(made)


def test_ranges_joined_with_or_are_the_union_of_their_lists(sim, custom):
    make_foos(custom, 20)
    quarters = [bucket_range(i, 4) for i in range(4)]
    one = uids(get(sim, FOOS, shardSelector=format_selector([quarters[0]]))[1])
    three = uids(get(sim, FOOS, shardSelector=format_selector([quarters[2]]))[1])
    joined = get(sim, FOOS, shardSelector=format_selector([quarters[0], quarters[2]]))[1]
    assert sorted(uids(joined)) == sorted(one + three)


def test_lists_by_namespace_keep_each_namespace_whole(sim, custom):
    core = client.CoreV1Api(sim.api_client)
    namespaces = [f"shard-ns-{i}" for i in range(8)]
    for ns in namespaces:
        core.create_namespace({"metadata": {"name": ns}})
        make_foos(custom, 2, ns)
    halves = [bucket_range(i, 2, FIELD_NAMESPACE) for i in range(2)]
    found: dict[str, str] = {}
    for half in halves:
        selector = format_selector([half])
        lst = get(sim, ALL_FOOS, shardSelector=selector)[1]
        assert lst["metadata"]["shardInfo"] == {"selector": selector}
        for item in lst["items"]:
            assert half.contains(fnv1a64(item["metadata"]["namespace"]))
            assert item["metadata"]["uid"] not in found
            found[item["metadata"]["uid"]] = item["metadata"]["namespace"]
    assert sorted(set(found.values())) == namespaces and len(found) == 16
    # within one namespace: the half holding it returns all of it, the other half nothing
    ns = namespaces[0]
    mine = next(h for h in halves if h.contains(fnv1a64(ns)))
    other = next(h for h in halves if h is not mine)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/foos"
    assert len(get(sim, path, shardSelector=format_selector([mine]))[1]["items"]) == 2
    empty = get(sim, path, shardSelector=format_selector([other]))[1]
    assert empty["items"] == [] and empty["metadata"]["shardInfo"]["selector"]


def test_paging_with_a_selector_carries_shard_info_on_every_page(sim, custom):
    make_foos(custom, 30)
    selector = format_selector(LOWER)
    whole = uids(get(sim, FOOS, shardSelector=selector)[1])
    paged: list[str] = []
    query = {"shardSelector": selector, "limit": "3"}
    pages = 0
    while True:
        code, page = get(sim, FOOS, **query)
        assert code == 200
        pages += 1
        assert page["metadata"]["shardInfo"] == {"selector": selector}
        # a selective list cannot count what is left (continue.go): no remainingItemCount
        assert "remainingItemCount" not in page["metadata"]
        assert len(page["items"]) <= 3
        paged += uids(page)
        if not page["metadata"].get("continue"):
            break
        query["continue"] = page["metadata"]["continue"]
    assert paged == whole and pages >= 2


def test_label_selectors_and_shard_selectors_both_apply(sim, custom):
    made = make_foos(custom, 20)
    selector = format_selector(UPPER)
    lst = get(sim, FOOS, shardSelector=selector, labelSelector="tier=a")[1]
    expected = [
        u for u, o in made.items() if matches(UPPER, o) and o["metadata"]["labels"]["tier"] == "a"
    ]
    assert sorted(uids(lst)) == sorted(expected)
    # a field selector naming one object: found when it is in range, else an empty list
    inside = next(o for o in made.values() if matches(UPPER, o))["metadata"]
    outside = next(o for o in made.values() if not matches(UPPER, o))["metadata"]
    for meta, expected_uids in ((inside, [inside["uid"]]), (outside, [])):
        query = {"shardSelector": selector, "fieldSelector": f"metadata.name={meta['name']}"}
        assert uids(get(sim, FOOS, **query)[1]) == expected_uids


def test_resource_version_rules_are_unchanged(sim, custom):
    make_foos(custom, 6)
    selector = format_selector(LOWER)
    first = get(sim, FOOS, shardSelector=selector)[1]
    rv = first["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("later"))
    # an Exact list at the first list's RV returns the same objects, with shardInfo
    exact = get(
        sim, FOOS, shardSelector=selector, resourceVersion=rv, resourceVersionMatch="Exact"
    )[1]
    assert exact["metadata"]["resourceVersion"] == rv and uids(exact) == uids(first)
    assert exact["metadata"]["shardInfo"] == {"selector": selector}
    # the watch cache's answer (resourceVersion=0) is sharded too
    cached = get(sim, FOOS, shardSelector=selector, resourceVersion="0")[1]
    assert all(matches(LOWER, i) for i in cached["items"]) and "shardInfo" in cached["metadata"]


def test_protobuf_lists_carry_shard_info(sim):
    from kubesim import protobuf

    core = client.CoreV1Api(sim.api_client)
    for i in range(6):
        core.create_namespaced_config_map("default", {"metadata": {"name": f"cm-{i}"}})
    selector = format_selector(LOWER)
    path = f"/api/v1/namespaces/default/configmaps?{urlencode({'shardSelector': selector})}"
    code, _, body = raw(sim, "GET", path, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert code == 200
    lst = protobuf.decode(body)
    assert lst["metadata"]["shardInfo"] == {"selector": selector}
    assert all(matches(LOWER, i) for i in lst["items"])


# ---- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["list", "watch"])
def test_a_malformed_selector_is_400_bad_request(sim, verb):
    query = {"shardSelector": "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"}
    if verb == "watch":
        query["watch"] = "1"
    code, status = get(sim, FOOS, **query)
    assert code == 400
    assert status["kind"] == "Status" and status["reason"] == "BadRequest"
    assert status["message"] == (
        'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" '
        '(did you mean "0x0000000000000000"?)'
    )


# ---- watches -------------------------------------------------------------------------------


def test_watches_send_only_the_events_of_objects_in_their_ranges(sim, custom):
    rv = sim.resource_version
    made = make_foos(custom, 12)
    for obj in made.values():
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, obj["metadata"]["name"], {"spec": {"replicas": 3}}
        )
    for obj in made.values():
        custom.delete_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, obj["metadata"]["name"]
        )
    events: dict[str, list[tuple[str, str]]] = {}
    for name, ranges in (("lower", LOWER), ("upper", UPPER)):
        query = {
            "resourceVersion": rv,
            "timeoutSeconds": "1",
            "shardSelector": format_selector(ranges),
        }
        evs = RawWatch(sim, f"{FOOS}?watch=1&{urlencode(query)}").rest()
        events[name] = [(e["type"], e["object"]["metadata"]["uid"]) for e in evs]
        mine = [u for u, o in made.items() if matches(ranges, o)]
        # every event of each of its objects, in order, and nothing of the others'
        assert events[name] == [
            *[("ADDED", u) for u in mine],
            *[("MODIFIED", u) for u in mine],
            *[("DELETED", u) for u in mine],
        ]
    assert len(events["lower"]) + len(events["upper"]) == 3 * 12


def test_watches_by_namespace(sim, custom):
    core = client.CoreV1Api(sim.api_client)
    rv = sim.resource_version
    namespaces = [f"w-ns-{i}" for i in range(6)]
    for ns in namespaces:
        core.create_namespace({"metadata": {"name": ns}})
        make_foos(custom, 1, ns)
    half = bucket_range(0, 2, FIELD_NAMESPACE)
    query = {"resourceVersion": rv, "timeoutSeconds": "1", "shardSelector": format_selector([half])}
    evs = RawWatch(sim, f"{ALL_FOOS}?watch=1&{urlencode(query)}").rest()
    got = sorted(e["object"]["metadata"]["namespace"] for e in evs)
    assert got == sorted(ns for ns in namespaces if half.contains(fnv1a64(ns)))


def test_watch_list_with_a_selector(sim, custom):
    before = make_foos(custom, 10, prefix="old")
    query = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "10",
        "shardSelector": format_selector(LOWER),
    }
    rw = RawWatch(sim, f"{FOOS}?watch=1&{urlencode(query)}")
    try:
        initial = []
        while (ev := rw.next())["type"] != "BOOKMARK":
            initial.append(ev)
        # the synthetic ADDEDs are only the range's objects; then the initial-events-end mark
        assert ev["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert sorted(e["object"]["metadata"]["uid"] for e in initial) == sorted(
            u for u, o in before.items() if matches(LOWER, o)
        )
        assert {e["type"] for e in initial} <= {"ADDED"}
        # live events: create Foos until both halves have new ones, then ask for a bookmark,
        # which comes after every event queued before it
        after: dict[str, dict] = {}
        while {matches(LOWER, o) for o in after.values()} != {True, False}:
            obj = custom.create_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, foo(f"new-{uuid.uuid4().hex[:8]}")
            )
            after[obj["metadata"]["uid"]] = obj
        sim.send_bookmarks()
        live = []
        while (ev := rw.next())["type"] != "BOOKMARK":
            live.append(ev)
        assert [(e["type"], e["object"]["metadata"]["uid"]) for e in live] == [
            ("ADDED", u) for u, o in after.items() if matches(LOWER, o)
        ]
        # the events it filtered out still move its resourceVersion, as the cacher's do
        assert ev["object"]["metadata"]["resourceVersion"] == str(sim.resource_version)
    finally:
        rw.close()


# ---- the gate off --------------------------------------------------------------------------


@pytest.mark.kubesim(crds=[FOO_CRD])
def test_with_the_gate_off_the_parameter_is_ignored(sim, custom):
    assert sim.rest.sharded_list_and_watch is False  # the default, as in v1.36
    made = make_foos(custom, 10)
    rv = sim.resource_version
    for selector in (format_selector(LOWER), "not even a selector ("):
        code, lst = get(sim, FOOS, shardSelector=selector)
        assert code == 200 and sorted(uids(lst)) == sorted(made)
        assert "shardInfo" not in lst["metadata"]
    # paging is unfiltered: the server can count what is left
    page = get(sim, FOOS, shardSelector=format_selector(LOWER), limit="4")[1]
    assert page["metadata"]["remainingItemCount"] == 6 and "shardInfo" not in page["metadata"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("late"))
    query = {"resourceVersion": rv, "timeoutSeconds": "1", "shardSelector": format_selector(LOWER)}
    evs = RawWatch(sim, f"{FOOS}?watch=1&{urlencode(query)}").rest()
    assert [e["object"]["metadata"]["name"] for e in evs] == ["late"]


def test_the_cli_turns_the_gate_on_with_kube_apiservers_flag():
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesim", "--feature-gates", "ShardedListAndWatch=true"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        selector = format_selector([ShardRange(0, HASH_SPACE_END, FIELD_UID)])
        query = urlencode({"shardSelector": selector})
        with urllib.request.urlopen(f"{url}/api/v1/namespaces?{query}", timeout=10) as resp:
            lst = json.load(resp)
        # the whole space: every namespace, and the echo that says the server applied it
        assert lst["metadata"]["shardInfo"] == {"selector": selector}
        assert {"default", "kube-system"} <= {i["metadata"]["name"] for i in lst["items"]}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
