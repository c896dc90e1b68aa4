"""The webhook server: HTTPS, one path per webhook, each answering AdmissionReviews.

controller-runtime twin: ``pkg/webhook`` (``webhook.NewServer``, ``Server.Register``,
``Server.Start``, ``Server.StartedChecker``) with its metrics (``pkg/webhook/internal/metrics``:
``controller_runtime_webhook_requests_total{webhook,code}``,
``controller_runtime_webhook_latency_seconds{webhook}``,
``controller_runtime_webhook_requests_in_flight{webhook}``, the ``webhook`` label being the
path). The HTTPS plumbing, a thread and a read timeout per connection, is ``runtime.tlsserver``'s,
shared with the metrics server; the certificate is a watched pair of files (cert-manager's
Secret, mounted), or one the process makes and rotates itself (``runtime.webhook.selfmanaged``).

What is answered, as ``admission.Webhook.ServeHTTP`` answers it: every review gets HTTP 200
with an AdmissionReview whose response says what happened, a bad one included (an empty or
unreadable body, a content type other than JSON, a kind or version that is not an
AdmissionReview, no ``request.uid``): ``allowed: false`` with the status code 400 and the
reason in its message. The API server then fails the call and applies the webhook's
``failurePolicy``. Differences, on purpose:

- a body above ``MAX_REQUEST_SIZE`` (by its Content-Length) is answered 413 without being read,
  and the connection closed; Go reads up to the limit and answers 400;
- only POST is served: another method is 405 (Go hands any method to the handler, which then
  finds no body);
- the server is started with the manager's endpoints, not as a runnable that waits for
  leadership: every replica answers, the standby too, as controller-runtime's webhooks (which
  are not ``LeaderElectionRunnable``) do. The Service sends the API server to any ready pod.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from runtime.certwatcher import CertificateSource
from runtime.tlsserver import CONNECTION_TIMEOUT, BoundServer, TLSHandler
from runtime.webhook.admission import (
    MAX_REQUEST_SIZE,
    BadReview,
    Handler,
    errored,
    read_review,
    review_answer,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["DEFAULT_PORT", "WebhookMetrics", "WebhookServer"]

log = logging.getLogger("runtime.webhook")

# kubebuilder's scaffold: webhook.Options{Port: 9443}; the manifests' Service targets it.
DEFAULT_PORT = 9443


class WebhookMetrics:
    """controller-runtime's three webhook families, in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self.latency = Histogram(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            ["webhook"],
            registry=registry,
        )
        self.requests = Counter(
            "controller_runtime_webhook_requests_total",
            "Total number of admission requests by HTTP status code.",
            ["webhook", "code"],
            registry=registry,
        )
        self.in_flight = Gauge(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            ["webhook"],
            registry=registry,
        )


class WebhookServer:
    """Webhooks by path over HTTPS (controller-runtime ``webhook.Server``): ``register`` the
    handlers, then ``start`` binds and serves until ``stop``. ``started_check`` is the
    readiness check that it answers TLS connections."""

    def __init__(
        self,
        address: tuple[str, int],
        certificates: CertificateSource,
        registry: CollectorRegistry | None = None,
        starters: tuple[Callable[[], object], ...] = (),
        closers: tuple[Callable[[], None], ...] = (),
    ) -> None:
        """``starters`` run in ``start`` before the server binds (the certificate watcher, the
        self-managed certificate's first issue); ``closers`` in ``stop``, after it."""
        self._address = address
        self._certificates = certificates
        self._starters = starters
        self._closers = closers
        self._handlers: dict[str, Handler] = {}
        self._metrics = WebhookMetrics(registry) if registry is not None else None
        self._server: BoundServer | None = None
        self._lock = threading.Lock()  # guards _server

    def register(self, path: str, handler: Handler) -> None:
        """Serve ``handler`` at ``path`` (``Server.Register``); a path is registered once."""
        if not path.startswith("/"):
            raise ValueError(f"a webhook path starts with '/': {path!r}")
        if path in self._handlers:
            raise ValueError(f"can't register duplicate path: {path}")
        self._handlers[path] = handler

    @property
    def paths(self) -> list[str]:
        return sorted(self._handlers)

    @property
    def address(self) -> tuple[str, int]:
        """Where it listens once started (the port chosen when bound to port 0)."""
        with self._lock:
            return self._server.address if self._server is not None else self._address

    def start(self) -> WebhookServer:
        """Run the starters, bind and serve; OSError when the address cannot be bound,
        ``CertificateError`` when there is no certificate to serve."""
        for begin in self._starters:
            begin()
        handlers, metrics = self._handlers, self._metrics

        class ReviewHandler(TLSHandler):
            def do_POST(self) -> None:
                path = urlsplit(self.path).path
                handler = handlers.get(path)
                if handler is None:
                    self.reply(404, "text/plain; charset=utf-8", b"404 page not found\n")
                    return
                if metrics is None:
                    self._review(handler)
                    return
                metrics.in_flight.labels(path).inc()
                began = time.monotonic()
                try:
                    code = self._review(handler)
                finally:
                    metrics.in_flight.labels(path).dec()
                    metrics.latency.labels(path).observe(time.monotonic() - began)
                metrics.requests.labels(path, str(code)).inc()

            def _review(self, handler: Handler) -> int:
                """Read, handle and answer one review; the HTTP status sent."""
                refusal = self._unreadable()
                if refusal is not None:
                    code, text = refusal
                    # the body is left unread: the connection cannot be reused
                    self.close_connection = True
                    self.reply(code, "text/plain; charset=utf-8", f"{text}\n".encode())
                    return code
                length = int(self.headers.get("Content-Length") or 0)
                where = urlsplit(self.path).path
                try:
                    api_version, request = read_review(
                        self.rfile.read(length), self.headers.get("Content-Type") or ""
                    )
                except BadReview as err:
                    log.info("bad admission review", extra={"path": where, "error": str(err)})
                    answer = review_answer(errored(400, str(err)).complete(""))
                else:
                    try:
                        response = handler(request)
                    except Exception as err:
                        # a handler of one's own that raises (the runtime's handlers never do)
                        log.error("webhook handler failed", exc_info=err, extra={"path": where})
                        response = errored(500, f"panic: {err!r} [recovered]")
                    answer = review_answer(response.complete(request.uid), api_version)
                self.reply(200, "application/json", answer)
                return 200

            def _unreadable(self) -> tuple[int, str] | None:
                """(status, text) for a body that is not read at all: a Content-Length that is
                not a number, or above ``MAX_REQUEST_SIZE``."""
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    return 400, "bad Content-Length"
                if length < 0:
                    return 400, "bad Content-Length"
                if length > MAX_REQUEST_SIZE:
                    return 413, f"request entity too large; limit is {MAX_REQUEST_SIZE} bytes"
                return None

            def do_GET(self) -> None:
                self._not_allowed()

            def do_PUT(self) -> None:
                self._not_allowed()

            def do_DELETE(self) -> None:
                self._not_allowed()

            def _not_allowed(self) -> None:
                self.reply(405, "text/plain; charset=utf-8", b"405 method not allowed\n")

        try:
            server = BoundServer(
                self._address, ReviewHandler, self._certificates, "webhook", self._closers
            )
        except OSError:
            for close in self._closers:
                close()
            raise
        with self._lock:
            self._server = server
        server.start()
        log.info("webhooks registered", extra={"paths": ",".join(self.paths)})
        return self

    def stop(self) -> None:
        with self._lock:
            server = self._server
        if server is not None:
            server.stop()
        else:
            for close in self._closers:
                close()

    def started_check(self) -> str | None:
        """The readiness check (``StartedChecker``): None once a TLS handshake with the
        server succeeds, else why not. Not verified: the certificate may be for a Service
        name, and what is checked is that it serves."""
        with self._lock:
            server = self._server
        if server is None:
            return "webhook server has not been started yet"
        if not server.serving():
            return "webhook server has stopped"
        host, port = server.address
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            with socket.create_connection((host, port), timeout=CONNECTION_TIMEOUT) as sock:
                with ctx.wrap_socket(sock):
                    pass
        except OSError as err:
            return f"webhook server is not reachable: {err}"
        return None
