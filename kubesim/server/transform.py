"""Metadata-only views of objects: ``Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io``.

Twin of ``asPartialObjectMetadata`` and ``asPartialObjectMetadataList`` in
k8s.io/apiserver/pkg/endpoints/handlers/response.go (``doTransformObject``), which the
metadata-only client (client-go/metadata) and metadata informers ask for. A single object
becomes ``{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": ...}``;
a list becomes a PartialObjectMetadataList whose items each carry that kind and apiVersion, and
whose metadata keeps the list's resourceVersion, continue and remainingItemCount. The metadata is
written as Go writes an ObjectMeta (field order, ``creationTimestamp: null`` when unset).
Asking for the single form on a list, or the list form on an object, is 406 NotAcceptable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim import protobuf
from kubesim.api import errors
from kubesim.api.conversion import go_shape

if TYPE_CHECKING:
    from kubesim.api.resources import ResourceInfo

__all__ = ["go_type_name", "partial_object_metadata", "partial_object_metadata_list"]

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
TABLE_KIND = "Table"


def partial_object_metadata(obj: dict, version: str) -> dict:
    """meta.AsPartialObjectMetadata of one object, typed as meta.k8s.io/<version>."""
    return {
        "kind": PARTIAL,
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": _object_meta(obj.get("metadata") or {}),
    }


def partial_object_metadata_list(items: list[dict], list_meta: dict, version: str) -> dict:
    """asPartialObjectMetadataList: the list's metadata, each item's metadata (typed)."""
    meta: dict[str, Any] = {}
    for field in ("resourceVersion", "continue", "remainingItemCount"):
        if list_meta.get(field):
            meta[field] = list_meta[field]
    return {
        "kind": PARTIAL_LIST,
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "items": [partial_object_metadata(i, version) for i in items],
    }


def _object_meta(meta: dict) -> dict:
    try:
        return go_shape("meta.ObjectMeta", meta)
    except (protobuf.ProtobufError, ValueError, TypeError, AttributeError):
        return dict(meta)  # values Go could not hold: serve them as stored


def go_type_name(info: ResourceInfo, is_list: bool) -> str:
    """The Go type the apiserver's handler holds (its %T), as its 406 messages print it."""
    if info.custom:
        return "*unstructured.UnstructuredList" if is_list else "*unstructured.Unstructured"
    group = info.storage_key[0]
    package = group.split(".")[0] if group else "core"
    return f"*{package}.{info.kind}{'List' if is_list else ''}"


def wrong_shape(info: ResourceInfo, asked: str, is_list: bool) -> errors.ApiError:
    """406 for PartialObjectMetadata on a list, or PartialObjectMetadataList on an object."""
    if is_list:
        why = f"you requested {asked}, but the requested object is a list"
    else:
        why = f"you requested {asked}, but the requested object is not a list"
    msg = f"{why} ({go_type_name(info, is_list)})"
    return errors.ApiError(406, errors.status(406, "NotAcceptable", msg))
