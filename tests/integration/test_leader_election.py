"""Two controller processes with --leader-elect against one kubesim: one leads, the other stands by.

What is checked, and how:

- exactly one leads: the Lease names one holder, that replica's ``leader_election_master_status``
  is 1 and the other's 0, and the standby has seen the leader (its "new leader elected" line);
- SIGKILL of the leader: the standby takes over once the lease has expired on *its* clock,
  i.e. no sooner than ``leaseDurationSeconds`` after the dead leader's last renewal and not much
  later (a couple of jittered retry periods), and then does the work;
- SIGTERM of the leader: it exits 0 and releases the Lease at once (no holder, 1 s), so the
  standby takes over within a retry period or two instead of a lease duration;
- never two holders: every committed state of the Lease is recorded by a kubesim storage
  listener at commit time; wherever the holder changes from one replica to another, the new
  holder's first write must come at least ``leaseDurationSeconds`` after the old holder's last
  one (unless the old holder released). The request log's count of successful Lease writes
  must match the recorded states, so no write escaped the history.

Timings are the fast ones of ``controller_process.FAST_LEADER_ELECTION`` (2 s lease).
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass

import pytest

from client.rest import RESTClient, resource_path
from controller.foo_controller import FOO_GVR
from kubesim import KubeSim
from tests.helpers import wait_for
from tests.integration.controller_harness import foo
from tests.integration.controller_process import (
    FAST_LEADER_ELECTION,
    LEASE_DURATION,
    LEASES,
    RETRY_PERIOD,
    USER_AGENT,
    ControllerProcess,
    lease_spec,
)

# wait.JitterUntil(RetryPeriod, 1.2): a candidate polls every retry * (1 .. 2.2)
MAX_POLL = RETRY_PERIOD * 2.2
SLACK = 0.75  # request latencies and process scheduling on a busy 2-core box


@dataclass(frozen=True)
class LeaseWrite:
    """One committed state of the Lease, as the storage listener saw it."""

    at: float  # time.monotonic() at commit (CLOCK_MONOTONIC: the same clock in every process)
    rv: int
    holder: str
    duration: int  # leaseDurationSeconds
    transitions: int  # leaseTransitions


class LeaseHistory:
    """Every committed state of one Lease, recorded at commit time under kubesim's storage lock."""

    def __init__(self, sim: KubeSim, namespace: str = "default", name: str = "sample-controller"):
        self.writes: list[LeaseWrite] = []
        self._lock = threading.Lock()
        self._where = (namespace, name)
        sim.storage.add_listener(self._on_event)

    def _on_event(self, ev) -> None:
        if ev.key != LEASES or (ev.ns, ev.name) != self._where or ev.type == "DELETED":
            return
        spec = ev.obj.obj.get("spec") or {}
        with self._lock:
            self.writes.append(
                LeaseWrite(
                    time.monotonic(),
                    ev.rv,
                    spec.get("holderIdentity") or "",
                    int(spec.get("leaseDurationSeconds") or 0),
                    int(spec.get("leaseTransitions") or 0),
                )
            )

    def snapshot(self) -> list[LeaseWrite]:
        with self._lock:
            return list(self.writes)

    def first_write_by(self, holder: str, after: float = 0.0) -> LeaseWrite | None:
        return next((w for w in self.snapshot() if w.holder == holder and w.at > after), None)

    def last_write_by(self, holder: str) -> LeaseWrite:
        return [w for w in self.snapshot() if w.holder == holder][-1]


def assert_never_two_holders(history: LeaseHistory, sim: KubeSim) -> None:
    writes = history.snapshot()
    assert writes, "no Lease writes recorded"
    for prev, cur in zip(writes, writes[1:], strict=False):
        if prev.holder and cur.holder and cur.holder != prev.holder:
            # the previous holder's last write is `prev` (writes are in commit order)
            gap = cur.at - prev.at
            assert gap >= prev.duration, (
                f"{cur.holder} took the lease {gap:.3f}s after {prev.holder}'s last renewal, "
                f"before its {prev.duration}s lease had expired: {writes}"
            )
            assert cur.transitions == prev.transitions + 1

    # Every successful Lease write went through the recorded history (none slipped past it).
    # A request is logged after its response is sent, so the counts meet between renewals.
    def counts() -> tuple[int, int]:
        logged = sum(
            1
            for r in sim.request_log
            if r.resource == "leases"
            and r.verb in ("create", "update")
            and r.code in (200, 201)
            and r.user_agent.startswith(USER_AGENT)
        )
        return logged, len(history.snapshot())

    wait_for(lambda: (c := counts())[0] == c[1], timeout=5, message="logged writes == history")


pytestmark = pytest.mark.kubesim(deployment_status_delay=0.1)


@pytest.fixture
def replicas(sim, tmp_path):
    """Start two replicas; the fixture kills whatever is left at the end."""
    history = LeaseHistory(sim)
    procs = [
        ControllerProcess.against(
            sim, tmp_path, *FAST_LEADER_ELECTION, "--leader-elect-namespace", "default", name=name
        )
        for name in ("replica-a", "replica-b")
    ]
    yield procs, history
    for p in procs:
        p.close()


def leader_and_standby(sim, procs, history):
    """Wait until one replica holds the Lease and the other has seen it do so."""
    by_identity = {p.identity: p for p in procs}
    holder = wait_for(lambda: lease_spec(sim).get("holderIdentity"), message="a lease holder")
    leader = by_identity[holder]
    standby = next(p for p in procs if p is not leader)
    leader.wait_log("became leader")
    standby.wait_log("new leader elected", leader=holder)
    return leader, standby


def test_exactly_one_leads_and_the_standby_takes_over_after_sigkill(sim, replicas):
    procs, history = replicas
    leader, standby = leader_and_standby(sim, procs, history)

    # Exactly one leads, by the Lease and by each replica's own account.
    wait_for(
        lambda: leader.metric("leader_election_master_status", {"name": "sample-controller"}) == 1,
        message="the leader's master_status gauge at 1",
    )
    assert standby.metric("leader_election_master_status", {"name": "sample-controller"}) == 0
    assert not standby.has_log("became leader")
    # Both are ready: the leader once its caches synced, the standby while it waits.
    for p in (leader, standby):
        wait_for(lambda p=p: p.get("health-probes", "/readyz")[0] == 200, message=f"{p.name} ready")

    leader.send(signal.SIGKILL)
    killed_at = time.monotonic()
    assert leader.wait_exit() == -signal.SIGKILL
    last_renewal = history.last_write_by(leader.identity)

    takeover = wait_for(
        lambda: history.first_write_by(standby.identity),
        timeout=10,
        message="the standby to take the lease",
    )
    standby.wait_log("became leader")
    # Not before the dead leader's lease expired, and not much after.
    waited = takeover.at - last_renewal.at
    assert LEASE_DURATION <= waited <= LEASE_DURATION + 2 * MAX_POLL + SLACK, waited
    assert takeover.at - killed_at <= LEASE_DURATION + 2 * MAX_POLL + SLACK
    assert takeover.transitions == last_renewal.transitions + 1

    # The new leader does the work.
    api = RESTClient(sim.new_api_client())
    api.request(
        "POST",
        resource_path(*FOO_GVR, "default"),
        body=foo("after-failover"),
    )
    wait_for(
        lambda: sim.storage.get(("apps", "deployments"), "default", "after-failover"),
        message="the new leader to create the Deployment",
    )
    wait_for(
        lambda: standby.metric("leader_election_master_status", {"name": "sample-controller"}) == 1,
        message="the new leader's master_status gauge at 1",
    )
    assert_never_two_holders(history, sim)


def test_sigterm_releases_the_lease_at_once_and_exits_0(sim, replicas):
    procs, history = replicas
    leader, standby = leader_and_standby(sim, procs, history)

    leader.send(signal.SIGTERM)
    assert leader.wait_exit() == 0
    leader_writes = [w for w in history.snapshot() if w.holder in ("", leader.identity)]
    release = leader_writes[-1]
    assert release.holder == "" and release.duration == 1, history.snapshot()
    assert leader.has_log("released leader lease")

    takeover = wait_for(
        lambda: history.first_write_by(standby.identity, after=release.at),
        timeout=5,
        message="the standby to take the released lease",
    )
    # At the standby's next poll, far sooner than a lease duration.
    assert takeover.at - release.at <= MAX_POLL + SLACK < LEASE_DURATION + MAX_POLL
    standby.wait_log("became leader")
    assert_never_two_holders(history, sim)

    standby.send(signal.SIGTERM)
    assert standby.wait_exit() == 0
    assert lease_spec(sim).get("holderIdentity") is None


def test_standby_waits_while_the_stopping_leader_drains_longer_than_a_lease(sim, replicas):
    # A graceful drain may outlast the lease duration. The stopping leader must keep renewing
    # until its in-flight work is done, or the standby would start beside it.
    procs, history = replicas
    leader, standby = leader_and_standby(sim, procs, history)
    wait_for(lambda: leader.get("health-probes", "/readyz")[0] == 200, message="leader ready")
    drain = LEASE_DURATION + 1.0
    rule = sim.faults.add_latency(drain, verbs=["create"], resources=["deployments"])
    RESTClient(sim.new_api_client()).request(
        "POST",
        resource_path(*FOO_GVR, "default"),
        body=foo("long-drain"),
    )
    wait_for(lambda: rule.hits >= 1, message="the slow Deployment create to be in flight")

    leader.send(signal.SIGTERM)
    signalled = time.monotonic()
    assert leader.wait_exit(15) == 0
    assert leader.has_log("successfully synced", key="default/long-drain")
    writes = history.snapshot()
    release = next((w for w in writes if w.at > signalled and w.holder == ""), None)
    assert release is not None, f"the lease was not released after the drain: {writes}"
    renewals = [w for w in writes if signalled < w.at < release.at and w.holder == leader.identity]
    assert len(renewals) >= int(LEASE_DURATION / RETRY_PERIOD), writes  # renewed while draining
    takeover = wait_for(
        lambda: history.first_write_by(standby.identity),
        timeout=5,
        message="the standby to take over",
    )
    assert takeover.at > release.at, "the standby took over while the old leader still worked"
    assert_never_two_holders(history, sim)
