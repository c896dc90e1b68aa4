"""The value a reconcile is handed, as Go hands ``ctx``: how long its writes may take.

Go twin: ``context.Context`` as controller-runtime's ``Reconcile(ctx, req)`` receives it, with
its ``Deadline()``, ``Err()`` and the ``context.DeadlineExceeded`` a call made after the deadline
returns. A Go controller passes ``ctx`` to every client call, which gives up when it is done;
here the reconcile asks ``ctx`` before each write (``err``) and for the write's timeout
(``timeout``).

The deadline is the graceful shutdown's drain deadline (``runtime.shutdown.ShutdownBudget``):
unknown until the stop, so ``Context`` reads it from the budget when asked rather than holding
a number. Nothing here holds a lock while the caller works: asking is a read of the budget's
start and of one ``threading.Event``.

Deliberate difference: a Go ``ctx`` is cancelled when the manager stops, at once; ours stays
good until the drain deadline, so a sync that began before the stop may finish its writes
(sample-controller's workers, which finish their item, do the same).
"""

from __future__ import annotations

import threading

from runtime.shutdown import ShutdownBudget

__all__ = ["AbandonedError", "Context", "background"]


class AbandonedError(Exception):
    """The drain deadline has passed: the sync stops before its next write (Go twin:
    ``context.DeadlineExceeded``)."""


class Context:
    """The drain deadline of one controller's workers, as each reconcile sees it (Go twin:
    ``context.Context``, as controller-runtime hands it to ``Reconcile``)."""

    def __init__(
        self, budget: ShutdownBudget | None = None, abandoned: threading.Event | None = None
    ) -> None:
        # the shutdown budget; None: no deadline (a test, or a tool without shutdown)
        self._budget = budget
        # set by the workers once they have given up on what is in flight
        self._abandoned = abandoned if abandoned is not None else threading.Event()

    def done(self) -> bool:
        """The drain deadline has passed (by the clock, or the workers gave up)."""
        if self._abandoned.is_set():
            return True
        budget = self._budget
        return budget is not None and budget.started and budget.left(budget.drain_deadline) <= 0

    def err(self, what: str) -> None:
        """Raise ``AbandonedError`` (naming ``what`` was about to happen) once ``done``."""
        if self.done():
            raise AbandonedError(what)

    def timeout(self, what: str, default: float) -> float:
        """Seconds a request about to be sent may take: ``default``, cut to the drain deadline
        once stopping; ``AbandonedError`` if it has passed."""
        self.err(what)
        budget = self._budget
        if budget is not None and budget.started:
            return max(0.001, min(default, budget.left(budget.drain_deadline)))
        return default


def background() -> Context:
    """A context with no deadline (Go's ``context.Background()``): for tests and tools."""
    return Context()
