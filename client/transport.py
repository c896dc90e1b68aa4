"""One request to the API server, on a kept-alive connection, with the headers prepared once.

client-go twin: the ``http.RoundTripper`` stack ``transport.New(rest.Config)`` builds: the TLS
and proxy transport (client/pool.py), wrapped by the user-agent and bearer-auth round trippers
(``k8s.io/client-go/transport/round_trippers.go``), whose bearer round tripper resets the
token source after a 401.

Why: the official client rebuilds every request's headers (``ApiClient.param_serialize``,
with its refresh hook) and sends through urllib3's ``urlopen``, which clones a ``Retry`` and a
``Timeout`` per request, handles redirects, builds a second header map and wraps
``http.client``'s response in its own with content decoders. A controller needs none of it:
the headers are one dict per credential (``RequestHeaders``), and each request is
``http.client``'s ``putrequest``/``putheader``/``getresponse`` on a pooled connection
(``python -m bench.transport_bench`` shows what each step saves).

What Go's ``net/http`` does and this keeps: an idempotent request whose kept-alive connection
turns out to be dead (the server closed it while idle) is sent once more on a new connection;
a refused connection, a timeout or a TLS error is never retried. Watches (``open``) get the
live ``http.client`` response, whose chunked body ``read1`` decodes.
"""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from client.auth import RequestHeaders
from client.pool import Connection, Pool
from client.restconfig import Config

__all__ = ["Response", "Stream", "Transport"]


@dataclass(slots=True)
class Response:
    """A whole answer, read: what ``RESTClient.request`` needs of it.

    client-go twin: ``http.Response`` with its body read (``rest.Result``'s body, status code
    and headers).
    """

    status: int
    reason: str
    headers: http.client.HTTPMessage  # case-insensitive ``get``
    data: bytes


class Stream:
    """An answer whose body is read as it arrives (a watch), on a connection of its own.

    client-go twin: the ``http.Response`` whose ``Body`` the watch decoder reads
    (``rest.Request.Watch``).

    ``read1`` returns what has arrived (chunked transfer decoded), ``b""`` at the end;
    ``close`` may be called from any thread: it shuts the socket down, which ends a blocked
    read at once. The connection is not reused afterwards (a watch ends when either side
    closes it).
    """

    def __init__(self, conn: Connection, response: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._response = response
        self._sock = conn.connected_socket  # kept: http.client may have let go of it
        self.status = response.status
        self.reason = response.reason
        self.headers = response.headers

    def read(self) -> bytes:
        return self._response.read()

    def read1(self, size: int) -> bytes:
        return self._response.read1(size)

    def close(self) -> None:
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(2)  # SHUT_RDWR: wakes a reader blocked in recv
            except OSError:
                pass
        self._response.close()
        self._conn.close()


# http.client sends "Content-Length: 0" for these when there is no body (RFC 9110 8.6).
_METHODS_EXPECTING_BODY = frozenset({"PATCH", "POST", "PUT"})


def _died_under_it(exc: BaseException) -> bool:
    """Whether a request failed because its connection died (the server closed or reset a
    kept-alive one): what Go's net/http resends for an idempotent request. A timeout or a TLS
    error is not among them: a slow or wrong server does not earn a second send."""
    return isinstance(exc, http.client.HTTPException | OSError) and not isinstance(
        exc, TimeoutError | ssl.SSLError
    )


def _send_request(
    conn: Connection,
    method: str,
    target: str,
    body: bytes | None,
    headers: Mapping[str, str],
    connect_timeout: float | None,
    read_timeout: float | None,
    total_timeout: float | None,
) -> http.client.HTTPResponse:
    """Send one request on ``conn`` (connecting it first when it is new) and return the
    answer with its headers read. ``headers``: every header but Host and Content-Length.

    Raises what ``http.client`` and the socket raise (``_died_under_it`` tells which of them
    mean the connection died).
    """
    if conn.is_closed:
        conn.timeout = connect_timeout if total_timeout is None else total_timeout
        started = time.monotonic()
        # a new connection: a failure here never reached the server, and is not retried
        conn.connect()
        if total_timeout is not None:
            read_timeout = max(0.0, total_timeout - (time.monotonic() - started))
    elif total_timeout is not None:
        read_timeout = total_timeout
        conn.sock.settimeout(total_timeout)
    else:
        conn.sock.settimeout(connect_timeout)
    try:
        # http.client's request(), step by step: putrequest writes the request line, Host
        # and Accept-Encoding, putheader checks and writes each line.
        conn.putrequest(method, target)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        elif method in _METHODS_EXPECTING_BODY:
            conn.putheader("Content-Length", "0")
        conn.endheaders(body)
    except (BrokenPipeError, ConnectionResetError):
        # The server may close after a valid answer (as urllib3 does): read it if it came.
        pass
    conn.sock.settimeout(read_timeout)
    return conn.getresponse()


class Transport:
    """Sends requests to one API server; thread-safe (the pool and the headers are).

    client-go twin: the ``http.RoundTripper`` that ``transport.New`` builds for a
    ``rest.Config`` (TLS and proxy, then the header round trippers).

    ``path`` is the request target: the path plus ``?query`` when there is one.
    """

    def __init__(self, config: Config, headers: RequestHeaders, pool: Pool | None = None) -> None:
        self.headers = headers  # the headers every request carries, and their credential
        self.host: str = config.host  # scheme://host:port, no trailing /
        self.pool = pool if pool is not None else config.pool()
        # A plain-HTTP destination behind a proxy: the absolute URL on the request line, and
        # the proxy's headers with every request (client-go: net/http's forwarding proxy).
        self._forward: tuple[str, Mapping[str, str]] | None = None
        if self.pool.forwarding and self.pool.proxy is not None:
            self._forward = (self.host, dict(self.pool.proxy.headers))
        # (the credential's headers dict, Content-Type -> the headers with it): one
        # attribute, replaced whole when the credential's headers change
        self._heads: tuple[Mapping[str, str] | None, dict[str | None, Mapping[str, str]]] = (
            None,
            {},
        )

    @classmethod
    def for_config(cls, config: Config, *, user_agent: str | None = None) -> Transport:
        """A transport for ``config``'s server, TLS, proxy, headers and credential."""
        return cls(config, RequestHeaders.for_config(config, user_agent=user_agent))

    @classmethod
    def from_api_client(cls, api_client: Any, *, user_agent: str | None = None) -> Transport:
        """A transport for an official ApiClient's configuration and headers."""
        return cls.for_config(Config.from_api_client(api_client), user_agent=user_agent)

    def _head(self, sent: Mapping[str, str], content_type: str | None) -> Mapping[str, str]:
        """The headers for ``sent`` (the credential's headers, one dict until the credential
        changes) and a Content-Type, merged once for each pair."""
        cached = self._heads
        if cached[0] is not sent:
            cached = self._heads = (sent, {})
        head = cached[1].get(content_type)
        if head is None:
            head = {**sent, "Content-Type": content_type} if content_type else sent
            if self._forward is not None:
                head = {**head, **self._forward[1]}
            cached[1][content_type] = head
        return head

    def _target(self, path: str) -> str:
        return path if self._forward is None else self._forward[0] + path

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
        ``total_timeout`` bounds connect and read together.

        Raises ``OSError`` (timeouts, resets, refused, TLS), ``http.client.HTTPException`` (a
        broken answer) and ``client.auth.CredentialError``.
        """
        sent = self.headers.get()
        head = self._head(sent, content_type)
        target = self._target(path)
        attempts = 2 if retry_dropped else 1
        while True:
            attempts -= 1
            conn = self.pool.get()
            reused = not conn.is_closed
            try:
                answer = _send_request(
                    conn, method, target, body, head, connect_timeout, read_timeout, total_timeout
                )
                data = answer.read()
            except BaseException as exc:
                # The connection's state is unknown: closed, never lent again.
                conn.close()
                # (a new connection that fails was refused or timed out: not resent)
                if attempts and reused and _died_under_it(exc):
                    continue
                raise
            if answer.will_close:
                conn.close()
            self.pool.put(conn)
            break
        if answer.status == 401:
            # client-go's bearer round tripper: the credential sent is stale, get a new one
            # before the next request; this request's 401 is still the caller's answer.
            self.headers.unauthorized(sent)
        return Response(answer.status, answer.reason, answer.headers, data)

    def open(
        self,
        method: str,
        path: str,
        *,
        connect_timeout: float | None,
        read_timeout: float | None,
        total_timeout: float | None = None,
    ) -> Stream:
        """Send a request whose answer is read as it arrives (a watch), on a new connection
        of its own; its headers are read, its body is the caller's to read and close."""
        sent = self.headers.get()
        conn = self.pool.get()
        if not conn.is_closed:
            # a kept-alive connection may be dead: a watch gets a fresh one instead
            conn.close()
        try:
            answer = _send_request(
                conn,
                method,
                self._target(path),
                None,
                self._head(sent, None),
                connect_timeout,
                read_timeout,
                total_timeout,
            )
        except BaseException:
            conn.close()
            raise
        if answer.status == 401:
            self.headers.unauthorized(sent)
        return Stream(conn, answer)
