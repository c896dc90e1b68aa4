"""Sources: an informer's events, filtered by predicates, through a handler onto a queue.

controller-runtime twin: ``pkg/source`` (``source.Kind``) and
``pkg/internal/source/event_handler.go`` (the informer handler that builds ``event.*`` values,
asks the predicates, and calls the ``handler.EventHandler``). A Builder makes one ``Kind`` per
``for_``, ``owns`` and ``watches``; the controller starts them on its queue.

Deliberate differences: ``start`` registers the informer handler and returns its
registration, whose ``has_synced`` the controller waits for (upstream waits on the informer's
own sync through ``WaitForSync``); the informer comes from the cache already made (upstream's
``Kind`` asks the cache for it when it starts).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from informer.interfaces import HandlerRegistration
from informer.shared_informer import SharedIndexInformer
from informer.store import DeletedFinalStateUnknown
from runtime.event import CreateEvent, DeleteEvent, UpdateEvent
from runtime.handler import EventHandler, Queue
from runtime.predicate import Predicate

__all__ = ["EventHandlerAdapter", "Kind"]

log = logging.getLogger("runtime.source")


@dataclass(frozen=True)
class EventHandlerAdapter:
    """The informer's handler (``on_add``/``on_update``/``on_delete``) that turns each call
    into an event, drops it unless every predicate passes it, and hands it to ``handler``
    (controller-runtime's internal ``source.EventHandler``)."""

    handler: EventHandler
    queue: Queue
    predicates: Sequence[Predicate] = ()

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        event = CreateEvent(obj, is_in_initial_list)
        if all(p.create(event) for p in self.predicates):
            self.handler.create(event, self.queue)

    def on_update(self, old: Any, new: Any) -> None:
        event = UpdateEvent(old, new)
        if all(p.update(event) for p in self.predicates):
            self.handler.update(event, self.queue)

    def on_delete(self, obj: Any) -> None:
        unknown = isinstance(obj, DeletedFinalStateUnknown)
        if unknown:
            # the watch missed the deletion: the last state the cache knew, flagged as such
            obj = obj.obj
        event = DeleteEvent(obj, delete_state_unknown=unknown)
        if all(p.delete(event) for p in self.predicates):
            self.handler.delete(event, self.queue)


@dataclass(frozen=True)
class Kind:
    """The events of one kind of object, from its informer (controller-runtime ``source.Kind``)."""

    informer: SharedIndexInformer
    handler: EventHandler
    predicates: Sequence[Predicate] = ()

    def start(self, queue: Queue) -> HandlerRegistration:
        """Send the informer's events to ``queue``; the registration tells when the handler
        has seen the informer's first list."""
        return self.informer.add_event_handler(
            EventHandlerAdapter(self.handler, queue, tuple(self.predicates))
        )

    def __str__(self) -> str:
        return f"kind source: {self.informer.name}"
