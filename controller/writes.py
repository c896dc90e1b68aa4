"""A controller's API writes, each under an expectation and within the shutdown budget.

kube-controller-manager twin: ``RealPodControl`` beside ``ControllerExpectations`` in
``pkg/controller/controller_utils.go``: the ReplicaSet controller raises an expectation, then
asks its pod control to create, and lowers the expectation itself when the create failed.
Here the same two steps are one call, so that a sync's writes touch the expectations in one
place (``controller.expectations`` says why each write is announced before it is sent):

- ``create``: the object's ADDED (and even its DELETED) event may be handled before the
  response is read, so the create is announced first, for its owner's uid;
- ``update``: announced at the resourceVersion it replaces; an event of the object handled
  while the update was in flight is held, and if it was someone else's change, ``update``
  enqueues the key it is given, as the handler would have.

Every write also says who made it (``fieldManager``, so managedFields name the controller)
and asks the workers how long it may take: once stopping, no longer than the drain deadline,
and not at all past it (``controller.worker.Workers.time_for_write``, AbandonedError).
"""

from __future__ import annotations

import logging
from typing import Any

from client.rest import RESTClient
from controller.expectations import Expectations
from controller.trace import TRACE_LOGGER
from controller.worker import Workers
from workqueue import RateLimitingQueue

__all__ = ["REQUEST_TIMEOUT", "TrackedWrites"]

trace = logging.getLogger(TRACE_LOGGER)

# seconds a write may take, until the shutdown budget says less
REQUEST_TIMEOUT = 60.0


class TrackedWrites:
    """Creates and updates through ``rest``, tracked in ``expectations`` (kube-controller-manager
    twin: k8s.io/kubernetes ``pkg/controller`` ``RealPodControl``, with the ``ExpectCreations``
    / ``CreationObserved`` its callers make around it)."""

    def __init__(
        self,
        rest: RESTClient,
        expectations: Expectations,
        workers: Workers,
        queue: RateLimitingQueue,
        field_manager: str,
    ) -> None:
        self.rest = rest
        self.expectations = expectations
        self.workers = workers
        self.queue = queue
        self.field_manager = field_manager

    def create(self, resource: str, key: str, path: str, body: Any, owner: str | None) -> Any:
        """POST ``body`` (the object ``resource`` ``key``, made for the object of uid
        ``owner``); the object as created."""
        self.expectations.begin_create(resource, key, owner=owner)
        created = None
        try:
            created = self._write("POST", path, body)
            return created
        finally:
            self.expectations.end_update(resource, key, _resource_version(created))

    def update(
        self, resource: str, key: str, path: str, body: Any, enqueue: str | None = None
    ) -> Any:
        """PUT ``body``, which carries the resourceVersion it replaces; the object as written.

        ``enqueue``: the queue key to add if someone else changed the object while the update
        was in flight (its event was held, so its handler did not enqueue it).
        """
        replaced = _resource_version(body)
        if not replaced:
            return self._write("PUT", path, body)
        self.expectations.begin_update(resource, key, replaced)
        written = None
        try:
            written = self._write("PUT", path, body)
            return written
        finally:
            changed = self.expectations.end_update(resource, key, _resource_version(written))
            if changed and enqueue is not None:
                trace.info("enqueue", extra={"key": enqueue})
                self.queue.add(enqueue)

    def lookup(self, path: str, name: str) -> Any | None:
        """The object ``name`` of the collection at ``path`` as the API has it (not the
        cache), or None: what a sharded create that met 409 found. A LIST narrowed to the name
        rather than a GET, so that sharding needs no verb the controller's ClusterRole lacks
        (manifests/base/rbac.yaml grants list, watch, create and update on Deployments)."""
        found = self.rest.request(
            "GET",
            path,
            params={"fieldSelector": f"metadata.name={name}"},
            timeout=self.workers.time_for_write(path, REQUEST_TIMEOUT),
        )
        items = list(found.get("items") or [])
        return items[0] if items else None

    def _write(self, method: str, path: str, body: Any) -> Any:
        return self.rest.request(
            method,
            path,
            params={"fieldManager": self.field_manager},
            body=body,
            timeout=self.workers.time_for_write(path, REQUEST_TIMEOUT),
        )


def _resource_version(obj: Any) -> str | None:
    rv = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    return rv if isinstance(rv, str) and rv else None
