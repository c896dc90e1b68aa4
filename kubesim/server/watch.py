"""Streaming a watch: events in an HTTP/1.1 chunked response, with bookmarks.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/watch.go (``WatchServer.HandleHTTP``) and
response.go's ``watchEncoder`` plus the bookmark timing of the cacher's ``cacheWatcher``
(storage/cacher). Events are JSON lines (``Content-Type: application/json``) or, for a
protobuf watch, length-prefixed ``metav1.WatchEvent`` frames
(``application/vnd.kubernetes.protobuf;stream=watch``); each event's object is the stored
object at the watch's version, or its Table or PartialObjectMetadata view when the client
asked for one (bookmarks included; ERROR Status objects are never transformed). The watch was
opened and validated by ``Rest.open_watch`` before any byte is written; this module drains its
``Watcher`` until the timeout, a server-side close or the client hanging up, then ends the
stream and unregisters the watcher.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kubesim import protobuf
from kubesim.api.resources import ResourceInfo
from kubesim.registry.rest import WatchRequest
from kubesim.server import transform
from kubesim.server.httpserver import ConnectionHandler, peer_closed
from kubesim.server.negotiation import JSON, PROTOBUF, MediaType
from kubesim.server.request import Request
from kubesim.storage.store import INITIAL_END, Storage, Stored, encode
from kubesim.views.table import TableRenderer

# (event type, the object as clients read it) -> the bytes of one event on the wire
_Framer = Callable[[str, Any], bytes]

__all__ = ["serve_watch"]

_PROBE_INTERVAL = 1.0  # seconds between checks that an idle watch's client is still there


def serve_watch(
    h: ConnectionHandler,
    req: Request,
    wr: WatchRequest,
    storage: Storage,
    bookmark_interval: float,
    mt: MediaType | None = None,
    render_table: TableRenderer | None = None,
) -> None:
    """Stream ``wr`` to the client until it ends; ``storage`` unregisters the watcher after.

    bookmark_interval: seconds between periodic BOOKMARKs (only with allowWatchBookmarks).
    mt: the negotiated stream media type (None: plain JSON).
    render_table: given when the client asked for Table rows: each event then carries a Table.
    A watch whose start RV has expired gets one ERROR event (410) and an immediate end.
    """
    mt = mt or MediaType(JSON)
    req.code = 200
    ctype = PROTOBUF + ";stream=watch" if mt.media_type == PROTOBUF else JSON
    h.wfile.write(
        b"HTTP/1.1 200 OK\r\nCache-Control: no-cache, private\r\n"
        b"Content-Type: " + ctype.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    info = wr.info
    write = h.wfile.write
    frame = _framer(mt)
    event = _event_encoder(info, mt, frame, render_table)

    def chunk(data: bytes) -> None:
        write(b"%x\r\n" % len(data) + data + b"\r\n")

    w = wr.watcher
    if w is None:
        assert wr.expired is not None  # open_watch sets one of the two
        chunk(frame("ERROR", wr.expired.body))
        write(b"0\r\n\r\n")
        return
    try:
        now = time.monotonic()
        deadline = now + wr.timeout
        last_bm_rv = w.start_rv  # not last_rv: events may already have been queued
        if wr.bookmarks:
            next_bm = _next_bookmark(now, deadline, bookmark_interval)
        else:
            next_bm = float("inf")
        next_probe = now + _PROBE_INTERVAL
        while True:
            wait = min(deadline, next_bm, next_probe) - time.monotonic()
            items = w.drain(max(wait, 0.0))
            if items:
                parts = []
                for etype, obj in items:
                    if etype == INITIAL_END:
                        parts.append(_bookmark(info, obj, True, mt, frame, wr.omit_zero_timestamp))
                        last_bm_rv = max(last_bm_rv, obj)
                    else:
                        parts.append(event(etype, obj))
                chunk(b"".join(parts))
            now = time.monotonic()
            if w.bookmark_requested or now >= next_bm:
                rv = w.take_bookmark_rv()
                if wr.bookmarks and rv > last_bm_rv:
                    chunk(_bookmark(info, rv, False, mt, frame, wr.omit_zero_timestamp))
                    last_bm_rv = rv
                if now >= next_bm:
                    next_bm = _next_bookmark(now, deadline, bookmark_interval)
            if w.closed and not w.items:
                break
            if now >= deadline:
                break
            if now >= next_probe:
                next_probe = now + _PROBE_INTERVAL
                if not items and peer_closed(h.connection):
                    h.close_connection = True
                    return
        write(b"0\r\n\r\n")
    except OSError:
        h.close_connection = True
    finally:
        storage.unwatch(w)


def _framer(mt: MediaType) -> _Framer:
    """How one event is written: a JSON line, or a length-prefixed protobuf WatchEvent."""
    if mt.media_type == PROTOBUF:
        return protobuf.encode_watch_event

    def json_line(etype: str, obj: Any) -> bytes:
        return b'{"type":"' + etype.encode() + b'","object":' + encode(obj) + b"}\n"

    return json_line


def _event_encoder(
    info: ResourceInfo, mt: MediaType, frame: _Framer, render_table: TableRenderer | None
) -> Callable[[str, Stored], bytes]:
    """The encoder of one stored object's event, chosen once per watch (watchEmbeddedEncoder).

    A transform that does not fit (PartialObjectMetadataList asked of single objects) falls
    back to the object itself, as the real encoder does after logging the failure.
    """
    gv = info.group_version
    if mt.convert == transform.TABLE_KIND and render_table is not None:
        return lambda etype, obj: frame(etype, render_table(info, [obj], None))
    if mt.convert == transform.PARTIAL:
        version = mt.convert_version
        return lambda etype, obj: frame(etype, transform.partial_object_metadata(obj.obj, version))
    if mt.media_type == PROTOBUF:
        return lambda etype, obj: frame(etype, info.object_dict(obj))
    if info.converter is not None and info.converter.converts_output:
        return lambda etype, obj: (
            b'{"type":"' + etype.encode() + b'","object":' + info.object_json(obj) + b"}\n"
        )

    def plain(etype: str, obj: Stored) -> bytes:
        return b'{"type":"' + etype.encode() + b'","object":' + obj.at_version(gv) + b"}\n"

    return plain


def _next_bookmark(now: float, deadline: float, interval: float) -> float:
    """cacheWatcher.nextBookmarkTime: every interval, and once 2 s before the deadline."""
    nxt = now + interval
    pre = deadline - 2.0
    if pre < nxt:
        nxt = pre
    return nxt if nxt > now else float("inf")


def _bookmark(
    info: ResourceInfo,
    rv: int,
    initial_end: bool,
    mt: MediaType,
    frame: _Framer,
    omit_zero_timestamp: bool = True,
) -> bytes:
    """A BOOKMARK event: an object of the watched kind carrying only its RV.

    initial_end marks the end of a sendInitialEvents watch's initial events (the
    ``k8s.io/initial-events-end`` annotation). A built-in Deployment's bookmark carries the
    empty fields Go's encoding of an empty apps/v1 Deployment has, as the real server's does.
    A metadata-only watch gets the bookmark's PartialObjectMetadata.

    That Deployment is the cacher's ``newFunc()`` with only its resourceVersion set, encoded
    at apps/v1: ``replicas`` 0 (a pointer to the internal zero), ``selector`` and the pod
    spec's ``containers`` null (no omitempty), ``strategy`` and ``status`` empty. v1.36 omits
    the zero ``creationTimestamp`` of both ObjectMetas (``omitzero``); v1.24 wrote null.
    """
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    if mt.convert == transform.PARTIAL:
        return frame(
            "BOOKMARK", transform.partial_object_metadata({"metadata": meta}, mt.convert_version)
        )
    if info.kind == "Deployment" and not info.custom:
        template_meta: dict[str, Any] = {}
        if not omit_zero_timestamp:
            meta["creationTimestamp"] = None
            template_meta["creationTimestamp"] = None
        obj = {
            "kind": info.kind,
            "apiVersion": info.group_version,
            "metadata": meta,
            "spec": {
                "replicas": 0,
                "selector": None,
                "template": {"metadata": template_meta, "spec": {"containers": None}},
                "strategy": {},
            },
            "status": {},
        }
    else:
        obj = {"kind": info.kind, "apiVersion": info.group_version, "metadata": meta}
    return frame("BOOKMARK", obj)
