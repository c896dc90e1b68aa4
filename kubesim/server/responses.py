"""Writing responses: status line, headers and a pre-encoded body in one write.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters (``WriteObjectNegotiated``,
``ErrorNegotiated``, ``WriteRawJSON``) and of handlers/response.go's
``transformResponseObject``: an object or list is written in the negotiated media type (JSON,
indented JSON when pretty, YAML or protobuf) at the request's version, or transformed first
into a Table or a PartialObjectMetadata view. Errors are negotiated too: a protobuf client
gets its Status in protobuf. Every response is one ``write`` of bytes encoded before the first
byte goes out, with a Content-Length (watches, which stream, are in watch.py). The request is
recorded in the request log just before its bytes are written.

Bodies are Go's bytes: compact JSON is written by ``json.Encoder`` (apimachinery's JSON
serializer, and its streaming list encoder), which ends the value with a newline; indented
JSON (``pretty``, and ``WriteRawJSON``'s errors and /version) by ``json.MarshalIndent``, which
does not. Both escape ``<``, ``>``, ``&``, U+2028 and U+2029 (``storage.store.go_escape``).
"""

from __future__ import annotations

import json
from typing import Any

from kubesim import protobuf
from kubesim.api import errors, warning
from kubesim.api.resources import ResourceInfo
from kubesim.server import transform
from kubesim.server.httpserver import ConnectionHandler
from kubesim.server.negotiation import JSON, PROTOBUF, YAML, MediaType, negotiate_error
from kubesim.server.request import Request
from kubesim.storage.store import Stored, encode, go_escape
from kubesim.views.table import TableRenderer

__all__ = [
    "encode_as",
    "send",
    "send_error",
    "send_json",
    "send_list",
    "send_object",
    "send_as",
    "pretty_json",
    "NEWLINE",
]

# What Go's json.Encoder writes after each value: the last byte of every compact JSON body.
NEWLINE = b"\n"

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
    tail: bytes = b"",
) -> None:
    """Write one complete response (no body for HEAD) and record the request. tail: bytes
    after the body (the encoder's newline), joined in the one copy the write makes anyway
    rather than by copying a large cached body first."""
    req.code = code
    head = [
        f"HTTP/1.1 {code} {_REASONS.get(code, 'Unknown')}",
        "Cache-Control: no-cache, private",
        f"Content-Length: {len(body) + len(tail)}",
    ]
    if ctype:  # (an empty 406 of the OpenAPI handler has none)
        head.insert(2, f"Content-Type: {ctype}")
    if headers:
        head.extend(f"{k}: {v}" for k, v in headers.items())
    # what the request was warned about on its way (field validation's unknown fields, ...)
    head.extend(f"Warning: {value}" for value in warning.header_values())
    if h.close_connection:
        head.append("Connection: close")
    data = ("\r\n".join(head) + "\r\n\r\n").encode()
    # Log before the answer leaves: a client that reads the request log right after its
    # response must find the request there (a test's read-after-response race otherwise).
    req.record()
    h.wfile.write(data if req.method == "HEAD" else b"".join((data, body, tail)))


def encode_as(mt: MediaType, obj: Any) -> tuple[bytes, str]:
    """An object's body and Content-Type in the negotiated serializer."""
    if mt.media_type == PROTOBUF:
        return protobuf.encode(obj), PROTOBUF
    if mt.media_type == YAML:
        import yaml

        return yaml.safe_dump(obj, sort_keys=False).encode(), YAML
    if mt.pretty:
        return pretty_json(obj), JSON
    return encode(obj) + NEWLINE, JSON


def pretty_json(obj: Any) -> bytes:
    """The pretty JSON serializer's output: json.MarshalIndent(obj, "", "  "), which ends
    without a newline."""
    return go_escape(json.dumps(obj, indent=2, ensure_ascii=False)).encode()


def send_json(
    h: ConnectionHandler, req: Request, code: int, obj: Any, headers: dict | None = None
) -> None:
    send(h, req, code, encode(obj) + NEWLINE, "application/json", headers)


def send_as(h: ConnectionHandler, req: Request, code: int, obj: Any, mt: MediaType) -> None:
    """One object (a Scale, a Status, a Table...) in the negotiated serializer."""
    body, ctype = encode_as(mt, obj)
    send(h, req, code, body, ctype)


def send_object(
    h: ConnectionHandler,
    req: Request,
    code: int,
    info: ResourceInfo,
    stored: Stored,
    mt: MediaType,
    render_table: TableRenderer | None,
) -> None:
    """One object at info's version in the negotiated media type, transformed if asked."""
    if mt.convert == transform.PARTIAL:
        return send_as(
            h, req, code, transform.partial_object_metadata(stored.obj, mt.convert_version), mt
        )
    if mt.convert == transform.PARTIAL_LIST:
        raise transform.wrong_shape(info, mt.convert, False)
    if mt.convert:
        assert render_table is not None  # negotiate() allows Table only with a renderer
        return send_as(h, req, code, _table(render_table(info, [stored], None), mt), mt)
    if mt.media_type == JSON and not mt.pretty:
        return send(h, req, code, info.object_json(stored), tail=NEWLINE)
    return send_as(h, req, code, info.object_dict(stored), mt)


def send_list(
    h: ConnectionHandler,
    req: Request,
    info: ResourceInfo,
    body: bytes,
    mt: MediaType,
    render_table: TableRenderer | None,
) -> None:
    """A list body (as Rest.list builds it) in the negotiated media type, status 200."""
    if mt.media_type == JSON and not mt.pretty and not mt.convert:
        return send(h, req, 200, body, tail=NEWLINE)
    lst = json.loads(body)
    if mt.convert == transform.PARTIAL_LIST:
        out = transform.partial_object_metadata_list(
            lst["items"], lst["metadata"], mt.convert_version
        )
        return send_as(h, req, 200, out, mt)
    if mt.convert == transform.PARTIAL:
        raise transform.wrong_shape(info, mt.convert, True)
    if mt.convert:
        assert render_table is not None  # negotiate() allows Table only with a renderer
        items = [Stored(_stored_form(info, i)) for i in lst["items"]]
        return send_as(h, req, 200, _table(render_table(info, items, lst["metadata"]), mt), mt)
    return send_as(h, req, 200, lst, mt)


def _stored_form(info: ResourceInfo, item: dict) -> dict:
    """A list item back in the stored form the table renderer reads (kind/apiVersion first)."""
    obj = {"kind": info.kind, "apiVersion": info.group_version, **item}
    conv = info.converter
    if conv is not None and conv.converts_output:
        return conv.to_storage(obj)
    return obj


def _table(table: dict, mt: MediaType) -> dict:
    """The Table in the meta.k8s.io version asked for (v1beta1 has the same fields)."""
    if mt.convert_version != "v1":
        table = dict(table, apiVersion=mt.convert_api_version)
    return table


def send_error(h: ConnectionHandler, req: Request, e: errors.ApiError) -> None:
    """The error's Status (or the plain "404 page not found" when it has no body).

    ErrorNegotiated: the Status goes out in the media type the Accept header picks among
    JSON, YAML and protobuf; when it picks none, as indented JSON (WriteRawJSON).
    """
    try:
        if e.body is None:
            send(h, req, e.code, e.text.encode(), "text/plain; charset=utf-8", e.headers)
            return
        mt = negotiate_error(h)
        if mt is None:
            send(h, req, e.code, pretty_json(e.body), JSON, e.headers)
        elif mt.media_type == JSON and not mt.pretty:
            send_json(h, req, e.code, e.body, e.headers)
        else:
            body, ctype = encode_as(mt, e.body)
            send(h, req, e.code, body, ctype, e.headers)
    except OSError:
        h.close_connection = True
