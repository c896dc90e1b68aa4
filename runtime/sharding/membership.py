"""The ring's members: this replica's own Lease, and everyone's as the Lease watch shows them.

No client-go twin (see ``runtime.sharding``); the Lease rules are leader election's
(``tools.leaderelection``), applied to one Lease per replica instead of one per process group:

- each replica holds a Lease named after its identity, labelled with its ring, and renews it
  every retry period; it gives up acting when it could not renew for the renew deadline, so it
  stops before any other replica can judge its Lease expired;
- the Lease records the buckets its holder acts on (the claim annotation) and the bucket count
  it assumes; the claim is written *before* the holder starts acting on a bucket, and removed
  only *after* it has finished;
- a member is live while the lease duration has not passed since *we* saw its record change,
  on our monotonic clock: clocks of two machines are never compared (as leader election);
- on a graceful stop the replica deletes its Lease: the others see it leave at once.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from client.errors import APIError, is_conflict, is_not_found
from client.objects import Object
from client.rest import Interface, resource_path
from runtime.sharding.assignment import BUCKET_LABEL, PREFIX, decode_buckets, encode_buckets
from tools.leaderelection.resourcelock import micro_time

__all__ = [
    "IdentityInUseError",
    "BUCKETS_ANNOTATION",
    "BUCKET_COUNT_ANNOTATION",
    "BUCKET_LABEL",
    "LEASE_GVR",
    "PREFIX",
    "RING_LABEL",
    "Member",
    "MemberTracker",
    "OwnLease",
    "seen_at_or_after",
]

log = logging.getLogger("runtime.sharding")

# on each member Lease: the ring it belongs to (the Lease watch selects on it)
RING_LABEL = PREFIX + "ring"
# on each member Lease: the buckets its holder acts on, "0-3,7,9"
BUCKETS_ANNOTATION = PREFIX + "buckets"
# on each member Lease: the bucket count its holder assumes; every member must agree
BUCKET_COUNT_ANNOTATION = PREFIX + "bucket-count"

LEASE_GVR = ("coordination.k8s.io", "v1", "leases")


@dataclass(frozen=True)
class Member:
    """One member Lease as read: who holds it, what it claims, the bucket count it assumes
    (no client-go twin; leader election's ``LeaderElectionRecord`` is the nearest)."""

    name: str
    claims: frozenset[int]
    bucket_count: int | None
    lease_duration: float
    # what changes at every renewal: the live-until clock restarts when it does
    renew_time: str

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> Member:
        meta = lease.get("metadata") or {}
        spec = lease.get("spec") or {}
        annotations = meta.get("annotations") or {}
        try:
            claims = decode_buckets(annotations.get(BUCKETS_ANNOTATION) or "")
        except ValueError:
            # unreadable: claims nothing we can honour; logged by the tracker's caller
            claims = frozenset()
        try:
            count: int | None = int(annotations.get(BUCKET_COUNT_ANNOTATION) or "")
        except ValueError:
            count = None
        return cls(
            name=str(meta.get("name") or ""),
            claims=claims,
            bucket_count=count,
            lease_duration=float(spec.get("leaseDurationSeconds") or 0),
            renew_time=str(spec.get("renewTime") or "") + "|" + str(meta.get("resourceVersion")),
        )


class MemberTracker:
    """The live members, from the Leases the watch shows, judged on the local clock (no
    client-go twin: leader election judges its one Lease's expiry the same way).

    ``observe`` is given every member Lease in the cache (each time the sharder looks); a
    member's lease duration runs from when its record was last seen to change, so a Lease left
    behind by a killed replica counts as live for one full lease duration after we first see
    it, and no sooner dead, whatever the clocks of the two machines say.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # name -> (member as last seen, monotonic time its record last changed)
        self._seen: dict[str, tuple[Member, float]] = {}

    def observe(self, leases: Iterable[Mapping[str, Any]]) -> dict[str, Member]:
        """Update from the cached Leases; return the live members by name."""
        now = self._clock()
        current: dict[str, tuple[Member, float]] = {}
        for lease in leases:
            member = Member.from_lease(lease)
            if not member.name:
                continue
            previous = self._seen.get(member.name)
            if previous is not None and previous[0].renew_time == member.renew_time:
                current[member.name] = (member, previous[1])
            else:
                current[member.name] = (member, now)
        self._seen = current
        return {
            name: member
            for name, (member, seen) in current.items()
            if now < seen + member.lease_duration
        }


class IdentityInUseError(Exception):
    """The member Lease of our identity is held, live, by another process: two replicas were
    started with one ``--identity``. Both acting would break "one replica per bucket", so the
    later one waits until the other's Lease expires (as a leader election candidate waits for
    the leader's). No client-go twin."""


class OwnLease:
    """This replica's Lease: created (or taken back) at start, renewed with the claim, deleted
    on a graceful stop. Every write is a PUT guarded by the resourceVersion last written (no
    client-go twin; ``resourcelock.LeaseLock`` is the nearest, for one shared Lease)."""

    def __init__(
        self,
        rest: Interface,
        namespace: str,
        identity: str,
        ring: str,
        bucket_count: int,
        lease_duration: float,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rest = rest
        self.namespace = namespace
        self.identity = identity
        self.ring = ring
        self.bucket_count = bucket_count
        self.lease_duration = lease_duration
        # seconds one request may take (the renew deadline's share)
        self.timeout = timeout
        self._clock = clock
        # the Lease as last written (for its resourceVersion)
        self._lease: Object | None = None
        # what the Lease on the server says we claim
        self.claims: frozenset[int] = frozenset()
        # monotonic time the last successful write was *sent* (0: none yet): the server may
        # have applied it at any moment after, so the renew deadline runs from here
        self.last_write = 0.0
        # the resourceVersion of the Lease as last written ("" before the first write)
        self.resource_version = ""
        # writes come from the sharder's loop and from the shutdown; one at a time
        self._lock = threading.Lock()
        # Who holds the Lease, written as its holderIdentity: this process (host and a uuid of
        # this run, as leader election's identity), so that a second process started with the
        # same --identity can tell the Lease is not its own.
        self.holder = f"{socket.gethostname()}_{uuid.uuid4()}"
        # another holder's (holderIdentity, renewTime) as first seen, and when (local clock):
        # it has expired once unchanged for its lease duration (client-go's observedTime)
        self._foreign: tuple[str, str] = ("", "")
        self._foreign_seen = 0.0

    def describe(self) -> str:
        return f"{self.namespace}/{self.identity}"

    def _path(self, name: str | None = None) -> str:
        return resource_path(*LEASE_GVR, self.namespace, name)

    def _body(self, claims: frozenset[int], acquire: bool) -> dict[str, Any]:
        now = micro_time(time.time())
        spec: dict[str, Any] = {
            **((self._lease or {}).get("spec") or {}),
            "holderIdentity": self.holder,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "renewTime": now,
        }
        if acquire or "acquireTime" not in spec:
            spec["acquireTime"] = now
        meta = dict((self._lease or {}).get("metadata") or {})
        meta.update(name=self.identity, namespace=self.namespace)
        meta["labels"] = {**(meta.get("labels") or {}), RING_LABEL: self.ring}
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            BUCKETS_ANNOTATION: encode_buckets(claims),
            BUCKET_COUNT_ANNOTATION: str(self.bucket_count),
        }
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta,
            "spec": spec,
        }

    def _held_by_another(self, lease: Mapping[str, Any] | None) -> str | None:
        """The holder of ``lease`` when it is another process's and still live, else None.

        Live is judged as client-go's leader election judges a leader: on the local clock, by
        how long the record has gone unchanged (its renewTime), never by comparing the
        writer's clock with ours."""
        spec = (lease or {}).get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        if not holder or holder == self.holder:
            return None
        record = (holder, str(spec.get("renewTime") or ""))
        now = self._clock()
        if record != self._foreign:
            self._foreign, self._foreign_seen = record, now
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        return holder if now - self._foreign_seen < duration else None

    def acquire(self) -> None:
        """Create the Lease, or take back the one a previous run of this identity left (its
        claims are dropped: that run is gone). Raises IdentityInUseError while another process
        renews it, and APIError / TransportError."""
        with self._lock:
            sent = self._clock()
            try:
                self._lease = self.rest.request(
                    "GET", self._path(self.identity), timeout=self.timeout
                )
            except APIError as err:
                if not is_not_found(err):
                    raise
                self._lease = None
            holder = self._held_by_another(self._lease)
            if holder is not None:
                raise IdentityInUseError(
                    f"the member lease {self.describe()} is held by {holder}: another replica "
                    f"runs with --identity {self.identity}; waiting until its lease expires"
                )
            body = self._body(frozenset(), acquire=True)
            if self._lease is None:
                meta = body["metadata"]
                meta.pop("resourceVersion", None)
                self._lease = self.rest.request(
                    "POST",
                    self._path(),
                    params={"fieldManager": "sample-controller"},
                    body=body,
                    timeout=self.timeout,
                )
            else:
                self._lease = self._put(body)
            self.claims = frozenset()
            self.last_write = sent
            self.resource_version = _rv(self._lease)

    def write(self, claims: Iterable[int]) -> None:
        """Renew, recording ``claims``; raises APIError / TransportError (nothing changed then,
        as far as we know: the claim held is still ``self.claims``)."""
        wanted = frozenset(claims)
        with self._lock:
            sent = self._clock()
            body = self._body(wanted, acquire=False)
            try:
                self._lease = self._put(body)
            except APIError as err:
                if not is_conflict(err):
                    raise
                # someone else wrote our Lease (a user's label?): read it and write again,
                # unless another process took it over (it judged ours expired)
                self._lease = self.rest.request(
                    "GET", self._path(self.identity), timeout=self.timeout
                )
                holder = str(((self._lease or {}).get("spec") or {}).get("holderIdentity") or "")
                if holder != self.holder:
                    raise IdentityInUseError(
                        f"the member lease {self.describe()} was taken over by {holder}"
                    ) from err
                self._lease = self._put(self._body(wanted, acquire=False))
            self.claims = wanted
            self.last_write = sent
            self.resource_version = _rv(self._lease)

    def _put(self, body: dict[str, Any]) -> Object:
        return self.rest.request(
            "PUT",
            self._path(self.identity),
            params={"fieldManager": "sample-controller"},
            body=body,
            timeout=self.timeout,
        )

    def release(self, timeout: float) -> bool:
        """Delete the Lease (graceful stop): every member sees this one leave at once."""
        with self._lock:
            try:
                self.rest.request("DELETE", self._path(self.identity), timeout=max(0.001, timeout))
            except APIError as err:
                if not is_not_found(err):
                    log.error(
                        "cannot delete the member lease",
                        extra={"lease": self.describe(), "error": str(err)},
                    )
                    return False
            except Exception as err:
                log.error(
                    "cannot delete the member lease",
                    extra={"lease": self.describe(), "error": str(err)},
                )
                return False
            self.claims = frozenset()
            return True


def _rv(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def seen_at_or_after(cached_rv: str, written_rv: str) -> bool:
    """The cached copy of our Lease is the one we wrote, or a later one. resourceVersions are
    opaque, but within one server they are etcd revisions, which a watch delivers in order; one
    that is not a number is compared for equality only."""
    if not cached_rv or not written_rv:
        return False
    try:
        return int(cached_rv) >= int(written_rv)
    except ValueError:
        return cached_rv == written_rv
