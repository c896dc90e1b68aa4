"""Predicates: which events reach a Builder-made controller's handlers.

controller-runtime twin: ``pkg/predicate`` (``Predicate``, ``Funcs``, ``NewPredicateFuncs``,
``GenerationChangedPredicate``, ``ResourceVersionChangedPredicate``,
``LabelChangedPredicate``, ``AnnotationChangedPredicate``, ``And``, ``Or``, ``Not``). A
predicate answers, for each kind of event, whether it should be handled; the Builder applies
``with_event_filter``'s predicates to every source and each source's own after them, and an
event goes on only if all of them say yes.

Deliberate differences:

- ``and_``, ``or_``, ``not_`` (Python keeps ``and``, ``or`` and ``not``);
- labels and annotations that are absent and those that are an empty map are the same
  (Go's ``reflect.DeepEqual`` tells a nil map from an empty one; the API server sends neither
  for an empty map, so only a hand-made object could tell them apart).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent

__all__ = [
    "AnnotationChangedPredicate",
    "Funcs",
    "GenerationChangedPredicate",
    "LabelChangedPredicate",
    "Predicate",
    "ResourceVersionChangedPredicate",
    "and_",
    "new_predicate_funcs",
    "not_",
    "or_",
]


class Predicate(Protocol):
    """Whether an event should be handled, one method per kind of event
    (controller-runtime ``predicate.Predicate``)."""

    def create(self, event: CreateEvent) -> bool: ...

    def update(self, event: UpdateEvent) -> bool: ...

    def delete(self, event: DeleteEvent) -> bool: ...

    def generic(self, event: GenericEvent) -> bool: ...


@dataclass(frozen=True)
class Funcs:
    """A predicate of plain functions, any of them left out: that kind of event passes
    (controller-runtime ``predicate.Funcs``)."""

    create_func: Callable[[CreateEvent], bool] | None = None
    update_func: Callable[[UpdateEvent], bool] | None = None
    delete_func: Callable[[DeleteEvent], bool] | None = None
    generic_func: Callable[[GenericEvent], bool] | None = None

    def create(self, event: CreateEvent) -> bool:
        return self.create_func is None or self.create_func(event)

    def update(self, event: UpdateEvent) -> bool:
        return self.update_func is None or self.update_func(event)

    def delete(self, event: DeleteEvent) -> bool:
        return self.delete_func is None or self.delete_func(event)

    def generic(self, event: GenericEvent) -> bool:
        return self.generic_func is None or self.generic_func(event)


def new_predicate_funcs(accept: Callable[[Any], bool]) -> Funcs:
    """A predicate that asks ``accept`` about the event's object (the new one of an update)
    (controller-runtime ``predicate.NewPredicateFuncs``)."""
    return Funcs(
        lambda e: accept(e.object),
        lambda e: accept(e.object_new),
        lambda e: accept(e.object),
        lambda e: accept(e.object),
    )


def _meta(obj: Any) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


class _UpdatesOnly:
    """Every event passes but the updates ``changed`` turns down (upstream embeds ``Funcs``)."""

    def create(self, event: CreateEvent) -> bool:
        return True

    def delete(self, event: DeleteEvent) -> bool:
        return True

    def generic(self, event: GenericEvent) -> bool:
        return True

    def update(self, event: UpdateEvent) -> bool:
        if event.object_old is None or event.object_new is None:
            return False
        return self.changed(_meta(event.object_old), _meta(event.object_new))

    def changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        raise NotImplementedError


class GenerationChangedPredicate(_UpdatesOnly):
    """Updates pass only when ``metadata.generation`` changed: a change of the spec, not of the
    status or the metadata (controller-runtime ``predicate.GenerationChangedPredicate``). Kinds
    without a generation (a ConfigMap) never pass an update; resyncs never do."""

    def changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return old.get("generation") != new.get("generation")


class ResourceVersionChangedPredicate(_UpdatesOnly):
    """Updates pass only when the object changed at all: resyncs, which deliver the cached
    object again, are dropped (controller-runtime ``predicate.ResourceVersionChangedPredicate``)."""

    def changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return old.get("resourceVersion") != new.get("resourceVersion")


class LabelChangedPredicate(_UpdatesOnly):
    """Updates pass only when the labels changed (controller-runtime
    ``predicate.LabelChangedPredicate``)."""

    def changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return (old.get("labels") or {}) != (new.get("labels") or {})


class AnnotationChangedPredicate(_UpdatesOnly):
    """Updates pass only when the annotations changed
    (controller-runtime ``predicate.AnnotationChangedPredicate``)."""

    def changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return (old.get("annotations") or {}) != (new.get("annotations") or {})


@dataclass(frozen=True)
class _All:
    predicates: tuple[Predicate, ...]

    def create(self, event: CreateEvent) -> bool:
        return all(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return all(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return all(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return all(p.generic(event) for p in self.predicates)


@dataclass(frozen=True)
class _Any:
    predicates: tuple[Predicate, ...]

    def create(self, event: CreateEvent) -> bool:
        return any(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return any(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return any(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return any(p.generic(event) for p in self.predicates)


@dataclass(frozen=True)
class _Not:
    predicate: Predicate

    def create(self, event: CreateEvent) -> bool:
        return not self.predicate.create(event)

    def update(self, event: UpdateEvent) -> bool:
        return not self.predicate.update(event)

    def delete(self, event: DeleteEvent) -> bool:
        return not self.predicate.delete(event)

    def generic(self, event: GenericEvent) -> bool:
        return not self.predicate.generic(event)


def and_(*predicates: Predicate) -> Predicate:
    """Passes what every one of ``predicates`` passes (controller-runtime ``predicate.And``; none:
    everything)."""
    return _All(predicates)


def or_(*predicates: Predicate) -> Predicate:
    """Passes what any of ``predicates`` passes (controller-runtime ``predicate.Or``; none:
    nothing)."""
    return _Any(predicates)


def not_(predicate: Predicate) -> Predicate:
    """Passes what ``predicate`` turns down (controller-runtime ``predicate.Not``)."""
    return _Not(predicate)
