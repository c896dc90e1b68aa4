"""Writing responses: status line, headers and a pre-encoded body in one write.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters (``WriteObjectNegotiated``,
``ErrorNegotiated``, ``WriteRawJSON``). Every response is one ``write`` of bytes encoded
before the first byte goes out, with a Content-Length (watches, which stream, are in
watch.py). The request is recorded in the request log just before its bytes are written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from . import errors
from .httpserver import ConnectionHandler
from .request import Request
from .resources import ResourceInfo
from .storage import Stored, encode

__all__ = [
    "TableRenderer",
    "send",
    "send_error",
    "send_json",
    "send_list",
    "send_object",
    "send_yaml",
]

# (info, rows, list metadata or None) -> a meta.k8s.io/v1 Table
TableRenderer = Callable[[ResourceInfo, list[Stored], dict | None], dict]

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


def send(
    h: ConnectionHandler,
    req: Request,
    code: int,
    body: bytes,
    ctype: str = "application/json",
    headers: dict | None = None,
) -> None:
    """Write one complete response (no body for HEAD) and record the request."""
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
    req.record()
    h.wfile.write(data if req.method == "HEAD" else data + body)


def send_json(
    h: ConnectionHandler, req: Request, code: int, obj: Any, headers: dict | None = None
) -> None:
    send(h, req, code, encode(obj), "application/json", headers)


def send_yaml(h: ConnectionHandler, req: Request, code: int, obj: Any) -> None:
    import yaml

    send(h, req, code, yaml.safe_dump(obj, sort_keys=False).encode(), "application/yaml")


def send_object(
    h: ConnectionHandler,
    req: Request,
    code: int,
    info: ResourceInfo,
    stored: Stored,
    fmt: str,
    render_table: TableRenderer | None,
) -> None:
    """One object in the negotiated format ("json", "yaml" or "table") at info's version."""
    if fmt == "json":
        return send(h, req, code, stored.at_version(info.group_version))
    if fmt == "table":
        assert render_table is not None  # negotiate() offers "table" only with a renderer
        return send_json(h, req, code, render_table(info, [stored], None))
    obj = json.loads(stored.at_version(info.group_version))
    return send_yaml(h, req, code, obj)


def send_list(
    h: ConnectionHandler,
    req: Request,
    info: ResourceInfo,
    body: bytes,
    fmt: str,
    render_table: TableRenderer | None,
) -> None:
    """A list body (as Rest.list builds it) in the negotiated format, status 200."""
    if fmt == "json":
        return send(h, req, 200, body)
    lst = json.loads(body)
    if fmt == "table":
        assert render_table is not None  # negotiate() offers "table" only with a renderer
        items = [
            Stored(dict(i, kind=info.kind, apiVersion=info.group_version)) for i in lst["items"]
        ]
        return send_json(h, req, 200, render_table(info, items, lst["metadata"]))
    return send_yaml(h, req, 200, lst)


def send_error(h: ConnectionHandler, req: Request, e: errors.ApiError) -> None:
    """The error's Status (or the plain "404 page not found" when it has no body)."""
    try:
        if e.body is None:
            send(h, req, e.code, b"404 page not found\n", "text/plain; charset=utf-8", e.headers)
        else:
            send_json(h, req, e.code, e.body, e.headers)
    except OSError:
        h.close_connection = True
