"""The Bar controller: a Bar names a ConfigMap and its data; the controller keeps that ConfigMap,
owned by the Bar, in line with it (docs/your-own-controller.md builds it step by step)."""
