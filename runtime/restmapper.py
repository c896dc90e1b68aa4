"""Which kind a resource holds, and whether it is namespaced: the API's discovery, asked once.

controller-runtime twin: ``pkg/client/apiutil``'s dynamic, lazy ``RESTMapper`` (one discovery
request per group-version, the first time it is needed, then kept). This project names
resources by GVR (``("apps", "v1", "deployments")``) where controller-runtime starts from a Go
type's kind, so it is asked the other way round: a resource's kind (which owner references and
the Builder's default controller name need) and scope (which requests of an owner carry a
namespace).

Deliberate differences: GVR to kind rather than kind to GVR; what was learnt is never
forgotten (upstream reloads a group-version whose resources changed; the kinds a controller
reconciles do not change while it runs); ``register`` seeds it without a server, for tests
and tools.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from client.errors import APIError
from client.rest import Interface

__all__ = ["GVR", "Mapping", "NoResourceMatchError", "RESTMapper"]

GVR = tuple[str, str, str]

# seconds a discovery request may take
DISCOVERY_TIMEOUT = 15.0


@dataclass(frozen=True)
class Mapping:
    """A resource's kind and scope (apimachinery ``meta.RESTMapping``, the part
    used here)."""

    kind: str
    namespaced: bool


class NoResourceMatchError(LookupError):
    """The server does not serve the resource (apimachinery ``meta.NoResourceMatchError``)."""


class RESTMapper:
    """Resource to kind and scope, learnt from discovery per group-version
    (controller-runtime's dynamic ``RESTMapper``; thread-safe)."""

    def __init__(self, rest: Interface | None) -> None:
        # None: only what register() seeded is known
        self.rest = rest
        self._lock = threading.Lock()
        self._known: dict[GVR, Mapping] = {}
        self._discovered: set[tuple[str, str]] = set()

    def register(self, gvr: GVR, kind: str, namespaced: bool = True) -> None:
        """Know ``gvr`` without asking the server."""
        with self._lock:
            self._known[gvr] = Mapping(kind, namespaced)

    def mapping(self, gvr: GVR) -> Mapping:
        """The kind and scope of ``gvr``; ``NoResourceMatchError`` when not served, an
        ``APIError``/``TransportError`` when discovery fails (tried again next time)."""
        with self._lock:
            known = self._known.get(gvr)
        if known is not None:
            return known
        group, version, resource = gvr
        if self.rest is not None and (group, version) not in self._discovered:
            self._discover(group, version)
        with self._lock:
            known = self._known.get(gvr)
        if known is None:
            raise NoResourceMatchError(f"no matches for {resource}.{group}/{version}")
        return known

    def _discover(self, group: str, version: str) -> None:
        assert self.rest is not None
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            found = self.rest.request("GET", path, timeout=DISCOVERY_TIMEOUT)
        except APIError as err:
            if err.code != 404:
                raise
            # the group-version is not served (yet: its CRD may come): asked again next time
            return
        with self._lock:
            for r in found.get("resources") or []:
                name = str(r.get("name") or "")
                # subresources (deployments/status) are not kinds of their own
                if name and "/" not in name:
                    self._known.setdefault(
                        (group, version, name),
                        Mapping(str(r.get("kind") or ""), bool(r.get("namespaced"))),
                    )
            self._discovered.add((group, version))
