"""tools.record.recorder: the asynchronous EventRecorder against a fake REST client that
records every request (POST, PATCH, retries, shutdown, a full queue)."""

from __future__ import annotations

import threading
import time

from client.errors import APIError, TransportError
from tests.helpers import wait_for
from tools.record.recorder import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder

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

    def request(
        self, method, path, params=None, body=None, content_type="application/json", timeout=None
    ):
        self.calls.append((method, path, params, body, content_type))
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
        return out

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
