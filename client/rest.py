"""Raw-JSON REST requests to the API server.

client-go twin: ``rest.RESTClient`` as the dynamic client uses it (``k8s.io/client-go/rest``),
with the errors of ``client/errors.py`` (``k8s.io/apimachinery/pkg/api/errors``).

Why not the official client's generated ``*Api`` classes? They decode every response into
model classes, which is slow and does not cover custom resources. What a request needs is
client-go's stack, which is ours here: ``client/restconfig.py`` (``rest.Config``, built by
client/config.py as ``clientcmd`` builds one), ``client/auth.py`` (the headers, built once and
refreshed on the credential's own schedule or when a 401 says they are stale),
``client/transport.py`` and ``client/pool.py`` (``http.client`` on kept-alive connections,
with TLS and proxies). The official client still loads kubeconfigs that need its exec or
auth-provider plugins (client/config.py). Only the encoding and decoding of bodies is ours:
``client/jsonutil.py`` on plain dicts (msgspec when installed, else ``json``).

Two things client-go's transport does that the official Python client does not, and that a
controller needs, are added here:

- a client-side token bucket (``--kube-api-qps`` / ``--kube-api-burst``), as client-go's
  ``flowcontrol.NewTokenBucketRateLimiter`` on every request;
- watch streams that can be closed from another thread and that fail when no byte arrives for a
  read deadline, so a silently stalled watch is noticed instead of hanging forever.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from client import jsonutil
from client.errors import APIError, TransportError
from client.flowcontrol import TokenBucketRateLimiter
from client.objects import Object
from client.restconfig import Config
from client.transport import Response, Stream, Transport
from client.watch import Watch, WatchEvent

__all__ = [
    "Interface",
    "RESTClient",
    "WatchStream",
    "resource_path",
]

Params = Mapping[str, Any] | Sequence[tuple[str, Any]] | None
Timeout = float | tuple[float, float] | None


def resource_path(
    group: str,
    version: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of a collection or an object; the core group ("") lives under /api."""
    parts = ["/api/" + version] if not group else [f"/apis/{group}/{version}"]
    if namespace:
        parts.append("namespaces/" + quote(namespace, safe=""))
    parts.append(resource)
    if name:
        parts.append(quote(name, safe=""))
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


class Interface(Protocol):
    """What the informer and the tools need from a transport (client-go ``rest.Interface``).

    ``RESTClient`` is the one implementation shipped; tests substitute fakes that record calls
    or fail on cue.
    """

    def request(
        self,
        method: str,
        path: str,
        params: Params = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Timeout = 60.0,
        *,
        lazy_items: bool = False,
        decode: bool = True,
    ) -> Object: ...

    def stream(
        self, path: str, params: Params = None, timeout: Timeout = (10.0, 330.0)
    ) -> Watch: ...


class RESTClient:
    """Sends requests with plain-dict bodies and returns decoded JSON.

    client-go twin: ``rest.RESTClient`` with ``flowcontrol.NewTokenBucketRateLimiter``. Differs:
    JSON only (no protobuf, no codecs or scheme), and no retries inside: callers decide.

    Thread-safe: the connection pool is, and the throttle has its own lock.
    """

    def __init__(
        self,
        config: Any,
        qps: float = 0.0,
        burst: int = 0,
        user_agent: str | None = None,
    ) -> None:
        # client.restconfig.Config, or an official kubernetes.client.ApiClient (tests, tools)
        if not isinstance(config, Config):
            config = Config.from_api_client(config)
        self.config = config
        # client-go's flowcontrol.NewTokenBucketRateLimiter: one token per request, waiting when
        # empty.
        self._throttle = TokenBucketRateLimiter(qps, max(1, burst or int(qps))) if qps > 0 else None
        # Headers (auth refreshed on the credential's schedule, reset by a 401) and the host's
        # connection pool, prepared once: client/auth.py, client/transport.py. A user_agent of
        # None keeps the ApiClient's own User-Agent.
        self._transport = Transport.for_config(config, user_agent=user_agent)

    # -- building and sending ----------------------------------------------------------------

    def _prepare(self, path: str, params: Params, body: Any) -> tuple[str, bytes | None]:
        """The request target (path and query) and the encoded body, the throttle passed."""
        if self._throttle is not None:
            self._throttle.accept()
        if params:
            path += _query(params)
        data = None if body is None else (body if isinstance(body, bytes) else jsonutil.dumps(body))
        return path, data

    def _send(
        self,
        method: str,
        path: str,
        params: Params,
        body: Any,
        content_type: str | None,
        timeout: Timeout,
    ) -> Response:
        path, data = self._prepare(path, params, body)
        if isinstance(timeout, tuple):
            connect, read, total = timeout[0], timeout[1], None
        elif timeout is not None:
            connect, read, total = None, None, timeout
        else:
            connect, read, total = 10.0, None, None
        try:
            return self._transport.roundtrip(
                method,
                path,
                body=data,
                content_type=content_type if body is not None else None,
                connect_timeout=connect,
                read_timeout=read,
                total_timeout=total,
                retry_dropped=method == "GET",
            )
        except (http.client.HTTPException, OSError) as exc:
            # http.client's and the socket's: the type says what happened (RemoteDisconnected,
            # IncompleteRead, TimeoutError), often more than the text
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc

    def _open(self, path: str, params: Params, timeout: Timeout) -> Stream:
        """A streaming GET (a watch): the answer with its body not read."""
        path, _ = self._prepare(path, params, None)
        if isinstance(timeout, tuple):
            connect, read, total = timeout[0], timeout[1], None
        elif timeout is not None:
            connect, read, total = None, None, timeout
        else:
            connect, read, total = 10.0, None, None
        try:
            return self._transport.open(
                "GET", path, connect_timeout=connect, read_timeout=read, total_timeout=total
            )
        except (http.client.HTTPException, OSError) as exc:
            raise TransportError(f"GET {path}: {type(exc).__name__}: {exc}") from exc

    # -- public API -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        params: Params = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Timeout = 60.0,
        *,
        lazy_items: bool = False,
        decode: bool = True,
    ) -> Object:
        """Send one request and return the decoded JSON body; raise APIError on non-2xx.

        ``lazy_items``: a List answer's ``items`` come back as ``jsonutil.LazyItems``, each
        decoded only when read (an informer's list: see ``jsonutil.loads_list``).
        ``decode=False``: a caller that never reads a successful answer (the Event sender)
        gets ``{}`` instead of paying for its decoding; the body is still read, so the
        connection is kept alive, and an error answer is still decoded into the APIError.
        """
        resp = self._send(method, path, params, body, content_type, timeout)
        data = resp.data
        if resp.status >= 300:
            raise APIError.from_response(resp.status, resp.reason or "", resp.headers, data)
        if not data or not decode:
            return {}
        decoded: Object = jsonutil.loads_list(data) if lazy_items else jsonutil.loads(data)
        return decoded

    def stream(
        self, path: str, params: Params = None, timeout: Timeout = (10.0, 330.0)
    ) -> WatchStream:
        """Open a streaming GET (a watch) and return its decoded lines.

        The read part of ``timeout`` is the stall guard: when no byte arrives for that long the
        stream raises TransportError, so the caller can re-watch.
        """
        resp = self._open(path, params, timeout)
        if resp.status >= 300:
            try:
                data = resp.read()
            finally:
                resp.close()
            raise APIError.from_response(resp.status, resp.reason or "", resp.headers, data)
        return WatchStream(resp, path)


# The query strings of the params sent most: a controller sends the same few again and again
# (every write's ?fieldManager=...), and urlencode costs ~10x the lookup. Only params whose
# values are all strings are kept: a str equals only the same str, so a hit is exact (True and
# 1 are equal keys, yet encode as "true" and "1").
_queries: dict[tuple[tuple[str, Any], ...], str] = {}
_QUERY_CACHE_SIZE = 256


def _query(params: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> str:
    """``?`` and the encoded query of ``params`` (None values left out), or ``""``."""
    items = tuple(params.items() if isinstance(params, Mapping) else params)
    try:
        return _queries[items]
    except KeyError:
        pass
    except TypeError:  # a value that cannot be hashed
        return _encode_query(items)
    encoded = _encode_query(items)
    if all(type(v) is str for _, v in items):
        if len(_queries) >= _QUERY_CACHE_SIZE:
            _queries.clear()  # many distinct queries: stay bounded
        _queries[items] = encoded
    return encoded


def _encode_query(items: tuple[tuple[str, Any], ...]) -> str:
    query = [(k, _query_value(v)) for k, v in items if v is not None]
    return "?" + urlencode(query) if query else ""


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class WatchStream:
    """The decoded lines of one chunked watch response (``watch.StreamWatcher`` in client-go).

    Iterate it to get each ``{"type": ..., "object": ...}`` dict. ``close()`` may be called from
    any thread: it shuts the socket down, which ends a blocked read at once, and iteration stops
    quietly instead of raising.
    """

    def __init__(self, response: Stream, path: str) -> None:
        self._response = response  # the open answer, read as it arrives
        self._path = path  # for error messages
        self._closed = threading.Event()  # set by close(); iteration ends without an error

    def __enter__(self) -> WatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Stop the stream now; safe to call more than once and from any thread."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._response.close()
        except Exception:  # closing a dead socket may fail in many ways
            pass

    def _chunks(self) -> Iterator[bytes]:
        resp = self._response
        while True:
            # what has arrived, up to 64 KiB: one event or many (http.client decodes chunks)
            data = resp.read1(65536)
            if not data:
                return
            yield data

    def __iter__(self) -> Iterator[WatchEvent]:
        pending = b""  # the start of a line whose end has not arrived yet
        loads = jsonutil.loads
        try:
            for chunk in self._chunks():
                data = pending + chunk if pending else chunk
                # Each line is cut out where it is, one at a time: a server may send a backlog of
                # thousands of events in one chunk (WatchList's initial events: 30 MB for 10,000
                # Deployments), which a split into a list of lines would hold twice over.
                del chunk
                start, end = 0, data.find(b"\n")
                while end >= 0:
                    line = data[start:end]
                    # not blank (``strip()`` would copy every event's line to find out)
                    if line and not line.isspace():
                        yield loads(line)
                    start = end + 1
                    end = data.find(b"\n", start)
                pending = data[start:]
                # Nothing of this chunk stays referenced while the next read waits (``line`` is a
                # copy of one line): after the initial events a watch may be quiet for minutes.
                del data
            if pending and not pending.isspace() and not self.closed:
                yield loads(pending)
        except (http.client.HTTPException, OSError, ValueError, AttributeError) as exc:
            # AttributeError, ValueError: http.client drops its fp when another thread closes
            # the response.
            if self.closed:
                return
            raise TransportError(f"watch {self._path}: {exc}") from exc
        finally:
            self.close()
