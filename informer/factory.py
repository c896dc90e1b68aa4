"""SharedInformerFactory: one informer per resource, shared by every controller in the process.

client-go twin: ``informers/factory.go`` (``NewSharedInformerFactoryWithOptions``) and
``dynamic/dynamicinformer`` (``ForResource``): since objects are plain dicts, one generic
``for_resource(group, version, resource)`` replaces the generated typed accessors.

Sharing is the point: two controllers that both watch Deployments ask the factory and get the same
informer, so the process holds one cache and one watch per resource however many handlers there
are.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeGuard

from client.rest import Interface, RESTClient
from informer.fifo import TransformFunc
from informer.listwatch import ListerWatcher, ListWatch, TweakListOptionsFunc
from informer.metrics import NOOP_METRICS, InformerMetricsProvider
from informer.shared_informer import SharedIndexInformer, wait_for_cache_sync
from informer.store import IndexFunc

__all__ = ["GroupVersionResource", "SharedInformerFactory"]


if TYPE_CHECKING:  # a type only: importing this module must not load the official client
    from kubernetes.client import ApiClient


def _is_rest_client(client: object) -> TypeGuard[Interface]:
    return isinstance(client, RESTClient) or (
        callable(getattr(client, "request", None)) and callable(getattr(client, "stream", None))
    )


class GroupVersionResource(NamedTuple):
    """Identifies an informer (apimachinery ``schema.GroupVersionResource``); core group is ""."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return (
            f"{self.group}/{self.version}/{self.resource}"
            if self.group
            else f"{self.version}/{self.resource}"
        )


class SharedInformerFactory:
    """Creates, starts and syncs informers, one per group/version/resource.

    client-go twin: informers `sharedInformerFactory` with dynamicinformer's `ForResource`.
    Differs: one generic `for_resource` instead of generated typed accessors (objects are dicts).

    ``client`` is an official ``kubernetes.client.ApiClient`` (wrapped in a ``RESTClient``) or a
    ``RESTClient`` already. ``namespace`` limits every informer to one namespace;
    ``tweak_list_options`` edits every list/watch request (e.g. to add a label selector);
    ``transform`` rewrites objects before they are cached (e.g. to drop ``managedFields``);
    ``fifo`` picks the reflector queue ("real", the default, or "delta"). ``metrics`` is an
    ``InformerMetricsProvider`` (None: no metrics); ``name`` is their ``name`` label.
    ``use_watch_list`` False makes every informer list instead of streaming its initial state
    (None: client-go's ``WatchListClient`` gate, on unless ``KUBE_FEATURE_WatchListClient`` is
    false; see informer/reflector.py).
    """

    def __init__(
        self,
        client: Interface | ApiClient,
        default_resync: float = 0.0,
        namespace: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        fifo: str = "real",
        *,
        name: str = "informer",
        metrics: InformerMetricsProvider | None = None,
        use_watch_list: bool | None = None,
    ) -> None:
        # the shared transport; anything with RESTClient's request/stream methods is used as is
        self.rest_client = client if _is_rest_client(client) else RESTClient(client)
        self.default_resync = default_resync  # seconds; each informer's default handler resync
        self.namespace = namespace or None  # None: all namespaces
        self.tweak_list_options = tweak_list_options  # applied to every list and watch
        self.transform = transform  # applied to every object before it is cached
        self.fifo = fifo  # "real" or "delta", for every informer made here
        self.name = name  # the metrics' name label
        self.metrics = metrics  # None: informers record nothing
        # informers stream their initial state (WatchList); None: the WatchListClient gate decides
        self.use_watch_list = use_watch_list
        self._lock = threading.Lock()  # guards the three fields below
        self._informers: dict[GroupVersionResource, SharedIndexInformer] = {}  # one per GVR
        self._threads: dict[GroupVersionResource, threading.Thread] = {}  # started informers
        self._shutting_down = False  # shutdown() was called: start() does nothing more

    def for_resource(
        self,
        group: str,
        version: str,
        resource: str,
        *,
        resync: float | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        wrap: Callable[[ListWatch], ListerWatcher] | None = None,
    ) -> SharedIndexInformer:
        """The informer for one resource, created on first request (core group is "").

        ``resync`` and ``indexers`` only matter on that first request (client-go
        ``WithCustomResyncConfig``; ``AddIndexers`` before start). So does ``wrap``, which
        puts a list/watch of its own around the factory's (no client-go twin: sharding's
        ``runtime.sharding.scope.ScopedListWatch``, whose selectors change at run time).
        """
        gvr = GroupVersionResource(group, version, resource)
        with self._lock:
            informer = self._informers.get(gvr)
            if informer is not None:
                if indexers:
                    informer.add_indexers(indexers)
                return informer
            list_watch = ListWatch(
                self.rest_client,
                group,
                version,
                resource,
                self.namespace,
                tweak_list_options=self.tweak_list_options,
                # The shipped client can keep list items encoded until the informer reads them;
                # a substitute (a test's fake) need not know the keyword.
                lazy_items=isinstance(self.rest_client, RESTClient),
            )
            source: ListerWatcher = list_watch if wrap is None else wrap(list_watch)
            metrics = (
                self.metrics.for_informer(self.name, group, version, resource)
                if self.metrics is not None
                else NOOP_METRICS
            )
            informer = SharedIndexInformer(
                source,
                self.default_resync if resync is None else resync,
                indexers,
                transform=self.transform,
                fifo=self.fifo,
                name=f"{resource}.{group}" if group else resource,
                use_watch_list=self.use_watch_list,
                metrics=metrics,
            )
            self._informers[gvr] = informer
            return informer

    def start(self, stop: threading.Event) -> None:
        """Run every informer not yet running, each on its own thread.

        Call again after adding more informers.
        """
        with self._lock:
            if self._shutting_down:
                return
            for gvr, informer in self._informers.items():
                if gvr in self._threads:
                    continue
                # Daemon: an informer holds only a cache rebuilt at the next start, so losing it
                # at interpreter exit is harmless; shutdown() is the orderly way out.
                thread = threading.Thread(
                    target=informer.run, args=(stop,), name=f"informer-{informer.name}", daemon=True
                )
                self._threads[gvr] = thread
                thread.start()

    def wait_for_cache_sync(
        self, stop: threading.Event, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for every started informer's first list; returns whether each one synced."""
        with self._lock:
            started = {gvr: self._informers[gvr] for gvr in self._threads}
        deadline = None if timeout is None else time.monotonic() + timeout
        results: dict[GroupVersionResource, bool] = {}
        for gvr, informer in started.items():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            results[gvr] = wait_for_cache_sync(stop, informer, timeout=remaining)
        return results

    def shutdown(self, timeout: float | None = None) -> None:
        """After ``stop`` is set: wait for every informer thread to finish.

        client-go ``Shutdown``.
        """
        with self._lock:
            self._shutting_down = True
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def informers(self) -> dict[GroupVersionResource, SharedIndexInformer]:
        with self._lock:
            return dict(self._informers)
