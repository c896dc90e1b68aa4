"""The page's HTTP server: static files, one JSON poll, the controls (stdlib only).

No client-go twin: part of the demo. ``ThreadingHTTPServer`` on 127.0.0.1 serves:

- ``GET /`` and ``GET /static/<file>``: the page (plain HTML, JS and SVG, no build step);
- ``GET /api/words``: the words of both languages (``demo.ui.words``);
- ``GET /api/state?since=<seq>``: the entries after ``seq`` (``demo.ui.recorder``), the
  machinery's state now, and the cluster's objects; the page polls it every 250 ms;
- ``POST /api/action/<name>`` with a JSON object of arguments: one control
  (``demo.ui.cluster.ACTIONS``); answers ``{"done": English, "done_ja": Japanese}``, the
  page shows the one of its current language (``done`` stays English for ``curl`` and scripts).

Polling rather than Server-Sent Events: each answer is complete on its own (a page reloaded,
or a second tab, or ``curl``, gets the same picture), no connection stays open for the
server to track, and 250 ms is below what the eye follows in the drawing. Nothing here is
served beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import mimetypes
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from demo.ui.cluster import ACTIONS, Cluster
from demo.ui.words import WORDS

__all__ = ["make_server"]

STATIC = Path(__file__).resolve().parent / "static"


def make_server(cluster: Cluster, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:``port`` (0: a free one) for ``cluster``; call serve_forever."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "demo-ui"

        def log_message(self, format: str, *args: Any) -> None:
            # the page polls four times a second: no access log
            pass

        def do_GET(self) -> None:
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
                query = parse_qs(url.query)
                since = int(query.get("since", ["0"])[0] or 0)
                return self._send(
                    HTTPStatus.OK,
                    {
                        "entries": cluster.recorder.since(since),
                        "machinery": cluster.recorder.snapshot(),
                        "cluster": cluster.cluster_state(),
                    },
                )
            self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            name = url.path.removeprefix("/api/action/")
            if not url.path.startswith("/api/action/") or name not in ACTIONS:
                return self._send(HTTPStatus.NOT_FOUND, {"error": f"no control {name!r}"})
            length = int(self.headers.get("Content-Length") or 0)
            try:
                args = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(args, dict):
                    raise ValueError("arguments must be a JSON object")
            except ValueError as err:
                return self._send(HTTPStatus.BAD_REQUEST, {"error": str(err)})
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
