"""One handler per verb: decode the request, call the REST layer, write the answer.

Twin of k8s.io/apiserver/pkg/endpoints/handlers: ``get_resource`` and ``list_resource`` are
get.go's GetResource and ListResource, ``watch_resource`` is ListResource's watch branch
(serveWatch, streamed by watch.py), ``create_resource`` create.go, ``update_resource``
update.go, ``patch_resource`` patch.go, ``delete_resource`` and ``delete_collection``
delete.go. The server has already resolved the route, authenticated the request, applied
faults and checked that the subresource exists; ``VERB_HANDLERS`` maps the request's verb to
its handler, as the route installer (endpoints/installer.go) registers one per verb.

Handlers hold no lock and touch no storage: the REST layer (rest.py, and scale.py for
``/scale``) does every read-check-write. Each handler negotiates its response format first,
so an unacceptable Accept header is a 406 before anything else is checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import errors
from .httpserver import ConnectionHandler
from .negotiation import decode_body, negotiate
from .request import Request, Route
from .responses import TableRenderer, send_json, send_list, send_object
from .storage import Stored
from .table import request_renderer
from .watch import serve_watch

if TYPE_CHECKING:
    from .server import ApiServer

__all__ = ["Handler", "VERB_HANDLERS"]

Handler = Callable[["ApiServer", ConnectionHandler, Request, Route, bytes], None]


def get_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """GET .../<name>[/status|/finalize|/scale]: the object, or its Scale (always JSON)."""
    fmt = negotiate(h, api.table_renderer is not None)
    info, ns, name = route.info, route.namespace, route.name
    if route.sub == "scale":
        return send_json(h, req, 200, api.scale.get(info, ns, name))
    return send_object(h, req, 200, info, api.rest.get(info, ns, name), fmt, _tables(api, req, fmt))


def list_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """GET on a collection: the list (a missing namespace lists empty, as upstream's does)."""
    fmt = negotiate(h, api.table_renderer is not None)
    info = route.info
    items = api.rest.list(info, route.namespace, req.query)
    return send_list(h, req, info, items, fmt, _tables(api, req, fmt))


def watch_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """GET with ?watch=true, or under the legacy /watch/ prefix: a stream of events.

    The watch is opened (and its parameters validated) before the 200 goes out, so a bad
    request still gets a plain error response. /watch/ allows no subresource.
    """
    if route.watch_path and route.name and route.sub:
        raise errors.page_not_found()
    fmt = negotiate(h, api.table_renderer is not None)
    table = _tables(api, req, fmt, watch=True)
    wr = api.rest.open_watch(route.info, route.namespace, req.query, route.name or None)
    serve_watch(h, req, wr, api.storage, api.bookmark_interval, table)


def create_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """POST on a collection: create the object in the body (201)."""
    fmt = negotiate(h, api.table_renderer is not None)
    info, ns = route.info, route.namespace
    if route.sub or (info.namespaced and not ns):
        raise errors.method_not_allowed()
    code, stored = api.rest.create(info, ns, _decode_object(h, info.kind, body), req.query)
    return send_object(h, req, code, info, stored, fmt, _tables(api, req, fmt))


def update_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """PUT .../<name>[/status|/finalize|/scale]: replace the object (or its Scale)."""
    fmt = negotiate(h, api.table_renderer is not None)
    info, ns, name, sub = route.info, route.namespace, route.name, route.sub
    if not name:
        raise _no_collection_write(route)
    if sub == "scale":
        scale = api.scale.update(info, ns, name, _decode_object(h, "Scale", body), req.query)
        return send_json(h, req, 200, scale)
    code, stored = api.rest.update(
        info, ns, name, _decode_object(h, info.kind, body), req.query, _status_sub(sub)
    )
    return send_object(h, req, code, info, stored, fmt, _tables(api, req, fmt))


def patch_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """PATCH .../<name>[/status|/finalize|/scale]: patch the object (or its Scale).

    The patch type comes from Content-Type (merge, JSON, strategic merge or apply); the REST
    layer applies it to the stored object under the storage lock.
    """
    fmt = negotiate(h, api.table_renderer is not None)
    info, ns, name, sub = route.info, route.namespace, route.name, route.sub
    if not name:
        raise _no_collection_write(route)
    ctype = h.headers.get("Content-Type", "")
    if sub == "scale":
        return send_json(h, req, 200, api.scale.patch(info, ns, name, ctype, body, req.query))
    code, stored = api.rest.patch(info, ns, name, ctype, body, req.query, _status_sub(sub))
    return send_object(h, req, code, info, stored, fmt, _tables(api, req, fmt))


def delete_resource(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """DELETE .../<name>: the object marked for deletion (finalizers) or a Success Status.

    The optional body is DeleteOptions (query parameters override its fields).
    """
    fmt = negotiate(h, api.table_renderer is not None)
    opts = decode_body(h, body) if body else None
    info = route.info
    if route.sub:
        raise errors.method_not_allowed()
    code, result = api.rest.delete(info, route.namespace, route.name, req.query, opts)
    if isinstance(result, Stored):
        return send_object(h, req, code, info, result, fmt, _tables(api, req, fmt))
    return send_json(h, req, code, result)


def delete_collection(
    api: ApiServer, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """DELETE on a collection: delete every selected object; the list of what was deleted."""
    fmt = negotiate(h, api.table_renderer is not None)
    opts = decode_body(h, body) if body else None
    info = route.info
    if "deletecollection" not in info.verbs:
        raise errors.method_not_allowed()
    deleted = api.rest.delete_collection(info, route.namespace, req.query, opts)
    return send_list(h, req, info, deleted, fmt, _tables(api, req, fmt))


VERB_HANDLERS: dict[str, Handler] = {
    "get": get_resource,
    "list": list_resource,
    "watch": watch_resource,
    "create": create_resource,
    "update": update_resource,
    "patch": patch_resource,
    "delete": delete_resource,
    "deletecollection": delete_collection,
}


def _tables(api: ApiServer, req: Request, fmt: str, watch: bool = False) -> TableRenderer | None:
    """The table renderer bound to this request's TableOptions (``?includeObject=``), when
    the response is a Table; as the real server, only then is includeObject checked."""
    return request_renderer(api.table_renderer, req.query, watch) if fmt == "table" else None


def _no_collection_write(route: Route) -> errors.ApiError:
    """PUT or PATCH on a collection: a CRD's resources answer 400, built-ins 405."""
    if route.info.custom:
        return errors.bad_request("the server does not allow this method on the requested resource")
    return errors.method_not_allowed()


def _decode_object(h: ConnectionHandler, kind: str, body: bytes) -> Any:
    """The body of a create or update; an empty one is the real server's decode error (400)."""
    if not body:
        raise errors.unrecognized_body(kind, body)
    return decode_body(h, body)


def _status_sub(sub: str) -> str | None:
    """The Rest write mode of a subresource: "status", "finalize", or None for the object."""
    return sub if sub in ("status", "finalize") else None
