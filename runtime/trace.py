"""``--trace``: the path of every change, one log line per step, on the ``runtime.trace``
logger.

No client-go twin: a learning aid (docs/walkthrough.md follows it line by line). The steps are
logged where they happen: the Foo controller logs ``enqueue``, ``owner lookup`` and ``status
write`` on this logger, its workers (``runtime.worker``) ``dequeue``; ``install_trace`` adds
the first step, the informer's notification, as one more handler on the controller's own shared
informer.

This is the one trace printer. ``sample-controller --trace`` shows its records through the
process's log formatter; the demo (``python -m demo``) runs the controller with the same flag
and renders the same records as its ``watch`` lines. The logger stays at WARNING until
``install_trace`` lowers it, so a silent trace costs one level check per step.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from informer.interfaces import TypedInformer
from informer.shared_informer import ResourceEventHandlerFuncs
from informer.store import DeletedFinalStateUnknown

__all__ = ["TRACE_LOGGER", "Notification", "install_trace"]

TRACE_LOGGER = "runtime.trace"

trace = logging.getLogger(TRACE_LOGGER)
trace.setLevel(logging.WARNING)

Notification = Literal["add", "update", "delete", "resync"]
"""The ``event`` field of an ``"informer"`` record; ``resync`` is an update whose
resourceVersion did not change (the informer's periodic resync, not a change)."""


def install_trace(informer: TypedInformer[Any], kind: str) -> None:
    """Turn the trace logger on and log every notification of ``informer`` as an
    ``"informer"`` record with the fields ``kind``, ``event``, ``object`` and ``rv``.

    The handler is one more listener on the shared informer (its own thread, its own buffer),
    so it sees each change right after the cache has applied it, next to the controller's
    handler. Installed before the controller's, it is listener ``-1`` in thread names.
    """
    trace.setLevel(logging.INFO)

    def show(event: Notification, obj: Any, old: Any = None) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            # a tombstone carries the last known state
            obj = obj.obj
        meta = (obj.get("metadata") or {}) if isinstance(obj, dict) else {}
        rv = meta.get("resourceVersion")
        if old is not None and (old.get("metadata") or {}).get("resourceVersion") == rv:
            event = "resync"
        trace.info(
            "informer",
            extra={
                "kind": kind,
                "event": event,
                "object": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                "rv": rv,
            },
        )

    informer.add_event_handler(
        ResourceEventHandlerFuncs(
            add_func=lambda obj: show("add", obj),
            update_func=lambda old, new: show("update", new, old),
            delete_func=lambda obj: show("delete", obj),
        )
    )
