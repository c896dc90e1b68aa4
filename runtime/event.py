"""The events a Builder-made controller's handlers and predicates see.

controller-runtime twin: ``pkg/event`` (``CreateEvent``, ``UpdateEvent``, ``DeleteEvent``,
``GenericEvent``). An informer calls ``on_add``, ``on_update`` and ``on_delete``
(``informer.shared_informer.ResourceEventHandler``); ``runtime.source`` turns each call into
one of these values, so that a predicate or a handler is one function per kind of event.

Deliberate difference: the objects are the cached dicts themselves (shared with every other
reader of the cache), as client-go hands them; a handler or predicate reads them, never
changes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CreateEvent", "DeleteEvent", "GenericEvent", "UpdateEvent"]


@dataclass(frozen=True)
class CreateEvent:
    """An object appeared in the cache (controller-runtime ``event.CreateEvent``): created, or
    listed at start."""

    object: Any
    # it came with the informer's first list, not from a watch event (client-go's
    # isInInitialList)
    is_in_initial_list: bool = False


@dataclass(frozen=True)
class UpdateEvent:
    """An object changed, or a resync delivered it again unchanged (controller-runtime
    ``event.UpdateEvent``)."""

    object_old: Any
    object_new: Any


@dataclass(frozen=True)
class DeleteEvent:
    """An object left the cache (controller-runtime ``event.DeleteEvent``)."""

    object: Any
    # the watch missed the deletion: ``object`` is the last state the cache knew
    # (client-go's DeletedFinalStateUnknown)
    delete_state_unknown: bool = False


@dataclass(frozen=True)
class GenericEvent:
    """An event from outside the cluster's objects: a timer, another system
    (controller-runtime ``event.GenericEvent``); nothing in this runtime sends one yet, a
    ``watches`` source may."""

    object: Any
