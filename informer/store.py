"""The informer's cache: a thread-safe, indexed map from object key to object.

client-go twins: ``tools/cache/store.go`` (``Store``, ``MetaNamespaceKeyFunc``,
``SplitMetaNamespaceKey``), ``thread_safe_store.go`` (``ThreadSafeStore``, the index bookkeeping)
and ``index.go`` (``Indexer``, ``Indexers``, ``MetaNamespaceIndexFunc``, ``NamespaceIndex``).

Objects are plain dicts decoded from the API's JSON. The store hands out the very objects it
holds, without copying, exactly as client-go does: callers must never mutate them (copy first).

Two layers, as upstream:

- ``ThreadSafeStore`` knows nothing about keys: callers give it ``(key, obj)`` pairs. It keeps
  the items and, for every registered index function, an inverted index
  ``index name -> indexed value -> set of keys``.
- ``Indexer`` wraps it with a key function, so callers hand it objects and it works out keys.
  It is what the reflector's FIFO reports to and what listers read from.
"""

from __future__ import annotations

import builtins  # builtins.list: the class's own list() shadows it in later annotations
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexer",
    "IndexerError",
    "KeyFunc",
    "KeyFuncError",
    "ThreadSafeStore",
    "deletion_handling_meta_namespace_key_func",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]

KeyFunc = Callable[[Any], str]
"""Maps an object to its unique key (client-go ``KeyFunc``)."""

IndexFunc = Callable[[Any], list[str]]
"""Maps an object to the values it is indexed under (client-go ``IndexFunc``)."""

NAMESPACE_INDEX = "namespace"
"""Name of the index keyed by namespace (client-go ``cache.NamespaceIndex``)."""


class KeyFuncError(ValueError):
    """An object has no usable key (client-go ``KeyError``): not an object with metadata.name."""


class IndexerError(ValueError):
    """An index is unknown, or an indexer conflicts with one already registered (client-go
    returns these as plain errors from ``Index`` and ``AddIndexers``)."""


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """A deletion the watch missed (client-go ``cache.DeletedFinalStateUnknown``).

    When a relist no longer contains a key the cache knew, the object was deleted while we were not
    watching, so its final state is unknown: ``obj`` is the last state we saw and may be stale.
    Delete handlers receive this in place of the object and must unwrap it.
    """

    key: str  # the "namespace/name" key of the deleted object; always set
    obj: Any  # the last known object, or None when even that was not known


def meta_namespace_key_func(obj: Any) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones.

    Tombstones (``DeletedFinalStateUnknown``) yield their recorded key, so the same function serves
    both the cache and the delete path (client-go ``DeletionHandlingMetaNamespaceKeyFunc`` wrapping
    ``MetaNamespaceKeyFunc``). A plain string is taken to be a key already (``ExplicitKey``).
    """
    try:
        metadata = obj["metadata"]  # the hot path first: a plain object
        name = metadata["name"]
    except TypeError:
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        if isinstance(obj, str):
            return obj
        raise KeyFuncError(f"object has no metadata.name: {_describe(obj)}") from None
    except KeyError as exc:
        raise KeyFuncError(f"object has no metadata.name: {_describe(obj)}") from exc
    if not name:
        raise KeyFuncError(f"object has an empty metadata.name: {_describe(obj)}")
    namespace = metadata.get("namespace")
    return f"{namespace}/{name}" if namespace else name


# Upstream has two functions because Go's MetaNamespaceKeyFunc cannot see tombstones; ours can, and
# this name keeps code ported from client-go readable.
deletion_handling_meta_namespace_key_func = meta_namespace_key_func


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a key into ``(namespace, name)``; namespace is "" for cluster-scoped keys.

    Raises ValueError for a key with more than one "/" (client-go ``SplitMetaNamespaceKey``).
    """
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


def meta_namespace_index_func(obj: Any) -> list[str]:
    """Index by namespace (client-go ``MetaNamespaceIndexFunc``).

    Cluster-scoped objects are indexed under "".
    """
    try:
        return [obj["metadata"].get("namespace") or ""]
    except TypeError:
        if isinstance(obj, DeletedFinalStateUnknown):
            return meta_namespace_index_func(obj.obj)
        raise KeyFuncError(f"object has no metadata: {_describe(obj)}") from None
    except (KeyError, AttributeError) as exc:
        raise KeyFuncError(f"object has no metadata: {_describe(obj)}") from exc


def _describe(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 200 else text[:200] + "..."


Index = dict[str, tuple[str] | set[str]]
"""An index: indexed value -> the keys whose object yields it (client-go ``Index``, a map of
``sets.String``). A value of one key holds a 1-tuple (48 bytes) rather than a set (216): in the
Foo controller's deployment-name index every value names one Foo (docs/benchmarks.md, Memory
of a burst). Readers only iterate, so either serves them."""


class ThreadSafeStore:
    """Items by key plus inverted indices, all behind one lock (client-go ``threadSafeMap``).

    Every method takes the lock for its whole duration, so readers always see items and indices
    that agree with each other.
    """

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._lock = threading.RLock()  # guards every field below
        self._items: dict[str, Any] = {}  # key -> object, the objects exactly as given
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})  # index name -> function
        # index name -> indexed value -> keys whose object yields that value; an index has an entry
        # for every registered indexer, and empty key sets are removed, never left behind. One
        # key is held as a 1-tuple, more as a set (``_index_add``): most values name one object.
        self._indices: dict[str, Index] = {name: {} for name in self._indexers}

    # -- writes ----------------------------------------------------------------------------------
    # Every write runs the index functions before it changes anything: one that raises leaves
    # the store exactly as it was (client-go panics instead). A half-applied write would leave a
    # key in an index after its item is gone, and every later by_index on that value would fail.

    def add(self, key: str, obj: Any) -> None:
        """Insert or replace the object at ``key`` (Add and Update are the same upstream)."""
        self.swap(key, obj)

    def update(self, key: str, obj: Any) -> None:
        self.swap(key, obj)

    def swap(self, key: str, obj: Any) -> Any | None:
        """Store ``obj`` at ``key`` and return what was there (None if nothing).

        One lock, one lookup.
        """
        with self._lock:
            old = self._items.get(key)
            if self._indexers:
                self._update_indices(old, obj, key)
            self._items[key] = obj
            return old

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error."""
        with self._lock:
            old = self._items.get(key)
            if old is None:
                return
            if self._indexers:
                self._update_indices(old, None, key)
            del self._items[key]

    def replace(self, items: Mapping[str, Any], resource_version: str = "") -> None:
        """Swap the whole content for ``items`` and rebuild every index."""
        with self._lock:
            self._indices = self._build_indices(self._indexers, items)
            self._items = dict(items)

    # -- reads -----------------------------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def list(self) -> list[Any]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    # -- indices ---------------------------------------------------------------------------------

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Objects that share any indexed value with ``obj`` under ``index_name``."""
        with self._lock:
            index_func = self._index_func(index_name)
            index = self._indices[index_name]
            keys: set[str] = set()
            for value in index_func(obj):
                keys.update(index.get(value, ()))
            return [self._items[k] for k in keys]

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """Objects whose ``index_name`` function yields ``indexed_value``."""
        with self._lock:
            self._index_func(index_name)
            keys = self._indices[index_name].get(indexed_value, ())
            return [self._items[k] for k in keys]

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """Keys (not objects) whose ``index_name`` function yields ``indexed_value``."""
        with self._lock:
            self._index_func(index_name)
            return list(self._indices[index_name].get(indexed_value, ()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value currently present in ``index_name``.

        [] for an unknown index, as upstream.
        """
        with self._lock:
            return list(self._indices.get(index_name, {}))

    def get_indexers(self) -> dict[str, IndexFunc]:
        with self._lock:
            return dict(self._indexers)

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        """Register more index functions and index the existing items under them.

        A name that is already registered is an error (client-go ``AddIndexers``): silently
        replacing an index function would leave the old one's entries behind.
        """
        with self._lock:
            clash = set(new_indexers) & set(self._indexers)
            if clash:
                raise IndexerError(f"indexer conflict: {sorted(clash)}")
            self._indices.update(self._build_indices(new_indexers, self._items))
            self._indexers.update(new_indexers)

    # -- internals -------------------------------------------------------------------------------

    def _index_func(self, index_name: str) -> IndexFunc:
        try:
            return self._indexers[index_name]
        except KeyError:
            raise IndexerError(f"index with name {index_name!r} does not exist") from None

    @staticmethod
    def _build_indices(
        indexers: Mapping[str, IndexFunc], items: Mapping[str, Any]
    ) -> dict[str, Index]:
        """Fresh indices of ``items`` under ``indexers``, built aside so a raising function
        leaves the live ones untouched."""
        indices: dict[str, Index] = {}
        for name, func in indexers.items():
            index: Index = {}
            for key, obj in items.items():
                for value in func(obj):
                    _index_add(index, value, key)
            indices[name] = index
        return indices

    def _update_indices(self, old: Any | None, new: Any | None, key: str) -> None:
        """Move ``key`` from the values ``old`` was indexed under to those of ``new``.

        Every index function runs before any index changes (see the writes above). The common
        case, an update that leaves an indexed value as it was, touches nothing (client-go
        ``updateSingleIndex``'s fast path).
        """
        changes = []
        for name, func in self._indexers.items():
            old_values = func(old) if old is not None else ()
            new_values = func(new) if new is not None else ()
            if old_values != new_values:
                changes.append((self._indices[name], old_values, new_values))
        for index, old_values, new_values in changes:
            for value in old_values:
                _index_discard(index, value, key)
            for value in new_values:
                _index_add(index, value, key)


def _index_add(index: Index, value: str, key: str) -> None:
    keys = index.get(value)
    if keys is None:
        index[value] = (key,)
    elif isinstance(keys, tuple):
        if keys[0] != key:
            index[value] = {keys[0], key}
    else:
        keys.add(key)


def _index_discard(index: Index, value: str, key: str) -> None:
    """Take ``key`` out; a value left with no key is removed (list_index_func_values must not
    report it)."""
    keys = index.get(value)
    if keys is None:
        return
    if isinstance(keys, tuple):
        if keys[0] == key:
            del index[value]
        return
    keys.discard(key)
    if not keys:
        del index[value]


class Indexer:
    """A ``ThreadSafeStore`` addressed by objects instead of keys.

    client-go ``cache`` / ``NewIndexer``.

    This is both client-go's ``Store`` and its ``Indexer``: ``add``/``update``/``delete`` take
    objects, ``get_by_key`` and ``list_keys`` let a FIFO treat it as its ``knownObjects``, and the
    index methods serve listers. By default it keys by ``namespace/name`` and carries the
    namespace index, which is what every informer here wants.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> None:
        self.key_func = key_func  # object -> key; must be deterministic
        self._store = ThreadSafeStore(indexers)  # the items and indices

    # -- Store -----------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        self._store.add(self.key_func(obj), obj)

    def update(self, obj: Any) -> None:
        self._store.update(self.key_func(obj), obj)

    def add_or_update(self, obj: Any) -> Any | None:
        """Store the object and return the one it replaced, or None if it is new.

        The informer's hot path: ``get`` then ``update`` would compute the key and take the lock
        twice.
        """
        return self._store.swap(self.key_func(obj), obj)

    def delete(self, obj: Any) -> None:
        """Remove the object's key; a tombstone removes its recorded key."""
        self._store.delete(self.key_func(obj))

    def get(self, obj: Any) -> Any | None:
        """The stored object with the same key as ``obj``, or None."""
        return self._store.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Any | None:
        """The stored object at ``key``, or None (upstream returns ``exists=false``)."""
        return self._store.get(key)

    def list(self) -> list[Any]:
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        return self._store.list_keys()

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """Make the content exactly ``objects`` (client-go ``Store.Replace``)."""
        key_func = self.key_func
        self._store.replace({key_func(o): o for o in objects}, resource_version)

    def resync(self) -> None:
        """Nothing to do: a plain store has no queue to refill (client-go ``cache.Resync``)."""

    def __len__(self) -> int:
        return len(self._store)

    # -- Indexer ---------------------------------------------------------------------------------

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        return self._store.index(index_name, obj)

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        return self._store.by_index(index_name, indexed_value)

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        return self._store.index_keys(index_name, indexed_value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        return self._store.list_index_func_values(index_name)

    def get_indexers(self) -> dict[str, IndexFunc]:
        return self._store.get_indexers()

    def add_indexers(self, new_indexers: Mapping[str, IndexFunc]) -> None:
        self._store.add_indexers(new_indexers)
