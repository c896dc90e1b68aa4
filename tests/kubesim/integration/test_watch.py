"""kubesim watch semantics through kubernetes.watch.Watch and raw chunked streams."""

from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlparse

import pytest
from kubernetes import client, watch

from kubesim import KubeSim
from tests.helpers import wait_for
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, deployment, foo

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD], history_size=20)


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


class RawWatch:
    """A watch over one plain HTTP connection, read line by line (no client-side retries)."""

    def __init__(self, sim, path: str):
        u = urlparse(sim.url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        self.conn.request("GET", path)
        self.resp = self.conn.getresponse()

    def next(self) -> dict | None:
        line = self.resp.readline()
        return json.loads(line) if line else None

    def rest(self) -> list[dict]:
        out = []
        while (ev := self.next()) is not None:
            out.append(ev)
        return out

    def close(self) -> None:
        self.conn.close()


def foo_path(query: str) -> str:
    return f"/apis/{GROUP}/{VERSION}/namespaces/default/foos?watch=1&{query}"


def test_watch_from_now_sends_synthetic_added_then_changes(custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    w = watch.Watch()
    seen = []
    for ev in w.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL, timeout_seconds=5
    ):
        seen.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(seen) == 1:
            custom.patch_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, "a", {"spec": {"replicas": 2}}
            )
        if len(seen) == 2:
            custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "a")
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_from_resource_version_replays_only_later_events(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    rv = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["metadata"][
        "resourceVersion"
    ]
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("b"))
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "a", {"spec": {"replicas": 3}}
    )
    # other resource
    client.AppsV1Api(sim.api_client).create_namespaced_deployment("default", deployment("web"))
    rw = RawWatch(sim, foo_path(f"resourceVersion={rv}&timeoutSeconds=1"))
    evs = rw.rest()
    rw.close()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [
        ("ADDED", "b"),
        ("MODIFIED", "a"),
    ]
    assert all(e["object"]["kind"] == "Foo" for e in evs)
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)


def test_too_old_resource_version_is_one_error_event_with_410(sim, custom):
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    rv = created["metadata"]["resourceVersion"]
    for i in range(60):  # history_size=20: the Foo window keeps the last 20 events only
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "a", {"spec": {"replicas": i % 9 + 1}}
        )
    floor = sim.resource_version - 20
    rw = RawWatch(sim, foo_path(f"resourceVersion={rv}"))
    assert rw.resp.status == 200
    evs = rw.rest()
    rw.close()
    assert evs == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {rv} ({floor})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
    # the window's oldest event can still be watched from the RV just before it
    evs = RawWatch(sim, foo_path(f"resourceVersion={floor}&timeoutSeconds=1")).rest()
    assert len(evs) == 20 and all(e["type"] == "MODIFIED" for e in evs)


def test_windows_are_per_resource(sim, custom):
    rv = sim.resource_version
    for i in range(30):  # fills the Foo window only
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo(f"f{i}"))
    path = (
        "/apis/apps/v1/namespaces/default/deployments?watch=1"
        f"&resourceVersion={rv}&timeoutSeconds=1"
    )
    assert RawWatch(sim, path).rest() == []  # no 410: Deployments had no events to evict
    assert RawWatch(sim, foo_path(f"resourceVersion={rv}")).rest()[0]["type"] == "ERROR"


def test_watch_from_before_the_server_started_is_410():
    with KubeSim(crds=[FOO_CRD]) as old:
        old_rv = old.resource_version
    with KubeSim(crds=[FOO_CRD]) as sim:  # a new server with fresh state
        assert sim.resource_version > old_rv
        evs = RawWatch(sim, foo_path(f"resourceVersion={old_rv}")).rest()
        assert [e["object"]["code"] for e in evs] == [410]


def test_compact_makes_older_watch_expire(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    rv = sim.resource_version
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("b"))
    sim.storage.compact()
    evs = RawWatch(sim, foo_path(f"resourceVersion={rv}")).rest()
    assert evs[0]["object"]["code"] == 410
    evs = RawWatch(sim, foo_path(f"resourceVersion={sim.resource_version}&timeoutSeconds=1")).rest()
    assert evs == []


def test_label_selector_entering_and_leaving_become_added_and_deleted(sim, custom):
    custom.create_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, foo("a", labels={"x": "no"})
    )
    rv = sim.resource_version
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "a", {"metadata": {"labels": {"x": "yes"}}}
    )
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "a", {"spec": {"replicas": 2}}
    )
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "a", {"metadata": {"labels": {"x": "no"}}}
    )
    evs = RawWatch(
        sim, foo_path(f"resourceVersion={rv}&labelSelector=x%3Dyes&timeoutSeconds=1")
    ).rest()
    assert [e["type"] for e in evs] == ["ADDED", "MODIFIED", "DELETED"]
    # the DELETED object is the previous state carrying the event's resourceVersion
    assert evs[2]["object"]["metadata"]["labels"] == {"x": "yes"}
    assert int(evs[2]["object"]["metadata"]["resourceVersion"]) == sim.resource_version


def test_bad_label_selector_on_watch_is_http_400(sim):
    rw = RawWatch(sim, foo_path("labelSelector=a%20in%20(b"))
    assert rw.resp.status == 400
    rw.close()


def test_timeout_seconds_ends_the_stream(sim):
    t0 = time.monotonic()
    evs = RawWatch(sim, foo_path(f"resourceVersion={sim.resource_version}&timeoutSeconds=1")).rest()
    assert evs == [] and 0.9 <= time.monotonic() - t0 < 3


@pytest.mark.kubesim(crds=[FOO_CRD], bookmark_interval=0.1)
def test_bookmarks_only_when_resource_version_advanced(sim, custom):
    rv = sim.resource_version
    # bookmarks are due every 0.1 s until 2 s before the 2.6 s timeout: none while idle
    idle = RawWatch(
        sim, foo_path(f"resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=2.6")
    ).rest()
    assert idle == []
    rw = RawWatch(sim, foo_path(f"resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=10"))
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    added = rw.next()
    assert added["type"] == "ADDED"
    bm = rw.next()
    rw.close()
    assert bm == {
        "type": "BOOKMARK",
        "object": {
            "kind": "Foo",
            "apiVersion": f"{GROUP}/{VERSION}",
            "metadata": {"resourceVersion": added["object"]["metadata"]["resourceVersion"]},
        },
    }


def test_bookmark_on_request(sim, custom):
    rw = RawWatch(
        sim,
        foo_path(
            f"resourceVersion={sim.resource_version}&allowWatchBookmarks=true&timeoutSeconds=5"
        ),
    )
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    assert rw.next()["type"] == "ADDED"
    sim.send_bookmarks()
    ev = rw.next()
    assert ev["type"] == "BOOKMARK" and ev["object"]["metadata"]["resourceVersion"] == str(
        sim.resource_version
    )
    rw.close()


def test_deployment_bookmark_is_an_empty_deployment(sim):
    rw = RawWatch(
        sim,
        f"/apis/apps/v1/namespaces/default/deployments?watch=1&allowWatchBookmarks=true"
        f"&resourceVersion={sim.resource_version}&timeoutSeconds=5",
    )
    client.AppsV1Api(sim.api_client).create_namespaced_deployment("default", deployment("web"))
    assert rw.next()["type"] == "ADDED"
    sim.send_bookmarks()
    bm = rw.next()["object"]
    rw.close()
    # the cacher's empty Deployment at apps/v1; v1.36 omits the zero creationTimestamps
    assert bm == {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": bm["metadata"]["resourceVersion"]},
        "spec": {
            "replicas": 0,
            "selector": None,
            "template": {"metadata": {}, "spec": {"containers": None}},
            "strategy": {},
        },
        "status": {},
    }


@pytest.mark.kubesim(server_version="1.24")
def test_deployment_bookmark_of_v1_24_writes_null_creation_timestamps(sim):
    rw = RawWatch(
        sim,
        f"/apis/apps/v1/namespaces/default/deployments?watch=1&allowWatchBookmarks=true"
        f"&resourceVersion={sim.resource_version}&timeoutSeconds=5",
    )
    client.AppsV1Api(sim.api_client).create_namespaced_deployment("default", deployment("web"))
    assert rw.next()["type"] == "ADDED"
    sim.send_bookmarks()
    bm = rw.next()["object"]
    rw.close()
    assert bm["metadata"]["creationTimestamp"] is None
    assert bm["spec"]["template"]["metadata"] == {"creationTimestamp": None}


def test_send_initial_events_ends_with_annotated_bookmark(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("b"))
    rw = RawWatch(
        sim,
        foo_path(
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5"
        ),
    )
    evs = [rw.next() for _ in range(3)]
    assert [e["type"] for e in evs] == ["ADDED", "ADDED", "BOOKMARK"]
    assert evs[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert evs[2]["object"]["metadata"]["resourceVersion"] == str(sim.resource_version)
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("c"))
    assert rw.next()["object"]["metadata"]["name"] == "c"
    rw.close()
    # sendInitialEvents without NotOlderThan or without bookmarks is 422
    assert (
        RawWatch(sim, foo_path("sendInitialEvents=true&allowWatchBookmarks=true")).resp.status
        == 422
    )
    assert (
        RawWatch(
            sim, foo_path("sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
        ).resp.status
        == 422
    )


@pytest.mark.kubesim(crds=[FOO_CRD], watch_list=False)
def test_watch_list_off_answers_as_v1_24_with_a_422_on_resource_version_match(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    # client-go's WatchList request at the start (resourceVersion ""): two causes.
    rw = RawWatch(
        sim,
        foo_path(
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        ),
    )
    assert rw.resp.status == 422
    status = json.loads(rw.resp.read())
    rw.close()
    forbidden_for_watch = "Forbidden: resourceVersionMatch is forbidden for watch"
    unless_rv = "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'ListOptions.meta.k8s.io "" is invalid: ['
        f"resourceVersionMatch: {forbidden_for_watch}, resourceVersionMatch: {unless_rv}]",
        "reason": "Invalid",
        "details": {
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": forbidden_for_watch,
                    "field": "resourceVersionMatch",
                },
                {
                    "reason": "FieldValueForbidden",
                    "message": unless_rv,
                    "field": "resourceVersionMatch",
                },
            ],
        },
        "code": 422,
    }
    # Resuming at a resourceVersion: the one cause left.
    rw = RawWatch(
        sim,
        foo_path(
            f"resourceVersion={sim.resource_version}&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        ),
    )
    assert rw.resp.status == 422
    assert [c["message"] for c in json.loads(rw.resp.read())["details"]["causes"]] == [
        forbidden_for_watch
    ]
    rw.close()
    # sendInitialEvents alone is unknown to v1.24, so ignored: a plain watch from now, whose
    # synthetic ADDED carry the state and no initial-events-end bookmark follows.
    rw = RawWatch(sim, foo_path("sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1"))
    assert rw.resp.status == 200
    events = rw.rest()
    rw.close()
    assert [e["type"] for e in events if e["type"] != "BOOKMARK"] == ["ADDED"]
    assert not any(
        (e["object"]["metadata"].get("annotations") or {}).get("k8s.io/initial-events-end")
        for e in events
    )


def test_legacy_watch_path_and_watch_by_name(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("b"))
    evs = RawWatch(
        sim, f"/apis/{GROUP}/{VERSION}/watch/namespaces/default/foos/b?timeoutSeconds=1"
    ).rest()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("ADDED", "b")]


def test_close_all_watches_ends_streams_cleanly(sim):
    rw = RawWatch(sim, foo_path("timeoutSeconds=30"))
    done = threading.Event()
    result = []

    def read():
        result.extend(rw.rest())
        done.set()

    threading.Thread(target=read, name="test-watch-reader", daemon=True).start()
    wait_for(sim.storage.watchers, timeout=2, message="the watch registered")
    assert sim.storage.close_all_watchers() == 1
    assert done.wait(2) and result == []


@pytest.mark.kubesim(crds=[FOO_CRD], watch_queue_size=5)
def test_slow_watcher_is_closed_instead_of_blocking_writers(sim, custom):
    w = sim.storage.watch(("samplecontroller.k8s.io", "foos"), None, None, False)
    for i in range(10):
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo(f"f{i}"))
    assert w.closed and "too slow" in w.close_reason
