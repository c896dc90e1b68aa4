"""ListWatch: the list and watch calls of one resource, as raw JSON over the official client.

client-go twin: ``tools/cache/listwatch.go`` (``ListWatch``, ``NewFilteredListWatchFromClient``)
as the dynamic informers use it.

Any group/version/resource works, custom resources included, because nothing is decoded into model
classes: ``list`` returns the decoded list (a dict with ``metadata`` and ``items``) and ``watch``
returns a ``WatchStream`` yielding ``{"type", "object"}`` dicts line by line. Options are the
API's query parameters under their wire names (``resourceVersion``, ``limit``, ``continue``,
``timeoutSeconds``, ``allowWatchBookmarks``, ``sendInitialEvents``, ``resourceVersionMatch``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from client.objects import Object
from client.rest import Interface, resource_path
from client.watch import Watch

__all__ = ["ListerWatcher", "ListWatch", "TweakListOptionsFunc", "watch_read_timeout"]

TweakListOptionsFunc = Callable[[dict[str, Any]], None]
"""Edits list/watch options in place, e.g. to add a label selector.

client-go ``TweakListOptionsFunc``.
"""

CONNECT_TIMEOUT = 10.0  # seconds to establish a connection, for lists and watches alike
LIST_READ_TIMEOUT = 60.0  # seconds without a byte before a list (page) request fails


def watch_read_timeout(timeout_seconds: float) -> float:
    """The stall guard for a watch asked to end after ``timeout_seconds``.

    A healthy server closes the watch at ``timeoutSeconds`` (after a bookmark, when anything
    changed), so a read that waits a little longer than that has met a dead connection: a load
    balancer that cut it without a FIN, or a hung server. Failing that read is what keeps the
    watch from stalling silently, the failure other Python clients are known for.
    """
    return timeout_seconds + max(2.0, 0.05 * timeout_seconds)


class ListerWatcher(Protocol):
    """What a reflector needs from its source (client-go ``ListerWatcher``)."""

    def list(self, options: Mapping[str, Any]) -> Object: ...

    def watch(self, options: Mapping[str, Any], *, read_timeout: float | None = None) -> Watch: ...


class ListWatch:
    """Lists and watches one resource, namespaced or across all namespaces.

    client-go twin: ``cache.ListWatch`` from ``NewFilteredListWatchFromClient``. Differs: raw
    JSON over ``RESTClient`` for any group/version/resource, no typed client behind it.

    ``label_selector`` and ``field_selector`` restrict both calls (the informer then caches only
    matching objects); ``tweak_list_options`` sees every options dict last and may change anything.
    """

    def __init__(
        self,
        rest_client: Interface,
        group: str,
        version: str,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        lazy_items: bool = False,
    ) -> None:
        self.rest_client = rest_client  # the shared transport; thread-safe
        self.group = group  # API group; "" is the core group
        self.version = version  # API version, e.g. "v1"
        self.resource = resource  # plural resource name, e.g. "deployments"
        self.namespace = namespace or None  # None lists and watches all namespaces
        self.label_selector = label_selector or None  # applied to list and watch
        self.field_selector = field_selector or None  # applied to list and watch
        self.tweak_list_options = tweak_list_options  # last word on every options dict
        # list answers keep their items encoded until read (jsonutil.LazyItems): the reflector
        # reads each once, into the store's transform, so a big list never exists decoded whole
        self.lazy_items = lazy_items
        self.path = resource_path(group, version, resource, self.namespace)  # the collection URL

    def __repr__(self) -> str:
        gv = f"{self.group}/{self.version}" if self.group else self.version
        where = f" in {self.namespace}" if self.namespace else ""
        return f"ListWatch({gv}, Resource={self.resource}{where})"

    def _params(self, options: Mapping[str, Any]) -> dict[str, Any]:
        params = {k: v for k, v in options.items() if v is not None and v != ""}
        if self.label_selector and "labelSelector" not in params:
            params["labelSelector"] = self.label_selector
        if self.field_selector and "fieldSelector" not in params:
            params["fieldSelector"] = self.field_selector
        if self.tweak_list_options is not None:
            self.tweak_list_options(params)
        return params

    def list(self, options: Mapping[str, Any]) -> Object:
        """One list request (one page when ``limit`` is set); raises APIError / TransportError.

        An empty ``resourceVersion`` is dropped, which asks for a consistent (quorum) read.
        """
        params = self._params(options)
        timeout = (CONNECT_TIMEOUT, LIST_READ_TIMEOUT)
        if self.lazy_items:
            return self.rest_client.request(
                "GET", self.path, params=params, timeout=timeout, lazy_items=True
            )
        return self.rest_client.request("GET", self.path, params=params, timeout=timeout)

    def watch(self, options: Mapping[str, Any], *, read_timeout: float | None = None) -> Watch:
        """Open a watch; a read that waits longer than ``read_timeout`` raises TransportError.

        ``read_timeout`` defaults to ``watch_read_timeout(timeoutSeconds)``.
        """
        params = self._params(options)
        params["watch"] = True
        if read_timeout is None:
            read_timeout = watch_read_timeout(float(params.get("timeoutSeconds") or 300))
        return self.rest_client.stream(
            self.path, params=params, timeout=(CONNECT_TIMEOUT, read_timeout)
        )
