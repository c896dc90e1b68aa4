"""The acting-set gate: which objects this replica may reconcile now.

No client-go twin (see ``runtime.sharding``). A controller asks it once per sync, after
reading its object from the cache (the Foo controller's ``sync_handler``, a Builder-made
controller before its reconciler): an object of a bucket this replica does not act on is left
alone (its key is forgotten, not retried), and one of a bucket it does is held, for the whole
sync, so that the sharder can wait for the bucket's syncs in flight to end before it hands the
bucket over. Without sharding the gate is ``EVERY_OBJECT``.

It also names the label each object made for an owner carries (a Foo's Deployment): the
owner's bucket, on which each replica's informers of owned kinds select
(``runtime.sharding.scope``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from runtime.sharding.assignment import BUCKET_LABEL, bucket_of

__all__ = ["EVERY_OBJECT", "ActingGate", "Gate"]


class Gate(Protocol):
    """What the controller asks: may this object be synced now (held while it is)? No
    client-go twin: upstream controllers own every object they watch."""

    def acting_on(self, obj: Mapping[str, Any]) -> AbstractContextManager[bool]: ...

    def owned_labels(self, owner: Mapping[str, Any]) -> dict[str, str]:
        """The labels an object made for this owner must carry (none without sharding)."""
        ...


class _EveryObject:
    """One replica does all the work: every object is its own."""

    @contextmanager
    def acting_on(self, obj: Mapping[str, Any]) -> Iterator[bool]:
        yield True

    def owned_labels(self, owner: Mapping[str, Any]) -> dict[str, str]:
        return {}


EVERY_OBJECT: Gate = _EveryObject()


class ActingGate:
    """The buckets acted on, and the syncs in flight per bucket (thread-safe; no client-go
    twin, see the module docstring)."""

    def __init__(self, bucket_count: int) -> None:
        self.bucket_count = bucket_count
        self._cond = threading.Condition()
        self._acting: frozenset[int] = frozenset()
        self._in_flight: Counter[int] = Counter()

    def acting(self) -> frozenset[int]:
        with self._cond:
            return self._acting

    @contextmanager
    def acting_on(self, obj: Mapping[str, Any]) -> Iterator[bool]:
        bucket = bucket_of(obj, self.bucket_count)
        with self._cond:
            mine = bucket in self._acting
            if mine:
                self._in_flight[bucket] += 1
        try:
            yield mine
        finally:
            if mine:
                with self._cond:
                    self._in_flight[bucket] -= 1
                    if self._in_flight[bucket] <= 0:
                        del self._in_flight[bucket]
                    self._cond.notify_all()

    def owned_labels(self, owner: Mapping[str, Any]) -> dict[str, str]:
        """The owner's bucket: each replica's informers of owned kinds select its buckets."""
        return {BUCKET_LABEL: str(bucket_of(owner, self.bucket_count))}

    def start(self, buckets: frozenset[int]) -> None:
        """Act on these buckets too (their claim must be written already)."""
        with self._cond:
            self._acting = self._acting | buckets

    def stop(self, buckets: frozenset[int]) -> None:
        """Start no sync of these buckets from now on (those in flight go on)."""
        with self._cond:
            self._acting = self._acting - buckets

    def busy(self, buckets: frozenset[int]) -> frozenset[int]:
        """Those of ``buckets`` with a sync in flight."""
        with self._cond:
            return frozenset(b for b in buckets if self._in_flight.get(b))

    def wait_idle(self, buckets: frozenset[int], timeout: float) -> bool:
        """Wait up to ``timeout`` for the syncs of ``buckets`` to end; whether they have."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not any(self._in_flight.get(b) for b in buckets), timeout
            )
