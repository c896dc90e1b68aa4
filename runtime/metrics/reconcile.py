"""Reconcile metrics, under controller-runtime's names so its dashboards work unchanged.

controller-runtime twin: ``pkg/internal/controller/metrics`` (``controller_runtime_reconcile_total``
with label ``result`` in success | error | requeue, ``controller_runtime_reconcile_errors_total``,
``controller_runtime_reconcile_time_seconds``). sample-controller itself exports none; the
workqueue's ``workqueue_*`` series come from ``workqueue.metrics``.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # imported when the metrics are built: only a process that serves /metrics builds them
    # (runtime.manager.Metrics), so one that does not never loads prometheus_client
    from prometheus_client import CollectorRegistry

__all__ = ["ReconcileMetrics"]

# controller-runtime's reconcile time buckets (0.005 s .. 60 s).
_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)


# The families registered in each registry: every controller of a process counts into the same
# three families, under its own ``controller`` label (a family cannot be registered twice).
_FAMILIES: weakref.WeakKeyDictionary[CollectorRegistry, tuple[Any, Any, Any]] = (
    weakref.WeakKeyDictionary()
)


class ReconcileMetrics:
    """Counters and a histogram for one controller, labelled ``controller=<name>``
    (controller-runtime's reconcile metrics; sample-controller has none)."""

    def __init__(self, controller: str, registry: CollectorRegistry | None) -> None:
        """``registry``: where the metrics are registered (None: nowhere, for a test that reads
        them off this object)."""
        # the label value, e.g. "foo"
        self.controller = controller
        if registry is not None and registry in _FAMILIES:
            self.total, self.errors, self.duration = _FAMILIES[registry]
        else:
            self.total, self.errors, self.duration = self._families(registry)
            if registry is not None:
                _FAMILIES[registry] = (self.total, self.errors, self.duration)
        # create the series at zero so a scrape shows them before the first reconcile
        for result in ("success", "error", "requeue"):
            self.total.labels(controller, result)
        self.errors.labels(controller)

    @staticmethod
    def _families(registry: CollectorRegistry | None) -> tuple[Any, Any, Any]:
        from prometheus_client import Counter, Histogram

        total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=registry,
        )
        errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=registry,
        )
        duration = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=_BUCKETS,
            registry=registry,
        )
        return total, errors, duration

    def observe(self, result: str, seconds: float) -> None:
        self.total.labels(self.controller, result).inc()
        if result == "error":
            self.errors.labels(self.controller).inc()
        self.duration.labels(self.controller).observe(seconds)
