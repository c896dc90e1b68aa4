"""Metrics: the secure /metrics server and the reconcile counters (controller-runtime
pkg/metrics)."""
