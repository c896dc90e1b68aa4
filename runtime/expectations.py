"""What the controller has written and its caches do not show yet.

kube-controller-manager twin: ``ControllerExpectations`` (pkg/controller/controller_utils.go),
which the ReplicaSet controller uses so that it does not create a Pod again before its informer
has seen the one it just created: ``ExpectCreations`` before the creates, ``CreationObserved``
from the Pod informer's handlers, ``SatisfiedExpectations`` at the top of a sync, entries that
expire after ``ExpectationsTimeout``. That one counts creates and deletes per controller key;
this one keys by object and by resourceVersion, and covers the Foo controller's three writes:

- a **create**: until the Deployment informer shows the new Deployment, a sync that finds no
  Deployment in the cache must not create it again (the server would answer 409
  AlreadyExists);
- an **update** of a Deployment or of a Foo's status: until the cache shows something newer
  than the resourceVersion our write replaced, a sync that reads the older copy must not write
  from it (the server would answer 409 Conflict, since the copy's resourceVersion is stale).

A sync that meets an unmet expectation does nothing and says it waited (``stale``): the
informer event of our own write is on its way and enqueues the Foo again. The other way round,
the event of our own update that no sync waited for carries nothing the sync that wrote it had
not seen, so it need not enqueue anything (``observed`` returns False); any other change comes
with its own event. An update is announced before it is sent (``begin_update``), because its
watch event may be delivered before the worker has read the response: an event that arrives
meanwhile is held, and ``end_update``, given the resourceVersion the write produced, tells
whether it was the echo or someone else's change (which the write then enqueues itself).

Expectations are lowered by what the informers deliver (``observed``, from the event handlers)
and by the syncs that find the cache caught up, and they expire after ``EXPECTATION_TTL`` in any
case, so an event that never comes (an object created and deleted while a watch was down)
delays a repair by at most that long, never forever. Past the TTL a stale write is answered
with a 409, which the controller treats as a requeue.

The Foo controller touches them in one place per path, as the ReplicaSet controller does:

- its event handlers: ``observed`` (one call in each);
- the sync's read of the caches: ``stale``, for the Foo and for its Deployment
  (``Controller._cache_behind_our_writes``), before anything is written;
- the sync's writes: ``begin_create`` / ``begin_update`` and ``end_update`` around each request,
  in ``runtime.writes.TrackedWrites`` (RealPodControl's twin), so no write forgets either;
- a Foo gone from the cache: ``forget`` its entry (``Controller.sync_handler``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["EXPECTATION_TTL", "Expectations"]

# How long an expectation holds at most (upstream ExpectationsTimeout is 5 min for Pods; a
# Deployment's watch event takes milliseconds, and past the TTL a 409 is only a requeue).
EXPECTATION_TTL = 30.0


@dataclass
class _Expectation:
    """One object's: created by us (``replaced`` None), or updated from ``replaced`` to
    ``produced`` (None while the update is in flight)."""

    # the resourceVersion our update replaced; None for a create
    replaced: str | None
    # monotonic time of the write
    recorded: float
    # the resourceVersion our update produced, once known
    produced: str | None = None
    # begun, not yet ended: events are held in ``held``
    in_flight: bool = False
    # versions delivered while in flight
    held: list[str] = field(default_factory=list)
    # a sync found the cache behind and relies on the event to come
    waited: bool = False
    # uid of the object the create was made for (its controller)
    owner: str | None = None


class Expectations:
    """Per object key (``"deployments", "ns/name"``): what our last write of it was
    (kube-controller-manager twin: k8s.io/kubernetes ``pkg/controller``
    ``ControllerExpectations``, which counts expected creates and deletes per controller key;
    this one keys by object and by resourceVersion).
    Thread-safe: workers record and check, event handlers observe."""

    def __init__(
        self, ttl: float = EXPECTATION_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        # seconds an expectation holds at most
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], _Expectation] = {}
        # when expired entries are dropped next
        self._next_sweep = clock() + ttl

    def begin_create(self, resource: str, key: str, owner: str | None = None) -> None:
        """We are about to create the object for ``owner`` (a uid); ``end_update`` with what
        the create returned.

        Announced before it is sent, as an update is: the object's ADDED event, and its
        DELETED event if it is removed at once (its owner already gone, the garbage collector
        quick), can both be handled before the writer reads the response. An expectation
        recorded only afterwards would then wait for an event that has already come.
        """
        self._set(resource, key, _Expectation(None, self._clock(), in_flight=True, owner=owner))

    def begin_update(self, resource: str, key: str, replaced: str) -> None:
        """We are about to update the object at resourceVersion ``replaced``."""
        self._set(resource, key, _Expectation(replaced, self._clock(), in_flight=True))

    def end_update(self, resource: str, key: str, produced: str | None) -> bool:
        """The update (or create) returned ``produced`` (None: it failed).

        Returns True when an event arrived meanwhile that was not our echo: the caller enqueues
        the object's owner itself, as the handler would have.
        """
        with self._lock:
            entry = self._pending.get((resource, key))
            if entry is None or not entry.in_flight:
                return False
            others = [rv for rv in entry.held if rv != produced]
            if produced is None or produced == entry.replaced or produced in entry.held:
                # failed; or a no-op (the cached copy is current); or the echo is in the cache
                del self._pending[(resource, key)]
            else:
                entry.in_flight, entry.produced, entry.held = False, produced, []
            return bool(others)

    def expect_replaced(self, resource: str, key: str, replaced: str, produced: str) -> None:
        """Our update replaced the object at ``replaced``, making ``produced`` (begin and end
        in one, for a write whose event cannot have arrived yet)."""
        self.begin_update(resource, key, replaced)
        self.end_update(resource, key, produced)

    def observed(self, resource: str, key: str, resource_version: str | None = None) -> bool:
        """An informer delivered the object at ``resource_version`` (None: its deletion).

        Lowers what it meets, and returns False for the echo of our own update that no sync
        waited for, and for any update of an object while our update of it is in flight
        (``end_update`` decides): those events need not enqueue anything.
        """
        with self._lock:
            entry = self._pending.get((resource, key))
            if entry is None:
                return True
            if entry.replaced is not None and resource_version == entry.replaced:
                return True  # a resync of the copy we replaced: still waiting for the echo
            if entry.in_flight and resource_version is not None:
                entry.held.append(resource_version)
                return False
            del self._pending[(resource, key)]
            own_echo = (
                entry.replaced is not None
                and resource_version is not None
                and resource_version == entry.produced
            )
            return not own_echo or entry.waited

    def stale(
        self,
        resource: str,
        key: str,
        cached_resource_version: str | None,
        owner: str | None = None,
    ) -> bool:
        """Whether the cached copy (None: not in the cache) predates our last write of it.

        True marks the expectation as waited for (its event must enqueue the key); a met or
        expired expectation is dropped here, and so is a create made for another ``owner``
        (a Foo deleted and made again under the same name: the object created for the old
        one may have come and gone while a watch was down, and its events never come).
        """
        with self._lock:
            entry = self._pending.get((resource, key))
            if entry is None or entry.in_flight:
                return False
            if entry.owner is not None and owner is not None and entry.owner != owner:
                del self._pending[(resource, key)]
                return False
            if self._clock() - entry.recorded < self.ttl:
                if entry.replaced is None and cached_resource_version is None:
                    entry.waited = True
                    return True
                if entry.replaced is not None and cached_resource_version == entry.replaced:
                    entry.waited = True
                    return True
            del self._pending[(resource, key)]
            return False

    def forget(self, resource: str, key: str) -> None:
        """Drop the expectation (the object is gone)."""
        with self._lock:
            self._pending.pop((resource, key), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def _set(self, resource: str, key: str, entry: _Expectation) -> None:
        with self._lock:
            self._pending[(resource, key)] = entry
            now = entry.recorded
            if now >= self._next_sweep:
                # Entries of objects nobody syncs again (deleted meanwhile) would stay forever.
                expired = [
                    k
                    for k, e in self._pending.items()
                    if now - e.recorded >= self.ttl and not e.in_flight
                ]
                for k in expired:
                    del self._pending[k]
                self._next_sweep = now + self.ttl
