"""The API server: lifecycle, authentication, routing, and dispatch to the verb handlers.

Twin of k8s.io/apiserver/pkg/server (``GenericAPIServer`` and its handler chain) with the
filters of pkg/endpoints/filters (authentication and authorization, kubesim/auth/filters.py;
with authorization AlwaysAllow, anonymous users may read only the public paths) and the path
mux: discovery (/api, /apis), /openapi/v3, the health
and version paths, and resource paths. A resource request is resolved (request.py), checked
and handed to the handler of its verb (handlers.py, which calls the REST layer in rest.py and
scale.py). Sockets and HTTP parsing are in httpserver.py, response writing in responses.py.
"""

from __future__ import annotations

import ssl
import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from kubesim.admission import requester
from kubesim.api import duplicates, errors, warning
from kubesim.api.aggregated import MEDIA_TYPE as AGGREGATED_MEDIA_TYPE
from kubesim.api.aggregated import aggregated_discovery, wants_aggregated
from kubesim.api.resources import Registry, ResourceInfo
from kubesim.auth.filters import Auth
from kubesim.auth.x509 import PeerCertificate
from kubesim.registry.rest import Rest
from kubesim.registry.scale import ScaleREST
from kubesim.server.handlers import VERB_HANDLERS, create_review
from kubesim.server.httpserver import ConnectionHandler, HTTPServer, read_body
from kubesim.server.negotiation import JSON, parse_accept
from kubesim.server.request import Request, RequestRecord, parse_route, unknown_resource, verb_of
from kubesim.server.responses import pretty_json, send, send_error, send_json
from kubesim.storage.store import encode
from kubesim.views import openapi
from kubesim.views.table import TableRenderer, render_table

__all__ = ["ApiServer", "RequestRecord"]

# Paths an anonymous user may read (system:public-info-viewer).
_PUBLIC_PATHS = {"/version", "/healthz", "/livez", "/readyz"}


class ApiServer:
    """Routes requests to the REST verbs; owns auth, faults, the request log and the socket."""

    def __init__(
        self,
        rest: Rest,
        registry: Registry,
        token: str | None = None,
        faults=None,
        request_log_size: int = 100_000,
        bookmark_interval: float = 60.0,
        auth: Auth | None = None,
    ):
        self.rest = rest  # the verbs
        self.scale = ScaleREST(rest)  # the /scale subresource's verbs
        self.registry = registry  # served resources, for routing and discovery
        self.storage = rest.storage  # watch streams unregister their watchers here
        # who a request is and what it may do (kubesim/auth/); AlwaysAllow unless given
        self.auth = auth if auth is not None else Auth(rest.storage, token)
        self.faults = faults  # FaultInjector or None
        self.request_log: deque[RequestRecord] = deque(maxlen=request_log_size)  # newest last
        self._stopping = False  # stop() has begun: requests on open connections are dropped
        self.bookmark_interval = bookmark_interval  # seconds between periodic BOOKMARKs
        # callable(server, handler, req, body) for /kubesim/* paths
        self.admin_handler: Callable[[Any, Any, Any, bytes], None] | None = None
        self.table_renderer: TableRenderer | None = render_table  # None: no Table responses
        self.httpd: HTTPServer | None = None  # the listening server while started
        self.url = ""  # base URL while started
        self._thread: threading.Thread | None = None  # runs serve_forever

    @property
    def token(self) -> str | None:
        """The admin's bearer token, required when set (anonymous -> 403, wrong -> 401); tests
        change it while serving, as a rotated credential."""
        return self.auth.authenticator.admin_token

    @token.setter
    def token(self, value: str | None) -> None:
        self.auth.authenticator.admin_token = value

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> int:
        self._stopping = False
        self.httpd = HTTPServer((host, port), ConnectionHandler, self, ssl_context)
        port = self.httpd.server_address[1]
        scheme = "https" if ssl_context else "http"
        self.url = f"{scheme}://{host}:{port}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"kubesim-http-{port}",
            daemon=True,
        )
        self._thread.start()
        return port

    def stop(self) -> None:
        httpd = self.httpd
        if httpd is None:
            return
        # From now on a request that arrives on a kept-alive connection is dropped unanswered,
        # as a dying apiserver drops it: otherwise a client could still be served (a watch
        # started, say) by a handler thread in the moments before its connection is closed.
        self._stopping = True
        self.httpd = None
        httpd.shutdown()
        httpd.server_close()
        self.storage.close_all_watchers("server stopping")
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(5)

    # ---- request entry -------------------------------------------------------------------------

    def handle(self, h: ConnectionHandler, method: str) -> None:
        """Serve one request (called by the connection's thread); never raises."""
        if self._stopping:
            h.close_connection = True  # stop() is under way: hang up without an answer
            return
        raw_path, _, qs = h.path.partition("?")
        req = Request(
            method, unquote(raw_path), qs, h.headers.get("User-Agent", ""), self.request_log
        )
        # the request's warnings, written as Warning headers with its answer (WithWarningRecorder)
        with warning.recording(), duplicates.recording():
            try:
                body = read_body(h)
                self._authenticate(h, req)
                self._authorize(req)
                # admission webhooks are told who asked (AdmissionReview's userInfo)
                with requester.requested_by(req.user_info.to_api()):
                    self._route_and_serve(h, req, body)
            except errors.ApiError as e:
                send_error(h, req, e)
            except (ConnectionError, ssl.SSLError, BrokenPipeError):
                h.close_connection = True
                req.code = req.code or 499
            # any exception: a bug must still answer the client
            except Exception as e:
                traceback.print_exc()
                send_error(h, req, errors.internal_error(f"kubesim: {type(e).__name__}: {e}"))
        if not req.logged:  # a watch (logged when its stream ends) or a cut connection
            req.record()

    def _authenticate(self, h: ConnectionHandler, req: Request) -> None:
        """WithAuthentication, then WithImpersonation: the user the request runs as."""
        peer = h.peer_certificate
        certificate = PeerCertificate.from_ssl(*peer) if peer is not None else None
        requestor = self.auth.authenticate(h.headers.get("Authorization"), certificate)
        req.user_info = self.auth.impersonate(requestor, h.headers.lines(), h.path)
        req.user = req.user_info.name

    def _authorize(self, req: Request) -> None:
        """WithAuthorization, before any routing (an unknown resource is a 403 too)."""
        info = self.auth.request_info(req.method, req.path, req.qs)
        try:
            self.auth.authorize(req.user_info, info)
        except errors.ApiError:
            # the log shows what was refused, as the routing would have named it
            if info.is_resource_request:
                sub = f"/{info.subresource}" if info.subresource else ""
                req.verb, req.resource = info.verb, info.resource + sub
                req.namespace, req.name = info.namespace, info.name
            raise

    def _forbid_anonymous(self, req: Request, info: ResourceInfo | None = None) -> None:
        """With authorization AlwaysAllow and a token set: anonymous users get 403 outside the
        public paths (under RBAC the authorizer has decided already)."""
        if req.user != "system:anonymous" or self.token is None or self.auth.enforcing:
            return
        if info is None:
            raise errors.ApiError(
                403,
                errors.status(
                    403,
                    "Forbidden",
                    f'forbidden: User "system:anonymous" cannot {req.verb} path "{req.path}"',
                    {},
                ),
            )
        where = f' in the namespace "{req.namespace}"' if req.namespace else ""
        msg = (
            f'{errors.qualified(info.plural, info.group)} is forbidden: User "system:anonymous" '
            f'cannot {req.verb} resource "{info.plural}" in API group "{info.group}"{where}'
        )
        raise errors.forbidden(info.group, info.plural, req.name, msg)

    # ---- routing -------------------------------------------------------------------------------

    def _route_and_serve(self, h: ConnectionHandler, req: Request, body: bytes) -> None:
        path = req.path.rstrip("/") or "/"
        if path.startswith("/kubesim/") and self.admin_handler is not None:
            if self.token is not None and req.user == "system:anonymous":
                self._forbid_anonymous(req)
            self.admin_handler(self, h, req, body)
            return
        if path in _PUBLIC_PATHS:
            if path == "/version":
                # WriteRawJSON: json.MarshalIndent, so indented and without a newline
                send(h, req, 200, pretty_json(self.rest.version.version_info()), JSON)
            else:
                send(h, req, 200, b"ok", "text/plain; charset=utf-8")
            return
        parts = path.split("/")[1:]
        resource_path = (parts[0] == "api" and len(parts) > 2) or (
            parts[0] == "apis" and len(parts) > 3
        )
        if not resource_path:
            self._forbid_anonymous(req)  # non-resource URLs: discovery, openapi, unknown paths
        if parts[0] in ("api", "apis") and len(parts) == 1:
            if wants_aggregated(h.headers.get("Accept") or ""):
                return self._send_aggregated(h, req, parts[0] == "api")
        if parts[0] == "api":
            if len(parts) == 1:
                addr = h.server.server_address  # (host, port) for a TCP server
                host, port = str(addr[0]), addr[1]
                return self._send_discovery(h, req, self.registry.api_versions(f"{host}:{port}"))
            if parts[1] != "v1":
                raise errors.page_not_found()
            if len(parts) == 2:
                return self._send_discovery(h, req, self.registry.api_resource_list("", "v1"))
            return self._serve_resource(h, req, "", "v1", parts[2:], body)
        if parts[0] == "apis":
            if len(parts) == 1:
                return self._send_discovery(h, req, self.registry.api_group_list())
            group = parts[1]
            if len(parts) == 2:
                doc = self.registry.api_group(group)
                if doc is None:
                    raise errors.page_not_found()
                return self._send_discovery(h, req, doc)
            version = parts[2]
            if not self.registry.has_group_version(group, version):
                raise errors.page_not_found()
            if len(parts) == 3:
                return self._send_discovery(h, req, self.registry.api_resource_list(group, version))
            return self._serve_resource(h, req, group, version, parts[3:], body)
        if parts[0] == "openapi":
            return self._serve_openapi(h, req, parts)
        raise errors.page_not_found()

    def _serve_openapi(self, h: ConnectionHandler, req: Request, parts: list[str]) -> None:
        """/openapi/v3 (root and per group-version) and /openapi/v2 (one Swagger document)."""
        version = self.rest.version.version_info()["gitVersion"]
        if len(parts) == 2 and parts[1] == "v2":
            body = encode(openapi.swagger_document(self.registry, version))
            # v1.24 labelled the JSON text/plain; v1.36 application/json (JSON only here: no
            # protobuf form of the document)
            ctype = (
                "application/json"
                if self.rest.version.openapi_v2_is_json
                else "text/plain; charset=utf-8"
            )
            return send(h, req, 200, body, ctype)
        if len(parts) < 2 or parts[1] != "v3":
            raise errors.page_not_found()
        if len(parts) == 2:
            # HandleDiscovery: json.Marshal's bytes, no newline
            return send(h, req, 200, encode(openapi.root_document(self.registry, version)), JSON)
        rest = parts[2:]
        if rest[0] == "api" and len(rest) == 2:
            doc = openapi.group_version_bytes(self.registry, "", rest[1], version)
        elif rest[0] == "apis" and len(rest) == 3:
            doc = openapi.group_version_bytes(self.registry, rest[1], rest[2], version)
        else:
            doc = None
        if doc is None:
            raise errors.page_not_found()
        body, etag = doc
        if not _openapi_v3_accepts_json(h.headers.get("Accept", "")):
            # handler3 answers 406 with no body when no Accept clause names a type it has
            return send(h, req, 406, b"", "", {"Vary": "Accept"})
        send(h, req, 200, body, JSON, {"Etag": f'"{etag}"', "Vary": "Accept"})

    def _send_aggregated(self, h: ConnectionHandler, req: Request, legacy: bool) -> None:
        """/api or /apis as one APIGroupDiscoveryList (aggregated discovery, v2)."""
        if self.faults is not None:
            self.faults.before_request(req.verb, "")
        if req.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        # written by the negotiated serializer, so Go's json.Encoder: a trailing newline
        body = encode(aggregated_discovery(self.registry, legacy)) + b"\n"
        send(h, req, 200, body, AGGREGATED_MEDIA_TYPE, {"Vary": "Accept"})

    def _send_discovery(self, h: ConnectionHandler, req: Request, doc: dict | None) -> None:
        if self.faults is not None:
            self.faults.before_request(req.verb, "")
        if req.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        if doc is None:
            raise errors.page_not_found()
        send_json(h, req, 200, doc)

    def _serve_resource(
        self,
        h: ConnectionHandler,
        req: Request,
        group: str,
        version: str,
        parts: list[str],
        body: bytes,
    ) -> None:
        """Resolve a resource path, check it, and call the handler of its verb."""
        try:
            route = parse_route(self.registry, group, version, parts)
        except errors.ApiError:
            self._forbid_anonymous(req)  # anonymous users learn nothing about unknown resources
            raise
        info, ns, name, sub = route.info, route.namespace, route.name, route.sub
        req.resource = info.plural + (f"/{sub}" if sub else "")
        req.namespace, req.name = ns, name
        method = req.method
        is_watch = route.watch_path or (
            method == "GET" and not name and req.query.get("watch") in ("true", "1", "True")
        )
        req.verb = verb_of(method, name, is_watch)
        self._forbid_anonymous(req, info)
        if self.faults is not None:
            self.faults.before_request(req.verb, info.plural)
        if method == "HEAD":
            return send(h, req, 200, b"", "application/json")
        if method == "OPTIONS":
            raise errors.method_not_allowed()
        if info.deprecation:
            # the deprecation filter warns on every request to a deprecated resource
            warning.add_warning(info.deprecation)
        if info.namespaced and not ns and name:
            # a named object of a namespaced resource at the cluster scope: no route either
            if not info.custom:
                raise unknown_resource(self.registry, group, version)
            raise errors.page_not_found()
        if self.auth.is_review(info.group, info.plural, sub):
            return create_review(self, h, req, route, body)
        if sub and sub not in _subresources(info):
            if not info.custom:
                # no go-restful route (``namespaces/default/pods`` when pods are not served)
                raise unknown_resource(self.registry, group, version)
            if name:
                # the apiextensions handler reads the custom resource first
                self.rest.get(info, ns, name)
                raise errors.not_found(info.group, info.plural, name)
            raise errors.page_not_found()
        # Under the legacy /watch/ prefix any method streams (req.verb still logs the method's).
        handler = VERB_HANDLERS.get("watch" if is_watch else req.verb)
        if handler is None:
            raise errors.method_not_allowed()
        handler(self, h, req, route, body)


# The media types kube-openapi's handler3 serves a group-version's document in, in its order:
# JSON, then the gnostic protobuf form under its current and its deprecated name.
_OPENAPI_V3_JSON = ("application", "json")
_OPENAPI_V3_PROTOBUF = (
    ("application", "com.github.proto-openapi.spec.v3.v1.0+protobuf"),
    ("application", "com.github.proto-openapi.spec.v3@v1.0+protobuf"),
)


def _openapi_v3_accepts_json(accept: str) -> bool:
    """Whether handler3's HandleGroupVersion would answer JSON for this Accept header.

    It walks the clauses (goautoneg order; an absent header is ``*/*``) and serves the first
    of its types a clause matches, with that type as Content-Type, and answers 406 when none
    does. kubesim has no protobuf form of the documents: a clause that picks protobuf is
    passed over for a later one that accepts JSON (a deliberate difference, in the limits).
    """
    for clause in parse_accept(accept or "*/*"):
        for mtype, subtype in (_OPENAPI_V3_JSON, *_OPENAPI_V3_PROTOBUF):
            if clause.type not in (mtype, "*") or clause.subtype not in (subtype, "*"):
                continue
            if subtype == _OPENAPI_V3_JSON[1]:
                return True
    return False


def _subresources(info: ResourceInfo) -> set[str]:
    """The subresources served for a resource (the installer registers paths for these)."""
    subs = set()
    if info.status_subresource:
        subs.add("status")
    if info.scale is not None:
        subs.add("scale")
    if info.kind == "Namespace" and not info.custom:
        subs.add("finalize")
    subs.update(info.extra_subresources)
    return subs
