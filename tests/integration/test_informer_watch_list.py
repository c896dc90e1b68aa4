"""WatchList against kubesim over HTTP, in both of a real server's behaviours.

kubesim as v1.36 serves the streaming list (``sendInitialEvents``, then the BOOKMARK annotated
``k8s.io/initial-events-end``); ``KubeSim(watch_list=False)`` refuses it as v1.24 did, with a 422.
Two more servers are made here by a ListWatch in between: one that ignores ``sendInitialEvents``
(as a proxy that drops unknown parameters would) and one whose connection drops mid-stream.

What each test holds the informer to: the store contents, ``has_synced`` never before the state
is whole, the temporary store (no consumer sees a half-streamed state), and convergence after the
fallback or the retry.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import parse_qs

import pytest
from kubernetes import client

from client.errors import TransportError
from client.rest import RESTClient
from client.wait import ExponentialBackoff
from controller.foo_controller import FOO_GVR
from informer import SharedIndexInformer, wait_for_cache_sync
from informer.listwatch import ListWatch
from informer.reflector import INITIAL_EVENTS_ANNOTATION
from informer.testing import RunningInformer
from tests.helpers import CRD, wait_for
from tests.integration.controller_process import USER_AGENT, ControllerProcess
from tests.integration.test_informer_faults import BlackholeProxy
from tests.integration.test_informer_sync import Recorder, foo_body, seed_foos

GROUP, VERSION, PLURAL = FOO_GVR
NS = "default"


def is_initial_events_end(event: dict[str, Any]) -> bool:
    annotations = event["object"]["metadata"].get("annotations") or {}
    return event["type"] == "BOOKMARK" and annotations.get(INITIAL_EVENTS_ANNOTATION) == "true"


class WrappedStream:
    """A watch stream whose events pass through ``on_event(event) -> event | None`` first."""

    def __init__(self, stream: Any, on_event: Any) -> None:
        self.stream = stream
        self.on_event = on_event

    def __iter__(self):
        for event in self.stream:
            yield self.on_event(event)

    def close(self) -> None:
        self.stream.close()


class HoldAtTheBookmark(ListWatch):
    """Holds each WatchList stream just before its initial-events-end bookmark until released,
    so a test can look at the informer with every object streamed and the state not confirmed."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.at_bookmark = threading.Event()  # a stream is held at its bookmark
        self.release = threading.Event()  # lets the held stream go on

    def watch(self, options, *, read_timeout=None):
        stream = super().watch(options, read_timeout=read_timeout)
        if not options.get("sendInitialEvents"):
            return stream

        def hold(event):
            if is_initial_events_end(event):
                self.at_bookmark.set()
                # until released, or until the informer stops (a failed test must not hang it)
                while not self.release.wait(0.05) and not stream.closed:
                    pass
            return event

        return WrappedStream(stream, hold)


class IgnoresSendInitialEvents(ListWatch):
    """A server that does not know WatchList's parameters and drops them: the request becomes a
    plain watch from "now", with synthetic ADDED events and no initial-events-end bookmark."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.added = 0  # ADDED events the ignoring streams delivered
        self.lock = threading.Lock()

    def watch(self, options, *, read_timeout=None):
        options = dict(options)
        ignored = options.pop("sendInitialEvents", None) is not None
        options.pop("resourceVersionMatch", None)
        stream = super().watch(options, read_timeout=read_timeout)
        if not ignored:
            return stream

        def count(event):
            if event["type"] == "ADDED":
                with self.lock:
                    self.added += 1
            return event

        return WrappedStream(stream, count)


class DropsTheFirstStream(ListWatch):
    """The first WatchList stream's connection breaks after ``after`` events, before the
    bookmark; ``seen_at_drop`` records what the informer showed at that moment."""

    def __init__(self, *args: Any, after: int, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.after = after
        self.dropped = False
        self.informer: SharedIndexInformer | None = None
        self.seen_at_drop: tuple[bool, int] | None = None

    def watch(self, options, *, read_timeout=None):
        stream = super().watch(options, read_timeout=read_timeout)
        if not options.get("sendInitialEvents") or self.dropped:
            return stream
        self.dropped = True
        count = 0

        def drop(event):
            nonlocal count
            count += 1
            if count > self.after:
                assert self.informer is not None
                self.seen_at_drop = (
                    self.informer.has_synced(),
                    len(self.informer.get_store().list()),
                )
                stream.close()
                raise TransportError("connection reset by peer (test)")
            return event

        return WrappedStream(stream, drop)


def informer_for(sim, list_watch_class=ListWatch, fifo="real", **kw):
    rest = RESTClient(sim.api_client)
    lw = list_watch_class(rest, GROUP, VERSION, PLURAL, NS, **kw.pop("lw_kw", {}))
    options = {"backoff": ExponentialBackoff(initial=0.05, cap=0.2)}
    options.update(kw.pop("reflector_options", {}))
    informer = SharedIndexInformer(lw, 0.0, fifo=fifo, name="foos", reflector_options=options, **kw)
    return lw, informer


def requests(sim):
    """(verb, query, code) of every foos list and watch, in the order they began (a watch is
    logged when it ends)."""
    return [
        (r.verb, {k: v[0] for k, v in parse_qs(r.query).items()}, r.code)
        for r in sorted(sim.request_log, key=lambda r: r.time)
        if r.resource == PLURAL and r.verb in ("list", "watch")
    ]


def streamed(sim):
    return [(q, code) for verb, q, code in requests(sim) if q.get("sendInitialEvents")]


def names(informer):
    return sorted(o["metadata"]["name"] for o in informer.get_store().list())


def create(sim, name):
    client.CustomObjectsApi(sim.api_client).create_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, foo_body(name)
    )


# -- v1.36: the server streams -------------------------------------------------------------------


@pytest.mark.parametrize("fifo", ["real", "delta"])
def test_v1_36_streams_the_initial_state_and_syncs_at_the_bookmark(sim, fifo):
    seed_foos(sim, NS, 1200)
    lw, informer = informer_for(sim, HoldAtTheBookmark, fifo)
    assert informer.use_watch_list is None  # the default: client-go's gate, on
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert lw.at_bookmark.wait(10), "the stream never reached its bookmark"
        # Every object is streamed, none is confirmed: nothing reached the informer.
        assert not informer.has_synced() and not reg.has_synced()
        assert informer.get_store().list() == [] and rec.snapshot() == []
        lw.release.set()
        assert wait_for_cache_sync(running.stop, informer, reg, timeout=10)
        assert names(informer) == [f"foo-{i:05d}" for i in range(1200)]
        events = rec.snapshot()
        assert len(events) == 1200 and all(kind == "add" and initial for kind, _, initial in events)
        obj = informer.lister().get(NS, "foo-00042")
        assert obj["kind"] == "Foo" and obj["apiVersion"] == f"{GROUP}/{VERSION}"
        # The same watch carries on: a new Foo arrives without a new request.
        create(sim, "late")
        wait_for(lambda: "late" in names(informer), message="the late Foo in the cache")
        assert len(sim.storage.watchers()) == 1
    wait_for(lambda: streamed(sim), message="the stream logged (at its end)")
    assert [verb for verb, _, _ in requests(sim)] == ["watch"]
    ((query, code),) = streamed(sim)
    assert code == 200
    assert query["sendInitialEvents"] == "true"
    assert query["resourceVersionMatch"] == "NotOlderThan"
    assert query["allowWatchBookmarks"] == "true"
    assert "resourceVersion" not in query  # "" at the start: the latest state, consistently
    assert 300 <= int(query["timeoutSeconds"]) < 600


def test_v1_36_handlers_never_see_a_half_streamed_store(sim):
    # RealFIFO hands the informer the whole replace in one batch (up to 1000 entries), so with
    # the temporary store every initial add finds the cache already whole; were events put in
    # the FIFO as they streamed, the first handler calls would see a part of it.
    seed_foos(sim, NS, 300)
    _, informer = informer_for(sim)
    sizes: list[int] = []
    lock = threading.Lock()

    class Sizes:
        def on_add(self, obj, initial):
            with lock:
                sizes.append(len(informer.get_store().list()))

        def on_update(self, old, new): ...

        def on_delete(self, obj): ...

    reg = informer.add_event_handler(Sizes())
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, reg, timeout=10)
        wait_for(lambda: len(sizes) == 300, message="300 initial adds")
    assert set(sizes) == {300}


def force_a_relist(sim, then=None):
    """End the informer's watch and fail its re-watch with a 500, so its next cycle fetches the
    whole state again; ``then`` runs in the back-off between the two (the test's reflector waits
    1 s there), so what it changes reaches the informer only through that relist.

    The watch must have carried an event: one that ends within a second of its start without
    any is a VeryShortWatchError, after which the reflector would fetch the state at once."""
    failed = len([1 for verb, _, code in requests(sim) if verb == "watch" and code == 500])
    sim.faults.fail_next(1, 500, verbs=["watch"], resources=[PLURAL])
    sim.faults.close_watches()
    wait_for(
        lambda: (
            len([1 for verb, _, code in requests(sim) if verb == "watch" and code == 500]) > failed
        ),
        message="the re-watch failed",
    )
    if then is not None:
        then()


SLOW_BACKOFF = {"backoff": ExponentialBackoff(initial=1.0, cap=1.0, jitter=0.0)}


def delete(sim, name):
    sim.rest.delete(sim.registry.lookup(GROUP, VERSION, PLURAL), NS, name, {}, None)


def test_v1_36_a_relist_streams_again_and_the_old_state_stays_whole_until_the_bookmark(sim):
    create(sim, "a")
    create(sim, "b")
    lw, informer = informer_for(sim, HoldAtTheBookmark, reflector_options=SLOW_BACKOFF)
    lw.release.set()
    rec = Recorder()
    informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=10)
        create(sim, "x")
        wait_for(
            lambda: ("add", "x", False) in rec.snapshot(), message="x on the handed-over watch"
        )
        synced_rv = informer.last_sync_resource_version()
        lw.at_bookmark.clear()
        lw.release.clear()
        before = len(rec.snapshot())
        force_a_relist(sim, then=lambda: (delete(sim, "a"), create(sim, "c")))
        assert lw.at_bookmark.wait(10), "the relist never streamed"
        # The new state is streamed; the old one stays whole, and no handler heard of a change.
        assert names(informer) == ["a", "b", "x"] and len(rec.snapshot()) == before
        lw.release.set()
        wait_for(lambda: names(informer) == ["b", "c", "x"], message="the relist applied")
        wait_for(lambda: len(rec.snapshot()) >= before + 2, message="a deleted, c added")
    changes = [(kind, name) for kind, name, _ in rec.snapshot()[before:]]
    # a's deletion was missed by every watch: the relist hands it over as a tombstone (its key)
    assert ("delete", "default/a") in changes and ("add", "c") in changes
    wait_for(lambda: len(streamed(sim)) == 2, message="both streams logged")
    # The relist streamed from the synced resourceVersion, and nothing was LISTed.
    assert streamed(sim)[-1][0]["resourceVersion"] == synced_rv
    assert not [1 for verb, _, _ in requests(sim) if verb == "list"]


# -- v1.24: the server refuses -------------------------------------------------------------------


@pytest.mark.kubesim(crds=[CRD], watch_list=False)
def test_v1_24_refuses_with_a_422_and_the_informer_lists_then_watches(sim):
    seed_foos(sim, NS, 700)
    _, informer = informer_for(sim, reflector_options=SLOW_BACKOFF)
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, reg, timeout=10)
        assert names(informer) == [f"foo-{i:05d}" for i in range(700)]
        assert len(rec.snapshot()) == 700
        create(sim, "late")
        wait_for(lambda: "late" in names(informer), message="the late Foo in the cache")
        # A relist lists again, without asking for WatchList again.
        force_a_relist(sim, then=lambda: delete(sim, "late"))
        wait_for(lambda: "late" not in names(informer), message="the relisted state")
    first, *rest = requests(sim)
    assert first[0] == "watch" and first[1]["sendInitialEvents"] == "true" and first[2] == 422
    lists = [q for verb, q, _ in rest if verb == "list"]
    assert lists[0] == {"resourceVersion": "0", "limit": "500"}
    assert len(lists) == 2  # the fallback list, and the relist
    assert len(streamed(sim)) == 1


# -- a server that ignores sendInitialEvents ------------------------------------------------------


def test_a_server_ignoring_send_initial_events_is_caught_and_listed_instead(sim):
    seed_foos(sim, NS, 50)
    lw, informer = informer_for(
        sim, IgnoresSendInitialEvents, reflector_options={"watch_list_bookmark_timeout": 0.5}
    )
    with RunningInformer(informer) as running:
        wait_for(lambda: lw.added == 50, message="the ignoring stream's 50 ADDED")
        # Every object arrived, but with no bookmark nothing is confirmed.
        assert not informer.has_synced() and informer.get_store().list() == []
        assert wait_for_cache_sync(running.stop, informer, timeout=10)
        assert names(informer) == [f"foo-{i:05d}" for i in range(50)]
        create(sim, "late")
        wait_for(lambda: "late" in names(informer), message="the late Foo in the cache")
    wait_for(lambda: len(requests(sim)) >= 3, message="the watches logged (at their end)")
    verbs = [verb for verb, _, _ in requests(sim)]
    assert verbs[:3] == ["watch", "list", "watch"]
    # Asked once (the proxy dropped the parameters on the way), not at later cycles.
    assert informer._reflector is not None and informer._reflector._watch_list_supported is False


# -- a watch dropped before the bookmark ----------------------------------------------------------


def test_a_stream_dropped_before_the_bookmark_is_streamed_again_and_converges(sim):
    seed_foos(sim, NS, 40)
    lw, informer = informer_for(sim, DropsTheFirstStream, lw_kw={"after": 25})
    lw.informer = informer
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, reg, timeout=10)
        assert names(informer) == [f"foo-{i:05d}" for i in range(40)]
        # At the drop, 25 objects had streamed, and none of them had reached the informer.
        assert lw.seen_at_drop == (False, 0)
        assert len(rec.snapshot()) == 40  # each object once: the partial stream left no trace
    wait_for(lambda: len(streamed(sim)) == 2, message="both streams logged (at their end)")
    assert all(code == 200 for _, code in streamed(sim))
    assert not [1 for verb, _, _ in requests(sim) if verb == "list"]


# -- the list path's fault tests, streamed --------------------------------------------------------


def test_a_429_on_the_stream_honours_retry_after_and_streams_again(sim):
    create(sim, "a")
    _, informer = informer_for(
        sim, reflector_options={"backoff": ExponentialBackoff(initial=0.01, cap=0.02)}
    )
    errors = []
    informer.set_watch_error_handler(lambda r, e: errors.append(e))
    sim.faults.fail_next(1, 429, verbs=["watch"], resources=[PLURAL], retry_after=1)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
    wait_for(lambda: len(streamed(sim)) == 2, message="both streams logged")
    (throttled, first_at), (served, second_at) = [
        (code, r.time)
        for r in sorted(sim.request_log, key=lambda r: r.time)
        if r.resource == PLURAL and "sendInitialEvents" in r.query
        for code in [r.code]
    ]
    assert (throttled, served) == (429, 200)
    assert second_at - first_at >= 0.95  # Retry-After: 1, not the tiny backoff
    assert not [1 for verb, _, _ in requests(sim) if verb == "list"]  # no fallback
    assert errors == [] and informer._reflector._watch_list_supported is True


class CountsWatches(ListWatch):
    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.calls: list[dict[str, Any]] = []  # options of every watch opened

    def watch(self, options, *, read_timeout=None):
        self.calls.append(dict(options))
        return super().watch(options, read_timeout=read_timeout)


def test_a_hung_watch_after_the_handover_is_caught_at_its_stall_deadline(sim):
    # The stream WatchList hands over keeps the regular watch's read deadline (here 2 s, for a
    # watch of timeoutSeconds 30), not the 10 s of quiet allowed before the bookmark.
    proxy = BlackholeProxy(sim.port)
    try:
        cfg = sim.configuration()
        cfg.host = f"http://127.0.0.1:{proxy.port}"
        lw = CountsWatches(RESTClient(client.ApiClient(cfg)), GROUP, VERSION, PLURAL, NS)
        create(sim, "a")
        informer = SharedIndexInformer(
            lw,
            name="foos",
            reflector_options={
                "min_watch_timeout": 30.0,
                "rand": lambda: 0.0,
                "watch_stall_timeout": lambda timeout_seconds: 2.0,
                "backoff": ExponentialBackoff(initial=0.01, cap=0.02),
            },
        )
        with RunningInformer(informer) as running:
            assert wait_for_cache_sync(running.stop, informer, timeout=5)
            create(sim, "b")
            wait_for(lambda: names(informer) == ["a", "b"], timeout=3)
            # still the stream WatchList opened: it is the one that goes silent
            assert [bool(c.get("sendInitialEvents")) for c in lw.calls] == [True]
            assert proxy.hang_watches() == 1
            hung_at = time.monotonic()
            create(sim, "c")
            wait_for(lambda: names(informer) == ["a", "b", "c"], timeout=8, message="recovery")
            assert time.monotonic() - hung_at < 4.0
        # a dropped connection needs a re-watch from where it was, not a new stream
        assert [bool(c.get("sendInitialEvents")) for c in lw.calls[:2]] == [True, False]
    finally:
        proxy.close()
    assert not [1 for verb, _, _ in requests(sim) if verb == "list"]


def test_a_server_restart_resumes_the_watch_without_streaming_again(sim):
    create(sim, "a")
    _, informer = informer_for(sim)
    rec = Recorder()
    informer.add_event_handler(rec)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        # One event first, so that the watch is no "very short watch" when it ends.
        create(sim, "warm-up")
        wait_for(lambda: len(rec.snapshot()) == 2, timeout=5)
        synced_rv = informer.last_sync_resource_version()
        sim.stop()
        sim.rest.create(sim.registry.lookup(GROUP, VERSION, PLURAL), NS, foo_body("down"), {})
        sim.start()
        wait_for(lambda: "down" in names(informer), timeout=10, message="the missed add")
    wait_for(
        lambda: any(
            verb == "watch" and q.get("resourceVersion") == synced_rv
            for verb, q, _ in requests(sim)
        ),
        message=f"a watch from resourceVersion {synced_rv}",
    )
    assert len(streamed(sim)) == 1 and not [1 for verb, _, _ in requests(sim) if verb == "list"]


# -- the process: the flag and client-go's environment variable ---------------------------------


@pytest.mark.parametrize(
    ("flags", "env", "streams"),
    [
        ((), {}, True),
        (("--watch-list=false",), {}, False),
        ((), {"KUBE_FEATURE_WatchListClient": "false"}, False),
        # the flag, when given, has the last word (as --feature-gates over the environment)
        (("--watch-list=true",), {"KUBE_FEATURE_WatchListClient": "false"}, True),
    ],
    ids=["default", "flag-false", "env-false", "flag-over-env"],
)
def test_the_controller_process_streams_unless_told_not_to(sim, tmp_path, flags, env, streams):
    proc = ControllerProcess.against(sim, tmp_path, *flags, env=env)
    try:
        proc.wait_log("starting workers", timeout=20)
    finally:
        proc.close()
    for resource in ("foos", "deployments"):

        def log(verb, resource=resource):
            return [r for r in sim.request_log if r.resource == resource and r.verb == verb]

        # a watch is logged when it ends: once the server has seen the process go
        wait_for(lambda: log("watch"), message=f"the {resource} watch logged")
        opened = [r for r in log("watch") if "sendInitialEvents=true" in r.query]
        if streams:
            assert log("list") == [] and [r.code for r in opened] == [200], resource
        else:
            assert opened == [] and len(log("list")) == 1, resource


@pytest.mark.kubesim(crds=[CRD], watch_list=False)
def test_the_controller_process_against_v1_24_falls_back_and_works(sim, tmp_path):
    proc = ControllerProcess.against(sim, tmp_path)
    try:
        proc.wait_log("starting workers", timeout=20)
        create(sim, "web")
        apps = client.AppsV1Api(sim.api_client)
        wait_for(
            lambda: [d.metadata.name for d in apps.list_namespaced_deployment(NS).items] == ["web"],
            timeout=10,
            message="the Foo's Deployment",
        )
    finally:
        proc.close()
    for resource in ("foos", "deployments"):
        refused = [
            r.code
            for r in sim.request_log
            if r.resource == resource and "sendInitialEvents=true" in r.query
        ]
        lists = [
            r
            for r in sim.request_log
            if r.resource == resource and r.verb == "list" and r.user_agent.startswith(USER_AGENT)
        ]
        assert refused == [422] and [r.code for r in lists] == [200], resource
