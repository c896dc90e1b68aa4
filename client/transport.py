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
"""

from __future__ import annotations

import threading
from typing import Any

import urllib3
from urllib3.util.proxy import connection_requires_http_tunnel
from urllib3.util.url import parse_url

from client.auth import RequestHeaders

__all__ = ["Transport"]


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

    @classmethod
    def from_api_client(cls, api_client: Any, *, user_agent: str | None = None) -> Transport:
        """A transport for the ApiClient's configuration, headers and pool."""
        return cls(api_client, RequestHeaders.from_api_client(api_client, user_agent=user_agent))

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
