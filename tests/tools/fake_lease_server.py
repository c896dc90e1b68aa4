"""An in-memory Lease endpoint for the leader election unit tests (tools/leaderelection)."""

from __future__ import annotations

import copy
import threading

from client.errors import APIError, TransportError


class FakeLeaseServer:
    """GET/POST/PUT of one Lease, with optimistic concurrency like the API server."""

    def __init__(self):
        self.lease = None
        self.rv = 0
        self.writes = []  # spec of every successful write, in order
        self.fail = False  # every request raises TransportError while True
        self.lock = threading.Lock()

    def request(self, method, path, params=None, body=None, content_type=None, timeout=None):
        with self.lock:
            if self.fail:
                raise TransportError("connection refused")
            if method == "GET":
                if self.lease is None:
                    raise APIError(404, "NotFound", 'leases "lock" not found')
                return copy.deepcopy(self.lease)
            if method == "POST":
                if self.lease is not None:
                    raise APIError(409, "AlreadyExists", "exists")
                return self._store(body)
            if method == "PUT":
                if (
                    body["metadata"].get("resourceVersion")
                    != self.lease["metadata"]["resourceVersion"]
                ):
                    raise APIError(409, "Conflict", "the object has been modified")
                return self._store(body)
            raise AssertionError(method)

    def _store(self, body):
        self.rv += 1
        lease = copy.deepcopy(body)
        lease["metadata"]["resourceVersion"] = str(self.rv)
        self.lease = lease
        self.writes.append(copy.deepcopy(lease["spec"]))
        return copy.deepcopy(lease)
