"""The Client of a controller written the kubebuilder way: reads from the cache, writes to the API.

controller-runtime twin: ``pkg/client`` as ``mgr.GetClient()`` returns it (the delegating
client: ``Get``/``List`` from the informer cache, ``Create``, ``Update``, ``Patch``,
``Delete``, ``Apply`` and ``Status().Update``/``Patch`` through REST), with
``client.WithFieldOwner``, ``client.MergeFrom`` and the patch types. Reads are
``runtime.cache.Cache``'s: informers start on first use, copies are handed out, a missing
object is the API's 404 ``APIError`` (``client.errors.is_not_found``). Writes go through
``client.rest.RESTClient``; each takes its timeout from the reconcile's ``ctx``
(``runtime.context``: bounded by the drain deadline once stopping, refused past it) and says
who made it (``fieldManager``, the field owner).

Sharded (``--sharding``), an object created or applied for an owner of a kind some Builder
reconciles (``shard_owned_by``) is given the owner's bucket label
(``runtime.sharding.gate.Gate.owned_labels``): the replicas' informers of owned kinds select on
it, so without it the object would be in no replica's cache. ``owned_labels`` tells a
reconciler that writes some other way which labels to add.

Deliberate differences:

- a resource is named by its GVR and the objects are dicts; a write returns the server's
  answer instead of filling in the object it was given;
- a write is handed ``ctx`` first (Go's ``ctx``) and the GVR second, where upstream reads the
  kind from the Go type;
- no ``DeleteAllOf``, no dry-run, no unstructured or metadata-only reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from client.rest import RESTClient, resource_path
from runtime.cache import GVR, Cache
from runtime.context import Context
from runtime.handler import group_of
from runtime.sharding.gate import EVERY_OBJECT, Gate
from runtime.writes import REQUEST_TIMEOUT

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "Client",
    "Patch",
    "merge_from",
]

# The patch types (``types.PatchType``): the Content-Type the server reads the patch as.
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Patch:
    """A patch and how the server should read it (controller-runtime
    ``client.Patch``): ``type`` is one of the
    patch types above, ``data`` the patch (a dict, or a list of operations for a JSON patch)."""

    type: str
    data: Any


def merge_from(original: Mapping[str, Any], modified: Mapping[str, Any]) -> Patch:
    """The JSON merge patch that turns ``original`` into ``modified`` (``client.MergeFrom``):
    what changed, and ``null`` for what was removed. Lists are replaced whole, as a merge
    patch replaces them."""
    return Patch(MERGE_PATCH, _merge_diff(original, modified))


def _merge_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    diff: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if isinstance(before, Mapping) and isinstance(value, Mapping):
            diff[key] = _merge_diff(before, value)
        else:
            diff[key] = value
    return diff


_MISSING = object()


@dataclass(frozen=True)
class _ShardedKinds:
    """The (group, kind)s whose objects are reconciled by a Builder (shared by every copy of
    a Client): an object created for one of them carries its bucket label when sharded."""

    kinds: set[tuple[str, str]] = dataclasses.field(default_factory=set)


class Client:
    """Reads from ``cache``, writes through ``rest`` (controller-runtime ``client.Client``)."""

    def __init__(
        self,
        rest: RESTClient,
        cache: Cache,
        gate: Gate = EVERY_OBJECT,
        field_owner: str = "",
        _sharded: _ShardedKinds | None = None,
    ) -> None:
        self.rest = rest
        self.cache = cache
        # which objects this replica acts on, and the labels of what it makes for them
        self.gate = gate
        # every write's fieldManager; empty: the server names the writer by its User-Agent
        self.field_owner = field_owner
        self._sharded = _sharded if _sharded is not None else _ShardedKinds()

    def with_field_owner(self, field_owner: str) -> Client:
        """The same client, writing as ``field_owner`` (``client.WithFieldOwner``)."""
        return Client(self.rest, self.cache, self.gate, field_owner, self._sharded)

    def shard_owned_by(self, group: str, kind: str) -> None:
        """Objects made for an owner of this kind carry its bucket label when sharded (the
        Builder calls it for its ``for_`` kind)."""
        self._sharded.kinds.add((group, kind))

    def owned_labels(self, obj: Mapping[str, Any]) -> dict[str, str]:
        """The labels ``obj`` must carry to be in its replica's cache: its controlling owner's
        bucket label, when sharded and the owner is of a kind a Builder reconciles; else none."""
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
            if not ref.get("controller"):
                continue
            owner_kind = (group_of(str(ref.get("apiVersion") or "")), ref.get("kind"))
            if owner_kind in self._sharded.kinds:
                return self.gate.owned_labels({"metadata": {"uid": ref.get("uid")}})
        return {}

    # -- reads: the cache -----------------------------------------------------------------------

    def get(self, ctx: Context, gvr: GVR, namespace: str, name: str) -> Any:
        """A copy of the object from the cache; the 404 ``APIError`` when it is not there."""
        return self.cache.get(ctx, gvr, namespace, name)

    def list(
        self,
        ctx: Context,
        gvr: GVR,
        namespace: str | None = None,
        labels: str | Mapping[str, str] | None = None,
        matching_fields: Mapping[str, str] | None = None,
    ) -> list[Any]:
        """Copies of the cached objects, by namespace, labels and indexed fields
        (``runtime.cache.Cache.list``)."""
        return self.cache.list(ctx, gvr, namespace, labels, matching_fields)

    # -- writes: the API ------------------------------------------------------------------------

    def create(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any]) -> Any:
        """POST ``obj`` (with its owner's bucket label when sharded); the object created."""
        body = self._labelled(obj)
        return self._write(ctx, "POST", _path(gvr, obj, collection=True), body)

    def update(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any]) -> Any:
        """PUT ``obj``, which carries the resourceVersion it replaces (a 409 Conflict if the
        object changed since); the object written."""
        return self._write(ctx, "PUT", _path(gvr, obj), obj)

    def patch(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any], patch: Patch) -> Any:
        """PATCH the object ``obj`` names with ``patch``; the object patched."""
        return self._write(ctx, "PATCH", _path(gvr, obj), patch.data, patch.type)

    def apply(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any], force: bool = False) -> Any:
        """Server-side apply ``obj``, the configuration this field owner wants (PATCH as
        ``application/apply-patch+yaml``): the server merges it, takes the fields it names for
        this owner, and removes those the owner applied before and names no more. ``force``
        takes fields another manager owns instead of failing with a 409 (``ForceOwnership``).
        ``obj`` needs ``apiVersion``, ``kind`` and a name; the object as applied."""
        body = self._labelled(obj)
        params = {"force": "true"} if force else {}
        return self._write(ctx, "PATCH", _path(gvr, obj), body, APPLY_PATCH, params)

    def delete(
        self,
        ctx: Context,
        gvr: GVR,
        obj: Mapping[str, Any],
        propagation_policy: str | None = None,
    ) -> Any:
        """DELETE the object ``obj`` names; ``propagation_policy``: ``Foreground``,
        ``Background`` or ``Orphan`` (None: the kind's default). What the server answered
        (the object, while finalizers hold it, or a Status)."""
        body: dict[str, Any] | None = None
        if propagation_policy is not None:
            body = {"kind": "DeleteOptions", "apiVersion": "v1"}
            body["propagationPolicy"] = propagation_policy
        return self._write(ctx, "DELETE", _path(gvr, obj), body)

    def update_status(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any]) -> Any:
        """PUT ``obj`` to its status subresource (``Status().Update``): only the status is
        written, as of the resourceVersion it carries."""
        return self._write(ctx, "PUT", _path(gvr, obj, subresource="status"), obj)

    def patch_status(self, ctx: Context, gvr: GVR, obj: Mapping[str, Any], patch: Patch) -> Any:
        """PATCH the status subresource of the object ``obj`` names (``Status().Patch``)."""
        path = _path(gvr, obj, subresource="status")
        return self._write(ctx, "PATCH", path, patch.data, patch.type)

    def _labelled(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        labels = self.owned_labels(obj)
        meta = obj.get("metadata") or {}
        have = meta.get("labels") or {}
        if not labels or all(have.get(k) == v for k, v in labels.items()):
            return obj
        return {**obj, "metadata": {**meta, "labels": {**have, **labels}}}

    def _write(
        self,
        ctx: Context,
        method: str,
        path: str,
        body: Any,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
    ) -> Any:
        query = dict(params or {})
        if self.field_owner and method != "DELETE":
            query["fieldManager"] = self.field_owner
        return self.rest.request(
            method,
            path,
            params=query or None,
            body=body,
            content_type=content_type,
            timeout=ctx.timeout(f"{method} {path}", REQUEST_TIMEOUT),
        )


def _path(
    gvr: GVR, obj: Mapping[str, Any], collection: bool = False, subresource: str | None = None
) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or None
    if collection:
        return resource_path(*gvr, namespace)
    name = meta.get("name")
    if not name:
        raise ValueError(f"{gvr[2]}: the object has no metadata.name")
    return resource_path(*gvr, namespace, name, subresource)
