"""Transforms applied to objects before they enter an informer's cache.

controller-runtime twin: ``cache.TransformStripManagedFields`` (pkg/cache/cache.go). client-go
takes any ``TransformFunc`` (``SharedIndexInformer.SetTransform``); this module holds the one
almost every controller wants, ``transform_intern_strings`` (no twin: Go's decoder allocates
strings as compactly as a Go program can hold them, a Python decoder does not), and
``chain_transforms`` to apply several.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = [
    "UNSHARED_METADATA",
    "chain_transforms",
    "transform_intern_strings",
    "transform_strip_managed_fields",
]

INTERN_MAX_LENGTH = 64  # longer strings are rarely shared (messages, annotations' JSON)


def transform_strip_managed_fields(obj: Any) -> Any:
    """Drop ``metadata.managedFields``: server-side apply bookkeeping no controller here reads.

    It is often the largest part of an object (about two thirds of a cached Deployment's memory
    in docs/benchmarks.md). The transform runs on an object freshly decoded from the wire, before
    anyone else holds it, so it edits in place as controller-runtime's does; objects already in
    the cache are never passed to it.
    """
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if meta and "managedFields" in meta:
        del meta["managedFields"]
    return obj


def transform_intern_strings(obj: Any) -> Any:
    """Make equal short strings in the object one string, shared with every other object's.

    A JSON decoder makes a new ``str`` for every string value it reads: 10,000 Deployments
    hold 10,000 copies of ``"apps/v1"``, ``"nginx:latest"``, ``"IfNotPresent"``, ``"True"``, the
    namespace, each condition's reason and message... at 50-60 bytes each. ``sys.intern`` keeps
    one of each (and drops it again when no object uses it any more), which made the cached
    objects about a quarter smaller in docs/benchmarks.md (Memory). Values only, up to
    ``INTERN_MAX_LENGTH`` characters; dict keys are already shared by the decoder (msgspec keeps
    a cache of them). It edits in place, like ``transform_strip_managed_fields``, and is
    idempotent.

    The object's own ``metadata.resourceVersion`` is left alone (``UNSHARED_METADATA``): no two
    objects, nor two versions of one, have the same one, so interning it shares nothing and
    costs an entry in the interpreter's table of interned strings for as long as the version
    is cached. Each watch event brings a new one, and in a burst of 500 Foos they were more
    than half of all the strings interned: enough to make that table grow by a step of about
    0.5 MB (docs/benchmarks.md, Memory of a burst).
    """
    if isinstance(obj, dict):
        meta = obj.get("metadata")
        if type(meta) is dict:
            _intern_in_metadata(meta)
            _intern_in_dict(obj, skip=meta)
        else:
            _intern_in_dict(obj)
    return obj


UNSHARED_METADATA = "resourceVersion"
"""The key of the object's metadata whose value is unique to one version of one object."""


def _intern_in_metadata(
    meta: dict[str, Any],
    intern: Callable[[str], str] = sys.intern,
    unshared: str = UNSHARED_METADATA,
) -> None:
    for key, value in meta.items():
        kind = type(value)
        if kind is str:
            # (``unshared`` bound as a default: a local, as cheap as a literal, unlike a global)
            if len(value) <= INTERN_MAX_LENGTH and key != unshared:
                meta[key] = intern(value)
        elif kind is dict:
            _intern_in_dict(value)
        elif kind is list:
            _intern_in_list(value)


def _intern_in_dict(
    d: dict[str, Any], intern: Callable[[str], str] = sys.intern, skip: object = None
) -> None:
    """Intern the short strings of ``d``, at any depth, except inside the dict ``skip`` (the
    object's metadata, which ``_intern_in_metadata`` handles)."""
    for key, value in d.items():
        kind = type(value)
        if kind is str:
            if len(value) <= INTERN_MAX_LENGTH:
                d[key] = intern(value)  # a value, not a key: safe while iterating
        elif kind is dict:
            if value is not skip:
                _intern_in_dict(value)
        elif kind is list:
            _intern_in_list(value)


def _intern_in_list(items: list[Any], intern: Callable[[str], str] = sys.intern) -> None:
    for i, value in enumerate(items):
        kind = type(value)
        if kind is str:
            if len(value) <= INTERN_MAX_LENGTH:
                items[i] = intern(value)
        elif kind is dict:
            _intern_in_dict(value)
        elif kind is list:
            _intern_in_list(value)


def chain_transforms(*transforms: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One transform applying each of ``transforms`` in turn (an informer takes one)."""

    def chained(obj: Any) -> Any:
        for transform in transforms:
            obj = transform(obj)
        return obj

    return chained
