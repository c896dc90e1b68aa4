"""A controller's API writes, each under an expectation and within the shutdown budget.

kube-controller-manager twin: ``RealPodControl`` beside ``ControllerExpectations`` in
``pkg/controller/controller_utils.go``: the ReplicaSet controller raises an expectation, then
asks its pod control to create, and lowers the expectation itself when the create failed.
Here the same two steps are one call, so that a sync's writes touch the expectations in one
place (``runtime.expectations`` says why each write is announced before it is sent):

- ``create``: the object's ADDED (and even its DELETED) event may be handled before the
  response is read, so the create is announced first, for its owner's uid;
- ``update``: announced at the resourceVersion it replaces; an event of the object handled
  while the update was in flight is held, and if it was someone else's change, ``update``
  enqueues the key it is given, as the handler would have.

Every write also says who made it (``fieldManager``, so managedFields name the controller)
and takes its timeout from the reconcile's ``ctx`` (``runtime.context.Context``): once
stopping, no longer than the drain deadline, and not at all past it (AbandonedError).
"""

from __future__ import annotations

import logging
from typing import Any

from client.errors import APIError, is_not_found
from client.rest import RESTClient
from runtime.context import Context
from runtime.expectations import Expectations
from runtime.trace import TRACE_LOGGER
from workqueue import RateLimitingQueue

__all__ = ["REQUEST_TIMEOUT", "GoneError", "TrackedWrites"]

trace = logging.getLogger(TRACE_LOGGER)

# seconds a write may take, until the shutdown budget says less
REQUEST_TIMEOUT = 60.0


class GoneError(Exception):
    """An update met a 404: the object was deleted after our cache read it. As a 409, a
    requeue, not an error: its delete event enqueues the owner again (controller-runtime's
    ``IgnoreNotFound``)."""


class TrackedWrites:
    """Creates and updates through ``rest``, tracked in ``expectations`` (kube-controller-manager
    twin: k8s.io/kubernetes ``pkg/controller`` ``RealPodControl``, with the ``ExpectCreations``
    / ``CreationObserved`` its callers make around it)."""

    def __init__(
        self,
        rest: RESTClient,
        expectations: Expectations,
        queue: RateLimitingQueue,
        field_manager: str,
    ) -> None:
        self.rest = rest
        self.expectations = expectations
        self.queue = queue
        self.field_manager = field_manager

    def create(
        self, ctx: Context, resource: str, key: str, path: str, body: Any, owner: str | None
    ) -> Any:
        """POST ``body`` (the object ``resource`` ``key``, made for the object of uid
        ``owner``); the object as created."""
        self.expectations.begin_create(resource, key, owner=owner)
        created = None
        try:
            created = self._write(ctx, "POST", path, body)
            return created
        finally:
            self.expectations.end_update(resource, key, _resource_version(created))

    def update(
        self,
        ctx: Context,
        resource: str,
        key: str,
        path: str,
        body: Any,
        enqueue: str | None = None,
    ) -> Any:
        """PUT ``body``, which carries the resourceVersion it replaces; the object as written.

        ``enqueue``: the queue key to add if someone else changed the object while the update
        was in flight (its event was held, so its handler did not enqueue it). Raises
        ``GoneError`` when the object no longer exists.
        """
        replaced = _resource_version(body)
        if not replaced:
            return self._write(ctx, "PUT", path, body)
        self.expectations.begin_update(resource, key, replaced)
        written = None
        try:
            written = self._write(ctx, "PUT", path, body)
            return written
        finally:
            changed = self.expectations.end_update(resource, key, _resource_version(written))
            if changed and enqueue is not None:
                trace.info("enqueue", extra={"key": enqueue})
                self.queue.add(enqueue)

    def _write(self, ctx: Context, method: str, path: str, body: Any) -> Any:
        try:
            return self.rest.request(
                method,
                path,
                params={"fieldManager": self.field_manager},
                body=body,
                timeout=ctx.timeout(path, REQUEST_TIMEOUT),
            )
        except APIError as err:
            if method == "PUT" and is_not_found(err):
                raise GoneError(path) from err
            raise


def _resource_version(obj: Any) -> str | None:
    rv = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    return rv if isinstance(rv, str) and rv else None
