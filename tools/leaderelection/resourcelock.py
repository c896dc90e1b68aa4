"""The lock leader election holds: a coordination.k8s.io/v1 Lease.

client-go twin: ``tools/leaderelection/resourcelock`` (``LeaseLock``, ``LeaderElectionRecord``).
Kept apart from the election loop, as upstream, because the loop's rules (expiry by the local
clock, renew deadline, release) do not depend on which object carries the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from client.objects import Object
from client.rest import Interface, resource_path

__all__ = ["REQUEST_TIMEOUT", "LeaderElectionRecord", "LeaseLock", "micro_time"]

REQUEST_TIMEOUT = 10.0  # seconds a Lease request may take when the caller gives no bound


def micro_time(ts: float) -> str:
    """metav1.MicroTime: RFC 3339 with exactly six fractional digits (the server insists)."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class LeaderElectionRecord:
    """The part of a Lease spec leader election reads and writes (client-go
    ``resourcelock.LeaderElectionRecord``); times are MicroTime strings, durations seconds."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity or None,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return {k: v for k, v in spec.items() if v is not None}


class LeaseLock:
    """Reads and writes one Lease (client-go ``resourcelock.LeaseLock``; Leases only, no
    ConfigMap or Endpoints locks)."""

    def __init__(self, rest: Interface, namespace: str, name: str, identity: str) -> None:
        self.rest = rest
        self.namespace = namespace
        self.name = name
        self.identity = identity  # who we are: "<hostname>_<uuid>"
        self._lease: Object | None = None  # the Lease as last read or written (for its RV)

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self, timeout: float = REQUEST_TIMEOUT) -> LeaderElectionRecord:
        """The current record; raises APIError (404 when there is no Lease yet)."""
        self._lease = self.rest.request(
            "GET",
            resource_path("coordination.k8s.io", "v1", "leases", self.namespace, self.name),
            timeout=timeout,
        )
        return LeaderElectionRecord.from_spec(self._lease.get("spec") or {})

    def create(self, record: LeaderElectionRecord, timeout: float = REQUEST_TIMEOUT) -> None:
        self._lease = self.rest.request(
            "POST",
            resource_path("coordination.k8s.io", "v1", "leases", self.namespace),
            params={"fieldManager": "sample-controller"},
            body={
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record.to_spec(),
            },
            timeout=timeout,
        )

    def update(self, record: LeaderElectionRecord, timeout: float = REQUEST_TIMEOUT) -> None:
        """PUT guarded by the resourceVersion last read: 409 when someone wrote in between."""
        if self._lease is None:
            raise RuntimeError("update before get")
        body = {**self._lease, "spec": record.to_spec()}
        self._lease = self.rest.request(
            "PUT",
            resource_path("coordination.k8s.io", "v1", "leases", self.namespace, self.name),
            params={"fieldManager": "sample-controller"},
            body=body,
            timeout=timeout,
        )
