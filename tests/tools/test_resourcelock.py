"""tools.leaderelection.resourcelock: the Lease record, MicroTime and LeaseLock's reads and
guarded writes, against an in-memory Lease endpoint (tests/tools/fake_lease_server.py)."""

from __future__ import annotations

import re

import pytest

from client.errors import APIError
from tests.tools.fake_lease_server import FakeLeaseServer
from tools.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock, micro_time


def test_micro_time_has_six_fractional_digits():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", micro_time(1_700_000_000.5))
    assert micro_time(1_700_000_000.5) == "2023-11-14T22:13:20.500000Z"


def test_racing_candidates_cannot_both_win():
    server = FakeLeaseServer()
    lock_a = LeaseLock(server, "ns", "lock", "a")
    lock_b = LeaseLock(server, "ns", "lock", "b")
    server.lease = {
        "metadata": {"name": "lock", "namespace": "ns", "resourceVersion": "0"},
        "spec": {"holderIdentity": "old", "leaseDurationSeconds": 1},
    }
    # both read the same expired record...
    lock_a.get()
    lock_b.get()
    lock_a.update(LeaderElectionRecord("a", 15))
    with pytest.raises(APIError) as err:  # ...and the second write is refused
        lock_b.update(LeaderElectionRecord("b", 15))
    assert err.value.code == 409


def test_record_round_trips_through_the_lease_spec():
    record = LeaderElectionRecord(
        "a", 15, "2023-11-14T22:13:20.500000Z", "2023-11-14T22:13:22.500000Z", 3
    )
    spec = record.to_spec()
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2023-11-14T22:13:20.500000Z",
        "renewTime": "2023-11-14T22:13:22.500000Z",
        "leaseTransitions": 3,
    }
    assert LeaderElectionRecord.from_spec(spec) == record


def test_released_record_has_no_holder_and_an_empty_spec_reads_as_free():
    # a release writes no holderIdentity at all (the API drops empty strings anyway)
    assert "holderIdentity" not in LeaderElectionRecord("", 1).to_spec()
    assert LeaderElectionRecord.from_spec({}) == LeaderElectionRecord()


def test_get_without_a_lease_is_not_found():
    with pytest.raises(APIError) as err:
        LeaseLock(FakeLeaseServer(), "ns", "lock", "a").get()
    assert err.value.code == 404


def test_create_posts_a_lease_with_the_record():
    server = FakeLeaseServer()
    lock = LeaseLock(server, "ns", "lock", "a")
    lock.create(LeaderElectionRecord("a", 15))
    assert server.lease["apiVersion"] == "coordination.k8s.io/v1"
    assert server.lease["kind"] == "Lease"
    assert server.lease["metadata"]["name"] == "lock"
    assert server.lease["metadata"]["namespace"] == "ns"
    assert server.writes == [
        {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0}
    ]
    assert lock.describe() == "ns/lock"


def test_update_needs_a_read_first():
    # the PUT is guarded by the resourceVersion last read: without a read there is nothing to
    # guard with, and an unguarded write could overwrite another candidate's record
    with pytest.raises(RuntimeError, match="update before get"):
        LeaseLock(FakeLeaseServer(), "ns", "lock", "a").update(LeaderElectionRecord("a", 15))
