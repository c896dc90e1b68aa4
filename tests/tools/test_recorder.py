"""tools.record.recorder: the asynchronous EventRecorder against a fake REST client that
records every request (POST, PATCH, retries, shutdown, a full queue)."""

from __future__ import annotations

import copy
import logging
import threading
import time
from datetime import UTC, datetime

from client.errors import APIError, TransportError
from tests.helpers import wait_for
from tools.record.correlator import EventCorrelator
from tools.record.recorder import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder, _Stamps

FOO = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {"name": "foo-a", "namespace": "ns1", "uid": "u-1", "resourceVersion": "7"},
}


class FakeRest:
    """Records requests; answers from a script of callables or stored objects."""

    def __init__(self, failures=()):
        self.calls = []
        self.failures = list(failures)  # exceptions raised by the first calls, in order
        self.written = threading.Event()
        self.rv = 0
        self.decoded = []  # the decode= flag of each request, in order

    def request(
        self,
        method,
        path,
        params=None,
        body=None,
        content_type="application/json",
        timeout=None,
        *,
        decode=True,
    ):
        self.calls.append((method, path, params, body, content_type))
        self.decoded.append(decode)
        if self.failures:
            raise self.failures.pop(0)
        self.rv += 1
        if method == "POST":
            out = dict(body)
            out["metadata"] = dict(body["metadata"], resourceVersion=str(self.rv))
        else:
            out = {
                "metadata": {
                    "name": path.rsplit("/", 1)[1],
                    "namespace": "ns1",
                    "resourceVersion": str(self.rv),
                },
                **{k: v for k, v in self.last_post().items() if k != "metadata"},
                **body,
            }
        self.written.set()
        return out if decode else {}  # RESTClient.request(decode=False): the answer unread

    def last_post(self):
        return next(c[3] for c in reversed(self.calls) if c[0] == "POST")


def test_recorder_posts_then_patches_repeats():
    rest = FakeRest()
    rec = EventRecorder(rest, component="sample-controller", host="node-1")
    rec.start()
    rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
    rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
    assert rec.shutdown(timeout=5)
    (m1, p1, q1, b1, _), (m2, p2, q2, b2, ct2) = rest.calls
    assert (m1, p1) == ("POST", "/api/v1/namespaces/ns1/events")
    assert q1 == {"fieldManager": "sample-controller"}
    assert b1["involvedObject"] == {
        "kind": "Foo",
        "namespace": "ns1",
        "name": "foo-a",
        "uid": "u-1",
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "resourceVersion": "7",
    }
    assert b1["metadata"]["name"].startswith("foo-a.")
    assert (b1["type"], b1["reason"], b1["count"]) == ("Normal", "Synced", 1)
    assert b1["source"] == {"component": "sample-controller", "host": "node-1"}
    assert (m2, p2) == ("PATCH", f"/api/v1/namespaces/ns1/events/{b1['metadata']['name']}")
    assert ct2 == "application/strategic-merge-patch+json"
    assert b2["count"] == 2


def test_recorder_retries_transient_errors_and_gives_up_on_bad_requests():
    rest = FakeRest(failures=[TransportError("refused"), APIError(503, "ServiceUnavailable", "x")])
    rec = EventRecorder(rest, component="c", host="h", retry_interval=0.01)
    rec.start()
    rec.event(FOO, EVENT_TYPE_WARNING, "ErrResourceExists", "m")
    wait_for(lambda: rest.written.is_set(), message="the event written after the retries")
    assert [c[0] for c in rest.calls] == ["POST", "POST", "POST"]

    rest2 = FakeRest(failures=[APIError(422, "Invalid", "bad")])
    rec2 = EventRecorder(rest2, component="c", host="h", retry_interval=0.01)
    rec2.start()
    rec2.event(FOO, EVENT_TYPE_WARNING, "R", "m")
    assert rec2.shutdown(timeout=5)
    assert len(rest2.calls) == 1  # not retried
    assert rec.shutdown(timeout=5)


def test_recorder_gives_up_after_max_tries():
    rest = FakeRest(failures=[TransportError("refused")] * 10)
    rec = EventRecorder(rest, component="c", host="h", retry_interval=0.001, max_tries=3)
    rec.start()
    rec.event(FOO, EVENT_TYPE_NORMAL, "R", "m")
    wait_for(lambda: len(rest.calls) >= 3, message="three tries")
    assert rec.shutdown(timeout=5)
    assert len(rest.calls) == 3


def test_shutdown_flushes_with_one_attempt_each_and_no_retry_wait():
    rest = FakeRest(failures=[TransportError("refused")] * 10)
    rec = EventRecorder(rest, component="c", host="h", retry_interval=60)
    rec.event(FOO, EVENT_TYPE_NORMAL, "R", "m1")
    rec.event(FOO, EVENT_TYPE_NORMAL, "R", "m2")
    rec.start()
    start = time.monotonic()
    assert rec.shutdown(timeout=5)
    assert time.monotonic() - start < 2  # never sat out the 60 s retry interval
    assert [c[3]["message"] for c in rest.calls] == ["m1", "m2"]


def test_shutdown_keeps_its_timeout_when_the_queue_is_full_and_the_server_hangs():
    release = threading.Event()
    writing = threading.Event()

    class HangingRest(FakeRest):
        def request(self, *args, **kwargs):
            writing.set()
            release.wait(3)  # a hung server: the write returns only at its timeout
            return super().request(*args, **kwargs)

    rec = EventRecorder(HangingRest(), component="c", host="h", queue_length=1)
    rec.start()
    rec.event(FOO, EVENT_TYPE_NORMAL, "R", "in flight")
    assert writing.wait(2)
    rec.event(FOO, EVENT_TYPE_NORMAL, "R", "queued")  # the queue is now full
    start = time.monotonic()
    try:
        assert not rec.shutdown(timeout=0.2)
        assert time.monotonic() - start < 1.0
    finally:
        release.set()


def test_patch_of_vanished_event_creates_a_new_one():
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h")
    rec.start()
    rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "ok")
    wait_for(lambda: len(rest.calls) == 1, message="the first event written")
    rest.failures = [APIError(404, "NotFound", "gone")]
    rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "ok")
    assert rec.shutdown(timeout=5)
    assert [c[0] for c in rest.calls] == ["POST", "PATCH", "POST"]
    assert rest.calls[2][3]["count"] == 1


def test_combined_events_count_up_on_one_event():
    # Once ten messages of one reason are combined, the combined Event is keyed by that reason
    # (client-go's aggregate key), not by its message: later ones PATCH it, they do not pile up.
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h")
    rec.start()
    for i in range(12):
        rec.event(FOO, EVENT_TYPE_NORMAL, "Scaled", f"scaled to {i}")
    assert rec.shutdown(timeout=5)
    assert [c[0] for c in rest.calls] == ["POST"] * 10 + ["PATCH"] * 2
    combined = rest.calls[9][3]
    assert combined["message"] == "(combined from similar events): scaled to 9"
    path = f"/api/v1/namespaces/ns1/events/{combined['metadata']['name']}"
    assert [(c[1], c[3]["count"]) for c in rest.calls[10:]] == [(path, 2), (path, 3)]
    assert rest.calls[11][3]["message"] == "(combined from similar events): scaled to 11"


def test_full_queue_drops_without_blocking():
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h", queue_length=2)  # not started
    for i in range(5):
        rec.event(FOO, EVENT_TYPE_NORMAL, "R", f"m{i}")
    assert rec.dropped == 3


def test_the_caller_only_hands_off_the_event_is_built_and_logged_by_a_sender(caplog):
    rest = FakeRest()
    calls = iter([1_700_000_000_123_456_789])  # one call: the clock is read by event(), not later
    rec = EventRecorder(rest, component="c", host="h", clock=lambda: next(calls))
    with caplog.at_level(logging.INFO, logger="tools.record.recorder"):
        rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "ok")
        assert not [r for r in caplog.records if r.getMessage() == "event"]  # nothing logged yet
        rec.start()
        assert rec.shutdown(timeout=5)
    (logged,) = [r for r in caplog.records if r.getMessage() == "event"]
    assert logged.threadName.startswith("event-sender-")
    (_, _, _, body, _) = rest.calls[0]
    # name and timestamps come from the moment of the call
    assert body["metadata"]["name"] == "foo-a.17979cfe3d85cd15"
    assert body["firstTimestamp"] == body["lastTimestamp"] == "2023-11-14T22:13:20Z"


def test_the_object_is_read_at_the_call_not_when_the_event_is_written():
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h")
    obj = copy.deepcopy(FOO)
    rec.event(obj, EVENT_TYPE_NORMAL, "Synced", "ok")
    obj["metadata"]["resourceVersion"] = "8"  # a caller that reuses its dict
    rec.start()
    assert rec.shutdown(timeout=5)
    assert rest.calls[0][3]["involvedObject"]["resourceVersion"] == "7"


class GatedRest(FakeRest):
    """Holds every write until `release` is set, counting how many are in flight at once."""

    def __init__(self):
        super().__init__()
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def request(self, *args, **kwargs):
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            self.release.wait(5)
            with self.lock:  # FakeRest's bookkeeping is not thread-safe
                return super().request(*args, **kwargs)
        finally:
            with self.lock:
                self.in_flight -= 1


def other(name):
    return {**FOO, "metadata": {**FOO["metadata"], "name": name, "uid": f"u-{name}"}}


def test_senders_write_events_about_different_objects_side_by_side():
    rest = GatedRest()
    rec = EventRecorder(rest, component="c", host="h", senders=4)
    rec.start()
    names = [f"foo-{i}" for i in range(40)]  # enough that every sender gets some
    for name in names:
        rec.event(other(name), EVENT_TYPE_NORMAL, "Synced", "ok")
    wait_for(lambda: rest.most_in_flight >= 2, message="two writes in flight at once")
    rest.release.set()
    assert rec.shutdown(timeout=5)
    assert sorted(c[3]["involvedObject"]["name"] for c in rest.calls) == sorted(names)


def test_events_about_one_object_stay_in_order_and_repeats_still_patch_with_many_senders():
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h", senders=4)
    for i in range(3):
        for name in ("a", "b", "c", "d", "e"):
            rec.event(other(name), EVENT_TYPE_NORMAL, "Synced", "ok")
            rec.event(other(name), EVENT_TYPE_NORMAL, "Scaled", f"to {i}")
    rec.start()
    assert rec.shutdown(timeout=5)
    for name in ("a", "b", "c", "d", "e"):
        mine = [c for c in rest.calls if c[0] == "POST" and c[3]["involvedObject"]["name"] == name]
        mine += [c for c in rest.calls if c[0] == "PATCH" and f"/{name}." in c[1]]
        # one POST per distinct event, every repeat a PATCH of it: never a duplicate POST
        assert [c[3].get("reason") for c in mine if c[0] == "POST"] == ["Synced"] + ["Scaled"] * 3
        assert [c[3]["count"] for c in mine if c[0] == "PATCH"] == [2, 3]
    # and in the order recorded, per object
    messages_a = [
        c[3]["message"]
        for c in rest.calls
        if c[0] == "POST" and c[3]["involvedObject"]["name"] == "a" and c[3]["reason"] == "Scaled"
    ]
    assert messages_a == ["to 0", "to 1", "to 2"]


def test_the_queue_bound_holds_across_senders():
    rest = FakeRest()
    rec = EventRecorder(rest, component="c", host="h", queue_length=3, senders=4)  # not started
    for name in "abcdef":
        rec.event(other(name), EVENT_TYPE_NORMAL, "R", "m")
    assert rec.dropped == 3
    rec.start()
    assert rec.shutdown(timeout=5)
    assert len(rest.calls) == 3


# -- what one Event costs the sender --------------------------------------------------------------


def test_events_are_written_without_decoding_the_answer_and_repeats_still_patch():
    """The sender never reads the server's answer: every write asks for it not to be decoded,
    and the correlator remembers the Event it sent (name, count, firstTimestamp), so a repeat
    is still a PATCH of the Event the POST created, with the count it must have."""
    rest = FakeRest()
    times = iter([1_700_000_000_000_000_000, 1_700_000_060_000_000_000, 1_700_000_120_000_000_000])
    rec = EventRecorder(rest, component="c", host="h", clock=lambda: next(times))
    for _ in range(3):
        rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "ok")
    rec.start()
    assert rec.shutdown(timeout=5)
    assert rest.decoded == [False, False, False]
    (m1, p1, _, b1, _), (m2, p2, _, b2, _), (m3, p3, _, b3, _) = rest.calls
    assert (m1, m2, m3) == ("POST", "PATCH", "PATCH")
    assert p2 == p3 == f"/api/v1/namespaces/ns1/events/{b1['metadata']['name']}"
    assert (b2["count"], b3["count"]) == (2, 3)
    assert b3["lastTimestamp"] == "2023-11-14T22:15:20Z"


def test_the_event_is_built_once_and_correlated_in_place():
    """The dict the sender POSTs is the one it built and the correlator returned, not a copy."""
    rest = FakeRest()
    seen = []

    class SpyCorrelator(EventCorrelator):
        def correlate(self, event):
            result = super().correlate(event)
            seen.append((event, result.event))
            return result

    rec = EventRecorder(rest, component="c", host="h", correlator=SpyCorrelator())
    rec.event(FOO, EVENT_TYPE_NORMAL, "Synced", "ok")
    rec.start()
    assert rec.shutdown(timeout=5)
    [(built, correlated)] = seen
    assert correlated is built and rest.calls[0][3] is built


def test_timestamps_are_formatted_once_per_second_and_stay_exact():
    stamps = _Stamps()
    second = 1_700_000_000_000_000_000
    first = stamps.format(second)
    assert first == "2023-11-14T22:13:20Z"
    assert stamps.format(second + 999_999_999) is first  # the same second: the same string
    assert stamps.format(second + 1_000_000_000) == "2023-11-14T22:13:21Z"
    assert stamps.format(second - 1) == "2023-11-14T22:13:19Z"  # back in time too
    for ns in (0, 951_782_400_500_000_000, 4_102_444_799_999_999_999):
        expected = datetime.fromtimestamp(ns // 10**9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert stamps.format(ns) == expected
