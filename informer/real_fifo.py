"""RealFIFO: every notification from the reflector, delivered in the order it arrived.

client-go twin: ``tools/cache/the_real_fifo.go``, the informers' default queue since client-go 1.33
(GA in 1.36), and the default here.

Unlike ``DeltaFIFO`` nothing is merged per key: an object updated three times is popped three
times, each as a one-delta list, interleaved with other objects' events exactly as the watch
delivered them. Consumers therefore see the true order of events across objects, and a popped
entry never grows while it waits.

What it shares with ``DeltaFIFO``:

- ``replace`` queues, before the listed objects, a Deleted tombstone
  (``DeletedFinalStateUnknown(key, last_known)``) for every key that is queued or known to the
  cache but absent from the new list, unless the last queued entry for that key is already a
  deletion; then Replaced for every listed object;
- ``resync`` queues Sync only for known keys with nothing queued;
- ``has_synced`` turns true when the first ``replace``'s entries have all been popped, or at once
  if a plain add/update/delete came first.

``pop_batch`` hands the consumer every entry waiting (up to a bound) in one call, as client-go's
batched RealFIFO processing does since 1.34: the order is the same, but locks, wake-ups and
notifications are paid once per batch instead of once per event, which is most of the cost of an
event in Python.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from informer.fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopBatchProcessFunc,
    PopProcessFunc,
    Queue,
    TransformFunc,
)
from informer.store import DeletedFinalStateUnknown, KeyFunc, meta_namespace_key_func

__all__ = ["DEFAULT_MAX_BATCH", "RealFIFO"]

DEFAULT_MAX_BATCH = 1000  # entries per pop_batch; bounds how long the reflector waits for the lock


class RealFIFO(Queue):
    """An in-order queue of deltas with tombstones on relist (client-go ``RealFIFO``)."""

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        *,
        transform: TransformFunc | None = None,
        report_length: Callable[[int], None] | None = None,
    ) -> None:
        if known_objects is None:
            # Upstream panics too: without the cache, replace() cannot find missed deletions.
            raise ValueError("RealFIFO needs known_objects (the informer's indexer)")
        self._init_lifecycle()  # _lock, _not_empty, _populated, _initial_population_count, _closed
        self._items: deque[Delta] = deque()  # every pending delta, oldest first
        self._key_func = key_func  # object (or tombstone) -> key
        self._known_objects = known_objects  # the informer's indexer: what the consumer already has
        self._transform = transform  # applied to each new object before it is queued
        self._report_length = report_length  # informer_queued_items hook, called with len(self)

    # -- writes ------------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._append(DeltaType.ADDED, obj)

    def update(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._append(DeltaType.UPDATED, obj)

    def delete(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._append(DeltaType.DELETED, obj)

    def replace(
        self, objects: Iterable[Any], resource_version: str = "", *, transformed: bool = False
    ) -> None:
        key_func = self._key_func
        # New states are transformed as they are taken, one by one: a list decoded lazily
        # (jsonutil.LazyItems) then never holds every object untransformed at once.
        transform = None if transformed else self._transform
        objects = [transform(o) for o in objects] if transform is not None else list(objects)
        with self._lock:
            listed = {key_func(o) for o in objects}
            # The last queued entry of each key, in first-queued order.
            last_queued: dict[str, Delta] = {}
            for delta in self._items:
                last_queued[key_func(delta.object)] = delta
            for key, last in last_queued.items():
                if key in listed or last.type is DeltaType.DELETED:
                    continue  # still there, or its deletion is already queued
                self._append(DeltaType.DELETED, DeletedFinalStateUnknown(key, last.object), False)
            for key in self._known_objects.list_keys():
                if key in listed or key in last_queued:
                    continue
                last_obj = self._known_objects.get_by_key(key)
                self._append(DeltaType.DELETED, DeletedFinalStateUnknown(key, last_obj), False)
            # Keys are known good (computed above): append without re-checking each one.
            append, replaced = self._items.append, DeltaType.REPLACED
            for obj in objects:
                append(Delta(replaced, obj))
            self._not_empty.notify()
            self._reported()
            if not self._populated:
                self._populated = True
                self._initial_population_count = len(self._items)

    def transformer(self) -> TransformFunc | None:
        return self._transform

    def resync(self) -> None:
        with self._lock:
            queued = {self._key_func(d.object) for d in self._items}
            for key in self._known_objects.list_keys():
                if key in queued:
                    continue  # a newer event is pending; replaying the cache would go backwards
                obj = self._known_objects.get_by_key(key)
                if obj is not None:
                    self._append(DeltaType.SYNC, obj, False)
            self._not_empty.notify()
            self._reported()

    # -- reads -------------------------------------------------------------------------------------

    def pop(self, process: PopProcessFunc) -> list[Delta]:
        with self._lock:
            while not self._items:
                if self._closed:
                    raise FIFOClosedError("RealFIFO: pop on a closed queue")
                self._not_empty.wait()
            is_in_initial_list = not self._has_synced_locked()
            deltas = [self._items.popleft()]
            if self._initial_population_count > 0:
                self._initial_population_count -= 1
            self._reported()
            process(deltas, is_in_initial_list)
            return deltas

    def pop_batch(
        self, process: PopBatchProcessFunc, max_items: int = DEFAULT_MAX_BATCH
    ) -> list[Delta]:
        """Like ``pop``, but takes every waiting entry (at most ``max_items``) at once.

        ``process(deltas, initial_count)`` learns how many leading deltas belong to the initial
        list, which a one-entry ``pop`` would have flagged ``is_in_initial_list``.
        """
        with self._lock:
            items = self._items
            while not items:
                if self._closed:
                    raise FIFOClosedError("RealFIFO: pop on a closed queue")
                self._not_empty.wait()
            count = min(len(items), max_items)
            if count == len(items):
                deltas = list(items)
                items.clear()
            else:
                popleft = items.popleft
                deltas = [popleft() for _ in range(count)]
            initial = 0
            if not self._has_synced_locked():
                initial = min(count, self._initial_population_count)
                self._initial_population_count -= initial
            self._reported()
            process(deltas, initial)
            return deltas

    def list_keys(self) -> list[str]:
        with self._lock:
            return list(dict.fromkeys(self._key_func(d.object) for d in self._items))

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    # -- internals ---------------------------------------------------------------------------------

    def _append(self, delta_type: DeltaType, obj: Any, notify: bool = True) -> None:
        """Queue one delta; lock held. New states are transformed, cache replays are not.

        Bulk callers pass ``notify=False`` and wake the consumer once at the end.
        """
        self._key_func(obj)  # reject an unkeyable object here, not later in the consumer
        if (
            self._transform is not None
            and delta_type is not DeltaType.SYNC
            and not isinstance(obj, DeletedFinalStateUnknown)
        ):
            obj = self._transform(obj)
        self._items.append(Delta(delta_type, obj))
        if notify:
            self._not_empty.notify()
            self._reported()

    def _reported(self) -> None:
        if self._report_length is not None:
            self._report_length(len(self._items))
