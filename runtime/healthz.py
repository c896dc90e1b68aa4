"""The operator's endpoints: ``/metrics`` for Prometheus, ``/healthz`` and ``/readyz`` for the
kubelet.

controller-runtime twins: the metrics server (``--metrics-bind-address``, default ``:8080``) and
the health probe server (``--health-probe-bind-address``, default ``:8081``) with named checks
(``healthz.Checker``). As there, a probe answers ``200 ok`` when every check passes, and ``500``
listing the failed checks otherwise; ``?verbose`` lists every check.

Liveness and readiness answer different questions, so they have different checks:

- ``/healthz`` (liveness: "restart me?"): the process answers, and the controller's threads
  are alive and not wedged (no reconcile running for longer than a threshold);
- ``/readyz`` (readiness: "send me traffic / count me as up?"): the informer caches have
  synced, and the process is not shutting down.

Both servers are plain ``http.server`` threads: a handful of requests a minute needs nothing
more, and ``prometheus_client.generate_latest`` does the exposition format.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from runtime.options import parse_bind_address

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["Checks", "EndpointServer", "parse_bind_address"]

log = logging.getLogger(__name__)

# returns None when healthy, else the reason it is not
Check = Callable[[], str | None]


class _IPv6Server(ThreadingHTTPServer):
    """For ``[::1]:8080``-style addresses (http.server binds IPv4 only by default)."""

    address_family = socket.AF_INET6


class Checks:
    """A named set of checks, evaluated in order on every probe (controller-runtime
    ``healthz.Checker``s behind one ``healthz.Handler``)."""

    def __init__(self) -> None:
        # (name, check), in registration order
        self._checks: list[tuple[str, Check]] = []
        self._lock = threading.Lock()

    def add(self, name: str, check: Check) -> None:
        with self._lock:
            self._checks.append((name, check))

    def run(self) -> tuple[bool, list[str]]:
        """Evaluate every check; (all passed, one line per check as controller-runtime prints)."""
        with self._lock:
            checks = list(self._checks)
        ok, lines = True, []
        for name, check in checks:
            try:
                reason = check()
            except Exception as err:
                # a broken check is a failed check
                reason = f"check raised {err!r}"
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                ok = False
                lines.append(f"[-]{name} failed: {reason}")
        return ok, lines


class EndpointServer:
    """One HTTP server on one address with a few GET routes; stops with ``stop()``.

    Plays controller-runtime's metrics server and health probe server; ``http.server`` here.
    """

    def __init__(self, address: tuple[str, int], name: str) -> None:
        self._routes: dict[str, Callable[[str], tuple[int, str, bytes]]] = {}
        routes = self._routes

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # probes every few seconds: no noise
                pass

            # (http.server's naming)
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                route = routes.get(url.path)
                if route is None:
                    code, ctype, body = 404, "text/plain; charset=utf-8", b"404 page not found\n"
                else:
                    code, ctype, body = route(url.query)
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

        server_class = _IPv6Server if ":" in address[0] else ThreadingHTTPServer
        # binds now: a busy port fails here
        self._server = server_class(address, Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.2,), name=f"{name}-server", daemon=True
        )
        self.name = name

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def add_metrics(
        self, path: str = "/metrics", registry: CollectorRegistry | None = None
    ) -> None:
        """Serve ``registry`` (None: prometheus_client's global one) in the text format."""
        # imported here: a process with no /metrics never loads prometheus_client
        from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

        registry = REGISTRY if registry is None else registry

        def metrics(_query: str) -> tuple[int, str, bytes]:
            return 200, CONTENT_TYPE_LATEST, generate_latest(registry)

        self._routes[path] = metrics

    def add_checks(self, path: str, checks: Checks) -> None:
        def probe(query: str) -> tuple[int, str, bytes]:
            ok, lines = checks.run()
            verbose = "verbose" in query
            if ok and not verbose:
                body = "ok"
            else:
                body = (
                    "\n".join(lines) + f"\n{path.strip('/')} check {'passed' if ok else 'failed'}\n"
                )
            return (200 if ok else 500), "text/plain; charset=utf-8", body.encode()

        self._routes[path] = probe

    def start(self) -> EndpointServer:
        self._thread.start()
        log.info(
            "serving",
            extra={"server": self.name, "address": f"{self.address[0]}:{self.address[1]}"},
        )
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever: never if not started
            self._server.shutdown()
        self._server.server_close()
