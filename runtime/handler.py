"""Event handlers: which requests an event of a watched object puts on a controller's queue.

controller-runtime twin: ``pkg/handler`` (``EventHandler``, ``EnqueueRequestForObject``,
``EnqueueRequestForOwner`` with ``OnlyControllerOwner``, ``EnqueueRequestsFromMapFunc``,
``Funcs``). A handler maps an event to zero or more ``runtime.reconcile.Request``s and adds
them to the queue, which merges a request already waiting. The Builder picks them: ``for_``
enqueues the object itself, ``owns`` the object's controlling owner of the ``for_`` kind,
``watches`` whatever handler it is given.

Deliberate differences:

- ``EnqueueRequestForOwner`` is given the owner's API group and kind, and whether it is
  namespaced, where upstream reads them from the scheme and the REST mapper (the Builder asks
  ``runtime.restmapper`` once, when it is completed);
- a map function takes the object only (Go's also takes ``ctx``, for its logger and deadline).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from runtime.reconcile import Request, request_for

__all__ = [
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "Funcs",
    "MapFunc",
    "Queue",
    "group_of",
]


class Queue(Protocol):
    """What a handler adds its requests to: the controller's rate-limited workqueue
    (controller-runtime's ``workqueue.TypedRateLimitingInterface[reconcile.Request]``)."""

    def add(self, item: Any) -> None: ...


class EventHandler(Protocol):
    """Enqueues the requests an event calls for (controller-runtime ``handler.EventHandler``)."""

    def create(self, event: CreateEvent, queue: Queue) -> None: ...

    def update(self, event: UpdateEvent, queue: Queue) -> None: ...

    def delete(self, event: DeleteEvent, queue: Queue) -> None: ...

    def generic(self, event: GenericEvent, queue: Queue) -> None: ...


def group_of(api_version: str) -> str:
    """The API group of an ``apiVersion``: ``apps/v1`` -> ``apps``, ``v1`` -> ``""``
    (``schema.ParseGroupVersion``)."""
    group, _, _ = api_version.rpartition("/")
    return group


class EnqueueRequestForObject:
    """Enqueues the object the event is about (controller-runtime
    ``handler.EnqueueRequestForObject``): the handler of the Builder's ``for_``."""

    def create(self, event: CreateEvent, queue: Queue) -> None:
        queue.add(request_for(event.object))

    def update(self, event: UpdateEvent, queue: Queue) -> None:
        # the new object's name is the old one's: names never change
        queue.add(
            request_for(event.object_new if event.object_new is not None else event.object_old)
        )

    def delete(self, event: DeleteEvent, queue: Queue) -> None:
        queue.add(request_for(event.object))

    def generic(self, event: GenericEvent, queue: Queue) -> None:
        queue.add(request_for(event.object))


@dataclass(frozen=True)
class EnqueueRequestForOwner:
    """Enqueues the owners of kind ``kind`` in API group ``group`` that the object's ownerReferences
    name (controller-runtime ``handler.EnqueueRequestForOwner``): the handler of the Builder's
    ``owns``, with ``only_controller`` (``OnlyControllerOwner``), so that only the owner that
    controls the object is reconciled.

    The version of a reference is not compared (an owner is the same object in every version
    it is served in); an update enqueues the owners of the old object and of the new one, so
    that an owner losing the object hears of it too.
    """

    group: str
    kind: str
    only_controller: bool = False
    # the owner kind is namespaced: its request carries the object's namespace (owner
    # references do not cross namespaces); else the owner is cluster-scoped
    namespaced: bool = True

    def owners(self, obj: Any) -> set[Request]:
        """The requests of the matching owners of ``obj``."""
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(meta, Mapping):
            return set()
        namespace = str(meta.get("namespace") or "") if self.namespaced else ""
        found = set()
        for ref in meta.get("ownerReferences") or []:
            if self.only_controller and not ref.get("controller"):
                continue
            if ref.get("kind") == self.kind and group_of(str(ref.get("apiVersion") or "")) == (
                self.group
            ):
                found.add(Request(namespace, str(ref.get("name") or "")))
        return found

    def create(self, event: CreateEvent, queue: Queue) -> None:
        self._add(queue, self.owners(event.object))

    def update(self, event: UpdateEvent, queue: Queue) -> None:
        self._add(queue, self.owners(event.object_old) | self.owners(event.object_new))

    def delete(self, event: DeleteEvent, queue: Queue) -> None:
        self._add(queue, self.owners(event.object))

    def generic(self, event: GenericEvent, queue: Queue) -> None:
        self._add(queue, self.owners(event.object))

    @staticmethod
    def _add(queue: Queue, requests: Iterable[Request]) -> None:
        for request in sorted(requests):
            queue.add(request)


MapFunc = Callable[[Any], Iterable[Request]]
"""An object in, the requests it concerns out (controller-runtime ``handler.MapFunc``)."""


@dataclass(frozen=True)
class EnqueueRequestsFromMapFunc:
    """Enqueues what ``map_func`` says an object concerns (controller-runtime
    ``handler.EnqueueRequestsFromMapFunc``): for an object related to the reconciled ones other than
    by an ownerReference (a Secret several objects name, say). An update maps the old object and the
    new one, and enqueues each request once."""

    map_func: MapFunc

    def create(self, event: CreateEvent, queue: Queue) -> None:
        self._add(queue, self.map_func(event.object))

    def update(self, event: UpdateEvent, queue: Queue) -> None:
        requests = set(self.map_func(event.object_old)) | set(self.map_func(event.object_new))
        self._add(queue, sorted(requests))

    def delete(self, event: DeleteEvent, queue: Queue) -> None:
        self._add(queue, self.map_func(event.object))

    def generic(self, event: GenericEvent, queue: Queue) -> None:
        self._add(queue, self.map_func(event.object))

    @staticmethod
    def _add(queue: Queue, requests: Iterable[Request]) -> None:
        seen: set[Request] = set()
        for request in requests:
            if request not in seen:
                seen.add(request)
                queue.add(request)


@dataclass(frozen=True)
class Funcs:
    """A handler of plain functions, any of them left out: that kind of event enqueues
    nothing (controller-runtime ``handler.Funcs``)."""

    create_func: Callable[[CreateEvent, Queue], None] | None = None
    update_func: Callable[[UpdateEvent, Queue], None] | None = None
    delete_func: Callable[[DeleteEvent, Queue], None] | None = None
    generic_func: Callable[[GenericEvent, Queue], None] | None = None

    def create(self, event: CreateEvent, queue: Queue) -> None:
        if self.create_func is not None:
            self.create_func(event, queue)

    def update(self, event: UpdateEvent, queue: Queue) -> None:
        if self.update_func is not None:
            self.update_func(event, queue)

    def delete(self, event: DeleteEvent, queue: Queue) -> None:
        if self.delete_func is not None:
            self.delete_func(event, queue)

    def generic(self, event: GenericEvent, queue: Queue) -> None:
        if self.generic_func is not None:
            self.generic_func(event, queue)
