"""What a controller takes: an informer per resource, its lister, its indexer.

client-go twin: the interfaces of the generated typed packages a controller is declared with
(``informers.FooInformer``, ``appsinformers.DeploymentInformer``, ``listers.FooLister``:
``Informer()``, ``Lister()``, ``Get``), and ``cache.ResourceEventHandlerRegistration``.

In Go they are generated per type; here the informer is one generic class, so they are
generic ``Protocol``s, and a controller names its own by their type argument (the Foo
controller's ``FooInformer = IndexedInformer[Foo]``, in ``controller.apis``). A ``Protocol`` is
structural: it says the least a controller needs (add a handler, ask whether it has synced, get
by namespace and name, add an index and look it up), which ``SharedIndexInformer`` satisfies
without naming it, and which a test double satisfies in a few lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from informer.shared_informer import ResourceEventHandler
from informer.store import IndexFunc

__all__ = [
    "HandlerRegistration",
    "IndexedInformer",
    "TypedIndexer",
    "TypedInformer",
    "TypedLister",
]

T_co = TypeVar("T_co", covariant=True)


class HandlerRegistration(Protocol):
    """client-go ``cache.ResourceEventHandlerRegistration``: synced once the informer has
    synced and this handler has been given every object of its initial list."""

    def has_synced(self) -> bool: ...


class TypedLister(Protocol[T_co]):
    """A generated lister's ``Foos(namespace).Get(name)`` (client-go ``cache.GenericLister``):
    reads the informer's cache, raises ``informer.lister.NotFoundError`` when absent."""

    def get(self, namespace: str, name: str) -> T_co: ...


class TypedInformer(Protocol[T_co]):
    """A generated ``FooInformer``/``DeploymentInformer`` (``Informer()`` and ``Lister()``) and
    the part of client-go's ``cache.SharedIndexInformer`` the controller calls."""

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> HandlerRegistration: ...

    def lister(self) -> TypedLister[T_co]: ...


class TypedIndexer(Protocol[T_co]):
    """client-go ``cache.Indexer``'s ``ByIndex``: the cached objects whose index function gave
    ``indexed_value`` for ``index_name``."""

    def by_index(self, index_name: str, indexed_value: str) -> Sequence[T_co]: ...


class IndexedInformer(TypedInformer[T_co], Protocol[T_co]):
    """An informer the controller adds its own index to (client-go ``SharedIndexInformer``'s
    ``AddIndexers`` and ``GetIndexer``); indexers are added before the informer starts."""

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None: ...

    def get_indexer(self) -> TypedIndexer[T_co]: ...
