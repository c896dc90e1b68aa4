"""The HTTPS plumbing the metrics server and the webhook server share: a threaded
``http.server`` that takes each connection's certificate from a ``CertificateSource``, does the
TLS handshake on the connection's own thread under a timeout, and binds before it serves.

controller-runtime twin: what ``pkg/metrics/server`` and ``pkg/webhook`` (``DefaultServer``)
both build on, Go's ``net/http.Server`` with a ``tls.Config`` whose ``GetCertificate`` is the
certificate watcher's. Go gives every connection a goroutine and per-connection deadlines; here
``ThreadingHTTPServer`` gives each a thread, and ``CONNECTION_TIMEOUT`` bounds every read, so a
client that stalls in the handshake or in the middle of a body holds its own thread only, and
not for long.

``serving_certificates`` picks the certificate of a server from its flags: the files of a
certificate directory (watched, ``runtime.certwatcher.CertWatcher``), else one made at start-up.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from runtime.certwatcher import (
    CertificateSource,
    CertWatcher,
    StaticCertificate,
    self_signed_certificate,
    server_context,
)

__all__ = [
    "CONNECTION_TIMEOUT",
    "BoundServer",
    "TLSHandler",
    "serving_certificates",
]

log = logging.getLogger("runtime.tlsserver")

# A connection that sends nothing for this long is closed (no slow client can hold a thread).
CONNECTION_TIMEOUT = 10.0


class _Server(ThreadingHTTPServer):
    """http.server with TLS chosen per connection and no traceback on stderr for a client
    that goes away or fails its handshake."""

    daemon_threads = True
    certificates: CertificateSource | None = None
    name = "https"

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = self.socket.accept()
        if self.certificates is None:
            return sock, addr
        # The handshake runs in the connection's own thread (the handler's setup), so a slow
        # client does not hold up accept(); the context is the one served at this moment.
        tls = self.certificates.context().wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        )
        return tls, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug(f"{self.name} connection failed", extra={"client": str(client_address[0])})


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


class TLSHandler(BaseHTTPRequestHandler):
    """A request handler (Go's ``net/http`` server with a read timeout, as controller-runtime's
    metrics and webhook servers configure it) whose connection times out after
    ``CONNECTION_TIMEOUT`` of silence,
    with the TLS handshake done here (on the connection's thread) rather than in ``accept``,
    and no request log (a request line or header may carry a token)."""

    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(CONNECTION_TIMEOUT)
            self.request.do_handshake()
        super().setup()

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, code: int, ctype: str, body: bytes) -> None:
        """One whole answer with its length (the connection stays open for the next)."""
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)


class BoundServer:
    """One threaded server on one address (controller-runtime's ``net/http.Server`` with its
    listener, as ``pkg/metrics/server`` and ``pkg/webhook`` make them), bound in the
    constructor (a busy port fails there),
    serving from ``start`` until ``stop``; ``closers`` run after it stopped (a certificate
    watcher)."""

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        certificates: CertificateSource | None,
        name: str,
        closers: tuple[Callable[[], None], ...] = (),
    ) -> None:
        self.name = name
        self.secure = certificates is not None
        self._closers = closers
        server_class = _IPv6Server if ":" in address[0] else _Server
        self._server = server_class(address, handler, bind_and_activate=False)
        self._server.certificates = certificates
        self._server.name = name
        try:
            self._server.server_bind()
            self._server.server_activate()
        except OSError:
            self._server.server_close()
            raise
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.2,), name=f"{name}-server", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def serving(self) -> bool:
        """Whether ``start`` was called and the serving thread still runs."""
        return self._thread.is_alive()

    def start(self) -> Self:
        self._thread.start()
        log.info(
            "serving",
            extra={
                "server": self.name,
                "address": f"{self.address[0]}:{self.address[1]}",
                "secure": self.secure,
            },
        )
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever: never if not started
            self._server.shutdown()
        self._server.server_close()
        for close in self._closers:
            close()


def serving_certificates(
    cert_dir: str, cert_name: str, key_name: str
) -> tuple[CertificateSource, CertWatcher | None]:
    """The certificate of ``cert_dir/cert_name`` and ``cert_dir/key_name``, watched (start the
    watcher once the server is bound, stop it with the server), or a self-signed one when
    ``cert_dir`` is empty. Raises ``CertificateError``."""
    if cert_dir:
        watcher = CertWatcher(os.path.join(cert_dir, cert_name), os.path.join(cert_dir, key_name))
        return watcher, watcher
    return StaticCertificate(server_context(*self_signed_certificate())), None
