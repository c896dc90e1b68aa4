"""tools.record.correlator: what to write for each Event (aggregate, dedupe, spam filter).

The correlator is pure bookkeeping, so a fake clock drives it: no thread, no server.
"""

from __future__ import annotations

from tools.record.correlator import EventCorrelator
from tools.record.recorder import EVENT_TYPE_NORMAL

FOO = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {"name": "foo-a", "namespace": "ns1", "uid": "u-1", "resourceVersion": "7"},
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_event(message="Foo synced successfully", reason="Synced", obj=FOO, name="x"):
    return {
        "metadata": {"name": name, "namespace": "ns1"},
        "involvedObject": {
            "kind": obj["kind"],
            "namespace": "ns1",
            "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"],
            "apiVersion": obj["apiVersion"],
        },
        "reason": reason,
        "message": message,
        "source": {"component": "sample-controller", "host": "h"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1,
        "type": EVENT_TYPE_NORMAL,
    }


def stored(ev, rv="1"):
    out = dict(ev)
    out["metadata"] = dict(ev["metadata"], resourceVersion=rv)
    return out


def test_identical_events_become_a_patch_of_the_first():
    c = EventCorrelator(clock=FakeClock())
    first = c.correlate(make_event(name="foo-a.1"))
    assert first.patch is None and not first.skip
    c.update_state(stored(first.event))
    second = c.correlate(make_event(name="foo-a.2"))
    assert second.patch == {
        "count": 2,
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "message": "Foo synced successfully",
    }
    assert second.event["metadata"]["name"] == "foo-a.1"  # patches the stored Event
    c.update_state(stored(second.event, rv="2"))
    assert c.correlate(make_event(name="foo-a.3")).patch["count"] == 3


def test_different_messages_are_not_deduplicated():
    c = EventCorrelator(clock=FakeClock())
    c.update_state(stored(c.correlate(make_event("m1")).event))
    assert c.correlate(make_event("m2")).patch is None


def test_ten_similar_events_are_combined():
    c = EventCorrelator(clock=FakeClock())
    messages = [
        c.correlate(make_event(f"message {i}", reason="Scaled")).event["message"] for i in range(12)
    ]
    assert messages[:9] == [f"message {i}" for i in range(9)]
    assert messages[9] == "(combined from similar events): message 9"
    assert messages[11] == "(combined from similar events): message 11"


def test_aggregation_window_expires():
    clock = FakeClock()
    c = EventCorrelator(clock=clock)
    for i in range(9):
        c.correlate(make_event(f"m{i}"))
    clock.now += 601
    assert c.correlate(make_event("m9")).event["message"] == "m9"


def test_spam_filter_burst_then_one_per_five_minutes():
    clock = FakeClock()
    c = EventCorrelator(clock=clock)
    results = [c.correlate(make_event(f"m{i % 3}", reason=f"R{i}")) for i in range(30)]
    assert [r.skip for r in results] == [False] * 25 + [True] * 5
    clock.now += 299
    assert c.correlate(make_event("x", reason="late")).skip
    clock.now += 2
    assert not c.correlate(make_event("x", reason="later")).skip
    # another object has its own bucket
    other = dict(FOO, metadata=dict(FOO["metadata"], name="foo-b", uid="u-2"))
    assert not c.correlate(make_event(obj=other)).skip


def test_correlate_changes_the_event_in_place_instead_of_copying_it():
    """First write, repeat and combined: the result is the event handed in, its fields set."""
    c = EventCorrelator(clock=FakeClock())
    first = make_event(name="foo-a.1")
    assert c.correlate(first).event is first
    c.update_state(stored(first))
    repeat = make_event(name="foo-a.2")
    result = c.correlate(repeat)
    assert result.event is repeat
    assert (repeat["count"], repeat["metadata"]["name"]) == (2, "foo-a.1")
    for i in range(10):
        similar = make_event(f"scaled {i}", reason="Scaled")
        result = c.correlate(similar)
    assert result.event is similar
    assert similar["message"] == "(combined from similar events): scaled 9"
