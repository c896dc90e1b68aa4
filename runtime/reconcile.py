"""What a Builder-made controller hands its reconciler: a ``Request``, and what it gets back.

controller-runtime twin: ``pkg/reconcile`` (``reconcile.Request``,
``reconcile.Reconciler``, ``reconcile.Func``, ``reconcile.Result``). A ``Request`` names the object
to reconcile and nothing else: the reconcile is level-based and reads the object's current state
itself (from the cache, ``runtime.client``), so every event of the same object is one request,
merged by the queue while it waits.

Deliberate differences:

- ``Result`` is ``runtime.worker.Result``, which also carries the error (Go returns
  ``(Result, error)``; a Python reconciler may also raise, which is the same error);
- the reconciler is handed ``runtime.context.Context`` as Go's is handed ``ctx``: the deadline
  of its writes once the process stops.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.context import Context
from runtime.worker import Result

__all__ = ["Func", "Reconciler", "Request", "Result", "request_for"]


@dataclass(frozen=True, order=True)
class Request:
    """The namespace and name of the object to reconcile (controller-runtime ``reconcile.Request``,
    whose ``types.NamespacedName`` prints as ``namespace/name``). Frozen and hashable: the queue
    holds it, and merges equal requests."""

    namespace: str
    name: str

    def __str__(self) -> str:
        # a cluster-scoped object has no namespace: just its name, as NamespacedName prints it
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def request_for(obj: Mapping[str, Any]) -> Request:
    """The request of an object: its metadata's namespace and name."""
    meta = obj.get("metadata") or {}
    return Request(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class Reconciler(Protocol):
    """Brings one object's world in line with what it asks for (controller-runtime
    ``reconcile.Reconciler``).

    Called with the same request again after any change of the object or of what it owns, and
    on every resync: it must read the current state and not rely on what changed.
    """

    def reconcile(self, ctx: Context, request: Request) -> Result: ...


@dataclass(frozen=True)
class Func:
    """A plain function as a ``Reconciler`` (controller-runtime ``reconcile.Func``)."""

    fn: Callable[[Context, Request], Result]

    def reconcile(self, ctx: Context, request: Request) -> Result:
        return self.fn(ctx, request)
