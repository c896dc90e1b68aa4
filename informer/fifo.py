"""What the reflector's queues have in common: deltas and the ``Queue`` interface.

client-go twins: ``tools/cache/fifo.go`` (``Queue``, ``PopProcessFunc``, ``ErrFIFOClosed``,
``ErrRequeue``) and the delta types of ``delta_fifo.go`` (``Delta``, ``DeltaType``).

The reflector writes into a queue (``add``/``update``/``delete``/``replace``/``resync``); the
informer's single processing thread ``pop``s from it. Two implementations exist, both passing the
same contract tests:

- ``RealFIFO`` (informer/real_fifo.py) keeps every notification in arrival order. It is client-go's
  default since 1.33 and the default here.
- ``DeltaFIFO`` (informer/delta_fifo.py) keeps one entry per key with the list of that key's
  pending deltas, in the order keys were first queued.
"""

from __future__ import annotations

import abc
import enum
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

__all__ = [
    "Delta",
    "DeltaType",
    "FIFOClosedError",
    "KeyListerGetter",
    "PopBatchProcessFunc",
    "PopProcessFunc",
    "Queue",
    "RequeueError",
    "TransformFunc",
]


class DeltaType(enum.StrEnum):
    """What happened to an object (client-go ``DeltaType``)."""

    ADDED = "Added"  # a watch ADDED event
    UPDATED = "Updated"  # a watch MODIFIED event
    DELETED = "Deleted"  # a watch DELETED event, or a tombstone from replace()
    REPLACED = "Replaced"  # an object of a (re)list: it may or may not be new to the cache
    SYNC = "Sync"  # a periodic resync replaying an object the cache already has


class Delta(NamedTuple):
    """One change: its type and the object after it (client-go ``Delta``), or a tombstone.

    A NamedTuple rather than a frozen dataclass: one is built per event on the hot path, and a
    tuple is several times cheaper to make.
    """

    type: DeltaType
    object: Any


PopBatchProcessFunc = Callable[[list[Delta], int], None]
"""Called by ``pop_batch`` with the popped deltas, in order, and how many of them (from the start)
belong to the initial list. Runs under the queue's lock, like ``PopProcessFunc``."""

PopProcessFunc = Callable[[list[Delta], bool], None]
"""Called by ``pop`` with the popped deltas and ``is_in_initial_list``.

client-go ``PopProcessFunc``.

It runs while the queue's lock is held, so it must be quick (the informer only updates its
indexer and appends to listener buffers)."""

TransformFunc = Callable[[Any], Any]
"""Rewrites an object before it enters the queue, e.g. to drop ``metadata.managedFields``."""


class FIFOClosedError(Exception):
    """``pop`` on a closed queue with nothing left in it (client-go ``ErrFIFOClosed``)."""


class RequeueError(Exception):
    """Raised by a process function to put the popped item back (client-go ``ErrRequeue``).

    Only ``DeltaFIFO`` honours it: the item goes back in the queue (unless the key was queued again
    meanwhile) and ``pop`` then raises the wrapped error, if there is one.
    """

    def __init__(self, err: BaseException | None = None) -> None:
        super().__init__(str(err) if err else "requeue")
        self.err = err  # the error to surface after requeueing, or None


class KeyListerGetter(Protocol):
    """The read side of the informer's indexer, which the queues treat as known objects
    (client-go ``KeyListerGetter``); a ``Protocol``, so any indexer-like object fits."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


class Queue(abc.ABC):
    """The reflector's store and the informer's source.

    client-go ``Queue`` + ``ReflectorStore``.
    """

    @abc.abstractmethod
    def add(self, obj: Any) -> None:
        """Queue an Added delta."""

    @abc.abstractmethod
    def update(self, obj: Any) -> None:
        """Queue an Updated delta."""

    @abc.abstractmethod
    def delete(self, obj: Any) -> None:
        """Queue a Deleted delta."""

    @abc.abstractmethod
    def replace(
        self, objects: Iterable[Any], resource_version: str, *, transformed: bool = False
    ) -> None:
        """Queue a full list: Replaced for every object, a tombstone for every known key missing.

        ``transformed``: the objects went through ``transformer()`` already (WatchList's
        temporary store applies it as they stream), so it is not applied twice.
        """

    @abc.abstractmethod
    def transformer(self) -> TransformFunc | None:
        """The transform applied to new states (client-go ``TransformingStore.Transformer``)."""

    @abc.abstractmethod
    def resync(self) -> None:
        """Queue Sync for every known object that has nothing pending."""

    @abc.abstractmethod
    def pop(self, process: PopProcessFunc) -> list[Delta]:
        """Block for the next item, hand it to ``process`` under the lock, and return it.

        Raises FIFOClosedError once the queue is closed and empty.
        """

    # -- lifecycle shared by both FIFOs ---------------------------------------------------------

    def _init_lifecycle(self) -> None:
        """Set up the lock and the sync/close state; both FIFOs call this first in __init__."""
        self._lock = threading.Lock()  # guards every field of the FIFO
        # signalled when work is queued or on close
        self._not_empty = threading.Condition(self._lock)
        self._populated = False  # a replace() or add/update/delete has happened at least once
        self._initial_population_count = 0  # entries of the first replace() not yet popped
        self._closed = False  # close() was called; pop drains, then raises FIFOClosedError

    def has_synced(self) -> bool:
        """True once the first replace() batch has been popped.

        Also true when a plain add/update/delete came first.
        """
        with self._lock:
            return self._has_synced_locked()

    def _has_synced_locked(self) -> bool:
        return self._populated and self._initial_population_count == 0

    def close(self) -> None:
        """Wake every ``pop`` waiter; once empty, ``pop`` raises FIFOClosedError."""
        with self._lock:
            self._closed = True
            self._not_empty.notify_all()

    def is_closed(self) -> bool:
        with self._lock:
            return self._closed

    @abc.abstractmethod
    def list_keys(self) -> list[str]:
        """Keys with something queued, in queue order, each once."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """Entries waiting to be popped (the ``informer_queued_items`` gauge)."""
