"""The acting-set gate: which Foos this replica may reconcile now.

No client-go twin (see ``controller.sharding``). The Foo controller asks it once per sync,
after reading the Foo from its cache (``Controller.sync_handler``): a Foo of a bucket this
replica does not act on is left alone (its key is forgotten, not retried), and a Foo of one it
does is held, for the whole sync, so that the sharder can wait for the bucket's syncs in
flight to end before it hands the bucket over. Without sharding the gate is ``EVERY_FOO``.

It also names the label each Deployment made for a Foo carries: the owner's bucket, on which
each replica's Deployment informer selects (``controller.sharding.scope``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from controller.sharding.assignment import BUCKET_LABEL, bucket_of

__all__ = ["EVERY_FOO", "ActingGate", "FooGate"]


class FooGate(Protocol):
    """What the controller asks: may this Foo be synced now (held while it is)? No client-go
    twin: upstream controllers own every object they watch."""

    def acting_on(self, foo: Mapping[str, Any]) -> AbstractContextManager[bool]: ...

    def deployment_labels(self, foo: Mapping[str, Any]) -> dict[str, str]:
        """The labels a Deployment made for this Foo must carry (none without sharding)."""
        ...


class _EveryFoo:
    """One replica does all the work: every Foo is its own."""

    @contextmanager
    def acting_on(self, foo: Mapping[str, Any]) -> Iterator[bool]:
        yield True

    def deployment_labels(self, foo: Mapping[str, Any]) -> dict[str, str]:
        return {}


EVERY_FOO: FooGate = _EveryFoo()


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
    def acting_on(self, foo: Mapping[str, Any]) -> Iterator[bool]:
        bucket = bucket_of(foo, self.bucket_count)
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

    def deployment_labels(self, foo: Mapping[str, Any]) -> dict[str, str]:
        """The owner's bucket: each replica's Deployment informer selects its buckets."""
        return {BUCKET_LABEL: str(bucket_of(foo, self.bucket_count))}

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
