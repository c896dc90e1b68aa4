"""HTTP layer: routing, authentication, content negotiation, responses and watch streaming.

Twin of k8s.io/apiserver/pkg/endpoints (the handler chain and the REST handlers' HTTP half).
It parses the URL into (group, version, namespace, resource, name, subresource), applies
authentication and fault injection, calls rest.py, and writes the answer. Responses are written
as one ``sendall`` of pre-encoded bytes; watches are HTTP/1.1 chunked streams of JSON lines.

Threading: ``ThreadingHTTPServer`` serves each connection on its own daemon thread (losing one
at exit loses nothing: kubesim keeps no durable state). Keep-alive is on (HTTP/1.1), so one
client connection is one thread for its lifetime.
"""

from __future__ import annotations

import json
import select
import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

from . import errors
from .resources import Registry, ResourceInfo
from .rest import Rest, WatchRequest
from .scale import ScaleREST
from .storage import INITIAL_END, Stored, encode
from .table import render_table

__all__ = ["ApiServer", "RequestRecord"]

_REASONS = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    410: "Gone",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
# Paths an anonymous user may read (system:public-info-viewer).
_PUBLIC_PATHS = {"/version", "/healthz", "/livez", "/readyz"}
VERSION_INFO = {
    "major": "1",
    "minor": "36",
    "gitVersion": "v1.36.0-kubesim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


@dataclass(frozen=True)
class RequestRecord:
    """One served request, for tests that check which API calls a component made."""

    verb: str  # Kubernetes verb: get list watch create update patch delete deletecollection, or the HTTP method for non-resource paths
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


@dataclass
class _Route:
    """A parsed resource URL."""

    info: ResourceInfo
    namespace: str
    name: str
    sub: str
    watch_path: bool  # the legacy /watch/ prefix


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, app: ApiServer, ssl_context: ssl.SSLContext | None):
        self.app = app  # the ApiServer this socket serves
        self.ssl_context = ssl_context  # wraps accepted sockets when TLS is on
        self.connections: set[socket.socket] = set()  # open client sockets (closed on stop)
        self.conn_lock = threading.Lock()  # guards connections
        super().__init__(addr, handler)

    def process_request(self, request, client_address) -> None:
        """ThreadingMixIn.process_request with a named thread per connection."""
        t = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"kubesim-conn-{client_address[1] if isinstance(client_address, tuple) else '?'}",
            daemon=True,
        )
        t.start()

    def handle_error(self, request, client_address) -> None:
        """A client that refuses the TLS handshake (wrong CA) or hangs up is not a server bug:
        no traceback for those; anything else is reported as socketserver does."""
        import sys

        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            return
        super().handle_error(request, client_address)

    def get_request(self):
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(
                sock, server_side=True, do_handshake_on_connect=False
            )
        return sock, addr

    def close_connections(self) -> None:
        with self.conn_lock:
            conns = list(self.connections)
            self.connections.clear()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Headers(dict):
    """Request headers keyed by lower-cased name; get() accepts any case."""

    def get(self, key: str, default=None):  # type: ignore[override]
        return dict.get(self, key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return dict.__getitem__(self, key.lower())

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key.lower() if isinstance(key, str) else key)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (OSError, ssl.SSLError):
                self.request.close()
                raise
            self.request.settimeout(None)
        super().setup()
        with self.server.conn_lock:
            self.server.connections.add(self.request)

    def finish(self) -> None:
        with self.server.conn_lock:
            self.server.connections.discard(self.request)
        try:
            super().finish()
        except OSError:
            pass

    def parse_request(self) -> bool:
        """A lean replacement of BaseHTTPRequestHandler.parse_request.

        The stdlib version parses headers with the email package, which costs more than the
        rest of a small create; kubesim only needs a case-insensitive header map, keep-alive
        and Expect: 100-continue.
        """
        self.command = None
        self.request_version = self.default_request_version
        self.close_connection = True
        requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        self.requestline = requestline
        words = requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            self.send_error(400, f"Bad request syntax ({requestline!r})")
            return False
        self.command, self.path, self.request_version = words
        headers = _Headers()
        readline = self.rfile.readline
        for _ in range(200):
            line = readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            key, _, value = line.decode("iso-8859-1").partition(":")
            key = key.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            self.send_error(431, "Too many headers")
            return False
        self.headers = headers
        conn = headers.get("connection", "").lower()
        if self.request_version == "HTTP/1.1":
            self.close_connection = conn == "close"
        else:
            self.close_connection = conn != "keep-alive"
        if headers.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return True

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, ssl.SSLError, OSError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        self.server.app.handle(self, "GET")

    def do_POST(self) -> None:
        self.server.app.handle(self, "POST")

    def do_PUT(self) -> None:
        self.server.app.handle(self, "PUT")

    def do_PATCH(self) -> None:
        self.server.app.handle(self, "PATCH")

    def do_DELETE(self) -> None:
        self.server.app.handle(self, "DELETE")

    def do_HEAD(self) -> None:
        self.server.app.handle(self, "HEAD")

    def do_OPTIONS(self) -> None:
        self.server.app.handle(self, "OPTIONS")


class _Request:
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
        "user_agent",
        "t0",
        "wall",
        "code",
        "logged",
    )

    def __init__(self, method: str, path: str, qs: str, user_agent: str):
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
        self.user = "system:anonymous"  # set by authentication
        self.user_agent = user_agent  # the User-Agent header
        self.t0 = time.perf_counter()  # start, for the logged duration
        self.wall = time.time()  # start, wall clock, for the log
        self.code = 0  # HTTP status sent (0 until a response is written)
        self.logged = False  # in the request log already (plain responses log before the bytes go)


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
    ):
        self.rest = rest  # the verbs
        self.scale = ScaleREST(rest)  # the /scale subresource's verbs
        self.registry = registry  # served resources, for routing and discovery
        self.storage = rest.storage
        self.token = token  # bearer token required when set (anonymous -> 403, wrong -> 401)
        self.faults = faults  # FaultInjector or None
        self.request_log: deque[RequestRecord] = deque(maxlen=request_log_size)  # newest last
        self._stopping = False  # stop() has begun: requests on open connections are dropped
        self.bookmark_interval = bookmark_interval  # seconds between periodic BOOKMARKs
        self.admin_handler = None  # callable(server, handler, req, body) for /kubesim/* paths
        self.table_renderer = render_table  # (info, items, list_meta) -> meta.k8s.io Table
        self.httpd: _HTTPServer | None = None  # the listening server while started
        self.url = ""  # base URL while started
        self._thread: threading.Thread | None = None  # runs serve_forever

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> int:
        self._stopping = False
        self.httpd = _HTTPServer((host, port), _Handler, self, ssl_context)
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

    def handle(self, h: _Handler, method: str) -> None:
        if self._stopping:
            h.close_connection = True  # stop() is under way: hang up without an answer
            return
        raw_path, _, qs = h.path.partition("?")
        req = _Request(method, unquote(raw_path), qs, h.headers.get("User-Agent", ""))
        try:
            body = self._read_body(h)
            self._authenticate(h, req)
            self._route_and_serve(h, req, body)
        except errors.ApiError as e:
            self._send_error(h, req, e)
        except (ConnectionError, ssl.SSLError, BrokenPipeError):
            h.close_connection = True
            req.code = req.code or 499
        except Exception as e:  # noqa: BLE001 - a bug must still answer the client
            import traceback

            traceback.print_exc()
            self._send_error(h, req, errors.internal_error(f"kubesim: {type(e).__name__}: {e}"))
        if not req.logged:  # a watch (logged when its stream ends) or a cut connection
            self._log(req)

    def _log(self, req: _Request) -> None:
        req.logged = True
        self.request_log.append(
            RequestRecord(
                req.verb,
                req.path,
                req.resource,
                req.namespace,
                req.name,
                req.user,
                req.user_agent,
                req.code,
                req.wall,
                time.perf_counter() - req.t0,
                req.qs,
            )
        )

    def _read_body(self, h: _Handler) -> bytes:
        length = h.headers.get("Content-Length")
        if length:
            return h.rfile.read(int(length))
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    h.rfile.readline()
                    break
                chunks.append(h.rfile.read(size))
                h.rfile.readline()
            return b"".join(chunks)
        return b""

    def _authenticate(self, h: _Handler, req: _Request) -> None:
        if self.token is None:
            req.user = "system:admin"
            return
        # As the apiserver's bearertoken authenticator: the scheme is case-insensitive (the
        # official client's in-cluster loader sends "bearer <token>"), and a header that is not
        # a bearer token leaves the request anonymous.
        parts = (h.headers.get("Authorization") or "").strip().split(" ")
        if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
            req.user = "system:anonymous"
            return
        if parts[1] != self.token:
            raise errors.unauthorized()
        req.user = "kubesim-user"

    def _forbid_anonymous(self, req: _Request, info: ResourceInfo | None = None) -> None:
        if req.user != "system:anonymous" or self.token is None:
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

    def _route_and_serve(self, h: _Handler, req: _Request, body: bytes) -> None:
        path = req.path.rstrip("/") or "/"
        if path.startswith("/kubesim/") and self.admin_handler is not None:
            if self.token is not None and req.user == "system:anonymous":
                self._forbid_anonymous(req)
            self.admin_handler(self, h, req, body)
            return
        if path in _PUBLIC_PATHS:
            if path == "/version":
                self._send_json(h, req, 200, VERSION_INFO)
            else:
                self._send(h, req, 200, b"ok", "text/plain; charset=utf-8")
            return
        parts = path.split("/")[1:]
        resource_path = (parts[0] == "api" and len(parts) > 2) or (
            parts[0] == "apis" and len(parts) > 3
        )
        if not resource_path:
            self._forbid_anonymous(req)  # non-resource URLs: discovery, openapi, unknown paths
        if parts[0] == "api":
            if len(parts) == 1:
                return self._send_discovery(
                    h, req, self.registry.api_versions(self._server_address(h))
                )
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

    def _serve_openapi(self, h: _Handler, req: _Request, parts: list[str]) -> None:
        """/openapi/v3 (root and per group-version); /openapi/v2 is not served (404)."""
        from . import openapi

        if len(parts) < 2 or parts[1] != "v3":
            raise errors.page_not_found()
        if len(parts) == 2:
            return self._send_json(h, req, 200, openapi.root_document(self.registry))
        rest = parts[2:]
        if rest[0] == "api" and len(rest) == 2:
            doc = openapi.group_version_document(self.registry, "", rest[1])
        elif rest[0] == "apis" and len(rest) == 3:
            doc = openapi.group_version_document(self.registry, rest[1], rest[2])
        else:
            doc = None
        if doc is None:
            raise errors.page_not_found()
        self._send_json(h, req, 200, doc)

    def _server_address(self, h: _Handler) -> str:
        host, port = h.server.server_address[:2]
        return f"{host}:{port}"

    def _send_discovery(self, h, req, doc) -> None:
        if self.faults is not None:
            self.faults.before_request(req.verb, "")
        if req.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        if doc is None:
            raise errors.page_not_found()
        self._send_json(h, req, 200, doc)

    def _parse_route(self, group: str, version: str, parts: list[str]) -> _Route:
        watch_path = False
        if parts and parts[0] == "watch":
            watch_path = True
            parts = parts[1:]
        ns = ""
        if len(parts) >= 3 and parts[0] == "namespaces":
            info = self.registry.lookup(group, version, parts[2])
            if info is not None and info.namespaced:
                ns = parts[1]
                parts = parts[2:]
        if not parts or len(parts) > 3:
            raise self._unknown(group)
        info = self.registry.lookup(group, version, parts[0])
        if info is None:
            raise self._unknown(group)
        if ns and not info.namespaced:
            raise errors.page_not_found()
        name = parts[1] if len(parts) > 1 else ""
        sub = parts[2] if len(parts) > 2 else ""
        return _Route(info, ns, name, sub, watch_path)

    @staticmethod
    def _unknown(group: str) -> errors.ApiError:
        if group:
            return errors.page_not_found()
        return errors.ApiError(
            404, errors.status(404, "NotFound", "the server could not find the requested resource")
        )

    def _serve_resource(
        self, h: _Handler, req: _Request, group: str, version: str, parts: list[str], body: bytes
    ) -> None:
        try:
            r = self._parse_route(group, version, parts)
        except errors.ApiError:
            self._forbid_anonymous(req)  # anonymous users learn nothing about unknown resources
            raise
        info, ns, name, sub = r.info, r.namespace, r.name, r.sub
        req.resource = info.plural + (f"/{sub}" if sub else "")
        req.namespace, req.name = ns, name
        method = req.method
        q = req.query
        is_watch = r.watch_path or (
            method == "GET" and not name and q.get("watch") in ("true", "1", "True")
        )
        req.verb = _verb(method, name, is_watch)
        self._forbid_anonymous(req, info)
        if self.faults is not None:
            self.faults.before_request(req.verb, info.plural)
        if method == "HEAD":
            return self._send(h, req, 200, b"", "application/json")
        if method == "OPTIONS":
            raise errors.method_not_allowed()
        if info.namespaced and not ns and name:
            raise errors.page_not_found()
        if sub and sub not in self._subresources(info):
            if name:
                self.rest.get(info, ns, name)
                raise errors.not_found(info.group, info.plural, name)
            raise errors.page_not_found()
        if is_watch:
            if r.watch_path and name and sub:
                raise errors.page_not_found()
            fmt = self._negotiate(h, info)
            return self._serve_watch(
                h, req, self.rest.open_watch(info, ns, q, name or None), fmt == "table"
            )
        fmt = self._negotiate(h, info)
        rest = self.rest
        if method == "GET":
            if not name:
                if info.namespaced and ns and self.storage.get(("", "namespaces"), "", ns) is None:
                    pass  # listing in a missing namespace is an empty list (200)
                return self._send_list(h, req, info, rest.list(info, ns, q), fmt)
            if sub == "scale":
                return self._send_json(h, req, 200, self.scale.get(info, ns, name))
            return self._send_obj(h, req, 200, info, rest.get(info, ns, name), fmt)
        if method == "POST":
            if sub or (info.namespaced and not ns):
                raise errors.method_not_allowed()
            code, stored = rest.create(info, ns, self._decode(h, body), q)
            return self._send_obj(h, req, code, info, stored, fmt)
        if method == "PUT":
            if not name:
                if info.custom:
                    raise errors.bad_request(
                        "the server does not allow this method on the requested resource"
                    )
                raise errors.method_not_allowed()
            if sub == "scale":
                return self._send_json(
                    h, req, 200, self.scale.update(info, ns, name, self._decode(h, body), q)
                )
            code, stored = rest.update(info, ns, name, self._decode(h, body), q, _status_sub(sub))
            return self._send_obj(h, req, code, info, stored, fmt)
        if method == "PATCH":
            if not name:
                if info.custom:
                    raise errors.bad_request(
                        "the server does not allow this method on the requested resource"
                    )
                raise errors.method_not_allowed()
            ctype = h.headers.get("Content-Type", "")
            if sub == "scale":
                return self._send_json(
                    h, req, 200, self.scale.patch(info, ns, name, ctype, body, q)
                )
            code, stored = rest.patch(info, ns, name, ctype, body, q, _status_sub(sub))
            return self._send_obj(h, req, code, info, stored, fmt)
        if method == "DELETE":
            opts = self._decode(h, body) if body else None
            if not name:
                if "deletecollection" not in info.verbs:
                    raise errors.method_not_allowed()
                return self._send_list(h, req, info, rest.delete_collection(info, ns, q, opts), fmt)
            if sub:
                raise errors.method_not_allowed()
            code, result = rest.delete(info, ns, name, q, opts)
            if isinstance(result, Stored):
                return self._send_obj(h, req, code, info, result, fmt)
            return self._send_json(h, req, code, result)
        raise errors.method_not_allowed()

    @staticmethod
    def _subresources(info: ResourceInfo) -> set[str]:
        subs = set()
        if info.status_subresource:
            subs.add("status")
        if info.scale is not None:
            subs.add("scale")
        if info.kind == "Namespace" and not info.custom:
            subs.add("finalize")
        return subs

    # ---- bodies and formats --------------------------------------------------------------------

    def _decode(self, h: _Handler, body: bytes) -> Any:
        ctype = (h.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        try:
            if ctype in ("application/json", "*/*", ""):
                return json.loads(body or b"{}")
            if ctype in ("application/yaml", "application/x-yaml", "text/yaml"):
                import yaml

                return yaml.safe_load(body) or {}
        except (ValueError, Exception) as e:  # noqa: BLE001 - any decode error is a 400
            raise errors.bad_request(f"error decoding request body: {e}") from None
        raise errors.unsupported_media_type(ctype)

    def _negotiate(self, h: _Handler, info: ResourceInfo) -> str:
        """ "json", "yaml" or "table" from the Accept header; 406 when none is acceptable."""
        accept = h.headers.get("Accept")
        if not accept:
            return "json"
        for item in accept.split(","):
            mt, *params = [p.strip() for p in item.split(";")]
            mt = mt.lower()
            pmap = dict(p.split("=", 1) for p in params if "=" in p)
            if pmap.get("as") == "Table":
                if mt in ("application/json", "*/*") and self.table_renderer is not None:
                    return "table"
                continue
            if pmap.get("as"):
                continue  # PartialObjectMetadata etc.: not served, try the next option
            if mt in ("application/json", "application/*", "*/*", "application/json-seq"):
                return "json"
            if mt in ("application/yaml",):
                return "yaml"
        raise errors.not_acceptable(accept)

    def _send_obj(self, h, req, code: int, info: ResourceInfo, stored: Stored, fmt: str) -> None:
        if fmt == "json":
            return self._send(h, req, code, stored.at_version(info.group_version))
        if fmt == "table":
            return self._send_json(h, req, code, self.table_renderer(info, [stored], None))
        obj = json.loads(stored.at_version(info.group_version))
        return self._send_yaml(h, req, code, obj)

    def _send_list(self, h, req, info: ResourceInfo, body: bytes, fmt: str) -> None:
        if fmt == "json":
            return self._send(h, req, 200, body)
        lst = json.loads(body)
        if fmt == "table":
            items = [
                Stored(dict(i, kind=info.kind, apiVersion=info.group_version)) for i in lst["items"]
            ]
            return self._send_json(h, req, 200, self.table_renderer(info, items, lst["metadata"]))
        return self._send_yaml(h, req, 200, lst)

    def _send_yaml(self, h, req, code, obj) -> None:
        import yaml

        self._send(h, req, code, yaml.safe_dump(obj, sort_keys=False).encode(), "application/yaml")

    def _send_json(self, h, req, code: int, obj: Any, headers: dict | None = None) -> None:
        self._send(h, req, code, encode(obj), "application/json", headers)

    def _send(
        self,
        h: _Handler,
        req: _Request,
        code: int,
        body: bytes,
        ctype: str = "application/json",
        headers: dict | None = None,
    ) -> None:
        req.code = code
        head = [
            f"HTTP/1.1 {code} {_REASONS.get(code, 'Unknown')}",
            "Cache-Control: no-cache, private",
            f"Content-Type: {ctype}",
            f"Content-Length: {len(body)}",
        ]
        if headers:
            head.extend(f"{k}: {v}" for k, v in headers.items())
        if h.close_connection:
            head.append("Connection: close")
        data = ("\r\n".join(head) + "\r\n\r\n").encode()
        # Log before the answer leaves: a client that reads the request log right after its
        # response must find the request there (a test's read-after-response race otherwise).
        self._log(req)
        h.wfile.write(data if req.method == "HEAD" else data + body)

    def _send_error(self, h: _Handler, req: _Request, e: errors.ApiError) -> None:
        try:
            if e.body is None:
                self._send(
                    h, req, e.code, b"404 page not found\n", "text/plain; charset=utf-8", e.headers
                )
            else:
                self._send_json(h, req, e.code, e.body, e.headers)
        except OSError:
            h.close_connection = True

    # ---- watch ---------------------------------------------------------------------------------

    def _serve_watch(
        self, h: _Handler, req: _Request, wr: WatchRequest, table: bool = False
    ) -> None:
        req.code = 200
        h.wfile.write(
            b"HTTP/1.1 200 OK\r\nCache-Control: no-cache, private\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        info = wr.info
        gv = info.group_version
        write = h.wfile.write

        def chunk(data: bytes) -> None:
            write(b"%x\r\n" % len(data) + data + b"\r\n")

        w = wr.watcher
        if w is None:
            chunk(b'{"type":"ERROR","object":' + encode(wr.expired.body) + b"}\n")
            write(b"0\r\n\r\n")
            return
        try:
            now = time.monotonic()
            deadline = now + wr.timeout
            last_bm_rv = w.start_rv  # not last_rv: events may already have been queued
            next_bm = self._next_bookmark(now, deadline) if wr.bookmarks else float("inf")
            next_probe = now + 1.0
            while True:
                wait = min(deadline, next_bm, next_probe) - time.monotonic()
                items = w.drain(max(wait, 0.0))
                if items:
                    parts = []
                    for etype, obj in items:
                        if etype == INITIAL_END:
                            parts.append(_bookmark(info, obj, True))
                            last_bm_rv = max(last_bm_rv, obj)
                        elif table:
                            parts.append(
                                b'{"type":"'
                                + etype.encode()
                                + b'","object":'
                                + encode(self.table_renderer(info, [obj], None))
                                + b"}\n"
                            )
                        else:
                            parts.append(
                                b'{"type":"'
                                + etype.encode()
                                + b'","object":'
                                + obj.at_version(gv)
                                + b"}\n"
                            )
                    chunk(b"".join(parts))
                now = time.monotonic()
                if w.bookmark_requested or now >= next_bm:
                    with w.cond:
                        requested, w.bookmark_requested = w.bookmark_requested, False
                        rv = w.last_rv if not w.items else 0
                    if wr.bookmarks and rv > last_bm_rv:
                        chunk(_bookmark(info, rv, False))
                        last_bm_rv = rv
                    if now >= next_bm:
                        next_bm = self._next_bookmark(now, deadline)
                    del requested
                if w.closed and not w.items:
                    break
                if now >= deadline:
                    break
                if now >= next_probe:
                    next_probe = now + 1.0
                    if not items and _peer_closed(h.connection):
                        h.close_connection = True
                        return
            write(b"0\r\n\r\n")
        except OSError:
            h.close_connection = True
        finally:
            self.storage.unwatch(w)

    def _next_bookmark(self, now: float, deadline: float) -> float:
        """cacheWatcher.nextBookmarkTime: every interval, and once 2 s before the deadline."""
        nxt = now + self.bookmark_interval
        pre = deadline - 2.0
        if pre < nxt:
            nxt = pre
        return nxt if nxt > now else float("inf")


def _bookmark(info: ResourceInfo, rv: int, initial_end: bool) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    if info.kind == "Deployment" and not info.custom:
        meta["creationTimestamp"] = None
        obj = {
            "kind": info.kind,
            "apiVersion": info.group_version,
            "metadata": meta,
            "spec": {
                "replicas": 0,
                "selector": None,
                "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
                "strategy": {},
            },
            "status": {},
        }
    else:
        obj = {"kind": info.kind, "apiVersion": info.group_version, "metadata": meta}
    return b'{"type":"BOOKMARK","object":' + encode(obj) + b"}\n"


def _peer_closed(sock) -> bool:
    """Has the client gone away? (a readable socket with nothing to read on a watch)."""
    try:
        r, _, _ = select.select([sock], [], [], 0)
        if not r:
            return False
        if isinstance(sock, ssl.SSLSocket):
            return True
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _verb(method: str, name: str, watch: bool) -> str:
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


def _status_sub(sub: str) -> str | None:
    if sub in ("status", "finalize"):
        return "status" if sub == "status" else "finalize"
    return None
