"""Streaming a watch: events as JSON lines in an HTTP/1.1 chunked response, with bookmarks.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/watch.go (``WatchServer.HandleHTTP``) plus the
bookmark timing of the cacher's ``cacheWatcher`` (storage/cacher). The watch was opened and
validated by ``Rest.open_watch`` before any byte is written; this module drains its
``Watcher`` until the timeout, a server-side close or the client hanging up, then ends the
stream and unregisters the watcher.
"""

from __future__ import annotations

import time
from typing import Any

from .httpserver import ConnectionHandler, peer_closed
from .request import Request
from .resources import ResourceInfo
from .responses import TableRenderer
from .rest import WatchRequest
from .storage import INITIAL_END, Storage, encode

__all__ = ["serve_watch"]

_PROBE_INTERVAL = 1.0  # seconds between checks that an idle watch's client is still there


def serve_watch(
    h: ConnectionHandler,
    req: Request,
    wr: WatchRequest,
    storage: Storage,
    bookmark_interval: float,
    render_table: TableRenderer | None = None,
) -> None:
    """Stream ``wr`` to the client until it ends; ``storage`` unregisters the watcher after.

    bookmark_interval: seconds between periodic BOOKMARKs (only with allowWatchBookmarks).
    render_table: given when the client asked for Table rows: each event then carries a Table.
    A watch whose start RV has expired gets one ERROR event (410) and an immediate end.
    """
    req.code = 200
    h.wfile.write(
        b"HTTP/1.1 200 OK\r\nCache-Control: no-cache, private\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    info = wr.info
    gv = info.group_version
    write = h.wfile.write

    def chunk(data: bytes) -> None:
        write(b"%x\r\n" % len(data) + data + b"\r\n")

    w = wr.watcher
    if w is None:
        assert wr.expired is not None  # open_watch sets one of the two
        chunk(b'{"type":"ERROR","object":' + encode(wr.expired.body) + b"}\n")
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
                        parts.append(_bookmark(info, obj, True))
                        last_bm_rv = max(last_bm_rv, obj)
                    elif render_table is not None:
                        parts.append(
                            b'{"type":"'
                            + etype.encode()
                            + b'","object":'
                            + encode(render_table(info, [obj], None))
                            + b"}\n"
                        )
                    else:
                        parts.append(
                            b'{"type":"'
                            + etype.encode()
                            + b'","object":'
                            + obj.at_version(gv)
                            + b"}\n"
                        )
                chunk(b"".join(parts))
            now = time.monotonic()
            if w.bookmark_requested or now >= next_bm:
                rv = w.take_bookmark_rv()
                if wr.bookmarks and rv > last_bm_rv:
                    chunk(_bookmark(info, rv, False))
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


def _next_bookmark(now: float, deadline: float, interval: float) -> float:
    """cacheWatcher.nextBookmarkTime: every interval, and once 2 s before the deadline."""
    nxt = now + interval
    pre = deadline - 2.0
    if pre < nxt:
        nxt = pre
    return nxt if nxt > now else float("inf")


def _bookmark(info: ResourceInfo, rv: int, initial_end: bool) -> bytes:
    """A BOOKMARK event line: an object of the watched kind carrying only its RV.

    initial_end marks the end of a sendInitialEvents watch's initial events (the
    ``k8s.io/initial-events-end`` annotation). A built-in Deployment's bookmark carries the
    empty fields Go's encoding of an empty apps/v1 Deployment has, as the real server's does.
    """
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    if info.kind == "Deployment" and not info.custom:
        meta["creationTimestamp"] = None
        obj = {
            "kind": info.kind,
            "apiVersion": info.group_version,
            "metadata": meta,
            "spec": {
                "replicas": 0,
                "selector": None,
                "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
                "strategy": {},
            },
            "status": {},
        }
    else:
        obj = {"kind": info.kind, "apiVersion": info.group_version, "metadata": meta}
    return b'{"type":"BOOKMARK","object":' + encode(obj) + b"}\n"
