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


def test_an_aggregate_remembers_each_distinct_message_once_and_repeats_are_not_combined():
    """Nine distinct messages and their repeats stay below the threshold; the tenth combines.
    (20 Events in all: within the spam filter's burst of 25.)"""
    c = EventCorrelator(clock=FakeClock())
    for _ in range(2):
        for i in range(9):
            assert c.correlate(make_event(f"m{i}", reason="Scaled")).event["message"] == f"m{i}"
    combined = c.correlate(make_event("m9", reason="Scaled"))
    assert combined.event["message"] == "(combined from similar events): m9"
    # a combined Event is remembered under its reason, an Event's own key under its message too
    assert combined.key != c.correlate(make_event("m0", reason="Scaled")).key


def test_what_is_remembered_of_an_event_holds_the_objects_fields_once():
    """Up to 4096 objects are remembered by each stage: the three keep one tuple of the
    object's fields between them, so a Synced Event costs under 800 bytes (it was ~1,020)."""
    import tracemalloc

    clock = FakeClock()
    events = []
    for i in range(200):
        obj = dict(FOO, metadata=dict(FOO["metadata"], name=f"foo-{i:03d}", uid=f"uid-{i:03d}"))
        events.append(make_event(obj=obj, name=f"foo-{i:03d}.1"))
    c = EventCorrelator(clock=clock)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for ev in events:
            result = c.correlate(ev)
            c.update_state(stored(result.event), result.key)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    per_event = sum(d.size_diff for d in after.compare_to(before, "filename")) / len(events)
    assert per_event < 800
    # and what is remembered still works: a repeat patches the Event written first
    again = c.correlate(
        make_event(
            obj=dict(FOO, metadata=dict(FOO["metadata"], name="foo-007", uid="uid-007")),
            name="foo-007.2",
        )
    )
    assert again.patch is not None and again.event["metadata"]["name"] == "foo-007.1"
