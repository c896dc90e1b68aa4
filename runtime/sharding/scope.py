"""What each informer lists and watches in sharded mode, and the filter for servers without it.

No client-go twin (see ``runtime.sharding``): client-go's ``TweakListOptionsFunc`` sets a
selector once, for good; here the selector follows the assignment, so a ``ScopedListWatch``
reads it from its ``Scope`` at every list and watch, and the sharder asks the informer to
relist when the scope changes (``SharedIndexInformer.relist``): the relist's replace drops from
the cache what left the scope and adds what entered it.

- the controller's own kind (the Foos; a Builder's ``for_``): a KEP-5866 ``shardSelector`` of
  the buckets' hash ranges (adjacent ones merged). A
  server that serves it echoes it in the list's ``metadata.shardInfo``; one that does not (the
  gate off, or older than v1.36) ignores the parameter and answers with every object, so every
  object is also checked here and a foreign one is dropped before it reaches the cache
  (counted in ``sharding_objects_dropped_total``). On a filtering server nothing is dropped.
- owned kinds (the Deployments): a set-based label selector on the bucket label the controller
  puts on each object it makes, ``sharding.samplecontroller.k8s.io/bucket in (3,17)``: every server
  version filters that.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from client.objects import Object
from client.shard import format_selector
from client.watch import Watch, WatchEvent
from informer.listwatch import ListerWatcher
from runtime.sharding.assignment import BUCKET_LABEL, bucket_of, ranges_of

__all__ = ["NO_BUCKET", "Scope", "ScopedListWatch", "owned_selector"]

log = logging.getLogger("runtime.sharding")

# A label value no bucket has: the owned selector of an empty scope selects nothing.
NO_BUCKET = "none"


class Scope:
    """The buckets one informer reads; thread-safe (the sharder sets, the reflector reads).
    No client-go twin: a selector is fixed there."""

    def __init__(self, bucket_count: int) -> None:
        self.bucket_count = bucket_count
        self._lock = threading.Lock()
        self._buckets: frozenset[int] = frozenset()

    def buckets(self) -> frozenset[int]:
        with self._lock:
            return self._buckets

    def set(self, buckets: frozenset[int]) -> bool:
        """Change the scope; whether it changed."""
        with self._lock:
            changed = buckets != self._buckets
            self._buckets = buckets
            return changed


def owned_selector(buckets: frozenset[int]) -> str:
    """The set-based label selector of the owned objects of these buckets."""
    values = ",".join(str(b) for b in sorted(buckets)) or NO_BUCKET
    return f"{BUCKET_LABEL} in ({values})"


class _FilteredWatch:
    """A watch stream whose object events outside the scope are dropped."""

    def __init__(self, stream: Watch, keep: Callable[[Any], bool]) -> None:
        self.stream = stream
        self.keep = keep

    def __iter__(self) -> Iterator[WatchEvent]:
        for event in self.stream:
            if event.get("type") in ("BOOKMARK", "ERROR") or self.keep(event.get("object")):
                yield event

    def close(self) -> None:
        self.stream.close()


class ScopedListWatch:
    """A ``ListerWatcher`` whose lists and watches are narrowed to a ``Scope`` (no client-go
    twin; client-go's ``ListWatch`` with a ``TweakListOptionsFunc`` is the static kind).

    ``primary``: the controller's own kind, the Builder's ``for_`` (a ``shardSelector``, and
    the client-side filter); else an owned kind (the bucket label selector). ``listed`` is the
    scope of the last list whose watch has opened, i.e. whose objects the reflector has handed
    to the store: the sharder acts on a bucket only once every scoped informer has listed it.
    """

    def __init__(
        self,
        inner: ListerWatcher,
        scope: Scope,
        primary: bool,
        on_dropped: Callable[[int], None] = lambda n: None,
        on_listed: Callable[[], None] = lambda: None,
    ) -> None:
        self.inner = inner
        self.scope = scope
        self.primary = primary
        # what the informer's logs and metrics name (SharedIndexInformer reads it)
        self.resource = str(getattr(inner, "resource", ""))
        # called with the number of objects the client-side filter dropped
        self.on_dropped = on_dropped
        # called once a list's objects are in the store (the sharder may now act on them)
        self.on_listed = on_listed
        self._lock = threading.Lock()
        # the scope of the list in progress (pages share the first page's)
        self._listing: frozenset[int] = frozenset()
        # the scope of the last complete list, until its watch opens
        self._listed_pending: frozenset[int] | None = None
        # the scope of the last list the store has been given
        self._listed: frozenset[int] = frozenset()
        # the server's answer to shardSelector: None before the first list
        self.server_filters: bool | None = None

    def listed(self) -> frozenset[int]:
        with self._lock:
            return self._listed

    def _narrow(self, options: Mapping[str, Any], buckets: frozenset[int]) -> dict[str, Any]:
        params = dict(options)
        if self.primary:
            if buckets:
                params["shardSelector"] = format_selector(
                    ranges_of(buckets, self.scope.bucket_count)
                )
        else:
            params["labelSelector"] = owned_selector(buckets)
        return params

    def _keep(self, buckets: frozenset[int]) -> Callable[[Any], bool]:
        count = self.scope.bucket_count
        if not self.primary:
            return lambda obj: True

        def keep(obj: Any) -> bool:
            if not isinstance(obj, dict) or bucket_of(obj, count) in buckets:
                return True
            self.on_dropped(1)
            return False

        return keep

    def list(self, options: Mapping[str, Any]) -> Object:
        with self._lock:
            if not options.get("continue"):
                self._listing = self.scope.buckets()
            buckets = self._listing
        result = self.inner.list(self._narrow(options, buckets))
        meta = result.get("metadata") or {}
        if self.primary:
            filters = bool(meta.get("shardInfo"))
            if filters != self.server_filters:
                log.info(
                    "server-side shard filter" if filters else "client-side shard filter",
                    extra={"resource": self.resource, "serverFilters": filters},
                )
            self.server_filters = filters
            keep = self._keep(buckets)
            result = {**result, "items": [o for o in result.get("items") or [] if keep(o)]}
        if not meta.get("continue"):
            with self._lock:
                self._listed_pending = buckets
        return result

    def watch(self, options: Mapping[str, Any], *, read_timeout: float | None = None) -> Watch:
        with self._lock:
            listed = self._listed_pending is not None
            if self._listed_pending is not None:
                self._listed, self._listed_pending = self._listed_pending, None
            buckets = self._listed
        if listed:
            self.on_listed()
        stream = self.inner.watch(self._narrow(options, buckets), read_timeout=read_timeout)
        if not self.primary:
            return stream
        return _FilteredWatch(stream, self._keep(buckets))
