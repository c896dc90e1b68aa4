"""runtime.sharding's pure parts and its gate, scope and member rules, without a server.

What is asserted: a bucket is the slice of the hash space client.shard.bucket_range says; the
rendezvous assignment is the same on every replica and moves about 1/N of the buckets when one
of N members comes or goes, only to or from that member; the claim annotation round-trips; a
member is live by the locally observed time of its last change; the gate lets a sync start only
in a bucket acted on and holds the bucket while it runs; the scoped list/watch narrows and
filters, and a re-scope relists the informer so that the cache follows the scope.
"""

from __future__ import annotations

import threading
import uuid

import pytest

from client.shard import ShardRange, bucket_range, fnv1a64, matches
from informer.shared_informer import SharedIndexInformer
from informer.testing import FakeListWatch
from runtime.sharding.assignment import (
    assign,
    bucket_of,
    bucket_of_uid,
    decode_buckets,
    encode_buckets,
    owner_of,
    ranges_of,
)
from runtime.sharding.gate import EVERY_OBJECT, ActingGate
from runtime.sharding.membership import (
    BUCKET_COUNT_ANNOTATION,
    BUCKET_LABEL,
    BUCKETS_ANNOTATION,
    MemberTracker,
    seen_at_or_after,
)
from runtime.sharding.scope import Scope, ScopedListWatch, owned_selector
from tests.helpers import wait_for

UIDS = [str(uuid.UUID(int=i * 7919 + 1, version=4)) for i in range(2000)]


def foo_with(uid: str, name: str = "") -> dict:
    return {"metadata": {"name": name or uid[:8], "namespace": "default", "uid": uid}}


# -- buckets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 16, 64, 1024])
def test_a_uids_bucket_is_the_slice_of_the_hash_space_it_falls_in(count):
    shift = 64 - (count.bit_length() - 1)
    for uid in UIDS[:300]:
        b = bucket_of_uid(uid, count)
        assert bucket_range(b, count).contains(fnv1a64(uid))
        # for a power of two, the top log2(count) bits of the hash
        assert b == (fnv1a64(uid) >> shift if shift < 64 else 0)
        assert bucket_of(foo_with(uid), count) == b


def test_ranges_of_merge_adjacent_buckets_and_select_exactly_their_uids():
    ranges = ranges_of({0, 1, 2, 5, 7, 6}, 8)
    assert ranges == [
        ShardRange(0, 3 * (1 << 61)),
        ShardRange(5 * (1 << 61), 1 << 64),
    ]
    for uid in UIDS[:300]:
        assert matches(ranges, foo_with(uid)) == (bucket_of_uid(uid, 8) in {0, 1, 2, 5, 6, 7})


@pytest.mark.parametrize(
    ("buckets", "text"),
    [(set(), ""), ({3}, "3"), ({0, 1, 2, 3, 7, 9}, "0-3,7,9"), ({5, 4, 6, 10, 11}, "4-6,10-11")],
)
def test_the_claim_annotation_is_compact_and_round_trips(buckets, text):
    assert encode_buckets(buckets) == text
    assert decode_buckets(text) == frozenset(buckets)


@pytest.mark.parametrize("bad", ["a", "3-1", "-2", "1-b"])
def test_a_malformed_claim_is_an_error(bad):
    with pytest.raises(ValueError):
        decode_buckets(bad)


# -- the assignment -------------------------------------------------------------------------------


def test_every_replica_computes_the_same_assignment_whatever_the_order():
    members = [f"sample-controller-{i}" for i in range(5)]
    assert assign(members, 64) == assign(list(reversed(members)), 64)
    assert set(assign(members, 64)) == set(range(64))
    assert assign([], 64) == {}
    assert owner_of(3, ["only"]) == "only"


@pytest.mark.parametrize("count", [64, 256, 1024])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 10])
def test_adding_one_of_n_members_moves_about_one_nth_only_to_it(count, n):
    before_members = [f"pod-{i}" for i in range(n)]
    newcomer = f"pod-{n}"
    before = assign(before_members, count)
    after = assign([*before_members, newcomer], count)
    moved = {b for b in range(count) if before[b] != after[b]}
    # only buckets won by the newcomer move; none moves between members that stayed
    assert all(after[b] == newcomer for b in moved)
    expected = count / (n + 1)
    # rendezvous is a fair lottery: within a few standard deviations of count/(n+1)
    assert abs(len(moved) - expected) <= 4 * (expected**0.5) + 2, (len(moved), expected)
    # and removing it again moves exactly those buckets back
    assert assign(before_members, count) == before


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_removing_one_of_n_members_moves_only_its_buckets(n):
    members = [f"pod-{i}" for i in range(n)]
    before = assign(members, 256)
    gone = members[n // 2]
    after = assign([m for m in members if m != gone], 256)
    moved = {b for b in range(256) if before[b] != after[b]}
    assert moved == {b for b, owner in before.items() if owner == gone}
    assert abs(len(moved) - 256 / n) <= 4 * ((256 / n) ** 0.5) + 2


def test_members_with_names_that_differ_by_one_character_all_get_buckets():
    # FNV-1a alone ranked replica-a/b/c alike in most buckets: the score is mixed
    counts = {m: 0 for m in ("replica-a", "replica-b", "replica-c")}
    for owner in assign(list(counts), 64).values():
        counts[owner] += 1
    assert all(c >= 10 for c in counts.values()), counts


# -- members: live by the locally observed time ---------------------------------------------------


def lease(name: str, renew: str, duration: int = 10, claims: str = "", count: int = 64) -> dict:
    return {
        "metadata": {
            "name": name,
            "resourceVersion": renew,
            "annotations": {BUCKETS_ANNOTATION: claims, BUCKET_COUNT_ANNOTATION: str(count)},
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": duration, "renewTime": renew},
    }


def test_a_member_is_live_for_its_lease_duration_after_we_saw_it_change():
    now = [100.0]
    tracker = MemberTracker(clock=lambda: now[0])
    # a renewTime from a clock far off (a skewed machine) does not matter: only changes count
    live = tracker.observe([lease("a", "1999-01-01T00:00:00.000000Z", claims="0-3")])
    assert set(live) == {"a"} and live["a"].claims == frozenset({0, 1, 2, 3})
    now[0] = 109.9
    assert set(tracker.observe([lease("a", "1999-01-01T00:00:00.000000Z")])) == {"a"}
    now[0] = 110.0
    # unchanged for a whole lease duration: expired, its claims no longer count
    assert tracker.observe([lease("a", "1999-01-01T00:00:00.000000Z")]) == {}
    # renewed: live again from now
    assert set(tracker.observe([lease("a", "1999-01-01T00:00:02.000000Z")])) == {"a"}
    now[0] = 119.0
    assert set(tracker.observe([lease("a", "1999-01-01T00:00:02.000000Z")])) == {"a"}
    # a Lease gone from the cache (deleted on a graceful stop) is no member at once
    assert tracker.observe([]) == {}


def test_a_members_bucket_count_and_an_unreadable_claim_are_read_safely():
    live = MemberTracker().observe([lease("a", "1", claims="x-y", count=128)])
    assert live["a"].claims == frozenset() and live["a"].bucket_count == 128


# -- the gate -------------------------------------------------------------------------------------


def test_without_sharding_every_foo_is_synced_and_no_label_is_added():
    with EVERY_OBJECT.acting_on(foo_with(UIDS[0])) as acting:
        assert acting
    assert EVERY_OBJECT.owned_labels(foo_with(UIDS[0])) == {}


def test_the_gate_lets_only_the_buckets_acted_on_through_and_holds_them_while_syncing():
    gate = ActingGate(16)
    mine = foo_with(UIDS[0])
    b = bucket_of(mine, 16)
    assert gate.owned_labels(mine) == {BUCKET_LABEL: str(b)}
    with gate.acting_on(mine) as acting:
        assert not acting
    gate.start(frozenset({b}))
    entered, release = threading.Event(), threading.Event()

    def sync() -> None:
        with gate.acting_on(mine) as acting:
            assert acting
            entered.set()
            release.wait(5)

    t = threading.Thread(target=sync)
    t.start()
    assert entered.wait(5)
    # handing over: no new sync starts, the one in flight holds the bucket until it ends
    gate.stop(frozenset({b}))
    with gate.acting_on(mine) as acting:
        assert not acting
    assert gate.busy(frozenset({b})) == {b}
    assert not gate.wait_idle(frozenset({b}), 0.05)
    release.set()
    assert gate.wait_idle(frozenset({b}), 5)
    t.join(5)
    assert gate.busy(frozenset({b})) == frozenset()


# -- the scope ------------------------------------------------------------------------------------


def test_the_deployment_selector_is_set_based_and_selects_nothing_when_empty():
    assert owned_selector(frozenset({3, 1})) == f"{BUCKET_LABEL} in (1,3)"
    assert owned_selector(frozenset()) == f"{BUCKET_LABEL} in (none)"


def test_foos_are_narrowed_by_shard_selector_and_foreign_ones_dropped_without_the_gate():
    source = FakeListWatch([foo_with(u, f"f{i}") for i, u in enumerate(UIDS[:40])])
    scope = Scope(4)
    scope.set(frozenset({0, 1}))
    dropped = []
    scoped = ScopedListWatch(source, scope, primary=True, on_dropped=dropped.append)
    listed = scoped.list({"resourceVersion": "0"})
    assert source.list_calls[-1]["shardSelector"] == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    )
    # the fake ignores shardSelector, as a server without the gate: filtered here
    assert scoped.server_filters is False
    kept = {o["metadata"]["uid"] for o in listed["items"]}
    assert kept == {u for u in UIDS[:40] if bucket_of_uid(u, 4) in {0, 1}}
    assert sum(dropped) == 40 - len(kept) > 0
    # the list is the scope's once its watch opens
    assert scoped.listed() == frozenset()
    stream = scoped.watch({"resourceVersion": listed["metadata"]["resourceVersion"]})
    assert scoped.listed() == frozenset({0, 1})
    stream.close()


def test_deployments_are_narrowed_by_the_bucket_label():
    source = FakeListWatch(kind="Deployment", api_version="apps/v1")
    scope = Scope(64)
    scope.set(frozenset({7}))
    scoped = ScopedListWatch(source, scope, primary=False)
    scoped.list({})
    assert source.list_calls[-1]["labelSelector"] == f"{BUCKET_LABEL} in (7)"


def test_a_rescope_relists_and_the_cache_follows_the_scope():
    source = FakeListWatch([foo_with(u, f"f{i}") for i, u in enumerate(UIDS[:60])])
    scope = Scope(4)
    scope.set(frozenset({0}))
    scoped = ScopedListWatch(source, scope, primary=True)
    informer = SharedIndexInformer(scoped, use_watch_list=False, name="foos")
    stop = threading.Event()
    t = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    t.start()
    try:

        def cached() -> set[int]:
            return {bucket_of(o, 4) for o in informer.get_store().list()}

        wait_for(lambda: cached() == {0}, timeout=5, message="bucket 0 cached")
        scope.set(frozenset({2, 3}))
        informer.relist()
        wait_for(lambda: cached() == {2, 3}, timeout=5, message="re-scoped to 2,3")
        wait_for(lambda: scoped.listed() == frozenset({2, 3}), timeout=5)
        expected = {u for u in UIDS[:60] if bucket_of_uid(u, 4) in {2, 3}}
        assert {o["metadata"]["uid"] for o in informer.get_store().list()} == expected
    finally:
        stop.set()
        t.join(5)


def test_our_claim_counts_as_seen_once_the_cache_holds_that_write_or_a_later_one():
    assert seen_at_or_after("12", "12") and seen_at_or_after("13", "12")
    assert not seen_at_or_after("11", "12")
    assert not seen_at_or_after("", "12") and not seen_at_or_after("12", "")
    # an opaque (non-numeric) resourceVersion: only the very write counts
    assert seen_at_or_after("abc", "abc") and not seen_at_or_after("abd", "abc")


def test_every_request_names_the_replica_in_its_user_agent(monkeypatch):
    import re
    import socket

    from runtime.manager import USER_AGENT, default_identity, identity_of, user_agent
    from runtime.options import Options

    assert user_agent(Options(identity="pod-1")) == f"{USER_AGENT} (pod-1)"
    # without --identity: the hostname (a pod's name), lowercased so that it names a Lease,
    # and a suffix random to the process, the same for all of it
    monkeypatch.setattr(socket, "gethostname", lambda: "Worker-7.Example")
    default_identity.cache_clear()
    try:
        name = identity_of(Options())
        assert re.fullmatch(r"worker-7\.example-[0-9a-f]{8}", name)
        assert identity_of(Options()) == name
        assert user_agent(Options()) == f"{USER_AGENT} ({name})"
        # another process on the same host: another name (two replicas never share a Lease)
        default_identity.cache_clear()
        assert identity_of(Options()) != name
    finally:
        default_identity.cache_clear()
