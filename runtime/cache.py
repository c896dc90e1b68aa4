"""The informer cache a Builder-made controller and its Client read from.

controller-runtime twin: ``pkg/cache`` (``informerCache``, ``cache.Informers``,
``cache_reader.go``, ``IndexField``). One informer per resource, made the first time a
controller asks for it (the Builder's ``for_``, ``owns`` and ``watches``, or a Client read of
a kind nothing watches yet); informers made before the manager starts are started with it, one
made later is started at once and waited for, so that no read is answered from an empty cache.
Reads are ``get`` (one object, or the API's 404 ``APIError``) and ``list`` (by namespace, label
selector and indexed fields), and hand out deep copies: a reconciler may change what it read.

It is a runnable of the manager (``Manager.get_cache``): ``start`` gives it the stop event its
late informers run until (``/readyz`` waits for the controllers' sources, not for the cache).
Sharded (``--sharding``), the informers the Builder asks for are scoped to this
replica: its own kind by ``shardSelector`` (``scope="primary"``), the kinds it owns by bucket
label (``scope="owned"``); any other read sees the whole kind.

Deliberate differences:

- a read made before the cache has started waits for the start (up to the sync timeout)
  instead of failing with ``ErrCacheNotStarted``: the runnables start on threads of their
  own, in no guaranteed order;
- it is made in ``setup``, before the manager starts (``Manager.get_cache`` refuses later:
  this manager starts no runnable added after its start), where upstream makes it in
  ``manager.New``;
- a field index is named as upstream (``field:<name>``, values ``<namespace>/<value>`` and
  ``__all_namespaces/<value>``) but must be added before its informer starts (client-go
  allows it later; this project's informer does not);
- the 404 names the resource (``foos.samplecontroller.k8s.io "x" not found``), as the API
  server's does; upstream's cache names the kind there.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from client.errors import APIError
from client.labels import parse_selector, selector_from_set
from informer.shared_informer import SharedIndexInformer, wait_for_cache_sync
from informer.store import NAMESPACE_INDEX
from runtime.context import Context
from runtime.shutdown import ShutdownBudget

if TYPE_CHECKING:
    from runtime.manager import Manager

__all__ = [
    "ALL_NAMESPACES",
    "DEFAULT_SYNC_TIMEOUT",
    "GVR",
    "Cache",
    "Scope",
    "field_index_name",
    "not_found",
]

GVR = tuple[str, str, str]

Scope = Literal["primary", "owned"] | None
"""How an informer is narrowed when sharded: the reconciled kind, a kind it owns, or not."""

# seconds a read waits for the cache to start and its informer to list (upstream waits as long
# as the read's ctx allows; a controller's CacheSyncTimeout defaults to 2 minutes)
DEFAULT_SYNC_TIMEOUT = 120.0

# controller-runtime's cache.allNamespacesNamespace: the namespace part of a field index value
# that finds objects in every namespace
ALL_NAMESPACES = "__all_namespaces"


def field_index_name(field: str) -> str:
    """The indexer's name of a field index (``FieldIndexName``)."""
    return f"field:{field}"


def not_found(gvr: GVR, name: str) -> APIError:
    """The 404 the API server answers for a missing object (``apierrors.NewNotFound``)."""
    group, _, resource = gvr
    qualified = f"{resource}.{group}" if group else resource
    message = f'{qualified} "{name}" not found'
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "NotFound",
        "details": {"name": name, "group": group, "kind": resource},
        "code": 404,
    }
    return APIError(404, "NotFound", message, status)  # type: ignore[arg-type]


def _timeout(gvr: GVR) -> APIError:
    """What a read gets when its informer does not sync in time (``apierrors.NewTimeoutError``)."""
    message = f"failed waiting for {gvr[2]} informer to sync"
    return APIError(504, "Timeout", message)


class Cache:
    """Informers made on first use, and reads from them (controller-runtime ``cache.Cache``);
    thread-safe."""

    def __init__(self, manager: Manager, sync_timeout: float = DEFAULT_SYNC_TIMEOUT) -> None:
        self._manager = manager
        # one factory: the process's cache settings (namespace, resync, transforms, metrics)
        self._factory = manager.new_informer_factory("cache")
        self.sync_timeout = sync_timeout
        # guards the two fields below
        self._lock = threading.Lock()
        self._informers: dict[GVR, SharedIndexInformer] = {}
        # the stop the informers made after the start run until; set by start()
        self._stop: threading.Event | None = None
        self._started = threading.Event()

    # -- informers ------------------------------------------------------------------------------

    def informer_for(self, gvr: GVR, scope: Scope = None) -> SharedIndexInformer:
        """The informer of ``gvr``, made on first use (``scope`` matters only then), and
        started at once when the cache is running already; not waited for."""
        with self._lock:
            informer = self._informers.get(gvr)
            if informer is None:
                if scope is None:
                    informer = self._factory.for_resource(*gvr)
                else:
                    informer = self._manager.informer(
                        self._factory, gvr, primary=scope == "primary"
                    )
                self._informers[gvr] = informer
            stop = self._stop
        if stop is not None:
            # starts only what is not running yet
            self._factory.start(stop)
        return informer

    def kinds(self) -> list[GVR]:
        """The kinds it has made informers for so far."""
        with self._lock:
            return sorted(self._informers)

    def get_informer(self, ctx: Context, gvr: GVR) -> SharedIndexInformer:
        """The informer of ``gvr``, synced (``Cache.GetInformer``): waits for the cache to
        start and the informer to list, as long as ``ctx`` and the sync timeout allow; a 504
        ``APIError`` (Timeout) when they do not."""
        informer = self.informer_for(gvr)
        if informer.has_synced():
            return informer
        timeout = ctx.timeout(f"waiting for the {gvr[2]} informer", self.sync_timeout)
        if not self._started.wait(timeout):
            raise _timeout(gvr)
        stop = self._stop
        assert stop is not None
        # informer_for started it if the cache was not running when it was made
        self._factory.start(stop)
        if not wait_for_cache_sync(stop, informer, timeout=timeout):
            raise _timeout(gvr)
        return informer

    def index_field(self, gvr: GVR, field: str, extract: Callable[[Any], Iterable[str]]) -> None:
        """Index the objects of ``gvr`` by what ``extract`` returns for each, so that ``list``
        can select them by ``matching_fields={field: value}`` (``FieldIndexer.IndexField``).
        Before the informer starts: a RuntimeError after."""

        def index(obj: Any) -> list[str]:
            namespace = str((obj.get("metadata") or {}).get("namespace") or "")
            values = list(extract(obj))
            keys = [f"{ALL_NAMESPACES}/{v}" for v in values]
            if namespace:
                keys += [f"{namespace}/{v}" for v in values]
            return keys

        self.informer_for(gvr).add_indexers({field_index_name(field): index})

    # -- reads ---------------------------------------------------------------------------------

    def get(self, ctx: Context, gvr: GVR, namespace: str, name: str) -> Any:
        """A copy of the cached object, or the 404 ``APIError`` (``Reader.Get``)."""
        indexer = self.get_informer(ctx, gvr).get_indexer()
        obj = indexer.get_by_key(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            raise not_found(gvr, name)
        return copy.deepcopy(obj)

    def list(
        self,
        ctx: Context,
        gvr: GVR,
        namespace: str | None = None,
        labels: str | Mapping[str, str] | None = None,
        matching_fields: Mapping[str, str] | None = None,
    ) -> list[Any]:
        """Copies of the cached objects (``Reader.List``), narrowed to ``namespace``, to a
        label selector (``labels``: its text, or a map every label of which must match, as
        ``MatchingLabels``), and to indexed fields (``matching_fields``: exact values of
        fields ``index_field`` indexed; a ``KeyError`` names a field not indexed)."""
        indexer = self.get_informer(ctx, gvr).get_indexer()
        if matching_fields:
            scope = namespace or ALL_NAMESPACES
            keys: set[str] | None = None
            found: dict[str, Any] = {}
            for field, value in matching_fields.items():
                name = field_index_name(field)
                if name not in indexer.get_indexers():
                    raise KeyError(f"Index with name {name} does not exist")
                hits = {_key(o): o for o in indexer.by_index(name, f"{scope}/{value}")}
                found.update(hits)
                keys = set(hits) if keys is None else keys & set(hits)
            objects = [found[k] for k in sorted(keys or ())]
        elif namespace:
            objects = indexer.by_index(NAMESPACE_INDEX, namespace)
        else:
            objects = indexer.list()
        selector = selector_from_set(labels) if isinstance(labels, Mapping) else None
        if isinstance(labels, str):
            selector = parse_selector(labels)
        if selector is not None and not selector.empty():
            objects = [
                o for o in objects if selector.matches((o.get("metadata") or {}).get("labels"))
            ]
        return [copy.deepcopy(o) for o in objects]

    # -- the manager's runnable ----------------------------------------------------------------

    def start(self, stop: threading.Event, budget: ShutdownBudget) -> None:
        """Run until ``stop``: the manager started the informers made so far; those made from
        now on are started when made."""
        with self._lock:
            self._stop = stop
        self._factory.start(stop)
        self._started.set()
        stop.wait()

    def informers_synced(self) -> bool:
        """Every informer made so far has listed. (Not ``has_synced``: ``/readyz`` waits for
        the controllers' sources, as upstream's does, not for a kind some read asked for.)"""
        with self._lock:
            informers = list(self._informers.values())
        return all(i.has_synced() for i in informers)


def _key(obj: Any) -> str:
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)
