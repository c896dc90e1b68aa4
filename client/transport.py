"""One request over the official client's connection pool, with headers and pool prepared once.

client-go twin: the ``http.RoundTripper`` stack ``transport.New(rest.Config)`` builds: the TLS
and proxy transport, wrapped by the user-agent and bearer-auth round trippers
(``k8s.io/client-go/transport/round_trippers.go``), whose bearer round tripper resets the
token source after a 401.

Why: ``PoolManager.request`` parses the absolute URL and normalises a pool key on every
request; ``ApiClient.param_serialize`` rebuilds the headers and runs the refresh hook (see
``client/auth.py``). Both answers are the same for every request of a client, so they are
worked out once here: the headers by ``RequestHeaders``, the connection pool by asking the
official client's ``PoolManager`` for it once. The pool carries everything the official
client configured - TLS verification, CA, client certificate, SNI, proxy tunnel - and keeps
connections alive. ``python -m bench.transport_bench`` shows what each step saves.

Kept exactly as the pool manager would do it: a plain-HTTP destination behind an HTTP proxy
needs the absolute URL and proxy headers, so those requests still go through the pool
manager; a pool that the manager closed (``clear()``, or evicted for other hosts) is looked
up again.

``roundtrip`` (every request but a watch) goes one step further down: it takes a connection
from that same pool and speaks ``http.client`` on it, as ``HTTPConnectionPool._make_request``
does inside, without what urllib3 wraps around that call and the controller never uses: the
``Retry`` object cloned and incremented per request, the redirect logic, the ``Timeout``
clone, a second header map (``HTTPHeaderDict``) and ``urllib3.HTTPResponse`` around
``http.client``'s response, its content decoders and its debug log line (half of a request's
CPU over urllib3's own, ``bench/transport_bench.py``). The connection is still urllib3's:
it connects, verifies TLS and tunnels through a proxy as the pool configured it, and goes
back to the pool alive (keep-alive) or is replaced when the server closed it. Watches keep
``send``: their chunked stream is urllib3's ``read_chunked``.
"""

from __future__ import annotations

import http.client
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import urllib3
from urllib3.util.proxy import connection_requires_http_tunnel
from urllib3.util.url import parse_url

from client.auth import RequestHeaders

__all__ = ["DEAD_CONNECTION_RETRY", "Response", "Transport"]


# Retries are the caller's decision (backoff, Retry-After, relist), with one exception that Go's
# net/http makes too: an idempotent request whose pooled keep-alive connection turns out to be
# dead (the server closed it while idle, e.g. on restart) is sent once more on a new connection.
# Connection refused and HTTP error statuses are never retried here.
class _DeadConnectionRetry(urllib3.Retry):
    """urllib3 counts read timeouts as read errors too; only a dropped connection is retried
    here, so a request's timeout is never doubled."""

    @classmethod
    def _is_read_error(cls, err: Exception) -> bool:
        return isinstance(err, urllib3.exceptions.ProtocolError)  # not ReadTimeoutError


# What ``send`` is given for a GET (a watch; any request behind a forwarding proxy).
DEAD_CONNECTION_RETRY = _DeadConnectionRetry(
    total=1,
    connect=0,
    read=1,
    redirect=0,
    status=0,
    other=0,
    raise_on_redirect=False,
    raise_on_status=False,
)


@dataclass(slots=True)
class Response:
    """A whole answer, read: what ``RESTClient.request`` needs of it.

    client-go twin: ``http.Response`` with its body read (``rest.Result``'s body, status code
    and headers).
    """

    status: int
    reason: str
    # http.client's HTTPMessage (or urllib3's headers behind a forwarding proxy): both have a
    # case-insensitive ``get``
    headers: http.client.HTTPMessage | Mapping[str, str]
    data: bytes


# What a request that died on its connection raises (the server closed a kept-alive connection,
# or reset it): urllib3 retries these as read errors, wrapped in ProtocolError. Timeouts and TLS
# errors are not among them: a slow server does not earn a second send.
# http.client sends "Content-Length: 0" for these when there is no body (RFC 9110 8.6).
_METHODS_EXPECTING_BODY = frozenset({"PATCH", "POST", "PUT"})


class _Dropped(Exception):
    """The connection died after the request was (or was being) sent; ``cause`` says how."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _exchange(
    pool: urllib3.HTTPConnectionPool,
    conn: Any,
    method: str,
    path: str,
    body: bytes | None,
    headers: Mapping[str, str],
    connect_timeout: float | None,
    read_timeout: float | None,
    total_timeout: float | None,
) -> Response:
    """One request and its answer on ``conn``, a connection of ``pool`` (urllib3's
    ``HTTPConnection``: its ``connect`` makes the TCP and TLS connection as configured).
    ``headers``: every header but Host and Content-Length.

    The steps of ``HTTPConnectionPool._make_request``, on ``http.client``'s own ``request``
    and ``getresponse`` (urllib3's overrides of those two build the wrappers this skips).
    """
    conn.timeout = connect_timeout if total_timeout is None else total_timeout
    if conn.is_closed:
        started = time.monotonic()
        if getattr(pool, "proxy", None) is not None:
            # the CONNECT tunnel to an HTTPS destination, as urlopen prepares it
            pool._prepare_proxy(conn)
        else:
            conn.connect()
        if total_timeout is not None:
            read_timeout = max(0.0, total_timeout - (time.monotonic() - started))
        # HTTPS: warns (InsecureRequestWarning) when the connection is not verified
        pool._validate_conn(conn)
    elif total_timeout is not None:
        read_timeout = total_timeout
        conn.sock.settimeout(total_timeout)
    else:
        conn.sock.settimeout(connect_timeout)
    try:
        try:
            # http.client's request(), step by step: putrequest writes the request line, Host
            # and Accept-Encoding, putheader checks and writes each line. (Writing lines
            # encoded once per credential through its private _output saved about 3% of the
            # controller's CPU in a burst: under what a private internal must buy, issue 32.)
            conn.putrequest(method, path)
            for name, value in headers.items():
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            elif method in _METHODS_EXPECTING_BODY:
                conn.putheader("Content-Length", "0")
            conn.endheaders(body)
        except (BrokenPipeError, ConnectionResetError):
            # As urllib3: the server may close after a valid answer; read it if it came.
            pass
        conn.sock.settimeout(read_timeout)
        answer = http.client.HTTPConnection.getresponse(conn)
        data = answer.read()
    except (TimeoutError, ssl.SSLError):
        raise
    except (http.client.HTTPException, OSError) as exc:
        raise _Dropped(exc) from exc
    return Response(answer.status, answer.reason, answer.headers, data)


class Transport:
    """Sends one request to the API server; thread-safe (the pool and the headers are).

    client-go twin: the ``http.RoundTripper`` that ``transport.New`` builds for a
    ``rest.Config`` (TLS and proxy, then the header round trippers).

    ``path`` is the request target: the path plus ``?query`` when there is one.
    """

    def __init__(self, api_client: Any, headers: RequestHeaders) -> None:
        self.headers = headers  # the headers every request carries, and their credential
        self.host: str = api_client.configuration.host  # scheme://host:port, no trailing /
        self._manager: urllib3.PoolManager = api_client.rest_client.pool_manager
        scheme = parse_url(self.host).scheme
        proxy = getattr(self._manager, "proxy", None)  # set on a ProxyManager only
        # A proxy that forwards (plain HTTP destination) rather than tunnels needs the
        # absolute URL on the request line: PoolManager._proxy_requires_url_absolute_form.
        self._absolute_form = proxy is not None and not connection_requires_http_tunnel(
            proxy, getattr(self._manager, "proxy_config", None), scheme
        )
        self._lock = threading.Lock()  # serialises pool lookups
        self._pool: urllib3.HTTPConnectionPool | None = None  # the host's pool, once found
        # (the credential's headers dict, Content-Type -> the headers with it): one
        # attribute, replaced whole when the credential's headers change
        self._heads: tuple[Mapping[str, str] | None, dict[str | None, Mapping[str, str]]] = (
            None,
            {},
        )

    @classmethod
    def from_api_client(cls, api_client: Any, *, user_agent: str | None = None) -> Transport:
        """A transport for the ApiClient's configuration, headers and pool."""
        return cls(api_client, RequestHeaders.from_api_client(api_client, user_agent=user_agent))

    def _head(self, sent: Mapping[str, str], content_type: str | None) -> Mapping[str, str]:
        """The headers for ``sent`` (the credential's headers, one dict until the credential
        changes) and a Content-Type, merged once for each pair."""
        cached = self._heads
        if cached[0] is not sent:
            cached = self._heads = (sent, {})
        head = cached[1].get(content_type)
        if head is None:
            head = cached[1][content_type] = (
                {**sent, "Content-Type": content_type} if content_type else sent
            )
        return head

    def _host_pool(self, stale: urllib3.HTTPConnectionPool | None) -> urllib3.HTTPConnectionPool:
        with self._lock:
            if self._pool is None or self._pool is stale:
                self._pool = self._manager.connection_from_url(self.host)
            return self._pool

    def send(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: urllib3.Timeout,
        retries: urllib3.Retry | bool,
        preload_content: bool = True,
    ) -> urllib3.BaseHTTPResponse:
        """Send the request and return urllib3's response (read, or streaming when
        ``preload_content`` is False). Raises urllib3's errors and ``OSError`` as the pool
        manager would, and ``client.auth.CredentialError`` when no credential can be had."""
        sent = self.headers.get()
        headers = {**sent, "Content-Type": content_type} if content_type else sent
        kw: dict[str, Any] = {
            "body": body,
            "headers": headers,
            "timeout": timeout,
            "retries": retries,
            "preload_content": preload_content,
            "redirect": False,  # API servers do not redirect; a 3xx is the caller's answer
        }
        if self._absolute_form:
            resp = self._manager.urlopen(method, self.host + path, **kw)
        else:
            pool = self._pool or self._host_pool(None)
            try:
                resp = pool.urlopen(method, path, assert_same_host=False, **kw)
            except urllib3.exceptions.ClosedPoolError:
                # The manager closed the pool (cleared, or evicted): the request never left.
                pool = self._host_pool(pool)
                resp = pool.urlopen(method, path, assert_same_host=False, **kw)
        if resp.status == 401:
            # client-go's bearer round tripper: the credential sent is stale, get a new one
            # before the next request; this request's 401 is still the caller's answer.
            self.headers.unauthorized(sent)
        return resp

    def roundtrip(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        connect_timeout: float | None,
        read_timeout: float | None,
        total_timeout: float | None = None,
        retry_dropped: bool = False,
    ) -> Response:
        """Send the request on a pooled connection and read the whole answer.

        ``retry_dropped``: an idempotent request whose connection dies under it (a kept-alive
        connection the server closed; what Go's net/http retries too) is sent once more on a
        new one; a refused connection, a timeout or a TLS error is never retried.
        ``total_timeout`` bounds connect and read together (urllib3's ``Timeout(total=)``).

        Raises ``OSError`` (timeouts, resets, TLS), ``http.client.HTTPException`` (a broken
        answer), urllib3's connection errors, and ``client.auth.CredentialError``.
        """
        if self._absolute_form:
            # a forwarding proxy: the pool manager's absolute-form request and proxy headers
            if total_timeout is not None:
                timeout = urllib3.Timeout(total=total_timeout)
            else:
                timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
            retries = DEAD_CONNECTION_RETRY if retry_dropped else False
            forwarded = self.send(
                method,
                path,
                body=body,
                content_type=content_type,
                timeout=timeout,
                retries=retries,
            )
            reason = forwarded.reason or ""
            return Response(forwarded.status, reason, forwarded.headers, forwarded.data)
        sent = self.headers.get()
        head = self._head(sent, content_type)
        pool = self._pool or self._host_pool(None)
        attempts = 2 if retry_dropped else 1
        while True:
            attempts -= 1
            try:
                conn = pool._get_conn()
            except urllib3.exceptions.ClosedPoolError:
                # The manager closed the pool (cleared, or evicted): the request never left.
                pool = self._host_pool(pool)
                conn = pool._get_conn()
            try:
                resp = _exchange(
                    pool,
                    conn,
                    method,
                    path,
                    body,
                    head,
                    connect_timeout,
                    read_timeout,
                    total_timeout,
                )
            except BaseException as exc:
                # The connection's state is unknown: closed, and its slot back in the pool.
                conn.close()
                pool._put_conn(None)
                if not isinstance(exc, _Dropped):
                    raise
                if attempts:
                    continue
                raise exc.cause from exc
            pool._put_conn(conn)
            break
        if resp.status == 401:
            # client-go's bearer round tripper: the credential sent is stale, get a new one
            # before the next request; this request's 401 is still the caller's answer.
            self.headers.unauthorized(sent)
        return resp
