"""informer.reflector against an in-memory FakeListWatch (client-go reflector_test.go)."""

from __future__ import annotations

import errno
import logging
import threading
import time

import pytest

from client.errors import APIError, TransportError
from client.features import EnvVarFeatureGates, replace_feature_gates
from client.wait import ExponentialBackoff
from informer.delta_fifo import DeltaFIFO
from informer.real_fifo import RealFIFO
from informer.reflector import DEFAULT_PAGE_SIZE, Reflector, VeryShortWatchError
from informer.store import Indexer
from informer.testing import FakeListWatch, FakeWatchStream
from tests.helpers import wait_for


def foo(name, ns="ns", **spec):
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


class RecordingStore(Indexer):
    """An Indexer that also counts replace/resync calls."""

    def __init__(self):
        super().__init__()
        self.replaces: list[tuple[int, str]] = []
        self.resyncs = 0

    def replace(self, objects, resource_version=""):
        objects = list(objects)
        self.replaces.append((len(objects), resource_version))
        super().replace(objects, resource_version)

    def resync(self):
        self.resyncs += 1


def fast_backoff():
    return ExponentialBackoff(initial=0.001, cap=0.005, jitter=0.0)


class Harness:
    def __init__(self, lw, **kw):
        self.lw = lw
        store = kw.pop("store", None)
        # "is None", not "or": an empty FIFO is falsy
        self.store = RecordingStore() if store is None else store
        self.errors: list[BaseException] = []
        kw.setdefault("backoff", fast_backoff())
        # Most tests here pin reflector.go's list path (paged LIST, relists, RV rules); those about
        # WatchList, now the default, ask for it by name.
        kw.setdefault("use_watch_list", False)
        kw.setdefault("watch_error_handler", lambda r, e: self.errors.append(e))
        self.reflector = Reflector(lw, self.store, name="test", **kw)
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self.reflector.run, args=(self.stop,), name="reflector"
        )

    def start(self):
        self.thread.start()
        return self

    def shutdown(self, within=1.0):
        self.stop.set()
        self.thread.join(within)
        assert not self.thread.is_alive(), f"reflector did not stop within {within}s"

    def wait_watching(self, n=1):
        wait_for(lambda: len(self.lw.open_watches()) >= n, message=f"{n} open watch(es)")

    def keys(self):
        return sorted(self.store.list_keys())


@pytest.fixture
def harnesses():
    made: list[Harness] = []

    def make(lw, **kw):
        h = Harness(lw, **kw)
        made.append(h)
        return h

    yield make
    for h in made:
        if h.thread.is_alive():
            h.shutdown()


# -- list ------------------------------------------------------------------------------------------


def test_first_list_uses_rv_0_with_page_size_then_watches_from_list_rv(harnesses):
    lw = FakeListWatch([foo("a"), foo("b")])
    h = harnesses(lw, rand=lambda: 0.0).start()
    h.wait_watching()
    assert lw.list_calls == [{"resourceVersion": "0", "limit": DEFAULT_PAGE_SIZE}]
    assert h.keys() == ["ns/a", "ns/b"]
    assert lw.watch_calls == [
        {"resourceVersion": "2", "timeoutSeconds": 300, "allowWatchBookmarks": True}
    ]
    assert h.reflector.last_sync_resource_version() == "2"
    assert h.errors == []


def test_watch_timeout_is_random_in_5_to_10_minutes(harnesses):
    lw = FakeListWatch()
    h = harnesses(lw, rand=lambda: 0.999).start()
    h.wait_watching()
    assert lw.watch_calls[0]["timeoutSeconds"] == 599


def test_list_items_get_kind_and_api_version():
    lw = FakeListWatch(kind="Deployment", api_version="apps/v1")
    lw.add(foo("a"))
    # a typed list's items have no kind/apiVersion: strip them the way the server would
    lw._objects["ns/a"].pop("kind")
    lw._objects["ns/a"].pop("apiVersion")
    store = Indexer()
    r = Reflector(lw, store)
    r._list(threading.Event())
    obj = store.get_by_key("ns/a")
    assert obj["kind"] == "Deployment" and obj["apiVersion"] == "apps/v1"


def test_paged_first_list_collects_every_page_and_keeps_paging(harnesses):
    lw = FakeListWatch([foo(f"o{i:04d}") for i in range(1201)], watch_cache=False)
    h = harnesses(lw).start()
    h.wait_watching()
    assert len(h.keys()) == 1201
    assert [c.get("limit") for c in lw.list_calls] == [500, 500, 500]
    assert lw.list_calls[0]["resourceVersion"] == "0"
    assert "resourceVersion" not in lw.list_calls[1] and lw.list_calls[1]["continue"]
    assert h.store.replaces == [(1201, "1201")]
    # a relist at a specific RV keeps paging because the server proved it pages RV=0 lists
    lw.compact()
    lw.end_watches()
    wait_for(lambda: len(lw.list_calls) >= 6, message="relist")
    assert lw.list_calls[3] == {"resourceVersion": "1201", "limit": 500}


def test_relist_at_specific_rv_is_unpaged_when_served_by_watch_cache(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.modify(foo("a", replicas=2))
    wait_for(lambda: h.reflector.last_sync_resource_version() == "2")
    lw.compact()
    lw.end_watches()  # the re-watch from RV 2 is still fine; force a 410 with history loss:
    lw.add(foo("b"))
    lw.compact()
    lw.end_watches()
    wait_for(lambda: len(lw.list_calls) >= 2, message="relist")
    assert lw.list_calls[1]["resourceVersion"] not in ("", "0")
    assert "limit" not in lw.list_calls[1]


def test_expired_list_retries_at_once_with_empty_rv():
    lw = FakeListWatch([foo("a")])
    lw.fail_next_list(APIError(410, "Expired", "too old", {"code": 410, "reason": "Expired"}))
    store = RecordingStore()
    r = Reflector(lw, store)
    r._set_last_sync_resource_version("1")
    r._list(threading.Event())
    assert [c["resourceVersion"] for c in lw.list_calls] == ["1", ""]
    assert store.list_keys() == ["ns/a"]
    assert r._relist_resource_version() == "1"  # the flag clears once a list succeeded


def test_too_large_rv_list_retries_with_empty_rv():
    lw = FakeListWatch([foo("a")])
    status = {
        "code": 504,
        "reason": "Timeout",
        "details": {"causes": [{"reason": "ResourceVersionTooLarge"}], "retryAfterSeconds": 1},
    }
    lw.fail_next_list(APIError(504, "Timeout", "Too large resource version", status))
    r = Reflector(lw, RecordingStore())
    r._list(threading.Event())
    assert [c["resourceVersion"] for c in lw.list_calls] == ["0", ""]


def test_expired_continue_token_falls_back_to_a_full_list():
    lw = FakeListWatch([foo(f"o{i}") for i in range(7)], watch_cache=False)
    store = RecordingStore()
    r = Reflector(lw, store, page_size=3)
    real_list = lw.list

    def list_expiring_after_first_page(options):
        result = real_list(options)
        lw.expire_continue_tokens()
        return result

    lw.list = list_expiring_after_first_page
    r._list(threading.Event())
    assert len(store.list_keys()) == 7
    assert lw.list_calls[-1] == {"resourceVersion": "0"}  # unpaged, at the requested RV


def test_list_failure_backs_off_reports_and_retries(harnesses):
    lw = FakeListWatch([foo("a")])
    boom = APIError(500, "InternalError", "etcd down")
    lw.fail_next_list(boom, boom)
    delays = []
    backoff = fast_backoff()
    real_next = backoff.next_delay
    backoff.next_delay = lambda: delays.append(real_next()) or delays[-1]
    h = harnesses(lw, backoff=backoff).start()
    h.wait_watching()
    assert h.errors == [boom, boom]
    assert len(delays) >= 2
    assert h.keys() == ["ns/a"]


def test_a_watch_error_handler_that_raises_does_not_end_the_reflector(harnesses):
    # The handler is the caller's code: if it raises, the reflector must still retry. Dying would
    # close the informer's queue and leave a cache that silently never changes again.
    lw = FakeListWatch([foo("a")])
    lw.fail_next_list(APIError(500, "InternalError", "etcd down"))

    def broken_handler(reflector, err):
        raise RuntimeError("handler bug")

    h = harnesses(lw, watch_error_handler=broken_handler).start()
    h.wait_watching()
    assert h.thread.is_alive() and h.keys() == ["ns/a"]


# -- watch -----------------------------------------------------------------------------------------


def test_watch_events_are_applied_and_advance_rv(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.add(foo("b"))
    lw.modify(foo("a", replicas=3))
    lw.delete("ns/b")
    wait_for(lambda: h.reflector.last_sync_resource_version() == "4")
    assert h.keys() == ["ns/a"]
    assert h.store.get_by_key("ns/a")["spec"] == {"replicas": 3}


def test_bookmark_only_advances_rv(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.delete_silently("ns/a")  # RV moves on without an event
    lw.bookmark()
    wait_for(lambda: h.reflector.last_sync_resource_version() == "2")
    assert h.keys() == ["ns/a"]  # a bookmark carries no data
    lw.end_watches()
    wait_for(lambda: len(lw.watch_calls) == 2)
    assert lw.watch_calls[1]["resourceVersion"] == "2"  # resumes past the bookmark


def test_clean_watch_end_rewatches_without_relisting(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.add(foo("b"))
    wait_for(lambda: len(h.keys()) == 2)
    lw.end_watches()
    wait_for(lambda: len(lw.watch_calls) == 2)
    assert lw.watch_calls[1]["resourceVersion"] == "2"
    assert len(lw.list_calls) == 1 and h.errors == []


def test_expired_watch_relists_and_tombstones_reach_the_store(harnesses):
    lw = FakeListWatch([foo("a"), foo("b")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.add(foo("c"))
    wait_for(lambda: "ns/c" in h.keys())
    lw.miss_deletion("ns/a")  # deleted while the watch was down, and the history is gone
    wait_for(lambda: h.keys() == ["ns/b", "ns/c"], message="relist after 410")
    assert len(h.errors) == 1 and h.errors[0].code == 410
    assert len(lw.list_calls) == 2


def test_error_event_other_than_expired_relists(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.open_watches()[0].push(
        "ERROR", {"kind": "Status", "code": 500, "reason": "InternalError", "message": "x"}
    )
    wait_for(lambda: len(lw.list_calls) == 2, message="relist")
    assert isinstance(h.errors[0], APIError) and h.errors[0].code == 500


def test_429_on_watch_honours_retry_after_without_relisting(harnesses):
    lw = FakeListWatch([foo("a")])
    lw.fail_next_watch(APIError(429, "TooManyRequests", "slow down", None, retry_after=0.3))
    h = harnesses(lw).start()
    wait_for(lambda: len(lw.list_calls) == 1)
    started = time.monotonic()
    h.wait_watching()
    assert time.monotonic() - started >= 0.25
    assert len(lw.watch_calls) == 2 and len(lw.list_calls) == 1
    assert h.errors == []


def test_429_error_event_rewatches_without_relisting(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    status = {"code": 429, "reason": "TooManyRequests", "details": {"retryAfterSeconds": 1}}
    lw.open_watches()[0].push(
        "ADDED", {"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "9"}}
    )
    lw.open_watches()[0].push("ERROR", status)
    wait_for(lambda: len(lw.watch_calls) == 2, timeout=3)
    assert len(lw.list_calls) == 1


def test_connection_refused_on_watch_retries_the_watch_only(harnesses):
    lw = FakeListWatch([foo("a")])
    refused = TransportError("GET /x: connection failed")
    refused.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    lw.fail_next_watch(refused, refused)
    h = harnesses(lw).start()
    h.wait_watching()
    assert len(lw.watch_calls) == 3 and len(lw.list_calls) == 1
    assert h.errors == []


def test_other_watch_open_errors_relist_after_backoff(harnesses):
    lw = FakeListWatch([foo("a")])
    forbidden = APIError(403, "Forbidden", "no")
    lw.fail_next_watch(forbidden)
    h = harnesses(lw).start()
    h.wait_watching()
    assert h.errors == [forbidden]
    assert len(lw.list_calls) == 2


def test_very_short_watch_is_an_error(harnesses):
    lw = FakeListWatch([foo("a")])
    real_watch = lw.watch
    shorts = [0]

    def watch(options, read_timeout=None):
        stream = real_watch(options, read_timeout=read_timeout)
        if shorts[0] < 1:
            shorts[0] += 1
            stream.end()  # closes at once, no events
        return stream

    lw.watch = watch
    h = harnesses(lw).start()
    wait_for(lambda: len(lw.list_calls) == 2, message="relist after very short watch")
    assert isinstance(h.errors[0], VeryShortWatchError)


def test_stalled_watch_is_torn_down_and_rewatched(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw, watch_stall_timeout=lambda timeout_seconds: 0.2).start()
    h.wait_watching()
    lw.add(foo("first"))
    wait_for(lambda: "ns/first" in h.keys())
    lw.stall_watches(new_ones_too=False)  # the connection goes silent: no bytes, no FIN
    lw.add(foo("b"))
    wait_for(lambda: len(lw.watch_calls) == 2, timeout=2, message="re-watch after stall")
    wait_for(lambda: "ns/b" in h.keys())  # the re-watch replays what the stall hid
    assert len(lw.list_calls) == 1


def test_store_errors_do_not_end_the_watch(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    lw.open_watches()[0].push("ADDED", {"metadata": {"namespace": "ns", "resourceVersion": "50"}})
    lw.add(foo("b"))
    wait_for(lambda: "ns/b" in h.keys())
    assert len(lw.watch_calls) == 1


def test_events_it_cannot_understand_are_logged_without_their_content(harnesses, caplog):
    # The object may be a Secret, or a Deployment with a password in its env: say which event
    # was dropped, never what it carried.
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    caplog.set_level(logging.ERROR, logger="informer.reflector")
    watch = lw.open_watches()[0]
    watch.push(
        "WEIRD",
        {
            "metadata": {"name": "s", "namespace": "ns", "resourceVersion": "50"},
            "data": {"password": "hunter2"},
        },
    )
    watch.push("ADDED", ["hunter3"])
    lw.add(foo("b"))
    wait_for(lambda: "ns/b" in h.keys())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "WEIRD" in text and "ns/s" in text and "ADDED" in text
    assert "hunter" not in text


# -- stop ------------------------------------------------------------------------------------------


def test_stop_closes_the_open_watch_promptly(harnesses):
    lw = FakeListWatch([foo("a")])
    h = harnesses(lw).start()
    h.wait_watching()
    stream = lw.open_watches()[0]
    started = time.monotonic()
    h.shutdown(within=1.0)
    assert time.monotonic() - started < 1.0
    assert stream.closed


def test_stop_does_not_wait_for_a_hung_list(harnesses):
    lw = FakeListWatch([foo("a")])
    release = threading.Event()
    real_list = lw.list

    def hung_list(options):
        release.wait(10)
        return real_list(options)

    lw.list = hung_list
    h = harnesses(lw).start()
    wait_for(lambda: any(t.name == "test-list" for t in threading.enumerate()))
    started = time.monotonic()
    h.shutdown(within=1.0)
    assert time.monotonic() - started < 1.0
    release.set()


def test_stop_during_backoff_is_prompt(harnesses):
    lw = FakeListWatch()
    lw.fail_next_list(APIError(500, "InternalError", "x"))
    h = harnesses(lw, backoff=ExponentialBackoff(initial=30, jitter=0)).start()
    wait_for(lambda: len(h.errors) == 1)
    h.shutdown(within=1.0)


# -- resync ----------------------------------------------------------------------------------------


def test_resync_ticks_call_store_resync_when_should_resync_says_so(harnesses):
    lw = FakeListWatch([foo("a")])
    allow = threading.Event()
    h = harnesses(lw, resync_period=0.02, should_resync=allow.is_set).start()
    h.wait_watching()
    time.sleep(0.1)  # several ticks pass while should_resync says no
    assert h.store.resyncs == 0
    allow.set()
    wait_for(lambda: h.store.resyncs >= 2)


# -- WatchList -------------------------------------------------------------------------------------


def test_watch_list_streams_initial_state_and_keeps_the_watch(harnesses):
    lw = FakeListWatch([foo("a"), foo("b")])
    h = harnesses(lw, use_watch_list=True).start()
    wait_for(lambda: h.store.replaces == [(2, "2")], message="replace at the bookmark")
    assert lw.list_calls == []
    options = lw.watch_calls[0]
    assert options["sendInitialEvents"] is True
    assert options["resourceVersionMatch"] == "NotOlderThan"
    assert options["allowWatchBookmarks"] is True
    assert options["resourceVersion"] == ""
    lw.add(foo("c"))  # arrives on the same stream
    wait_for(lambda: "ns/c" in h.keys())
    assert len(lw.watch_calls) == 1
    assert h.reflector.last_sync_resource_version() == "3"


def test_watch_list_ignored_by_server_falls_back_to_list_and_watch(harnesses):
    lw = FakeListWatch([foo("a")], supports_watch_list=False)
    h = harnesses(lw, use_watch_list=True, watch_list_bookmark_timeout=0.1).start()
    wait_for(lambda: len(lw.list_calls) == 1, message="fallback list")
    h.wait_watching()
    assert h.keys() == ["ns/a"]
    assert h.reflector._watch_list_supported is False
    lw.add(foo("z"))
    wait_for(lambda: "ns/z" in h.keys())
    lw.miss_deletion("ns/a")  # forces a new cycle, which must not try WatchList again
    wait_for(lambda: len(lw.list_calls) == 2)
    assert sum(1 for c in lw.watch_calls if c.get("sendInitialEvents")) == 1


def test_watch_list_rejected_falls_back(harnesses):
    lw = FakeListWatch([foo("a")])
    lw.fail_next_watch(APIError(422, "Invalid", "resourceVersionMatch not allowed"))
    h = harnesses(lw, use_watch_list=True).start()
    h.wait_watching()
    assert len(lw.list_calls) == 1 and h.keys() == ["ns/a"]
    assert h.reflector._watch_list_supported is False


class _ScriptedWatchList(FakeListWatch):
    """A FakeListWatch whose first WatchList streams are scripted: each script gets the stream
    and the objects, pushes what it wants, and leaves it open, ended or failed."""

    def __init__(self, objects, *scripts):
        super().__init__(objects)
        self.scripts = list(scripts)

    def watch(self, options, *, read_timeout=None):
        if options.get("sendInitialEvents") and self.scripts:
            with self._lock:
                self.watch_calls.append(dict(options))
                stream = FakeWatchStream(options, read_timeout)
                self.scripts.pop(0)(stream, [self.get(k) for k in sorted(self._objects)])
                return stream
        return super().watch(options, read_timeout=read_timeout)


def test_watch_list_is_the_default_and_follows_the_watch_list_client_gate(monkeypatch):
    lw = FakeListWatch()
    assert Reflector(lw, Indexer()).use_watch_list is True
    previous = replace_feature_gates(EnvVarFeatureGates(environ={}))
    try:
        assert Reflector(lw, Indexer()).use_watch_list is True
        replace_feature_gates(EnvVarFeatureGates(environ={"KUBE_FEATURE_WatchListClient": "false"}))
        assert Reflector(lw, Indexer()).use_watch_list is False
        # The caller's word wins over the gate (the controller's --watch-list).
        assert Reflector(lw, Indexer(), use_watch_list=True).use_watch_list is True
    finally:
        replace_feature_gates(previous)


def test_watch_list_dropped_before_the_bookmark_streams_again_into_a_clean_store(harnesses):
    def drop_after_one(stream, objects):
        stream.push("ADDED", objects[0])
        stream.fail(TransportError("connection reset by peer"))

    lw = _ScriptedWatchList([foo("a"), foo("b")], drop_after_one)
    h = harnesses(lw, use_watch_list=True).start()
    wait_for(lambda: h.store.replaces == [(2, "2")], message="replace at the second bookmark")
    # The partial stream never reached the store: one replace, with the whole state.
    assert [bool(c.get("sendInitialEvents")) for c in lw.watch_calls] == [True, True]
    assert lw.list_calls == [] and h.keys() == ["ns/a", "ns/b"]
    assert h.reflector._watch_list_supported is True
    lw.add(foo("c"))
    wait_for(lambda: "ns/c" in h.keys())


def test_watch_list_ended_by_the_server_before_the_bookmark_streams_again(harnesses):
    def end_after_all_but_the_bookmark(stream, objects):
        for obj in objects:
            stream.push("ADDED", obj)
        stream.end()

    lw = _ScriptedWatchList([foo("a")], end_after_all_but_the_bookmark)
    h = harnesses(lw, use_watch_list=True).start()
    wait_for(lambda: h.store.replaces == [(1, "1")], message="replace at the bookmark")
    assert len(lw.watch_calls) == 2 and lw.list_calls == []
    assert h.errors == []


def test_watch_list_quiet_before_the_bookmark_counts_as_ignored_and_keeps_a_long_deadline(
    harnesses,
):
    def stream_without_bookmark(stream, objects):
        for obj in objects:
            stream.push("ADDED", obj)

    lw = _ScriptedWatchList([foo("a")], stream_without_bookmark)
    h = harnesses(lw, use_watch_list=True, watch_list_bookmark_timeout=0.2, rand=lambda: 0.0)
    h.start()
    wait_for(lambda: len(lw.list_calls) == 1, message="fallback list")
    h.wait_watching()
    assert h.store.replaces == [(1, "1")] and h.keys() == ["ns/a"]
    assert h.reflector._watch_list_supported is False
    # The WatchList stream kept the watch's own stall deadline; the watchdog closed it.
    assert lw.watch_calls[0]["timeoutSeconds"] == 300


def test_watch_list_failed_by_the_server_falls_back_for_this_cycle_only(harnesses):
    lw = FakeListWatch([foo("a")])
    lw.fail_next_watch(APIError(500, "InternalError", "etcd is having a bad day"))
    h = harnesses(lw, use_watch_list=True).start()
    h.wait_watching()
    assert len(lw.list_calls) == 1 and h.keys() == ["ns/a"]
    # Unlike a refusal, a failure says nothing about the server's support: the next cycle
    # streams again.
    assert h.reflector._watch_list_supported is True
    lw.miss_deletion("ns/a")
    wait_for(lambda: h.keys() == [], message="the relist, streamed")
    assert len(lw.list_calls) == 1
    assert sum(1 for c in lw.watch_calls if c.get("sendInitialEvents")) == 2


def test_watch_list_expired_resource_version_streams_from_the_latest_state(harnesses):
    lw = FakeListWatch([foo("a")])
    lw.fail_next_watch(APIError(410, "Expired", "too old resource version"))
    h = harnesses(lw, use_watch_list=True).start()
    wait_for(lambda: h.store.replaces == [(1, "1")])
    assert [c["resourceVersion"] for c in lw.watch_calls[:2]] == ["", ""]
    assert lw.list_calls == []


@pytest.mark.parametrize("fifo_class", [RealFIFO, DeltaFIFO])
def test_watch_list_transforms_each_object_once_as_it_streams(harnesses, fifo_class):
    # client-go's temporary store takes the store's transformer: the streamed state waits for
    # the bookmark transformed (no managedFields), not as served; the FIFO is told, so the
    # transform runs once per object and need not be idempotent.
    seen: list[str] = []

    def strip(obj):
        seen.append(obj["metadata"]["name"])
        obj["metadata"].pop("managedFields", None)
        return obj

    known = Indexer()
    fifo = fifo_class(known_objects=known, transform=strip)
    lw = FakeListWatch(
        [dict(foo(n), metadata={**foo(n)["metadata"], "managedFields": [{}]}) for n in "ab"]
    )
    harnesses(lw, store=fifo, use_watch_list=True).start()
    wait_for(lambda: len(fifo) == 2, message="the streamed state queued")
    assert sorted(seen) == ["a", "b"]
    popped = []
    while len(fifo):
        for delta in fifo.pop(lambda deltas, initial: None):
            popped.append(delta.object)
    assert all("managedFields" not in o["metadata"] for o in popped)
    lw.add(dict(foo("c"), metadata={**foo("c")["metadata"], "managedFields": [{}]}))
    wait_for(lambda: len(fifo) == 1, message="the watched add queued")
    assert sorted(seen) == ["a", "b", "c"]
