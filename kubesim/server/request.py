"""What a request is: its parsed resource path, its Kubernetes verb, and its log record.

Twin of k8s.io/apiserver/pkg/endpoints/request (``RequestInfoFactory.NewRequestInfo`` turns a
URL into group, version, namespace, resource, name, subresource and verb) and of the
request log in k8s.io/apiserver/pkg/server/httplog, which records a request when its response
is written. ``Request`` is the in-flight state the server fills in as it routes; ``Route`` is
a resource URL resolved against the registry.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from urllib.parse import parse_qs

from kubesim.api import errors
from kubesim.api.resources import Registry, ResourceInfo
from kubesim.auth.authenticator import ANONYMOUS_USER
from kubesim.auth.user import UserInfo

__all__ = ["Request", "RequestRecord", "Route", "parse_route", "unknown_resource", "verb_of"]


@dataclass(frozen=True)
class RequestRecord:
    """One served request, for tests that check which API calls a component made."""

    # Kubernetes verb (get list watch create update patch delete deletecollection), or the
    # HTTP method for non-resource paths
    verb: str
    path: str  # URL path without the query string
    resource: str  # plural ("deployments"), "plural/subresource", or "" for non-resource paths
    namespace: str  # request namespace, "" when none
    name: str  # object name, "" for collections
    user: str  # authenticated user ("system:anonymous" without a token)
    user_agent: str  # the User-Agent header
    code: int  # HTTP status code sent
    time: float  # wall-clock start (time.time())
    duration: float  # seconds until the response (for watches: until the stream ended)
    query: str = ""  # raw query string


class Request:
    """What the router learned about one request (filled in as it goes, logged at the end)."""

    __slots__ = (
        "method",
        "path",
        "query",
        "qs",
        "verb",
        "resource",
        "namespace",
        "name",
        "user",
        "user_info",
        "user_agent",
        "t0",
        "wall",
        "code",
        "logged",
        "log",
    )

    def __init__(self, method: str, path: str, qs: str, user_agent: str, log: deque[RequestRecord]):
        self.method = method  # HTTP method
        self.path = path  # URL path, percent-decoded, without the query
        self.qs = qs  # raw query string (logged)
        # query parameters; the last value wins for repeated keys
        self.query = (
            {k: v[-1] for k, v in parse_qs(qs, keep_blank_values=True).items()} if qs else {}
        )
        self.verb = method.lower()  # Kubernetes verb once routed (get/list/watch/...)
        self.resource = ""  # plural[/subresource] once routed
        self.namespace = ""  # request namespace once routed
        self.name = ""  # object name once routed
        self.user = "system:anonymous"  # set by authentication: the user's name, for the log
        self.user_info: UserInfo = ANONYMOUS_USER  # set by authentication: name, groups, ...
        self.user_agent = user_agent  # the User-Agent header
        self.t0 = time.perf_counter()  # start, for the logged duration
        self.wall = time.time()  # start, wall clock, for the log
        self.code = 0  # HTTP status sent (0 until a response is written)
        self.logged = False  # in the request log already (plain responses log before the bytes go)
        self.log = log  # the server's request log, where record() appends

    def record(self) -> None:
        """Append this request to the request log (once its status code is known)."""
        self.logged = True
        self.log.append(
            RequestRecord(
                self.verb,
                self.path,
                self.resource,
                self.namespace,
                self.name,
                self.user,
                self.user_agent,
                self.code,
                self.wall,
                time.perf_counter() - self.t0,
                self.qs,
            )
        )


@dataclass
class Route:
    """A resource URL resolved against the registry."""

    info: ResourceInfo  # the resource at the requested group-version
    namespace: str  # "" for cluster-scoped resources and all-namespace collections
    name: str  # "" for collections
    sub: str  # subresource ("status", "scale", "finalize"), "" for none
    watch_path: bool  # the legacy /watch/ prefix


def parse_route(registry: Registry, group: str, version: str, parts: list[str]) -> Route:
    """Resolve the path segments after /api/v1 or /apis/<group>/<version>.

    Accepts ``[watch/][namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``. A "namespaces"
    prefix counts only when the resource after it is namespaced (``namespaces/<name>/status``
    is the Namespace's own subresource). Unknown resources are 404 (the core group's carries
    a NotFound Status, a named group's is a plain "404 page not found", as the real server's).
    """
    watch_path = False
    if parts and parts[0] == "watch":
        watch_path = True
        parts = parts[1:]
    ns = ""
    if len(parts) >= 3 and parts[0] == "namespaces":
        info = registry.lookup(group, version, parts[2])
        if info is not None and info.namespaced:
            ns = parts[1]
            parts = parts[2:]
    if not parts or len(parts) > 3:
        raise unknown_resource(registry, group, version)
    info = registry.lookup(group, version, parts[0])
    if info is None:
        raise unknown_resource(registry, group, version)
    if ns and not info.namespaced:
        raise errors.page_not_found()
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    return Route(info, ns, name, sub, watch_path)


def unknown_resource(registry: Registry, group: str, version: str) -> errors.ApiError:
    """The 404 for a path under a served group-version that names nothing served there.

    Built-in group-versions are go-restful WebServices: a path none of their routes matches
    (an unknown resource, ``namespaces/default/pods`` when pods are not served, an unknown
    subresource) goes to the container's ServiceErrorHandler, which answers
    ``NewGenericServerResponse(404, ...)``: reason NotFound, "the server could not find the
    requested resource", and ``details: {}`` (an empty but non-nil StatusDetails). A CRD's
    group is served by the apiextensions handler, whose miss falls through to the plain
    "404 page not found" of the not-found handler.
    """
    if any(i.custom for i in registry.resources_of(group, version)):
        return errors.page_not_found()
    return errors.ApiError(404, errors.generic_not_found())


def verb_of(method: str, name: str, watch: bool) -> str:
    """The Kubernetes verb of a resource request (RequestInfoFactory's method-to-verb map)."""
    if method == "GET":
        if watch:
            return "watch"
        return "get" if name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return method.lower()
