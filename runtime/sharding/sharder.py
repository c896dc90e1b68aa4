"""The sharder: one loop per replica that keeps its Lease, its buckets and its informers in step.

No client-go twin (see ``runtime.sharding``). Every retry period, and whenever a member Lease
changes, it:

1. renews its own Lease (``membership.OwnLease``), and stops acting on everything when it could
   not renew for the renew deadline: that is before any other replica can judge it gone;
2. computes the assignment from the live members (``assignment.assign``) exactly as every other
   replica does;
3. re-scopes the Foo and Deployment informers to the buckets it owns or still acts on
   (``scope``), which relists them;
4. hands over the buckets it lost: it stops starting their syncs at once (``gate.ActingGate``),
   and once none is in flight it removes them from its Lease's claim;
5. takes the buckets it won once no other live Lease claims them and both informers have listed
   them: it writes the claim first, acts once its Lease watch shows that claim and no other
   one committed before it, and enqueues every Foo of them.

So a bucket is acted on by at most one replica at any time: a replica acts on a bucket only
while its own Lease claims it, claims only what no other live Lease claims, and releases only
after its syncs have ended. A replica killed without releasing keeps its claims until its Lease
expires (judged on each observer's clock); then the owners take its buckets over.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge

from client.rest import Interface
from informer.factory import SharedInformerFactory
from informer.listwatch import ListerWatcher, ListWatch
from informer.shared_informer import (
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from runtime.sharding.assignment import assign, encode_buckets
from runtime.sharding.gate import ActingGate
from runtime.sharding.membership import (
    LEASE_GVR,
    RING_LABEL,
    IdentityInUseError,
    Member,
    MemberTracker,
    OwnLease,
    seen_at_or_after,
)
from runtime.sharding.scope import Scope, ScopedListWatch
from runtime.trace import TRACE_LOGGER

__all__ = ["ShardingMetrics", "Sharder"]

log = logging.getLogger("runtime.sharding")
trace = logging.getLogger(TRACE_LOGGER)


class ShardingMetrics:
    """The sharding metrics, registered once per registry (no client-go twin; the names are
    those of the design shared with docs/sharding.md)."""

    def __init__(self, ring: str, registry: CollectorRegistry | None) -> None:
        registry = REGISTRY if registry is None else registry
        self.ring = ring
        self.buckets_owned = Gauge(
            "sharding_buckets_owned", "Buckets this replica acts on.", ["ring"], registry=registry
        )
        self.ring_members = Gauge(
            "sharding_ring_members", "Live members of the ring.", ["ring"], registry=registry
        )
        self.reassignments = Counter(
            "sharding_reassignments",
            "Changes of the ring's assignment this replica has seen.",
            ["ring"],
            registry=registry,
        )
        self.handovers = Counter(
            "sharding_handovers",
            "Buckets taken over (in) and handed over (out).",
            ["ring", "direction"],
            registry=registry,
        )
        self.dropped = Counter(
            "sharding_objects_dropped",
            "Objects the client-side shard filter dropped before they reached the cache.",
            ["resource"],
            registry=registry,
        )
        self.buckets_owned.labels(ring).set(0)
        self.ring_members.labels(ring).set(0)
        self.reassignments.labels(ring)
        self.handovers.labels(ring, "in")
        self.handovers.labels(ring, "out")
        # (the dropped counter's series is made with the primary informer: wrap_primary)


class Sharder:
    """The replica's membership, assignment, handovers and informer scopes (no client-go twin:
    see the module docstring).

    Wiring (``runtime.manager.Manager``): build it, wrap the controller's own kind's informer
    with ``wrap_primary`` and its owned kinds' with ``wrap_owned``, give the controller its
    ``gate``, ``attach`` the informers and the enqueue function, ``start`` it and
    ``wait_ready`` before starting the informers; after the controllers have drained,
    ``release``.
    """

    def __init__(
        self,
        rest: Interface,
        namespace: str,
        identity: str,
        ring: str,
        bucket_count: int,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.identity = identity
        self.ring = ring
        self.bucket_count = bucket_count
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock
        self.metrics = ShardingMetrics(ring, registry)
        self.own = OwnLease(
            rest,
            namespace,
            identity,
            ring,
            bucket_count,
            lease_duration,
            timeout=max(0.5, min(renew_deadline / 2, 10.0)),
            clock=clock,
        )
        self.tracker = MemberTracker(clock)
        self.gate = ActingGate(bucket_count)
        # the controller's own kind (a shardSelector), and the kinds it owns (the bucket label)
        self.primary_scope = Scope(bucket_count)
        self.owned_scope = Scope(bucket_count)
        self._scoped: list[ScopedListWatch] = []
        self._informers: list[SharedIndexInformer] = []
        self._enqueue: Callable[[frozenset[int]], None] = lambda buckets: None

        def only_ring(options: dict[str, Any]) -> None:
            options["labelSelector"] = f"{RING_LABEL}={ring}"

        self._lease_factory = SharedInformerFactory(
            rest, 0.0, namespace=namespace, tweak_list_options=only_ring, name="sharding"
        )
        self.leases = self._lease_factory.for_resource(*LEASE_GVR)
        wake = ResourceEventHandlerFuncs(
            add_func=lambda obj: self.wake(),
            update_func=lambda old, new: self.wake(),
            delete_func=lambda obj: self.wake(),
        )
        self.leases.add_event_handler(wake)
        # set by a Lease event or a completed list: look again before the retry period is up
        self._wake = threading.Event()
        # set once the first assignment is known (readiness)
        self.ready = threading.Event()
        # why not ready, once running ("" when ready)
        self._problem = "the first assignment is not known yet"
        # release() was called: the loop ends, nothing more is written
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        # the last assignment computed, to count and log changes
        self._assignment: dict[int, str] | None = None
        # the buckets this replica owns by the last assignment
        self._mine: frozenset[int] = frozenset()
        # bucket count mismatch already logged for these members
        self._mismatch_logged: frozenset[str] = frozenset()
        # buckets claimed on our Lease, not acted on until our watch shows that claim
        self._pending: frozenset[int] = frozenset()
        # the resourceVersion of the Lease write that claimed them
        self._pending_rv = ""

    # -- wiring -------------------------------------------------------------------------------

    def wrap_primary(self, inner: ListWatch) -> ListerWatcher:
        """The controller's own kind (the Foos), narrowed by ``shardSelector``."""
        # the series exists at 0 from the start, as for every other sharding metric
        dropped = self.metrics.dropped.labels(inner.resource)
        scoped = ScopedListWatch(
            inner,
            self.primary_scope,
            primary=True,
            on_dropped=dropped.inc,
            on_listed=self.wake,
        )
        self._scoped.append(scoped)
        return scoped

    def wrap_owned(self, inner: ListWatch) -> ListerWatcher:
        """A kind the controller makes for its objects (the Deployments), by bucket label."""
        scoped = ScopedListWatch(inner, self.owned_scope, primary=False, on_listed=self.wake)
        self._scoped.append(scoped)
        return scoped

    def attach(
        self, informers: list[SharedIndexInformer], enqueue: Callable[[frozenset[int]], None]
    ) -> None:
        """The informers to relist on a re-scope, and how to enqueue every object of buckets
        taken over."""
        self._informers = list(informers)
        self._enqueue = enqueue

    def wake(self) -> None:
        self._wake.set()

    # -- running ------------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Watch the ring's Leases and run the loop on a thread until ``release``."""
        self._lease_factory.start(stop)
        self._thread = threading.Thread(target=self._run, args=(stop,), name="sharder", daemon=True)
        self._thread.start()

    def wait_ready(self, stop: threading.Event) -> bool:
        """Wait for the first assignment (or the stop); whether it is known."""
        while not stop.is_set():
            if self.ready.wait(0.1):
                return True
        return self.ready.is_set()

    def readiness(self) -> str | None:
        """None when ready, else why not (/readyz)."""
        return None if self.ready.is_set() and not self._problem else self._problem or None

    def _run(self, stop: threading.Event) -> None:
        log.info(
            "sharding on",
            extra={
                "lease": self.own.describe(),
                "identity": self.identity,
                "ring": self.ring,
                "buckets": self.bucket_count,
            },
        )
        in_use = ""
        while not self._done.is_set():
            try:
                self.own.acquire()
                break
            except IdentityInUseError as err:
                # (before the log line: whoever reads it finds /readyz saying so)
                self._problem = str(err)
                if str(err) != in_use:
                    log.error(str(err), extra={"lease": self.own.describe()})
                in_use = str(err)
            except Exception as err:
                log.error(
                    "cannot write the member lease",
                    extra={"lease": self.own.describe(), "error": str(err)},
                )
            if self._done.wait(self.retry_period):
                return
        if not wait_for_cache_sync(stop, self.leases):
            return
        while not self._done.is_set():
            try:
                self._tick(stopping=stop.is_set())
            except Exception:
                log.exception("sharding: the assignment step failed")
            self._wake.wait(self.retry_period)
            self._wake.clear()

    def release(self, timeout: float) -> None:
        """The graceful stop, once the controller has drained: act on nothing, end the loop,
        delete the Lease (every member sees this one leave, and takes its buckets at once)."""
        self.gate.stop(self.gate.acting())
        self._done.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(max(0.0, min(timeout, self.own.timeout)))
        handed = self.own.claims
        if self.own.release(timeout):
            if handed:
                self._moved(handed, "out", "released with the member lease")
            log.info("member lease released", extra={"lease": self.own.describe()})
        self.metrics.buckets_owned.labels(self.ring).set(0)

    # -- one step -----------------------------------------------------------------------------

    def _renew(self, claims: frozenset[int]) -> bool:
        try:
            self.own.write(claims)
            return True
        except Exception as err:
            log.error(
                "cannot renew the member lease",
                extra={"lease": self.own.describe(), "error": str(err)},
            )
            return False

    def _tick(self, stopping: bool) -> None:
        now = self._clock()
        if now - self.own.last_write >= self.retry_period:
            self._renew(self.own.claims)
        if self._clock() - self.own.last_write > self.renew_deadline:
            # Others may soon judge our Lease expired and take our buckets: stop first.
            acting = self.gate.acting()
            if acting:
                self.gate.stop(acting)
            # Our claims may be judged expired by now, and taken: the next renewal keeps only
            # those with a sync still in flight, and the rest are claimed anew through the
            # watch, as at start.
            self.own.claims = self.gate.busy(self.own.claims)
            self._pending = frozenset()
            self._problem = "the member lease could not be renewed"
            if acting:
                log.error(
                    "could not renew the member lease within the renew deadline; "
                    "acting on no bucket until it is renewed",
                    extra={"lease": self.own.describe(), "buckets": encode_buckets(acting)},
                )
                self._publish()
            return
        if stopping:
            # draining: keep the Lease (and its claims) alive, take nothing new
            return
        # one snapshot for the whole step: our claim is judged against what was seen with it
        leases = self.leases.get_store().list()
        members = self.tracker.observe(leases)
        members.pop(self.identity, None)
        own_rv = next(
            (
                str(lease["metadata"].get("resourceVersion") or "")
                for lease in leases
                if lease.get("metadata", {}).get("name") == self.identity
            ),
            "",
        )
        mismatched = {name for name, m in members.items() if m.bucket_count != self.bucket_count}
        if mismatched:
            # (before the log line: whoever reads it finds /readyz saying so)
            self._problem = f"ring members disagree on the bucket count: {sorted(mismatched)}"
            if mismatched != self._mismatch_logged:
                log.error(
                    "ring members disagree on the bucket count; not taking any bucket",
                    extra={
                        "ring": self.ring,
                        "buckets": self.bucket_count,
                        "members": ",".join(sorted(mismatched)),
                    },
                )
            self._mismatch_logged = frozenset(mismatched)
            return
        self._mismatch_logged = frozenset()
        names = [self.identity, *members]
        self.metrics.ring_members.labels(self.ring).set(len(names))
        assignment = assign(names, self.bucket_count)
        if assignment != self._assignment:
            if self._assignment is not None:
                self.metrics.reassignments.labels(self.ring).inc()
            self._assignment = assignment
            self._mine = frozenset(b for b, owner in assignment.items() if owner == self.identity)
            log.info(
                "assignment changed",
                extra={
                    "ring": self.ring,
                    "members": ",".join(sorted(names)),
                    "owned": encode_buckets(self._mine),
                },
            )
        mine = self._mine
        self._hand_over(mine)
        self._take_over(mine, members, own_rv)
        self._rescope(mine | self.gate.acting())
        self._publish()
        self._problem = ""
        self.ready.set()

    def _hand_over(self, mine: frozenset[int]) -> None:
        """Stop acting on lost buckets; release the claims of those with no sync in flight."""
        lost = self.gate.acting() - mine
        if lost:
            self.gate.stop(lost)
            log.info("handing over buckets", extra={"buckets": encode_buckets(lost)})
            trace.info("bucket handover", extra={"buckets": encode_buckets(lost), "to": "others"})
            # most syncs take milliseconds: wait a little, so one step releases them
            self.gate.wait_idle(lost, min(1.0, self.retry_period / 2))
        releasing = self.own.claims - self.gate.acting() - self._pending
        idle = releasing - self.gate.busy(releasing)
        if idle and self._renew(self.own.claims - idle):
            self._moved(idle, "out", "handed over")

    def _take_over(self, mine: frozenset[int], members: dict[str, Member], own_rv: str) -> None:
        """Claim the owned buckets no other live Lease claims, once both informers list them;
        act on them once the Lease watch shows our claim and still no other.

        Two replicas may briefly disagree on the members (one has seen a newcomer, the other
        not yet) and both claim a bucket the old owner released. The watch delivers every Lease
        write in the order the server committed them, so when a replica sees its own claim it
        has seen every claim committed before it: the first claimer finds none and acts, the
        later one finds the first's and withdraws without ever acting.
        """
        others: frozenset[int] = frozenset().union(*(m.claims for m in members.values()))
        if self._pending:
            # the Lease watch has not shown our last claim yet (own_rv: our Lease as cached)
            if not seen_at_or_after(own_rv, self._pending_rv):
                return
            pending, self._pending = self._pending, frozenset()
            won = (pending & mine) - others
            withdrawn = pending - won
            if withdrawn and self._renew(self.own.claims - withdrawn):
                log.info(
                    "claim withdrawn: another replica claimed first, or the owner changed",
                    extra={"buckets": encode_buckets(withdrawn)},
                )
            if won:
                self._act(won)
        listed = frozenset(range(self.bucket_count))
        for scoped in self._scoped:
            listed &= scoped.listed()
        gained = (mine - self.gate.acting() - others) & listed
        if not gained:
            return
        if gained <= self.own.claims:
            # claimed already, and ours all along (we had stopped acting, say on a failed
            # renewal): no other claim can have come in meanwhile
            self._act(gained)
            return
        if self._renew(self.own.claims | gained):
            self._pending = gained
            self._pending_rv = self.own.resource_version

    def _act(self, buckets: frozenset[int]) -> None:
        # acting first, then enqueue: a Foo cached meanwhile is enqueued by its own event
        self.gate.start(buckets)
        self._moved(buckets, "in", "taken over")
        self._enqueue(buckets)

    def _rescope(self, buckets: frozenset[int]) -> None:
        changed = [
            self.primary_scope.set(buckets),
            self.owned_scope.set(buckets),
        ]
        if any(changed):
            log.info("informers re-scoped", extra={"buckets": encode_buckets(buckets)})
            for informer in self._informers:
                informer.relist()

    def _moved(self, buckets: frozenset[int], direction: str, what: str) -> None:
        self.metrics.handovers.labels(self.ring, direction).inc(len(buckets))
        log.info(f"buckets {what}", extra={"buckets": encode_buckets(buckets), "ring": self.ring})
        trace.info(
            "bucket moved", extra={"buckets": encode_buckets(buckets), "direction": direction}
        )

    def _publish(self) -> None:
        self.metrics.buckets_owned.labels(self.ring).set(len(self.gate.acting()))
