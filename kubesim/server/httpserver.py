"""The socket side of kubesim: listening, TLS, keep-alive connections and request parsing.

What kube-apiserver gets from Go's net/http (``http.Server`` and its per-connection ``conn``):
accept connections, run the TLS handshake, parse request lines and headers, read bodies, and
hand each request to the application (``ApiServer.handle``). Nothing here knows about
Kubernetes.

Threading: ``ThreadingHTTPServer`` serves each connection on its own daemon thread (losing one
at exit loses nothing: kubesim keeps no durable state). Keep-alive is on (HTTP/1.1), so one
client connection is one thread for its lifetime.
"""

from __future__ import annotations

import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

__all__ = ["App", "ConnectionHandler", "Headers", "HTTPServer", "peer_closed", "read_body"]


class App(Protocol):
    """What the socket layer serves: one call per request, on the connection's thread."""

    def handle(self, h: ConnectionHandler, method: str) -> None: ...


class HTTPServer(ThreadingHTTPServer):
    """The listening socket; tracks open connections so that ``stop`` can cut them."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        addr: tuple[str, int],
        handler: type[ConnectionHandler],
        app: App,
        ssl_context: ssl.SSLContext | None,
    ):
        self.app = app  # the ApiServer this socket serves
        self.ssl_context = ssl_context  # wraps accepted sockets when TLS is on
        self.connections: set[socket.socket] = set()  # open client sockets (closed on stop)
        self.conn_lock = threading.Lock()  # guards connections
        super().__init__(addr, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """ThreadingMixIn.process_request with a named thread per connection."""
        port = client_address[1] if isinstance(client_address, tuple) else "?"
        t = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"kubesim-conn-{port}",
            daemon=True,
        )
        t.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that refuses the TLS handshake (wrong CA) or hangs up is not a server bug:
        no traceback for those; anything else is reported as socketserver does."""
        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            return
        super().handle_error(request, client_address)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(
                sock, server_side=True, do_handshake_on_connect=False
            )
        return sock, addr

    def close_connections(self) -> None:
        """Shut down every open client connection (their threads then end on their own)."""
        with self.conn_lock:
            conns = list(self.connections)
            self.connections.clear()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Headers(dict):
    """Request headers keyed by lower-cased name; get() accepts any case. A repeated header
    reads as its values joined by ", "; ``lines()`` still gives each line apart (Go's
    http.Header keeps them apart, and impersonation reads one group per line)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._repeated: dict[str, list[str]] = {}  # name -> every value, for repeated names

    def add(self, key: str, value: str) -> None:
        """One header line (key lower-cased)."""
        if key in self:
            self._repeated.setdefault(key, [dict.__getitem__(self, key)]).append(value)
            value = f"{dict.__getitem__(self, key)}, {value}"
        dict.__setitem__(self, key, value)

    def lines(self) -> list[tuple[str, str]]:
        """(name, value) of every header line, a repeated name once per line."""
        out: list[tuple[str, str]] = []
        for key, value in self.items():
            out.extend((key, v) for v in self._repeated.get(key, (value,)))
        return out

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return dict.__getitem__(self, key.lower())

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key.lower() if isinstance(key, str) else key)


class ConnectionHandler(BaseHTTPRequestHandler):
    """One client connection: parses each request on it and passes it to the app."""

    protocol_version = "HTTP/1.1"
    server: HTTPServer
    headers: Headers  # type: ignore[assignment]  # ours, not email.message.Message

    def setup(self) -> None:
        # the client's certificate, once the handshake has verified it (Go's
        # Request.TLS.PeerCertificates): (getpeercert(), its DER), or None
        self.peer_certificate: tuple[dict, bytes] | None = None
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (OSError, ssl.SSLError):
                self.request.close()
                raise
            self.request.settimeout(None)
            der = self.request.getpeercert(binary_form=True)
            if der:
                self.peer_certificate = (dict(self.request.getpeercert() or {}), der)
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
        self.command = None  # type: ignore[assignment]
        self.request_version = self.default_request_version
        self.close_connection = True
        raw: bytes = self.raw_requestline  # type: ignore[attr-defined]  # set by handle_one_request
        requestline = str(raw, "iso-8859-1").rstrip("\r\n")
        self.requestline = requestline
        words = requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            self.send_error(400, f"Bad request syntax ({requestline!r})")
            return False
        self.command, self.path, self.request_version = words
        headers = Headers()
        readline = self.rfile.readline
        for _ in range(200):
            line = readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            key, _, value = line.decode("iso-8859-1").partition(":")
            key = key.strip().lower()
            value = value.strip()
            headers.add(key, value)
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

    def log_message(self, format: str, *args: Any) -> None:
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


def read_body(h: ConnectionHandler) -> bytes:
    """The request body: Content-Length bytes, a de-chunked chunked body, or nothing."""
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


def peer_closed(sock: Any) -> bool:
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
