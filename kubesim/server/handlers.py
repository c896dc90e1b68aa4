"""One handler per verb: decode the request, call the REST layer, write the answer.

Twin of k8s.io/apiserver/pkg/endpoints/handlers: ``get_resource`` and ``list_resource`` are
get.go's GetResource and ListResource, ``watch_resource`` is ListResource's watch branch
(serveWatch, streamed by watch.py), ``create_resource`` create.go, ``update_resource``
update.go, ``patch_resource`` patch.go, ``delete_resource`` and ``delete_collection``
delete.go, ``create_review`` create.go for the review APIs and ``serviceaccounts/token``,
whose REST storage (kubesim/auth/reviews.py) answers instead of storing. The server has
already resolved the route, authenticated and authorized the request, applied
faults and checked that the subresource exists; ``VERB_HANDLERS`` maps the request's verb to
its handler, as the route installer (endpoints/installer.go) registers one per verb.

Handlers hold no lock and touch no storage: the REST layer (rest.py, and scale.py for
``/scale``) does every read-check-write. Each handler negotiates its response format first,
so an unacceptable Accept header is a 406 before anything else is checked; bodies are decoded
by their Content-Type (JSON, YAML or protobuf) into the object a JSON client would send.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.auth.filters import Auth
from kubesim.registry.rest import Rest
from kubesim.registry.scale import ScaleREST
from kubesim.server.httpserver import ConnectionHandler
from kubesim.server.negotiation import (
    MediaType,
    decode_body,
    endpoint_for,
    negotiate,
    negotiate_stream,
)
from kubesim.server.request import Request, Route
from kubesim.server.responses import send_as, send_list, send_object
from kubesim.server.transform import TABLE_KIND
from kubesim.server.watch import serve_watch
from kubesim.storage.store import Storage, Stored
from kubesim.views.table import TableRenderer, request_renderer

__all__ = ["Handler", "Scope", "VERB_HANDLERS", "create_review"]


class Scope(Protocol):
    """What a handler needs of the server: the verbs it calls and how it writes answers.

    The part of upstream's ``RequestScope`` (endpoints/handlers/rest.go) kubesim varies, as a
    Protocol so that the handlers never import the server that dispatches to them
    (``ApiServer`` has these attributes).
    """

    # the REST verbs of the main resource
    rest: Rest
    # the /scale subresource's verbs
    scale: ScaleREST
    # watch streams unregister their watchers here
    storage: Storage
    # seconds between the periodic BOOKMARKs of a watch
    bookmark_interval: float
    # prints Tables for Accept: as=Table; None: the server serves no Tables
    table_renderer: TableRenderer | None
    # the review APIs and TokenRequest answer from it
    auth: Auth


Handler = Callable[[Scope, ConnectionHandler, Request, Route, bytes], None]


def _negotiate(api: Scope, h: ConnectionHandler, route: Route) -> MediaType:
    """The response format of a request on this route (406 when the Accept header allows
    none). /scale answers a Scale, which kubesim serves untransformed."""
    transforms = route.sub != "scale"
    return negotiate(h, endpoint_for(route.info, api.table_renderer is not None, transforms))


def get_resource(api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes) -> None:
    """GET .../<name>[/status|/finalize|/scale]: the object, or its Scale."""
    mt = _negotiate(api, h, route)
    info, ns, name = route.info, route.namespace, route.name
    if route.sub == "scale":
        return send_as(h, req, 200, api.scale.get(info, ns, name), mt)
    return send_object(h, req, 200, info, api.rest.get(info, ns, name), mt, _tables(api, req, mt))


def list_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """GET on a collection: the list (a missing namespace lists empty, as upstream's does)."""
    mt = _negotiate(api, h, route)
    info = route.info
    items = api.rest.list(info, route.namespace, req.query)
    return send_list(h, req, info, items, mt, _tables(api, req, mt))


def watch_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """GET with ?watch=true, or under the legacy /watch/ prefix: a stream of events.

    The watch is opened (and its parameters validated) before the 200 goes out, so a bad
    request still gets a plain error response. /watch/ allows no subresource. The format is
    negotiated as for a list, then must be one that streams (JSON or protobuf).
    """
    if route.watch_path and route.name and route.sub:
        raise errors.page_not_found()
    _negotiate(api, h, route)
    mt = negotiate_stream(h, endpoint_for(route.info, api.table_renderer is not None))
    wr = api.rest.open_watch(route.info, route.namespace, req.query, route.name or None)
    table = _tables(api, req, mt, watch=True)
    serve_watch(h, req, wr, api.storage, api.bookmark_interval, mt, table)


def create_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """POST on a collection: create the object in the body (201)."""
    mt = _negotiate(api, h, route)
    info, ns = route.info, route.namespace
    if route.sub or (info.namespaced and not ns):
        raise errors.method_not_allowed()
    obj = decode_body(h, body, info)
    code, stored = api.rest.create(info, ns, obj, req.query, _user_agent(h))
    return send_object(h, req, code, info, stored, mt, _tables(api, req, mt))


def update_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """PUT .../<name>[/status|/finalize|/scale]: replace the object (or its Scale)."""
    mt = _negotiate(api, h, route)
    info, ns, name, sub = route.info, route.namespace, route.name, route.sub
    if not name:
        raise _no_collection_write(route)
    if sub == "scale":
        scale_body = decode_body(h, body, _SCALE)
        scale = api.scale.update(info, ns, name, scale_body, req.query, _user_agent(h))
        return send_as(h, req, 200, scale, mt)
    obj = decode_body(h, body, info)
    code, stored = api.rest.update(info, ns, name, obj, req.query, _status_sub(sub), _user_agent(h))
    return send_object(h, req, code, info, stored, mt, _tables(api, req, mt))


def patch_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """PATCH .../<name>[/status|/finalize|/scale]: patch the object (or its Scale).

    The patch type comes from Content-Type (merge, JSON, strategic merge or apply); the REST
    layer applies it to the stored object, again if that object changes before the write.
    """
    mt = _negotiate(api, h, route)
    info, ns, name, sub = route.info, route.namespace, route.name, route.sub
    if not name:
        raise _no_collection_write(route)
    ctype = h.headers.get("Content-Type", "")
    if sub == "scale":
        scale = api.scale.patch(info, ns, name, ctype, body, req.query, _user_agent(h))
        return send_as(h, req, 200, scale, mt)
    code, stored = api.rest.patch(
        info, ns, name, ctype, body, req.query, _status_sub(sub), _user_agent(h)
    )
    return send_object(h, req, code, info, stored, mt, _tables(api, req, mt))


def delete_resource(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """DELETE .../<name>: the object marked for deletion (finalizers) or a Success Status.

    The optional body is DeleteOptions (query parameters override its fields).
    """
    mt = _negotiate(api, h, route)
    opts = decode_body(h, body) if body else None
    info = route.info
    if route.sub:
        raise errors.method_not_allowed()
    code, result = api.rest.delete(info, route.namespace, route.name, req.query, opts)
    if isinstance(result, Stored):
        return send_object(h, req, code, info, result, mt, _tables(api, req, mt))
    return send_as(h, req, code, result, mt)  # a Status is never transformed


def delete_collection(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """DELETE on a collection: delete every selected object; the list of what was deleted."""
    mt = _negotiate(api, h, route)
    opts = decode_body(h, body) if body else None
    info = route.info
    if "deletecollection" not in info.verbs:
        raise errors.method_not_allowed()
    deleted = api.rest.delete_collection(info, route.namespace, req.query, opts)
    return send_list(h, req, info, deleted, mt, _tables(api, req, mt))


def create_review(
    api: Scope, h: ConnectionHandler, req: Request, route: Route, body: bytes
) -> None:
    """POST of a review (TokenReview, SubjectAccessReview, ...) or of a TokenRequest to
    serviceaccounts/<name>/token: the body answered, 201; any other method 405."""
    info = route.info
    kind = _TOKEN_REQUEST if route.sub == "token" else info
    mt = negotiate(h, endpoint_for(kind, False, False))
    if req.method != "POST" or (route.name and not route.sub):
        raise errors.method_not_allowed()
    if info.namespaced and not route.namespace:
        raise errors.method_not_allowed()
    obj = decode_body(h, body, kind)
    if not isinstance(obj, dict):
        raise errors.bad_request(f"the object provided is not a {kind.kind}")
    answer = api.auth.review(
        req.user_info, info.group, info.plural, route.namespace, route.name, obj
    )
    return send_as(h, req, 201, answer, mt)


def _user_agent(h: ConnectionHandler) -> str:
    """The User-Agent, which names the field manager of a write without ?fieldManager=."""
    return h.headers.get("User-Agent", "")


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


def _tables(api: Scope, req: Request, mt: MediaType, watch: bool = False) -> TableRenderer | None:
    """The table renderer bound to this request's TableOptions (``?includeObject=``), when
    the response is a Table; as the real server, only then is includeObject checked."""
    if mt.convert != TABLE_KIND:
        return None
    return request_renderer(api.table_renderer, req.query, watch)


# What a /scale body is decoded as (its protobuf form is autoscaling/v1 Scale).
_SCALE = ResourceInfo("autoscaling", "v1", "scale", "Scale", True)
# What a serviceaccounts/<name>/token body is decoded and answered as.
_TOKEN_REQUEST = ResourceInfo("authentication.k8s.io", "v1", "token", "TokenRequest", True)


def _no_collection_write(route: Route) -> errors.ApiError:
    """PUT or PATCH on a collection: a CRD's resources answer 400, built-ins 405."""
    if route.info.custom:
        return errors.bad_request("the server does not allow this method on the requested resource")
    return errors.method_not_allowed()


def _status_sub(sub: str) -> str | None:
    """The Rest write mode of a subresource: "status", "finalize", "approval" (a CSR's), or
    None for the object."""
    return sub if sub in ("status", "finalize", "approval") else None
