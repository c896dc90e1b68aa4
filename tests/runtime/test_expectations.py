"""runtime.expectations: what our writes left the caches behind on, and for how long."""

from __future__ import annotations

from runtime.expectations import EXPECTATION_TTL, Expectations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def created(e, resource, key, produced="7"):
    """A create that returned before any event of the object came (begin, then end)."""
    e.begin_create(resource, key)
    e.end_update(resource, key, produced)


def test_nothing_expected_is_never_stale_and_every_event_counts():
    e = Expectations()
    assert not e.stale("foos", "ns/a", "5") and not e.stale("foos", "ns/a", None)
    assert e.observed("foos", "ns/a", "5") and e.observed("foos", "ns/a")


def test_a_create_is_stale_until_the_cache_has_the_object():
    e = Expectations()
    created(e, "deployments", "ns/web")
    assert e.stale("deployments", "ns/web", None)  # not in the cache yet
    assert e.stale("deployments", "ns/web", None)
    assert not e.stale("deployments", "ns/web", "7")  # there: met and dropped
    assert len(e) == 0 and not e.stale("deployments", "ns/web", None)


def test_a_create_is_met_by_its_add_or_delete_event():
    e = Expectations()
    created(e, "deployments", "ns/web")
    assert e.observed("deployments", "ns/web", "7")  # the add event is always passed on
    assert not e.stale("deployments", "ns/web", None)
    created(e, "deployments", "ns/web")
    assert e.observed("deployments", "ns/web")  # created and deleted: no lasting wait
    assert len(e) == 0


def test_an_update_is_stale_only_at_the_version_it_replaced():
    e = Expectations()
    e.expect_replaced("foos", "ns/a", "5", "6")
    assert e.stale("foos", "ns/a", "5")
    assert e.observed("foos", "ns/a", "5")  # a resync of the old copy: keep waiting
    assert e.stale("foos", "ns/a", "5")
    assert not e.stale("foos", "ns/a", "9")  # newer (ours or anyone's): met
    assert len(e) == 0


def test_our_own_echo_is_swallowed_unless_a_sync_waited_for_it():
    e = Expectations()
    e.expect_replaced("foos", "ns/a", "5", "6")
    assert not e.observed("foos", "ns/a", "6")  # the echo: the writer saw all of it
    assert len(e) == 0
    e.expect_replaced("foos", "ns/a", "6", "7")
    assert e.stale("foos", "ns/a", "6")  # a sync skipped, relying on the echo
    assert e.observed("foos", "ns/a", "7")
    e.expect_replaced("foos", "ns/a", "7", "8")
    assert e.observed("foos", "ns/a", "9")  # someone else's change after ours: passed on
    e.expect_replaced("foos", "ns/a", "9", "10")
    assert e.observed("foos", "ns/a")  # deleted: passed on


def test_expectations_expire():
    clock = Clock()
    e = Expectations(clock=clock)
    created(e, "deployments", "ns/web")
    e.expect_replaced("foos", "ns/a", "5", "6")
    clock.now += EXPECTATION_TTL
    assert not e.stale("deployments", "ns/web", None)  # a repair waits at most the TTL
    assert not e.stale("foos", "ns/a", "5")
    assert len(e) == 0


def test_entries_nobody_checks_again_are_swept():
    clock = Clock()
    e = Expectations(ttl=10, clock=clock)
    for i in range(100):
        e.expect_replaced("foos", f"ns/deleted-{i}", "5", "6")  # Foos deleted right after
    clock.now += 11
    created(e, "deployments", "ns/web")
    assert len(e) == 1
    e.forget("deployments", "ns/web")
    assert len(e) == 0


def test_events_during_an_update_in_flight_are_held_until_it_returns():
    # The watch event of our write can be handled before the writer has read the response.
    e = Expectations()
    e.begin_update("foos", "ns/a", "5")
    assert not e.stale("foos", "ns/a", "5")  # in flight: no sync of this key runs meanwhile
    assert not e.observed("foos", "ns/a", "6")  # held: was it ours?
    assert not e.end_update("foos", "ns/a", "6")  # it was: nothing to enqueue
    assert len(e) == 0 and not e.stale("foos", "ns/a", "6")  # and the cache has it


def test_someone_elses_change_during_an_update_in_flight_is_handed_back():
    e = Expectations()
    e.begin_update("foos", "ns/a", "5")
    assert not e.observed("foos", "ns/a", "6")  # someone else's
    assert e.end_update("foos", "ns/a", "7")  # ours made 7: the caller enqueues for the 6
    assert e.stale("foos", "ns/a", "5")  # our own echo (7) is still to come
    assert e.observed("foos", "ns/a", "7")  # a sync waited for it: passed on


def test_a_failed_or_no_op_update_leaves_no_expectation():
    e = Expectations()
    e.begin_update("foos", "ns/a", "5")
    assert not e.end_update("foos", "ns/a", None)  # failed (a 409, a 404)
    assert len(e) == 0
    e.begin_update("foos", "ns/a", "5")
    assert e.observed("foos", "ns/a", "5")  # a resync of the current copy: passed on
    assert not e.end_update("foos", "ns/a", "5")  # a no-op update: same resourceVersion
    assert len(e) == 0
    e.begin_update("foos", "ns/a", "5")
    assert e.observed("foos", "ns/a")  # deleted meanwhile: passed on, and dropped
    assert not e.end_update("foos", "ns/a", None) and len(e) == 0


def test_an_update_in_flight_is_never_swept():
    clock = Clock()
    e = Expectations(ttl=10, clock=clock)
    e.begin_update("foos", "ns/slow", "5")
    clock.now += 11
    created(e, "deployments", "ns/web")  # the sweep runs here
    assert not e.observed("foos", "ns/slow", "6")
    assert not e.end_update("foos", "ns/slow", "6")


def test_a_create_announced_before_it_is_sent_is_met_by_events_that_overtake_its_response():
    # The ADDED event, and the DELETED one when the object is removed at once (its owner
    # already gone), can reach the handlers before the writer reads the POST's response.
    e = Expectations()
    e.begin_create("deployments", "ns/web")
    assert not e.stale("deployments", "ns/web", None)  # in flight: nobody syncs it meanwhile
    assert not e.observed("deployments", "ns/web", "7")  # held
    assert e.observed("deployments", "ns/web")  # deleted: nothing left to wait for
    e.end_update("deployments", "ns/web", "7")
    assert len(e) == 0 and not e.stale("deployments", "ns/web", None)

    e.begin_create("deployments", "ns/web")
    e.observed("deployments", "ns/web", "8")  # the ADDED event first
    e.end_update("deployments", "ns/web", "8")
    assert len(e) == 0

    e.begin_create("deployments", "ns/web")
    e.end_update("deployments", "ns/web", None)  # the create failed
    assert len(e) == 0

    e.begin_create("deployments", "ns/web")
    e.end_update("deployments", "ns/web", "9")  # the response first, as usual
    assert e.stale("deployments", "ns/web", None)  # the cache lacks it: wait for its event
    assert e.observed("deployments", "ns/web", "9")
    assert len(e) == 0


def test_a_create_made_for_another_owner_is_not_waited_for():
    # The Foo was deleted and made again under the same name: what was created for the old
    # one may have come and gone while the watch was down, so its event may never come.
    e = Expectations()
    e.begin_create("deployments", "ns/web", owner="uid-old")
    e.end_update("deployments", "ns/web", "7")
    assert e.stale("deployments", "ns/web", None, owner="uid-old")  # its own: wait
    assert not e.stale("deployments", "ns/web", None, owner="uid-new")  # another's: dropped
    assert len(e) == 0
