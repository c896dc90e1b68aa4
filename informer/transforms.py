"""Transforms applied to objects before they enter an informer's cache.

controller-runtime twin: ``cache.TransformStripManagedFields`` (pkg/cache/cache.go). client-go
takes any ``TransformFunc`` (``SharedIndexInformer.SetTransform``); this module holds the one
almost every controller wants.
"""

from __future__ import annotations

from typing import Any

__all__ = ["transform_strip_managed_fields"]


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
