"""Predicates (runtime.predicate): which events each lets through, and how they combine."""

from __future__ import annotations

import pytest

from runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from runtime.predicate import (
    AnnotationChangedPredicate,
    Funcs,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    ResourceVersionChangedPredicate,
    and_,
    new_predicate_funcs,
    not_,
    or_,
)


def obj(generation=1, rv="1", labels=None, annotations=None, name="a"):
    meta = {"name": name, "namespace": "ns", "generation": generation, "resourceVersion": rv}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta}


def test_generation_changed_passes_spec_changes_only():
    p = GenerationChangedPredicate()
    assert p.update(UpdateEvent(obj(1, "1"), obj(2, "2")))
    # a status or metadata change bumps the resourceVersion, not the generation
    assert not p.update(UpdateEvent(obj(1, "1"), obj(1, "2")))
    # a kind without a generation never passes an update
    assert not p.update(UpdateEvent({"metadata": {}}, {"metadata": {}}))
    # a missing object is no update to pass
    assert not p.update(UpdateEvent(None, obj()))
    assert p.create(CreateEvent(obj())) and p.delete(DeleteEvent(obj()))
    assert p.generic(GenericEvent(obj()))


def test_resource_version_changed_drops_resyncs():
    p = ResourceVersionChangedPredicate()
    assert not p.update(UpdateEvent(obj(rv="5"), obj(rv="5")))
    assert p.update(UpdateEvent(obj(rv="5"), obj(rv="6")))


@pytest.mark.parametrize(
    ("predicate", "field"),
    [(LabelChangedPredicate(), "labels"), (AnnotationChangedPredicate(), "annotations")],
)
def test_label_and_annotation_changes(predicate, field):
    def with_(value):
        return obj(**{field: value})

    assert predicate.update(UpdateEvent(with_({"a": "1"}), with_({"a": "2"})))
    assert not predicate.update(UpdateEvent(with_({"a": "1"}), with_({"a": "1"})))
    # absent and empty are the same map
    assert not predicate.update(UpdateEvent(with_(None), with_({})))
    assert predicate.update(UpdateEvent(with_(None), with_({"a": "1"})))


def test_funcs_pass_what_they_do_not_judge():
    only_named_a = Funcs(create_func=lambda e: e.object["metadata"]["name"] == "a")
    assert only_named_a.create(CreateEvent(obj(name="a")))
    assert not only_named_a.create(CreateEvent(obj(name="b")))
    assert only_named_a.update(UpdateEvent(obj(name="b"), obj(name="b")))


def test_new_predicate_funcs_asks_about_the_new_object_of_an_update():
    named_a = new_predicate_funcs(lambda o: o["metadata"]["name"] == "a")
    assert named_a.update(UpdateEvent(obj(name="b"), obj(name="a")))
    assert not named_a.update(UpdateEvent(obj(name="a"), obj(name="b")))
    assert not named_a.delete(DeleteEvent(obj(name="b")))
    assert named_a.generic(GenericEvent(obj(name="a")))


def test_and_or_not():
    gen, labels = GenerationChangedPredicate(), LabelChangedPredicate()
    spec_only = UpdateEvent(obj(1, labels={"a": "1"}), obj(2, labels={"a": "1"}))
    labels_only = UpdateEvent(obj(1, labels={"a": "1"}), obj(1, labels={"a": "2"}))
    assert not and_(gen, labels).update(spec_only)
    assert or_(gen, labels).update(spec_only) and or_(gen, labels).update(labels_only)
    assert not or_(gen, labels).update(UpdateEvent(obj(), obj()))
    assert not_(gen).update(labels_only) and not not_(gen).update(spec_only)
    # the empty cases: everything, nothing
    assert and_().create(CreateEvent(obj())) and not or_().create(CreateEvent(obj()))
