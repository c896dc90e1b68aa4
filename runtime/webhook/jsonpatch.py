"""An RFC 6902 JSON patch from two JSON documents: what a defaulting webhook answers with.

controller-runtime twin: ``admission.PatchResponseFromRaw``, which calls gomodules.xyz's
``jsonpatch.CreatePatch(original, current)``. The API server applies the patch to the object it
sent, so the patch must take exactly ``original`` to ``current``; how small it is is a matter of
taste. Differences from gomodules' diff, on purpose:

- an array that changed length is replaced whole (``replace`` of the array), where gomodules
  adds and removes elements one by one: one operation that cannot be misread, at the price of
  a longer patch for a long array;
- keys are visited in sorted order, so the same change gives the same patch every time.

Paths are JSON pointers (RFC 6901): ``~`` is written ``~0`` and ``/`` is written ``~1``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["apply_patch", "create_patch", "pointer"]

Operation = dict[str, Any]


def pointer(*tokens: str | int) -> str:
    """The JSON pointer of a path of keys and indexes: ``pointer("metadata", "a/b")`` is
    ``/metadata/a~1b``."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def create_patch(original: Any, current: Any) -> list[Operation]:
    """The operations (``add``, ``remove``, ``replace``) that take ``original`` to
    ``current``; empty when they are equal."""
    ops: list[Operation] = []
    _diff(original, current, (), ops)
    return ops


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: Python's ``==`` takes ``True`` for ``1``, JSON does not, at any depth."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _diff(old: Any, new: Any, path: tuple[str | int, ...], ops: list[Operation]) -> None:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() - new.keys()):
            ops.append({"op": "remove", "path": pointer(*path, key)})
        for key in sorted(new.keys()):
            if key not in old:
                ops.append({"op": "add", "path": pointer(*path, key), "value": new[key]})
            else:
                _diff(old[key], new[key], (*path, key), ops)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, (*path, i), ops)
        return
    ops.append({"op": "replace", "path": pointer(*path), "value": new})


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/': {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def apply_patch(document: Any, ops: list[Operation]) -> Any:
    """``document`` with ``ops`` applied (``add``, ``remove``, ``replace`` only: what
    ``create_patch`` makes), for tests and for checking a patch before it is sent. Does not
    change ``document``. Raises ``ValueError`` on a path that does not fit."""
    import copy

    root: list[Any] = [copy.deepcopy(document)]
    for op in ops:
        tokens = _tokens(op["path"])
        parent: Any = root
        key: str | int = 0
        for token in tokens:
            parent = parent[key]
            key = int(token) if isinstance(parent, list) else token
        kind = op["op"]
        if kind == "remove":
            del parent[key]
        elif kind == "add" and isinstance(parent, list):
            parent.insert(int(key), copy.deepcopy(op["value"]))
        elif kind in ("add", "replace"):
            if kind == "replace" and isinstance(parent, dict) and key not in parent:
                raise ValueError(f"replace of a missing member: {op['path']}")
            parent[key] = copy.deepcopy(op["value"])
        else:
            raise ValueError(f"unsupported operation {kind!r}")
    return root[0]
