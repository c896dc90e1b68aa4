"""Owned objects outside every replica's cache: found through the API, and labelled into it.

No client-go twin (see ``runtime.sharding``). Sharded, each replica's informers of an owned kind
select the bucket label its controller puts on what it makes. An object made before sharding
(or under another bucket count) carries no such label, so it is in no replica's cache: a
create meets it as a 409 AlreadyExists, and a blocked owner cannot see it go away. These two
helpers answer both from the API, for any controller that makes objects for an owner (the Foo
controller's Deployments; a Builder's ``owns``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from client.errors import APIError, is_already_exists
from runtime.context import Context
from runtime.writes import REQUEST_TIMEOUT, GoneError, TrackedWrites

__all__ = ["NotOwnedError", "create_or_label", "lookup"]

log = logging.getLogger("runtime.sharding")


class NotOwnedError(Exception):
    """The object of that name is someone else's: never written (sample-controller's
    ``ErrResourceExists``)."""


def lookup(ctx: Context, writes: TrackedWrites, path: str, name: str) -> Any | None:
    """The object ``name`` of the collection at ``path`` as the API has it (not the cache), or
    None. A LIST narrowed to the name rather than a GET, so that sharding needs no verb the
    controller's ClusterRole lacks (manifests/base/rbac.yaml grants list, watch, create and
    update on Deployments)."""
    found = writes.rest.request(
        "GET",
        path,
        params={"fieldSelector": f"metadata.name={name}"},
        timeout=ctx.timeout(path, REQUEST_TIMEOUT),
    )
    items = list(found.get("items") or [])
    return items[0] if items else None


def create_or_label(
    ctx: Context,
    writes: TrackedWrites,
    resource: str,
    key: str,
    path: str,
    body: Mapping[str, Any],
    owner: str | None,
    labels: Mapping[str, str],
    ours: Callable[[Any], bool],
) -> Any | None:
    """Create ``body`` (the object ``key`` of ``resource``, for the owner of uid ``owner``);
    the object as created, or None when one was there already, outside every cache, and ours
    (``ours``): it is given ``labels`` (an update as read: a concurrent change gets a 409), so
    that it enters the cache, whose event syncs its owner again.

    Raises ``NotOwnedError`` when the one there is someone else's, and ``GoneError`` when it
    was deleted since the 409 (the next sync creates it). Without ``labels`` (not sharded) an
    AlreadyExists is raised as it came.
    """
    try:
        return writes.create(ctx, resource, key, path, body, owner)
    except APIError as err:
        if not (labels and is_already_exists(err)):
            raise
    name = body["metadata"]["name"]
    existing = lookup(ctx, writes, path, name)
    if existing is None:
        raise GoneError(key)
    if not ours(existing):
        raise NotOwnedError(key)
    meta = existing["metadata"]
    have = meta.get("labels") or {}
    if any(have.get(k) != v for k, v in labels.items()):
        ctx.err("labelling existing object")
        log.info(
            "labelling existing object",
            extra={"resource": resource, "object": key, "labels": dict(labels)},
        )
        labelled = {**existing, "metadata": {**meta, "labels": {**have, **labels}}}
        writes.update(ctx, resource, key, f"{path}/{name}", labelled)
    return None
