"""Duplicate fields in a JSON body: found as it is decoded, reported by field validation.

Twin of the duplicate-key half of sigs.k8s.io/json's ``UnmarshalStrict``, which the strict
JSON serializer (k8s.io/apimachinery/pkg/runtime/serializer/json) decodes every body with: a
key that appears twice in one object is a strict error ``duplicate field "spec.replicas"``
(path as the unknown fields' are, ``spec.containers[0].name`` in lists), and the value kept is
the last. Field validation then treats it like an unknown field: Strict refuses the request,
Warn adds a warning, Ignore says nothing.

Decoding happens in the HTTP layer, field validation in the REST layer, so the paths travel in
a ContextVar set for the request, as the warnings do (warning.py).

Deliberate differences: only JSON bodies of creates and updates are checked (a YAML body's
duplicates, reported upstream by YAMLToJSONStrict in other words, and a patch's own keys are
not); duplicates are reported before unknown fields rather than in document order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["loads", "recording", "take"]

_FOUND: ContextVar[list[str] | None] = ContextVar("kubesim_duplicate_fields", default=None)


@contextmanager
def recording() -> Iterator[None]:
    """Hold the duplicate fields of the body decoded while the block runs (one request's)."""
    token = _FOUND.set([])
    try:
        yield
    finally:
        _FOUND.reset(token)


def take() -> list[str]:
    """The current request's duplicate field paths (then forgotten), in body order."""
    found = _FOUND.get()
    if not found:
        return []
    out = list(found)
    found.clear()
    return out


def loads(body: bytes | str) -> Any:
    """json.loads, recording the paths of duplicate keys for the current request.

    The hook costs one Python call per object; the paths are worked out only when an object
    had a duplicate, by walking the decoded tree to the objects that had one.
    """
    # id -> (the object, its repeated keys); holding the object keeps its id from being
    # reused by a later one when a duplicate key's first value is dropped
    dup_keys: dict[int, tuple[dict, list[str]]] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            repeated = []
            for key, _ in items:
                if key in seen and key not in repeated:
                    repeated.append(key)
                seen.add(key)
            dup_keys[id(obj)] = (obj, repeated)
        return obj

    value = json.loads(body, object_pairs_hook=pairs)
    found = _FOUND.get()
    if dup_keys and found is not None:
        _walk(value, "", dup_keys, found)
    return value


def _walk(
    value: Any, path: str, dup_keys: dict[int, tuple[dict, list[str]]], out: list[str]
) -> None:
    if isinstance(value, dict):
        entry = dup_keys.get(id(value))
        if entry is not None and entry[0] is value:
            out.extend(f"{path}.{key}" if path else key for key in entry[1])
        for key, child in value.items():
            _walk(child, f"{path}.{key}" if path else key, dup_keys, out)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _walk(child, f"{path}[{i}]", dup_keys, out)
