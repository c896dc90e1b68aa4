"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics.

client-go twin: ``tools/leaderelection`` (leaderelection.go); the Lease itself is read and
written by ``resourcelock.py`` (``resourcelock.LeaseLock``).

Why not the official client's ``kubernetes.leaderelection``? It cannot be stopped (its acquire
loop sleeps forever with no stop signal), it never releases the lease on shutdown (a standby
then waits out the whole lease duration), and it does not count ``leaseTransitions``. Those
three are what a controller deployed with two replicas needs, so this module writes the loop
itself, on our RESTClient, and keeps client-go's rules:

- a candidate retries every ``retry_period`` (jittered by 1.2, as ``wait.JitterUntil``);
- a lease is expired when the *local* clock says ``lease_duration`` has passed since this
  candidate last *saw the record change*: clocks of different machines are never compared;
- writes are guarded by the Lease's resourceVersion (optimistic concurrency), so two
  candidates racing for an expired lease cannot both win;
- the leader renews every ``retry_period`` and gives up leadership when it could not renew
  for ``renew_deadline``;
- with ``release_on_cancel`` the leader, when stopped, writes the lease with no holder and a
  1 s duration, so a standby takes over at once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from client.errors import APIError, TransportError, is_not_found
from tools.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock, micro_time

if TYPE_CHECKING:
    # imported with the first gauge: no registry, no prometheus_client (runtime.manager)
    from prometheus_client import CollectorRegistry, Gauge

__all__ = ["LeaderElectionConfig", "LeaderElector"]

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2  # leaderelection.go: JitterFactor


@dataclass
class LeaderElectionConfig:
    """Timings and callbacks of one election (client-go ``leaderelection.LeaderElectionConfig``);
    ``on_started_leading`` gets a stop event where client-go passes a context."""

    lock: LeaseLock
    lease_duration: float = 15.0  # how long a lease holds without renewal
    renew_deadline: float = 10.0  # how long the leader keeps trying to renew before giving up
    retry_period: float = 2.0  # time between attempts
    release_on_cancel: bool = True  # write a 1 s lease with no holder when stopped
    name: str = ""  # label of the metric; defaults to the lease name
    on_started_leading: Callable[[threading.Event], None] | None = None  # gets a stop event
    on_stopped_leading: Callable[[], None] | None = None
    on_new_leader: Callable[[str], None] | None = None

    def validate(self) -> None:
        """NewLeaderElector's checks: lease > renew deadline > 1.2 x retry period > 0."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.retry_period < 0.001 or self.lease_duration < 0.001:
            raise ValueError("durations must be positive")


# One gauge per registry (a registry refuses a second metric of the same name). Weak keys: an
# id() key could be reused by a new registry after the old one is gone, handing it a gauge
# registered elsewhere, which tests creating a registry each would then never see.
_LEADER_GAUGES: weakref.WeakKeyDictionary[CollectorRegistry, Gauge] = weakref.WeakKeyDictionary()
_LEADER_GAUGES_LOCK = threading.Lock()


def _leader_gauge(registry: CollectorRegistry | None) -> Gauge | None:
    if registry is None:
        return None
    from prometheus_client import Gauge

    with _LEADER_GAUGES_LOCK:
        if registry not in _LEADER_GAUGES:
            _LEADER_GAUGES[registry] = Gauge(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                ["name"],
                registry=registry,
            )
        return _LEADER_GAUGES[registry]


class LeaderElector:
    """Runs the acquire/renew loop and calls back when leadership starts and ends.

    client-go twin: ``leaderelection.LeaderElector``. Differs: on stop it keeps renewing until
    the leader's work has returned, then releases (controller-runtime's shutdown order).
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        config.validate()
        self.config = config
        self._clock = clock  # monotonic: judges expiry on what *we* observed
        self._wall = wall_clock  # for the timestamps written into the Lease
        self._observed: LeaderElectionRecord | None = None  # the record as last read
        self._observed_time = 0.0  # local monotonic time when _observed last changed
        self._reported_leader = ""  # last holder passed to on_new_leader
        self._leading = threading.Event()  # set while we hold the lease
        self._gauge = _leader_gauge(registry)
        self._name = config.name or config.lock.name
        if self._gauge is not None:
            self._gauge.labels(self._name).set(0)

    # -- state --------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self._leading.is_set()

    def get_leader(self) -> str:
        return self._observed.holder_identity if self._observed else ""

    # -- the loop -----------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> bool:
        """Acquire, lead until ``stop`` is set or the lease is lost, then release.

        The leader's work (``on_started_leading``) runs in its own thread and gets
        ``leading_stop``. On ``stop``, that event is set at once, and the lease **keeps being
        renewed until the work has returned**: a graceful drain may outlast the lease duration,
        and a standby must not start while this process still writes. Only then is the lease
        released. controller-runtime orders its shutdown the same way (runnables first, then
        the elector); client-go's bare elector releases as soon as its context ends and leaves
        that ordering to the caller. As in client-go, work that returns early does not end
        leadership: only ``stop`` or a lost lease does.

        Returns True after a clean stop, False when the lease was lost (``leading_stop`` is set
        but the work is not waited for: the caller should exit non-zero so the pod restarts).
        Stopped before acquiring counts as clean.
        """
        if not self._acquire(stop):
            return stop.is_set()
        leading_stop = threading.Event()  # tells the leader's work to stop
        work_done = threading.Event()  # set when the leader's work has returned
        self._set_leading(True)
        threading.Thread(
            target=self._lead, args=(leading_stop, work_done), name="leading", daemon=True
        ).start()
        lost = True
        try:
            lost = self._renew(stop, leading_stop, work_done)
        finally:
            leading_stop.set()
            if not lost and self.config.release_on_cancel:
                self.release()  # hand over at once: the work is done
            # When lost, someone else may lead already: say so at once (the callback usually
            # exits the process) without waiting for work we no longer own.
            self._set_leading(False)
            if self.config.on_stopped_leading:
                self.config.on_stopped_leading()
        return not lost

    def _lead(self, leading_stop: threading.Event, work_done: threading.Event) -> None:
        try:
            if self.config.on_started_leading is not None:
                self.config.on_started_leading(leading_stop)
            else:
                leading_stop.wait()
        except Exception:  # the work failing ends leadership, it must be seen
            log.exception("the leader's work failed")
        finally:
            work_done.set()

    def _set_leading(self, leading: bool) -> None:
        if leading:
            self._leading.set()
            log.info(
                "became leader",
                extra={"lease": self.config.lock.describe(), "identity": self.config.lock.identity},
            )
        else:
            self._leading.clear()
        if self._gauge is not None:
            self._gauge.labels(self._name).set(1 if leading else 0)

    def _acquire(self, stop: threading.Event) -> bool:
        log.info("attempting to acquire leader lease", extra={"lease": self.config.lock.describe()})
        while not stop.is_set():
            if self.try_acquire_or_renew():
                return True
            # wait.JitterUntil(..., RetryPeriod, JitterFactor): period * (1 + rand * 1.2)
            stop.wait(self.config.retry_period * (1 + random.random() * JITTER_FACTOR))
        return False

    def _renew(
        self, stop: threading.Event, leading_stop: threading.Event, work_done: threading.Event
    ) -> bool:
        """Renew every retry_period until stop was passed on and the work has returned (False),
        or until renewing failed for renew_deadline (True: the lease is lost)."""

        def finished() -> bool:
            return leading_stop.is_set() and work_done.is_set()

        while not finished():
            self._pause(stop, leading_stop, work_done)
            if finished():
                break
            deadline = self._clock() + self.config.renew_deadline
            while not self.try_acquire_or_renew(timeout=deadline - self._clock()):
                if self._clock() >= deadline:
                    log.error(
                        "failed to renew lease, lost leadership",
                        extra={"lease": self.config.lock.describe()},
                    )
                    return True
                self._pause(stop, leading_stop, work_done)
                if finished():
                    return False  # nothing left to protect; release() is still tried
        return False

    def _pause(
        self, stop: threading.Event, leading_stop: threading.Event, work_done: threading.Event
    ) -> None:
        """Sleep one retry period, waking early on ``stop`` (passed on to the work at once)
        and, once the work was told to stop, on its end (so the release follows at once)."""
        end = time.monotonic() + self.config.retry_period
        if not leading_stop.is_set():
            if not stop.wait(self.config.retry_period):
                return
            leading_stop.set()
        work_done.wait(max(0.0, end - time.monotonic()))

    def try_acquire_or_renew(self, timeout: float | None = None) -> bool:
        """One attempt (tryAcquireOrRenew); True when we hold the lease afterwards.

        The attempt, its read and its write together, ends within ``timeout`` seconds (default
        ``renew_deadline``), as client-go's renew loop bounds it with a context: a leader whose
        API server hangs must give up by its renew deadline, before a standby's lease_duration
        runs out, not a hung request or two later.
        """
        lock = self.config.lock
        end = time.monotonic() + (self.config.renew_deadline if timeout is None else timeout)

        def left() -> float:
            # With nothing left a request times out at once, like a Go call on an expired context.
            return max(0.001, end - time.monotonic())

        now_wall = micro_time(self._wall())
        record = LeaderElectionRecord(
            holder_identity=lock.identity,
            lease_duration_seconds=max(1, int(round(self.config.lease_duration))),
            acquire_time=now_wall,
            renew_time=now_wall,
        )
        try:
            old = lock.get(timeout=left())
        except (APIError, TransportError) as err:
            if not is_not_found(err):
                log.warning(
                    "error retrieving lease", extra={"lease": lock.describe(), "error": str(err)}
                )
                return False
            try:
                lock.create(record, timeout=left())
            except (APIError, TransportError) as create_err:
                log.info("failed to create lease", extra={"error": str(create_err)})
                return False
            self._observe(record)
            return True

        if self._observed != old:
            self._observe(old)
        now = self._clock()
        held_by_other = old.holder_identity and old.holder_identity != lock.identity
        if held_by_other and self._observed_time + old.lease_duration_seconds > now:
            log.debug(
                "lease is held by another candidate and has not yet expired",
                extra={"holder": old.holder_identity},
            )
            return False

        if old.holder_identity == lock.identity:
            record.acquire_time = old.acquire_time
            record.lease_transitions = old.lease_transitions
        else:
            record.lease_transitions = old.lease_transitions + 1
        try:
            lock.update(record, timeout=left())
        except (APIError, TransportError) as err:
            log.info("failed to update lease", extra={"error": str(err)})
            return False
        self._observe(record)
        return True

    def _observe(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_time = self._clock()
        if record.holder_identity and record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            log.info("new leader elected", extra={"leader": record.holder_identity})
            if self.config.on_new_leader:
                self.config.on_new_leader(record.holder_identity)

    def release(self, timeout: float | None = None) -> bool:
        """Give the lease up now: no holder, 1 s duration (client-go's release).

        The write ends within ``timeout`` seconds (default: the lock's request timeout), so a
        shutdown with a deadline can bound it, as client-go bounds it with a context.
        """
        if self._observed is None or self._observed.holder_identity != self.config.lock.identity:
            return False
        now = micro_time(self._wall())
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            lease_transitions=self._observed.lease_transitions,
        )
        try:
            if timeout is None:
                self.config.lock.update(record)
            else:
                self.config.lock.update(record, timeout=max(0.001, timeout))
        except (APIError, TransportError) as err:
            log.error("failed to release lease", extra={"error": str(err)})
            return False
        self._observe(record)
        log.info("released leader lease", extra={"lease": self.config.lock.describe()})
        return True
