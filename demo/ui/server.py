"""The page's HTTP server: static files, one JSON poll, the controls (stdlib only).

No client-go twin: part of the demo. ``ThreadingHTTPServer`` on 127.0.0.1 serves:

- ``GET /`` and ``GET /static/<file>``: the page (plain HTML, JS and SVG, no build step);
- ``GET /api/words``: the words of both languages (``demo.ui.words``);
- ``GET /api/state?since=<seq>``: the entries after ``seq`` (``demo.ui.recorder``), the
  machinery's state now, and the cluster's objects; the page polls it every 250 ms;
- ``POST /api/action/<name>`` with a JSON object of arguments: one control
  (``demo.ui.cluster.ACTIONS``); answers ``{"done": English, "done_ja": Japanese}``, the
  page shows the one of its current language (``done`` stays English for ``curl`` and scripts).

Bad input (a control that does not exist, a body that is not a JSON object, an argument of the
wrong type, a ``since`` that is not a number) gets 400 and ``{"error": ...}`` naming what was
wrong (``demo.ui.arguments``); anything else that fails inside a request gets 500 with the error,
logged once: never a dropped connection.

Polling rather than Server-Sent Events: each answer is complete on its own (a page reloaded,
or a second tab, or ``curl``, gets the same picture), no connection stays open for the
server to track, and 250 ms is below what the eye follows in the drawing. Nothing here is
served beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
import mimetypes
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from demo.ui.arguments import BadRequest, check_arguments, check_since
from demo.ui.cluster import ACTIONS, Cluster
from demo.ui.words import WORDS

__all__ = ["make_server"]

STATIC = Path(__file__).resolve().parent / "static"
# the largest body a control may send: its arguments are a few short fields
MAX_BODY = 64 * 1024

log = logging.getLogger(__name__)


def make_server(cluster: Cluster, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:``port`` (0: a free one) for ``cluster``; call serve_forever."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "demo-ui"

        def log_message(self, format: str, *args: Any) -> None:
            # the page polls four times a second: no access log
            pass

        def do_GET(self) -> None:
            self._answer(self._get)

        def do_POST(self) -> None:
            self._answer(self._post)

        def _answer(self, handle: Callable[[], None]) -> None:
            """Run ``handle``; bad input is a 400, any other failure a 500, both as JSON."""
            try:
                handle()
            except BadRequest as err:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(err)})
            except (BrokenPipeError, ConnectionResetError):
                pass  # the page went away mid-answer: nobody to tell
            except Exception as err:
                log.exception("demo-ui: %s %s failed", self.command, self.path)
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{err!r}"})

        def _get(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/":
                return self._file(STATIC / "index.html")
            if url.path.startswith("/static/"):
                name = url.path.removeprefix("/static/")
                path = (STATIC / name).resolve()
                if path.parent != STATIC or not path.is_file():
                    return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
                return self._file(path)
            if url.path == "/api/words":
                return self._send(
                    HTTPStatus.OK, {k: {"en": v[0], "ja": v[1]} for k, v in WORDS.items()}
                )
            if url.path == "/api/state":
                since = check_since(parse_qs(url.query).get("since", []))
                return self._send(
                    HTTPStatus.OK,
                    {
                        "entries": cluster.recorder.since(since),
                        "machinery": cluster.recorder.snapshot(),
                        "cluster": cluster.cluster_state(),
                    },
                )
            self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})

        def _post(self) -> None:
            url = urlsplit(self.path)
            if not url.path.startswith("/api/action/"):
                return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
            name = url.path.removeprefix("/api/action/")
            if name not in ACTIONS:
                known = ", ".join(sorted(ACTIONS))
                raise BadRequest(f"no control {name!r} (controls: {known})")
            length_header = self.headers.get("Content-Length") or "0"
            if not length_header.isdigit():
                raise BadRequest(f"Content-Length must be a number (got {length_header!r})")
            length = int(length_header)
            if length > MAX_BODY:
                raise BadRequest(
                    f"the body is {length} bytes; a control's arguments fit in {MAX_BODY}"
                )
            try:
                decoded = json.loads(self.rfile.read(length) or b"{}")
            except ValueError as err:  # not JSON, or not UTF-8
                raise BadRequest(f"the body is not JSON: {err}") from None
            args = check_arguments(decoded)
            done = cluster.act(name, args)
            self._send(HTTPStatus.OK, {"done": done.en, "done_ja": done.ja})

        def _file(self, path: Path) -> None:
            body = path.read_bytes()
            self.send_response(HTTPStatus.OK)
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _send(self, status: HTTPStatus, obj: Any) -> None:
            body = json.dumps(obj, default=str).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server
