"""DeltaFIFO: a queue of keys, each carrying the list of changes made to it since it was queued.

client-go twin: ``tools/cache/delta_fifo.go``. Kept for study and comparison; informers default to
``RealFIFO`` (informer/real_fifo.py), as client-go does since 1.33.

How it differs from a plain FIFO: a key is queued once however many times it changes, and when it
is popped the consumer receives all its deltas at once (``[Added, Updated, Updated]``), oldest
first. So the consumer sees every event, but a busy object does not overtake or flood others.

The points that matter for correctness:

- ``replace`` (a relist) queues Replaced for each listed object, then a Deleted with a
  ``DeletedFinalStateUnknown(key, last_known)`` tombstone for every key the cache or the queue
  knows that the list lacks: deletions missed while the watch was down are not lost.
- ``resync`` queues Sync only for keys with nothing pending: replaying the cache's (older) copy
  behind a pending newer delta would move the consumer backwards.
- Two consecutive Deleted deltas of a key collapse into one, keeping the more informative (a real
  object beats a tombstone): a watch delete and a relist can both report the same deletion.
- ``delete`` of a key that neither the queue nor the cache knows is dropped (already reported).
- ``has_synced`` turns true once every item of the first ``replace`` has been popped.
"""

from __future__ import annotations

import builtins  # builtins.list: the class's own list() shadows it in later annotations
import logging
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from informer.fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopProcessFunc,
    Queue,
    RequeueError,
    TransformFunc,
)
from informer.store import DeletedFinalStateUnknown, KeyFunc, meta_namespace_key_func

__all__ = ["DeltaFIFO"]

log = logging.getLogger(__name__)


class DeltaFIFO(Queue):
    """Per-key delta lists served in first-queued order (client-go ``DeltaFIFO``)."""

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        *,
        emit_delta_type_replaced: bool = True,
        transform: TransformFunc | None = None,
        report_length: Callable[[int], None] | None = None,
    ) -> None:
        self._init_lifecycle()  # _lock, _not_empty, _populated, _initial_population_count, _closed
        self._items: dict[str, list[Delta]] = {}  # key -> its pending deltas, never an empty list
        # keys in pop order; exactly the keys of _items, once each
        self._queue: deque[str] = deque()
        self._key_func = key_func  # object (or tombstone) -> key
        self._known_objects = known_objects  # the informer's indexer: what the consumer already has
        # informers always want Replaced for listed objects; Sync is the pre-1.19 behaviour
        self._replace_type = DeltaType.REPLACED if emit_delta_type_replaced else DeltaType.SYNC
        self._transform = transform  # applied to each new object before it is queued
        self._report_length = report_length  # informer_queued_items hook, called with len(self)

    # -- writes ------------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._queue_action(DeltaType.ADDED, obj)

    def update(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._queue_action(DeltaType.UPDATED, obj)

    def delete(self, obj: Any) -> None:
        key = self._key_func(obj)
        with self._lock:
            self._populated = True
            if key not in self._items:
                known = self._known_objects
                if known is None or known.get_by_key(key) is None:
                    # Presumably a relist already reported this deletion; don't report it twice.
                    return
            self._queue_action(DeltaType.DELETED, obj)

    def replace(
        self, objects: Iterable[Any], resource_version: str = "", *, transformed: bool = False
    ) -> None:
        with self._lock:
            listed: set[str] = set()
            for obj in objects:
                key = self._key_func(obj)
                listed.add(key)
                self._queue_action(self._replace_type, obj, key, transformed)
            queued_deletions = 0
            # Keys still queued but absent from the list: their deletion was missed.
            for key, deltas in list(self._items.items()):
                if key in listed:
                    continue
                last = deltas[-1].object
                if isinstance(last, DeletedFinalStateUnknown):
                    last = last.obj
                queued_deletions += 1
                self._queue_action(DeltaType.DELETED, DeletedFinalStateUnknown(key, last), key)
            # Keys the consumer has but the list lacks and nothing in the queue mentions.
            if self._known_objects is not None:
                for key in self._known_objects.list_keys():
                    if key in listed or key in self._items:
                        continue
                    last = self._known_objects.get_by_key(key)
                    queued_deletions += 1
                    self._queue_action(DeltaType.DELETED, DeletedFinalStateUnknown(key, last), key)
            if not self._populated:
                self._populated = True
                self._initial_population_count = len(listed) + queued_deletions
            self._reported()

    def transformer(self) -> TransformFunc | None:
        return self._transform

    def resync(self) -> None:
        with self._lock:
            if self._known_objects is None:
                return
            for key in self._known_objects.list_keys():
                if self._items.get(key):
                    continue  # something newer is pending; replaying the cache would go backwards
                obj = self._known_objects.get_by_key(key)
                if obj is None:
                    continue  # deleted since list_keys(); nothing to replay
                self._queue_action(DeltaType.SYNC, obj, key)
            self._reported()

    # -- reads -------------------------------------------------------------------------------------

    def pop(self, process: PopProcessFunc) -> list[Delta]:
        with self._lock:
            while True:
                while not self._queue:
                    if self._closed:
                        raise FIFOClosedError("DeltaFIFO: pop on a closed queue")
                    self._not_empty.wait()
                is_in_initial_list = not self._has_synced_locked()
                key = self._queue.popleft()
                if self._initial_population_count > 0:
                    self._initial_population_count -= 1
                deltas = self._items.pop(key, None)
                if deltas is None:  # cannot happen: _queue and _items share their keys
                    log.error("DeltaFIFO: key %r queued without deltas; skipping", key)
                    continue
                self._reported()
                try:
                    process(deltas, is_in_initial_list)
                except RequeueError as requeue:
                    if key not in self._items:
                        self._queue.append(key)
                        self._items[key] = deltas
                        self._not_empty.notify()
                        self._reported()
                    if requeue.err is not None:
                        raise requeue.err from None
                return deltas

    def get_by_key(self, key: str) -> list[Delta] | None:
        """A copy of the deltas pending for ``key``, or None."""
        with self._lock:
            deltas = self._items.get(key)
            return list(deltas) if deltas is not None else None

    def list(self) -> list[Any]:
        """The newest object of every queued key."""
        with self._lock:
            return [d[-1].object for d in self._items.values()]

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._queue)

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)

    # -- internals ---------------------------------------------------------------------------------

    def _queue_action(
        self, delta_type: DeltaType, obj: Any, key: str | None = None, transformed: bool = False
    ) -> None:
        """Append a delta for the object's key, merging a repeated deletion; lock held."""
        if key is None:
            key = self._key_func(obj)
        # Transform new state only: tombstones and Sync replays come from the (transformed) cache,
        # and what WatchList's temporary store transformed is not transformed again, so the
        # transform never has to be idempotent.
        if (
            not transformed
            and self._transform is not None
            and delta_type is not DeltaType.SYNC
            and not isinstance(obj, DeletedFinalStateUnknown)
        ):
            obj = self._transform(obj)
        delta = Delta(delta_type, obj)
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = [delta]
            self._queue.append(key)
            self._not_empty.notify()
            self._reported()
            return
        last = deltas[-1]
        if delta_type is DeltaType.DELETED and last.type is DeltaType.DELETED:
            # Two reports of one deletion: keep the one that carries a real object.
            if isinstance(last.object, DeletedFinalStateUnknown):
                deltas[-1] = delta
            return
        deltas.append(delta)

    def _reported(self) -> None:
        if self._report_length is not None:
            self._report_length(len(self._queue))
