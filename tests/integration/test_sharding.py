"""--sharding across real processes on kubesim: no Foo reconciled by two replicas at once.

Three ``python -m controller --sharding`` replicas go through a scale-up 1 -> 3, a graceful
scale-down 3 -> 2 and a SIGKILL, on kubesim with the ShardedListAndWatch gate on (the server
filters the Foo lists and watches) and off (it ignores shardSelector; each replica drops the
foreign Foos itself). What is recorded, at commit time: every state of every member Lease (its
claim annotation), and, from kubesim's request log, every write of every replica (its
User-Agent names it). Asserted:

- no overlap: every write a replica made for a Foo (its status, its Deployment) was made while
  that replica's Lease claimed the Foo's bucket, and no two live Leases ever claimed one bucket;
- every Foo converges after each step;
- the buckets of the killed replica are claimed again within the lease duration plus a resync,
  and its Foos converge within that plus a little.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry

from client.errors import TransportError
from client.rest import RESTClient, resource_path
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from runtime.sharding.assignment import bucket_of_uid, decode_buckets
from runtime.sharding.membership import (
    BUCKET_LABEL,
    BUCKETS_ANNOTATION,
    LEASE_GVR,
    RING_LABEL,
    IdentityInUseError,
    OwnLease,
)
from runtime.sharding.sharder import Sharder
from tests.conftest import CRD
from tests.helpers import foreign_deployment, wait_for
from tests.integration.controller_harness import foo
from tests.integration.controller_process import LEASES, USER_AGENT, ControllerProcess
from workqueue import FakeClock

BUCKETS = 16
LEASE_DURATION, RESYNC = 2.0, 2.0
SHARDED = (
    "--sharding",
    "--sharding-buckets",
    str(BUCKETS),
    "--leader-elect-lease-duration",
    "2s",
    "--leader-elect-renew-deadline",
    "1500ms",
    "--leader-elect-retry-period",
    "500ms",
    "--resync-period",
    "2s",
)
FOOS = 30
# request latencies and process scheduling on a busy 2-core box
SLACK = 3.0


@dataclass(frozen=True)
class LeaseState:
    """One committed state of a member Lease (``claims`` None: deleted)."""

    at: float  # time.time() at commit, as the request log's times
    name: str
    claims: frozenset[int] | None


class LeaseHistory:
    """Every committed state of every member Lease, recorded under kubesim's storage lock."""

    def __init__(self, sim) -> None:
        self._lock = threading.Lock()
        self.states: list[LeaseState] = []
        sim.storage.add_listener(self._on_event)

    def _on_event(self, ev) -> None:
        if ev.key != LEASES:
            return
        meta = ev.obj.obj.get("metadata") or {}
        if (meta.get("labels") or {}).get(RING_LABEL) is None:
            return
        claims = None
        if ev.type != "DELETED":
            claims = decode_buckets((meta.get("annotations") or {}).get(BUCKETS_ANNOTATION) or "")
        with self._lock:
            self.states.append(LeaseState(time.time(), ev.name, claims))

    def snapshot(self) -> list[LeaseState]:
        with self._lock:
            return list(self.states)

    def claims_at(self, name: str, t: float) -> frozenset[int]:
        """What ``name``'s Lease claimed at time ``t`` (its last state committed before)."""
        last: frozenset[int] | None = frozenset()
        for s in self.snapshot():
            if s.at > t:
                break
            if s.name == name:
                last = s.claims
        return last or frozenset()

    def current(self) -> dict[str, frozenset[int]]:
        now: dict[str, frozenset[int] | None] = {}
        for s in self.snapshot():
            now[s.name] = s.claims
        return {n: c for n, c in now.items() if c is not None}


def assert_claims_never_overlap(history: LeaseHistory, killed: dict[str, float]) -> None:
    """No bucket claimed by two live Leases: a claim may overlap a Lease that is no longer
    renewed only once the lease duration has passed since its last write."""
    last: dict[str, LeaseState] = {}
    for s in history.snapshot():
        if s.claims:
            for other, prev in last.items():
                if other == s.name or not prev.claims:
                    continue
                both = s.claims & prev.claims
                if both:
                    expired = s.at - prev.at >= LEASE_DURATION
                    assert expired and other in killed, (
                        f"{s.name} claimed {sorted(both)} at {s.at:.3f} while {other}'s Lease "
                        f"(last written {s.at - prev.at:.3f}s before) still claimed them"
                    )
        last[s.name] = s


class Fleet:
    """The Foos, their uids and the replicas' writes, read back from kubesim."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.rest = RESTClient(sim.new_api_client(), user_agent="sharding-test")
        self.uids: dict[str, str] = {}

    def create(self, n: int) -> None:
        for i in range(n):
            created = self.rest.request(
                "POST", resource_path(*FOO_GVR, "default"), body=foo(f"foo-{i:02d}", replicas=1)
            )
            self.uids[created["metadata"]["name"]] = created["metadata"]["uid"]

    def scale(self, replicas: int) -> None:
        for name in self.uids:
            path = resource_path(*FOO_GVR, "default", name)
            current = self.rest.request("GET", path)
            current["spec"]["replicas"] = replicas
            self.rest.request("PUT", path, body=current)

    def converged(self, replicas: int, labelled: bool = True) -> bool:
        """Every Foo of ours has its Deployment at ``replicas``, labelled with its bucket
        (unless not ``labelled``: made without sharding), and reports it in its status."""
        foos = [
            f
            for f in self.rest.request("GET", resource_path(*FOO_GVR, "default"))["items"]
            if f["metadata"]["name"] in self.uids
        ]
        deployments = {
            d["metadata"]["name"]: d
            for d in self.rest.request("GET", resource_path(*DEPLOYMENT_GVR, "default"))["items"]
        }
        for f in foos:
            d = deployments.get(f["spec"]["deploymentName"])
            if d is None or d["spec"].get("replicas") != replicas:
                return False
            label = (d["metadata"].get("labels") or {}).get(BUCKET_LABEL)
            expected = str(bucket_of_uid(f["metadata"]["uid"], BUCKETS)) if labelled else None
            if label != expected:
                return False
            if (f.get("status") or {}).get("availableReplicas") != replicas:
                return False
        return len(foos) == len(self.uids)

    def bucket(self, name: str) -> int:
        return bucket_of_uid(self.uids[name], BUCKETS)

    def writes(self) -> list[tuple[str, str, float]]:
        """(replica identity, Foo name, start time) of every controller write of a Foo's
        status or Deployment."""
        out = []
        for r in self.sim.request_log:
            if not r.user_agent.startswith(USER_AGENT) or r.verb not in (
                "create",
                "update",
                "patch",
            ):
                continue
            if r.resource not in ("foos/status", "deployments") or r.code >= 400:
                continue
            # the Foos name their Deployments after themselves
            name = r.name or ""
            if r.resource == "deployments" and r.verb == "create":
                continue  # a create's name is in its body; counted by its owner's status write
            identity = r.user_agent[len(USER_AGENT) :].strip(" ()")
            out.append((identity, name, r.time))
        return out


def wait_converged(fleet: Fleet, replicas: int, timeout: float, labelled: bool = True) -> float:
    start = time.monotonic()
    wait_for(
        lambda: fleet.converged(replicas, labelled),
        timeout=timeout,
        message=f"converged at {replicas}",
    )
    return time.monotonic() - start


def wait_claims(history: LeaseHistory, members: set[str], timeout: float) -> float:
    """Wait until exactly ``members`` claim, together, every bucket; seconds it took."""

    def covered() -> bool:
        now = {n: c for n, c in history.current().items() if c}
        union = frozenset().union(*now.values()) if now else frozenset()
        return set(now) == members and union == frozenset(range(BUCKETS))

    start = time.monotonic()
    wait_for(
        covered,
        timeout=timeout,
        message=lambda: f"every bucket claimed by {sorted(members)}: {history.current()}",
    )
    return time.monotonic() - start


@pytest.mark.parametrize("gate", [True, False], ids=["server-filter", "client-filter"])
def test_sharded_replicas_never_overlap_and_take_over(kubesim_factory, tmp_path, gate):
    sim = kubesim_factory(crds=[CRD], sharded_list_and_watch=gate, deployment_status_delay=0.1)
    history = LeaseHistory(sim)
    fleet = Fleet(sim)
    procs: dict[str, ControllerProcess] = {}

    def start(identity: str, *flags: str) -> ControllerProcess:
        p = ControllerProcess.against(
            sim, tmp_path, *SHARDED, "--identity", identity, *flags, name=identity
        )
        procs[identity] = p
        return p

    try:
        a = start("replica-a", "--trace")
        a.wait_log("sharding on", timeout=20)
        fleet.create(FOOS)
        wait_claims(history, {"replica-a"}, timeout=20)
        wait_converged(fleet, 1, timeout=30)

        # scale up 1 -> 3: the buckets spread, each handed over by a, then converge anew
        start("replica-b")
        start("replica-c")
        wait_claims(history, {"replica-a", "replica-b", "replica-c"}, timeout=30)
        fleet.scale(2)
        wait_converged(fleet, 2, timeout=30)

        # graceful scale-down 3 -> 2: b drains, deletes its Lease, a and c take its buckets
        assert procs["replica-b"].terminate(timeout=30) == 0
        wait_claims(history, {"replica-a", "replica-c"}, timeout=20)
        fleet.scale(3)
        wait_converged(fleet, 3, timeout=30)

        # SIGKILL c: its claims stand until its Lease expires, then a takes them over
        procs["replica-c"].kill()
        killed_at = time.time()
        fleet.scale(1)

        def a_claims_all() -> bool:
            return history.current().get("replica-a") == frozenset(range(BUCKETS))

        wait_for(a_claims_all, timeout=LEASE_DURATION + RESYNC + SLACK + 5, message="takeover")
        takeover = time.time() - killed_at
        assert takeover <= LEASE_DURATION + RESYNC + SLACK, takeover
        print(f"takeover after SIGKILL: {takeover:.2f}s")
        # and not before c's Lease expired (judged from its last renewal)
        c_last = max(s.at for s in history.snapshot() if s.name == "replica-c")
        a_all = next(
            s.at
            for s in history.snapshot()
            if s.name == "replica-a" and s.claims == frozenset(range(BUCKETS)) and s.at > killed_at
        )
        assert a_all - c_last >= LEASE_DURATION, (a_all, c_last)
        wait_converged(fleet, 1, timeout=LEASE_DURATION + RESYNC + SLACK + 10)

        # no overlap: claims disjoint among live Leases, and every write under its claim
        assert_claims_never_overlap(history, killed={"replica-c": killed_at})
        writes = fleet.writes()
        assert {w[0] for w in writes} >= {"replica-a", "replica-b", "replica-c"}, writes
        for identity, name, at in writes:
            if name not in fleet.uids:
                continue
            bucket = fleet.bucket(name)
            assert bucket in history.claims_at(identity, at), (
                f"{identity} wrote {name} (bucket {bucket}) at {at:.3f} without claiming it"
            )

        # every request names its replica
        ours = [r for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]
        assert ours
        assert {r.user_agent for r in ours} == {f"{USER_AGENT} (replica-{x})" for x in "abc"}

        # the Foo lists carried the shardSelector; the server applied it or the replicas did
        foo_lists = [r for r in ours if r.resource == "foos" and r.verb == "list"]
        assert foo_lists and all("shardSelector" in r.query for r in foo_lists)
        expected = "server-side shard filter" if gate else "client-side shard filter"
        assert procs["replica-a"].has_log(expected)
        dropped = procs["replica-a"].metric("sharding_objects_dropped_total", {"resource": "foos"})
        assert (dropped == 0) if gate else (dropped > 0)
        assert (
            procs["replica-a"].metric("sharding_buckets_owned", {"ring": "sample-controller"})
            == BUCKETS
        )
        assert procs["replica-a"].metric("sharding_handovers_total", {"direction": "out"}) > 0
        assert procs["replica-a"].metric("sharding_handovers_total", {"direction": "in"}) >= BUCKETS
        assert procs["replica-a"].get("health-probes", "/readyz")[0] == 200
        # the logs and --trace say when buckets move
        assert a.has_log("buckets handed over") and a.has_log("buckets taken over")
        assert a.has_log("bucket moved", direction="out") and a.has_log(
            "bucket moved", direction="in"
        )
        assert procs["replica-b"].has_log("member lease released")
    finally:
        for p in procs.values():
            p.close()


def test_switching_an_installation_to_sharding_labels_its_deployments_and_duplicates_none(
    kubesim_factory, tmp_path
):
    """Deployments made before sharding carry no bucket label, so no replica's cache holds
    them: each create meets 409, and the replica labels the Deployment if its Foo controls it,
    or reports the Foo blocked if not (the other Deployment is left untouched)."""
    sim = kubesim_factory(crds=[CRD], sharded_list_and_watch=True, deployment_status_delay=0.1)
    fleet = Fleet(sim)
    fleet.rest.request(
        "POST", resource_path(*DEPLOYMENT_GVR, "default"), body=foreign_deployment("taken")
    )
    fleet.rest.request(
        "POST", resource_path(*FOO_GVR, "default"), body=foo("blocked", deployment_name="taken")
    )
    procs = []
    try:
        single = ControllerProcess.against(sim, tmp_path, "--resync-period", "2s", name="single")
        procs.append(single)
        fleet.create(10)
        wait_converged(fleet, 1, timeout=30, labelled=False)
        assert single.terminate() == 0
        switched_at = time.time()

        for identity in ("replica-a", "replica-b"):
            procs.append(
                ControllerProcess.against(
                    sim, tmp_path, *SHARDED, "--identity", identity, name=identity
                )
            )
        wait_converged(fleet, 1, timeout=30)
        scaled_at = time.time()
        fleet.scale(2)
        wait_converged(fleet, 2, timeout=30)

        deployments = fleet.rest.request("GET", resource_path(*DEPLOYMENT_GVR, "default"))["items"]
        # no duplicate: the ten Foos' Deployments and the foreign one, nothing more
        assert sorted(d["metadata"]["name"] for d in deployments) == sorted([*fleet.uids, "taken"])
        taken = next(d for d in deployments if d["metadata"]["name"] == "taken")
        assert taken["metadata"]["labels"] == {"owner": "someone-else"}
        assert taken["spec"]["replicas"] == 2
        blocked = fleet.rest.request("GET", resource_path(*FOO_GVR, "default", "blocked"))
        ready = [c for c in blocked["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "False" and ready[0]["reason"] == "ErrResourceExists"

        sharded = [
            r
            for r in sim.request_log
            if r.time >= switched_at and r.user_agent.startswith(f"{USER_AGENT} (replica-")
        ]
        # the blocked Foo's status stays as it was: no flapping through "not available"
        flaps = [r for r in sharded if r.resource == "foos/status" and r.name == "blocked"]
        assert flaps == [], flaps
        # it is looked up by a list narrowed to its name, and never written
        lookups = [r for r in sharded if r.resource == "deployments" and "taken" in r.query]
        assert lookups and all(r.verb == "list" for r in lookups), lookups
        assert not [r for r in sharded if r.resource == "deployments" and r.name == "taken"]
        # each Deployment of ours got its label, by an update as read, before the scale-up
        labelled = {
            r.name
            for r in sharded
            if r.resource == "deployments" and r.verb == "update" and r.time < scaled_at
        }
        assert labelled == set(fleet.uids)
        # no verb the controller's ClusterRole lacks (manifests/base/rbac.yaml)
        verbs = {r.verb for r in sharded if r.resource == "deployments"}
        assert verbs <= {"list", "watch", "create", "update"}, verbs
        created = [
            r
            for r in sharded
            if r.resource == "deployments" and r.verb == "create" and r.code < 300
        ]
        assert created == []
    finally:
        for p in procs:
            p.close()


def test_members_that_disagree_on_the_bucket_count_stay_not_ready(kubesim_factory, tmp_path):
    sim = kubesim_factory(crds=[CRD])
    procs = []
    try:
        a = ControllerProcess.against(sim, tmp_path, *SHARDED, "--identity", "a", name="a")
        procs.append(a)
        wait_for(lambda: a.get("health-probes", "/readyz")[0] == 200, timeout=20)
        other = [f if f != str(BUCKETS) else str(2 * BUCKETS) for f in SHARDED]
        b = ControllerProcess.against(sim, tmp_path, *other, "--identity", "b", name="b")
        procs.append(b)
        b.wait_log("ring members disagree on the bucket count; not taking any bucket", timeout=20)
        code, body = b.get("health-probes", "/readyz?verbose")
        assert code != 200 and "ring members disagree on the bucket count" in body, body
        # and a, ready before, is not ready any more either
        wait_for(
            lambda: "ring members disagree" in a.get("health-probes", "/readyz?verbose")[1],
            timeout=10,
        )
        a.wait_log("ring members disagree on the bucket count; not taking any bucket", timeout=20)
    finally:
        for p in procs:
            p.close()


class Breakable:
    """A RESTClient whose Lease writes can be made to fail (a replica cut off from the server)."""

    def __init__(self, rest: RESTClient) -> None:
        self.rest = rest
        self.broken = threading.Event()

    def request(self, method: str, path: str, **kwargs):
        if self.broken.is_set() and "/leases" in path and method != "GET":
            raise TransportError("injected: the server cannot be reached")
        return self.rest.request(method, path, **kwargs)

    def stream(self, path: str, **kwargs):
        return self.rest.stream(path, **kwargs)


def test_a_replica_that_cannot_renew_stops_acting_before_another_takes_over(kubesim_factory):
    """Two sharders in one process (no informers): sampled every few milliseconds, their
    acting sets never overlap, through the split, a replica cut off from its Lease (it stops
    acting within the renew deadline; the other takes over only once the Lease has expired)
    and its return."""
    sim = kubesim_factory(crds=[CRD])
    rests = {n: Breakable(RESTClient(sim.new_api_client(), user_agent=n)) for n in "ab"}
    sharders = {
        n: Sharder(
            rests[n],
            "default",
            n,
            "ring",
            BUCKETS,
            lease_duration=LEASE_DURATION,
            renew_deadline=1.5,
            retry_period=0.3,
            registry=CollectorRegistry(),
        )
        for n in "ab"
    }
    a, b = sharders["a"], sharders["b"]
    every = frozenset(range(BUCKETS))
    overlaps: list[tuple[float, frozenset[int]]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            both = a.gate.acting() & b.gate.acting()
            if both:
                overlaps.append((time.monotonic(), both))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stop = threading.Event()
    try:
        for s in sharders.values():
            s.start(stop)
        assert all(s.wait_ready(stop) for s in sharders.values())

        def split() -> bool:
            return bool(a.gate.acting()) and (a.gate.acting() | b.gate.acting()) == every

        wait_for(split, timeout=15, message="the buckets split between a and b")

        rests["a"].broken.set()
        cut_at = time.monotonic()
        wait_for(lambda: not a.gate.acting(), timeout=5, message="a stops acting")
        stopped = time.monotonic() - cut_at
        # within the renew deadline (after its last renewal, at most a retry period before)
        assert stopped <= 1.5 + 0.3 + 0.5, stopped
        assert a.readiness() == "the member lease could not be renewed"
        wait_for(lambda: b.gate.acting() == every, timeout=10, message="b takes over")
        took = time.monotonic() - cut_at
        # not before a's Lease expired: its last renewal was at most a retry period before
        assert took >= LEASE_DURATION - 0.3, took

        rests["a"].broken.clear()
        wait_for(split, timeout=15, message="a rejoins and the buckets split again")
        assert a.readiness() is None
    finally:
        stop.set()
        for s in sharders.values():
            s.release(timeout=2)
        done.set()
        sampler.join(2)
    assert overlaps == [], overlaps[:5]


def test_two_processes_with_one_identity_cannot_both_hold_its_lease(sim):
    """A second process started with the same --identity finds the Lease live under another
    holder and waits (IdentityInUseError, what /readyz reports); once the first stops renewing
    for a lease duration, on the second's own clock, it takes the Lease over; the first then
    learns at its next renewal that the Lease is no longer its own."""
    clock = FakeClock()
    rest = RESTClient(sim.new_api_client(), user_agent="sharding-test")
    rest.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "ring"}})

    def lease() -> OwnLease:
        return OwnLease(rest, "ring", "replica-a", "r", 8, 15.0, timeout=5.0, clock=clock.now)

    first, second = lease(), lease()
    first.acquire()
    with pytest.raises(IdentityInUseError, match="another replica runs with --identity replica-a"):
        second.acquire()
    clock.step(10.0)
    first.write({1, 2})  # renewed: the second sees a new record, and waits again from now
    with pytest.raises(IdentityInUseError):
        second.acquire()
    clock.step(14.0)
    with pytest.raises(IdentityInUseError):
        second.acquire()  # 14 s unchanged: not expired yet
    clock.step(1.5)
    second.acquire()  # unchanged for longer than its 15 s lease duration: taken over
    held = rest.request("GET", resource_path(*LEASE_GVR, "ring", "replica-a"))
    assert held["spec"]["holderIdentity"] == second.holder != first.holder
    with pytest.raises(IdentityInUseError, match="taken over"):
        first.write({1, 2})
