"""Listers: read-only views of an informer's cache, by namespace, name and label selector.

client-go twin: ``tools/cache/listers.go`` (``ListAll``, ``ListAllByNamespace``,
``GenericLister``) and the generated listers (``FooLister.List``, ``Foos(ns).Get``).

A lister never calls the API server: it answers from the cache, which is exactly as fresh as the
informer. Objects are the cached dicts themselves, shared with every other reader, so they must be
copied before being changed (client-go's DeepCopy rule).
"""

from __future__ import annotations

from typing import Any

from client.labels import Selector, parse_selector
from informer.store import NAMESPACE_INDEX, Indexer

__all__ = ["Lister", "NamespaceLister", "NotFoundError"]

SelectorLike = Selector | str | None


class NotFoundError(LookupError):
    """The object is not in the cache (client-go ``errors.NewNotFound`` from a lister).

    The message matches the API server's: ``foos.samplecontroller.k8s.io "name" not found``.
    """

    def __init__(self, resource: str, namespace: str, name: str) -> None:
        super().__init__(f'{resource} "{name}" not found')
        self.resource = resource  # "plural.group" (just "plural" for the core group)
        self.namespace = namespace  # "" for cluster-scoped objects
        self.name = name  # the name looked up


def _as_selector(selector: SelectorLike) -> Selector | None:
    """None for "everything" (the fast path), else the parsed selector."""
    if selector is None:
        return None
    if isinstance(selector, str):
        selector = parse_selector(selector)
    return None if selector.empty() else selector


def _filter(objects: list[Any], selector: Selector | None) -> list[Any]:
    if selector is None:
        return objects
    return [o for o in objects if selector.matches((o.get("metadata") or {}).get("labels"))]


class Lister:
    """Lists and gets one resource from its informer's indexer.

    client-go twin: ``cache.GenericLister`` and the generated listers (sample-controller's
    ``FooLister``). Differs: one class for every resource, returning the cached dicts.
    """

    def __init__(self, indexer: Indexer, resource: str = "", group: str = "") -> None:
        self.indexer = indexer  # the informer's cache; must carry the namespace index
        self.resource = f"{resource}.{group}" if group else resource  # for NotFoundError

    def list(self, selector: SelectorLike = None) -> list[Any]:
        """Every cached object whose labels match (all of them for None or an empty selector).

        ``selector`` is a ``Selector`` or a label-selector string such as ``"app=web,tier!=db"``.
        """
        return _filter(self.indexer.list(), _as_selector(selector))

    def get(self, namespace: str, name: str) -> Any:
        """The cached object; raises NotFoundError. Use namespace "" for cluster-scoped objects."""
        key = f"{namespace}/{name}" if namespace else name
        obj = self.indexer.get_by_key(key)
        if obj is None:
            raise NotFoundError(self.resource, namespace, name)
        return obj

    def by_namespace(self, namespace: str) -> NamespaceLister:
        """The objects of one namespace (the generated ``Foos(namespace)``)."""
        return NamespaceLister(self, namespace)


class NamespaceLister:
    """One namespace of a Lister; lists through the namespace index, not a full scan
    (client-go ``GenericNamespaceLister``, the generated ``FooNamespaceLister``)."""

    def __init__(self, lister: Lister, namespace: str) -> None:
        self.lister = lister  # the resource-wide lister
        self.namespace = namespace  # the namespace this view is limited to

    def list(self, selector: SelectorLike = None) -> list[Any]:
        objects = self.lister.indexer.by_index(NAMESPACE_INDEX, self.namespace)
        return _filter(objects, _as_selector(selector))

    def get(self, name: str) -> Any:
        return self.lister.get(self.namespace, name)
