"""Informer metrics on prometheus-client, under client-go's names where client-go has them.

client-go twin: the informer metrics of ``component-base/metrics/prometheus/clientgo`` (subsystem
``informer``, labels ``name``, ``group``, ``version``, ``resource``):

- ``informer_queued_items`` (gauge): entries waiting in the informer's FIFO;
- ``informer_store_resource_version`` (gauge): the resourceVersion of the last change applied to
  the cache (its 15 least significant digits, as upstream, so it fits a float exactly);
- ``informer_processing_latency_seconds`` (histogram): time to apply one popped entry to the cache
  and hand it to the handlers' buffers.

Ours, with the same labels: ``informer_lists_total`` (list calls made, pages not counted),
``informer_relists_total`` (lists or WatchList streams after the first, i.e. recoveries),
``informer_watches_total`` (watch requests opened) and ``informer_watch_events_total`` (events
received, bookmarks included).

Metrics are opt-in: components take an ``InformerMetrics`` and default to ``NOOP_METRICS``, so
tests and libraries create nothing in the global registry unless asked.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # imported when a provider is built: informers with NOOP_METRICS never load prometheus_client
    from prometheus_client import CollectorRegistry

__all__ = [
    "NOOP_METRICS",
    "InformerMetrics",
    "InformerMetricsProvider",
    "default_metrics_provider",
]

LABELS = ("name", "group", "version", "resource")


class InformerMetrics:
    """The hooks one informer calls; this base class records nothing.

    No single client-go twin: upstream informers report through component-base's client-go
    metrics; these hooks carry the same ``informer_*`` values and a few of our own.
    """

    def set_queued_items(self, count: int) -> None:
        """The FIFO now holds ``count`` entries."""

    def set_store_resource_version(self, resource_version: str) -> None:
        """The cache has applied a change at ``resource_version``."""

    def observe_processing_latency(self, seconds: float) -> None:
        """One popped entry took ``seconds`` to apply and distribute."""

    def inc_lists(self) -> None:
        """A (possibly paged) list started."""

    def inc_relists(self) -> None:
        """A list other than the first started."""

    def inc_watches(self) -> None:
        """A watch request was opened."""

    def inc_watch_events(self) -> None:
        """A watch event arrived."""


NOOP_METRICS = InformerMetrics()


class _BoundInformerMetrics(InformerMetrics):
    """The prometheus children of one informer's label values, resolved once."""

    def __init__(self, provider: InformerMetricsProvider, labels: tuple[str, ...]) -> None:
        self._queued = provider.queued_items.labels(*labels)  # gauge child
        self._store_rv = provider.store_resource_version.labels(*labels)  # gauge child
        self._latency = provider.processing_latency.labels(*labels)  # histogram child
        self._lists = provider.lists.labels(*labels)  # counter child
        self._relists = provider.relists.labels(*labels)  # counter child
        self._watches = provider.watches.labels(*labels)  # counter child
        self._events = provider.watch_events.labels(*labels)  # counter child

    def set_queued_items(self, count: int) -> None:
        self._queued.set(count)

    def set_store_resource_version(self, resource_version: str) -> None:
        tail = resource_version[-15:]
        if tail.isdigit():  # resourceVersions are opaque; only numeric ones can be plotted
            self._store_rv.set(int(tail))

    def observe_processing_latency(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def inc_lists(self) -> None:
        self._lists.inc()

    def inc_relists(self) -> None:
        self._relists.inc()

    def inc_watches(self) -> None:
        self._watches.inc()

    def inc_watch_events(self) -> None:
        self._events.inc()


class InformerMetricsProvider:
    """Owns the metric families in one registry and hands out per-informer bindings.

    Plays the part of component-base's client-go metrics registration (no client-go twin of
    its own); opt-in, so tests create nothing in the global registry.
    """

    def __init__(self, registry: CollectorRegistry | None) -> None:
        """``registry``: where the families are registered (None: nowhere)."""
        from prometheus_client import Counter, Gauge, Histogram

        kw: dict[str, Any] = {"labelnames": LABELS, "registry": registry}
        self.queued_items = Gauge(
            "informer_queued_items", "Number of items currently queued in the FIFO.", **kw
        )
        self.store_resource_version = Gauge(
            "informer_store_resource_version",
            "Resource version of the last change applied to the informer's store "
            "(15 least significant digits).",
            **kw,
        )
        self.processing_latency = Histogram(
            "informer_processing_latency_seconds",
            "Time taken to process events after popping from the queue.",
            buckets=(0.00001, 0.0001, 0.001, 0.01, 0.1, 1.0, 10.0),
            **kw,
        )
        self.lists = Counter("informer_lists", "List calls made by the reflector.", **kw)
        self.relists = Counter(
            "informer_relists", "Lists after the first one (recoveries from watch failures).", **kw
        )
        self.watches = Counter("informer_watches", "Watch requests opened by the reflector.", **kw)
        self.watch_events = Counter(
            "informer_watch_events", "Watch events received, bookmarks included.", **kw
        )

    def for_informer(self, name: str, group: str, version: str, resource: str) -> InformerMetrics:
        return _BoundInformerMetrics(self, (name, group, version, resource))


_default_provider: InformerMetricsProvider | None = None
_default_lock = threading.Lock()


def default_metrics_provider() -> InformerMetricsProvider:
    """The provider on prometheus-client's global registry, created on first use."""
    from prometheus_client import REGISTRY

    global _default_provider
    with _default_lock:
        if _default_provider is None:
            _default_provider = InformerMetricsProvider(REGISTRY)
        return _default_provider
