"""tools.leaderelection.leaderelection: the election loop against an in-memory Lease endpoint
with resourceVersion checks (tests/tools/fake_lease_server.py)."""

from __future__ import annotations

import threading
import time

import pytest
from prometheus_client import CollectorRegistry

from client.errors import TransportError
from tests.helpers import wait_for
from tests.tools.fake_lease_server import FakeLeaseServer
from tools.leaderelection.leaderelection import LeaderElectionConfig, LeaderElector
from tools.leaderelection.resourcelock import LeaseLock


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def elector(server, identity, clock=None, **kw):
    lock = LeaseLock(server, "ns", "lock", identity)
    cfg = LeaderElectionConfig(lock=lock, **kw)
    wall = iter(range(1_700_000_000, 1_800_000_000))  # each write gets a new renewTime
    return LeaderElector(
        cfg,
        registry=CollectorRegistry(),
        clock=clock or Clock(),
        wall_clock=lambda: next(wall) + 0.5,
    )


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"lease_duration": 10, "renew_deadline": 10}, "leaseDuration must be greater"),
        ({"renew_deadline": 2.4, "retry_period": 2}, "renewDeadline must be greater"),
    ],
)
def test_config_validation(kw, message):
    with pytest.raises(ValueError, match=message):
        elector(FakeLeaseServer(), "a", **kw)


def test_first_candidate_creates_lease():
    server = FakeLeaseServer()
    a = elector(server, "a")
    assert a.try_acquire_or_renew()
    spec = server.lease["spec"]
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert spec["acquireTime"] == spec["renewTime"] == "2023-11-14T22:13:20.500000Z"  # one now
    assert a.get_leader() == "a"


def test_other_candidate_waits_for_expiry_on_its_own_clock():
    server = FakeLeaseServer()
    a = elector(server, "a")
    assert a.try_acquire_or_renew()
    b_clock = Clock()
    b = elector(server, "b", clock=b_clock)
    assert not b.try_acquire_or_renew()  # first sight of the record starts b's timer
    b_clock.t += 14.9
    assert not b.try_acquire_or_renew()
    # a renews: the record changes, so b's timer restarts even though the clocks never met
    assert a.try_acquire_or_renew()
    b_clock.t += 0.2
    assert not b.try_acquire_or_renew()
    b_clock.t += 15.1
    assert b.try_acquire_or_renew()
    spec = server.lease["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew()  # a now sees b's fresh lease


def test_renewal_keeps_acquire_time_and_transitions():
    server = FakeLeaseServer()
    times = iter([1000.0, 1002.0])
    lock = LeaseLock(server, "ns", "lock", "a")
    a = LeaderElector(
        LeaderElectionConfig(lock=lock),
        registry=None,
        clock=Clock(),
        wall_clock=lambda: next(times),
    )
    assert a.try_acquire_or_renew()
    first = server.lease["spec"]
    assert a.try_acquire_or_renew()
    second = server.lease["spec"]
    assert second["acquireTime"] == first["acquireTime"]
    assert second["renewTime"] != first["renewTime"]
    assert second["leaseTransitions"] == 0


def test_release_writes_empty_holder_and_one_second():
    server = FakeLeaseServer()
    a = elector(server, "a")
    assert a.try_acquire_or_renew()
    assert a.release()
    spec = server.lease["spec"]
    assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 1
    # a lease with no holder is free: a standby takes over at once, not after fifteen seconds
    b = elector(server, "b")
    assert b.try_acquire_or_renew()
    assert server.lease["spec"]["holderIdentity"] == "b"
    assert server.lease["spec"]["leaseTransitions"] == 1
    assert not elector(FakeLeaseServer(), "c").release()  # not leader: nothing to release


def test_release_is_bounded_by_its_timeout():
    # A shutdown with a deadline gives the release what is left of it: the write carries that
    # timeout (so a hung server cannot hold the exit), and the default one without it.
    server = FakeLeaseServer()
    a = elector(server, "a")
    assert a.try_acquire_or_renew()
    timeouts = []
    request = server.request

    def recording(method, path, timeout=None, **kw):
        timeouts.append((method, timeout))
        return request(method, path, timeout=timeout, **kw)

    server.request = recording
    assert a.release(timeout=0.4)
    assert timeouts == [("PUT", 0.4)]
    assert a.try_acquire_or_renew()
    timeouts.clear()
    assert a.release()
    assert timeouts == [("PUT", 10.0)]  # resourcelock.REQUEST_TIMEOUT


def test_run_leads_until_stop_then_releases():
    server = FakeLeaseServer()
    started, stopped = threading.Event(), threading.Event()
    work_stopped = threading.Event()

    def lead(leading_stop):
        started.set()
        leading_stop.wait()
        work_stopped.set()

    a = elector(
        server,
        "a",
        clock=time.monotonic,
        lease_duration=0.5,
        renew_deadline=0.3,
        retry_period=0.05,
        on_started_leading=lead,
        on_stopped_leading=stopped.set,
    )
    stop = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.update(clean=a.run(stop)))
    t.start()
    assert started.wait(5)
    assert a.is_leader()
    stop.set()
    t.join(5)
    assert result == {"clean": True}
    assert work_stopped.is_set() and stopped.is_set()
    assert not a.is_leader()
    assert server.lease["spec"]["leaseDurationSeconds"] == 1  # released
    assert len(server.writes) >= 2


def test_run_returns_false_when_renewal_fails_past_deadline():
    server = FakeLeaseServer()
    stopped = threading.Event()
    started = threading.Event()
    a = elector(
        server,
        "a",
        clock=time.monotonic,
        lease_duration=0.5,
        renew_deadline=0.3,
        retry_period=0.05,
        on_started_leading=lambda s: started.set(),
        on_stopped_leading=stopped.set,
    )
    stop = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.update(clean=a.run(stop)))
    t.start()
    assert started.wait(5)
    server.fail = True
    t.join(5)
    assert result == {"clean": False}
    assert stopped.is_set() and not a.is_leader()
    stop.set()


def test_leader_steps_down_within_the_lease_when_the_server_hangs():
    # A request to a hung server ends only at its timeout. Each renewal attempt must be bounded
    # by the renew deadline (client-go's context), or the leader keeps leading after a standby,
    # whose clock runs out lease_duration after the last renewal, has taken over.
    class HangingServer(FakeLeaseServer):
        def __init__(self):
            super().__init__()
            self.hang = threading.Event()

        def request(self, method, path, params=None, body=None, content_type=None, timeout=None):
            if self.hang.is_set():
                time.sleep(min(timeout, 5.0))  # no answer: the client's timeout ends the call
                raise TransportError("read timed out")
            return super().request(method, path, params, body, content_type, timeout)

    server = HangingServer()
    started = threading.Event()
    a = elector(
        server,
        "a",
        clock=time.monotonic,
        lease_duration=2.0,
        renew_deadline=1.0,
        retry_period=0.1,
        on_started_leading=lambda s: started.set(),
    )
    stop = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.update(clean=a.run(stop)))
    t.start()
    try:
        assert started.wait(5)
        server.hang.set()  # the last renewal was at most one retry period ago
        hung_at = time.monotonic()
        t.join(5)
        assert result == {"clean": False}
        assert time.monotonic() - hung_at < 2.0  # gave up before a standby could take over
    finally:
        stop.set()
        t.join(5)


def test_metric_follows_leadership():
    server = FakeLeaseServer()
    registry = CollectorRegistry()
    lock = LeaseLock(server, "ns", "lock", "a")
    a = LeaderElector(
        LeaderElectionConfig(lock=lock, lease_duration=0.5, renew_deadline=0.3, retry_period=0.05),
        registry=registry,
    )

    def value():
        return registry.get_sample_value("leader_election_master_status", {"name": "lock"})

    assert value() == 0
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    for _ in range(500):
        if value() == 1:
            break
        stop.wait(0.01)
    assert value() == 1
    stop.set()
    t.join(5)
    assert value() == 0


def test_stopped_leader_keeps_renewing_while_its_work_drains_then_releases():
    # A graceful drain may outlast the lease: until the work has returned, the lease must stay
    # ours (renewed), or a standby would start while we still write.
    server = FakeLeaseServer()
    started, may_finish, finished = threading.Event(), threading.Event(), threading.Event()

    def lead(leading_stop):
        started.set()
        leading_stop.wait()
        may_finish.wait(10)  # a slow in-flight reconcile
        finished.set()

    a = elector(
        server,
        "a",
        clock=time.monotonic,
        lease_duration=0.5,
        renew_deadline=0.3,
        retry_period=0.05,
        on_started_leading=lead,
    )
    stop = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.update(clean=a.run(stop)))
    t.start()
    assert started.wait(5)
    stop.set()
    writes_at_stop = len(server.writes)
    wait_for(
        lambda: len(server.writes) >= writes_at_stop + 3,
        timeout=5,
        message="renewals while the work drains",
    )
    assert t.is_alive() and a.is_leader()
    may_finish.set()
    t.join(5)
    assert result == {"clean": True} and finished.is_set()
    assert "holderIdentity" not in server.writes[-1]  # released, after the work returned
    assert all(w.get("holderIdentity") == "a" for w in server.writes[:-1])


def test_work_returning_early_does_not_end_leadership():
    server = FakeLeaseServer()
    a = elector(
        server,
        "a",
        clock=time.monotonic,
        lease_duration=0.5,
        renew_deadline=0.3,
        retry_period=0.05,
        on_started_leading=lambda s: None,
    )
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    wait_for(lambda: len(server.writes) >= 4, timeout=5, message="renewals after the work ended")
    assert a.is_leader()  # still renewing (client-go's contract)
    stop.set()
    t.join(5)
    assert not t.is_alive() and "holderIdentity" not in server.writes[-1]


def test_each_registry_gets_its_own_gauge():
    # Registries created and dropped one after another (one per test) must each see the metric.
    for _ in range(20):
        registry = CollectorRegistry()
        lock = LeaseLock(FakeLeaseServer(), "ns", "lock", "a")
        LeaderElector(LeaderElectionConfig(lock=lock), registry=registry)
        assert registry.get_sample_value("leader_election_master_status", {"name": "lock"}) == 0
