"""Helpers a reconciler written the kubebuilder way leans on.

controller-runtime twin: ``pkg/controller/controllerutil`` (``CreateOrUpdate``,
``SetControllerReference`` and its ``AlreadyOwnedError``, ``AddFinalizer``,
``RemoveFinalizer``, ``ContainsFinalizer``), on this project's dict objects and
``runtime.client.Client``.

Deliberate differences:

- ``set_controller_reference`` reads the owner's ``apiVersion`` and ``kind`` from the owner
  object (the cache's objects carry them; upstream looks the Go type up in the scheme);
- ``create_or_update`` is handed the GVR, and fills ``obj`` in place with what the server
  answered (upstream's client does that to every object it writes).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, MutableMapping
from typing import Any, Literal

from client.errors import is_not_found
from runtime.cache import GVR
from runtime.client import Client
from runtime.context import Context
from runtime.handler import group_of

__all__ = [
    "AlreadyOwnedError",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_update",
    "remove_finalizer",
    "set_controller_reference",
]

OperationResult = Literal["created", "updated", "unchanged"]
"""What ``create_or_update`` did (``OperationResult``; it completes "Deployment default/x has
been ...")."""

Object = MutableMapping[str, Any]


class AlreadyOwnedError(ValueError):
    """The object is controlled by another owner already (controller-runtime
    ``controllerutil.AlreadyOwnedError``): an object
    has at most one controller, and taking it from another would fight that controller."""

    def __init__(self, obj: Object, owner: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        super().__init__(
            f"Object {meta.get('namespace', '')}/{meta.get('name', '')} is already owned by "
            f"another {owner.get('kind', '')} controller {owner.get('name', '')}"
        )
        self.object = obj
        # the ownerReference of the controller it has
        self.owner = owner


def set_controller_reference(owner: Object, obj: Object) -> None:
    """Make ``owner`` the controller of ``obj`` (``SetControllerReference``): an
    ownerReference with ``controller`` and ``blockOwnerDeletion``, so that the garbage
    collector deletes ``obj`` with its owner and ``owns`` enqueues the owner on its changes.

    A reference to the same owner (same group, kind and name) is replaced. Raises
    ``AlreadyOwnedError`` when another controls ``obj``, and ``ValueError`` for an owner in
    another namespace, or a namespaced owner of a cluster-scoped object (the API server's
    garbage collector could not resolve either).
    """
    owner_meta = owner.get("metadata") or {}
    obj_meta = obj.setdefault("metadata", {})
    owner_ns = owner_meta.get("namespace") or ""
    if owner_ns:
        obj_ns = obj_meta.get("namespace") or ""
        if not obj_ns:
            raise ValueError(
                "cluster-scoped resource must not have a namespace-scoped owner, "
                f"owner's namespace {owner_ns}"
            )
        if obj_ns != owner_ns:
            raise ValueError(
                "cross-namespace owner references are disallowed, "
                f"owner's namespace {owner_ns}, obj's namespace {obj_ns}"
            )
    if not owner.get("apiVersion") or not owner.get("kind"):
        raise ValueError("the owner has no apiVersion or kind: cannot refer to it")
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner_meta.get("name"),
        "uid": owner_meta.get("uid"),
        "blockOwnerDeletion": True,
        "controller": True,
    }
    refs = list(obj_meta.get("ownerReferences") or [])
    existing = next((r for r in refs if r.get("controller")), None)
    if existing is not None and not _same_object(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    same = [i for i, r in enumerate(refs) if _same_object(r, ref)]
    if same:
        refs[same[0]] = ref
    else:
        refs.append(ref)
    obj_meta["ownerReferences"] = refs


def _same_object(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two references name the same object: group, kind and name (``referSameObject``)."""
    return (
        group_of(str(a.get("apiVersion") or "")) == group_of(str(b.get("apiVersion") or ""))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def create_or_update(
    ctx: Context, client: Client, gvr: GVR, obj: Object, mutate: Callable[[Object], None]
) -> OperationResult:
    """Make the object ``obj`` names exist as ``mutate`` wants it (``CreateOrUpdate``).

    ``obj`` is read from the cache by its namespace and name. Missing: ``mutate`` fills in
    ``obj``, which is created ("created"). Found: ``obj`` becomes the cached object, ``mutate``
    changes it, and it is updated unless nothing changed ("updated", "unchanged"); the update
    carries the resourceVersion read, so a concurrent change is a 409. ``mutate`` must not
    change the name or the namespace (``ValueError``). ``obj`` ends as the server answered.
    """
    meta = obj.get("metadata") or {}
    key = (meta.get("namespace") or "", meta.get("name") or "")
    try:
        existing = client.get(ctx, gvr, *key)
    except Exception as err:
        if not is_not_found(err):
            raise
        _mutate(mutate, key, obj)
        _replace(obj, client.create(ctx, gvr, obj))
        return "created"
    _replace(obj, existing)
    _mutate(mutate, key, obj)
    if obj == existing:
        return "unchanged"
    _replace(obj, client.update(ctx, gvr, obj))
    return "updated"


def _mutate(mutate: Callable[[Object], None], key: tuple[str, str], obj: Object) -> None:
    mutate(obj)
    meta = obj.get("metadata") or {}
    if (meta.get("namespace") or "", meta.get("name") or "") != key:
        raise ValueError("MutateFn cannot mutate object name and/or object namespace")


def _replace(obj: Object, new: Any) -> None:
    # a deep copy: ``existing`` must stay as read, for the comparison after the mutation
    obj.clear()
    obj.update(copy.deepcopy(dict(new)))


def _finalizers(obj: Object) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def add_finalizer(obj: Object, finalizer: str) -> bool:
    """Add ``finalizer`` unless it is there; whether the list changed (``AddFinalizer``)."""
    have = _finalizers(obj)
    if finalizer in have:
        return False
    obj.setdefault("metadata", {})["finalizers"] = [*have, finalizer]
    return True


def remove_finalizer(obj: Object, finalizer: str) -> bool:
    """Remove every ``finalizer``; whether the list changed (``RemoveFinalizer``)."""
    have = _finalizers(obj)
    kept = [f for f in have if f != finalizer]
    if len(kept) == len(have):
        return False
    obj.setdefault("metadata", {})["finalizers"] = kept
    return True


def contains_finalizer(obj: Object, finalizer: str) -> bool:
    """``finalizer`` is on the object (``ContainsFinalizer``)."""
    return finalizer in _finalizers(obj)
