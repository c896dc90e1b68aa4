"""Connections to the API server, kept alive and reused: TLS, client certificates, proxies.

client-go twin: the ``http.Transport`` that ``transport.New(config)`` builds
(``k8s.io/client-go/transport/transport.go`` and ``cache.go``):

- TLS from the rest.Config's CA, client certificate and key, server name and insecure flag
  (``TLSConfigFor``); verification is on unless the config turns it off;
- the proxy the config names, else the environment's (``http.ProxyFromEnvironment``:
  ``HTTPS_PROXY``/``HTTP_PROXY`` by the destination's scheme, ``NO_PROXY``, and never for
  localhost); an HTTPS destination is reached through a ``CONNECT`` tunnel, a plain HTTP one
  by sending the absolute URL to the proxy;
- idle connections kept for reuse (client-go: ``MaxIdleConnsPerHost`` 25), TCP keep-alive
  probes every 30 s and ``TCP_NODELAY`` (Go's dialer).

Why our own, not urllib3's pool that the official client builds: the requests already went
through ``http.client`` on the pool's connections (client/transport.py), so the pool was used
only to connect, verify TLS and open the tunnel, which ``ssl`` and ``http.client`` do
themselves; and importing urllib3, with the official configuration module that imports it,
cost about 9 MB of the controller's RSS (docs/benchmarks.md, "A client without urllib3").

Differs from client-go: only ``http://`` proxies (client-go also speaks to ``https://`` and
``socks5://`` proxies); another scheme is refused with an error naming it, not ignored.
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import select
import socket
import ssl
import threading
from base64 import b64encode
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

__all__ = ["Pool", "ProxyError", "TLSSettings", "proxy_for"]

# client-go's transport: MaxIdleConnsPerHost
MAX_IDLE = 25
# client-go's dialer: KeepAlive 30 s (Go uses it for both the idle time and the interval)
KEEPALIVE_SECONDS = 30


class ProxyError(ValueError):
    """A proxy this pool cannot speak to (its scheme), named in the message (client-go twin:
    the error ``http.Transport`` returns for a proxy scheme it does not know)."""


@dataclass(frozen=True, slots=True)
class TLSSettings:
    """What ``TLSConfigFor`` reads of a rest.Config: CA, client certificate, server name.

    ``*_file`` are paths, ``*_data`` PEM bytes (a kubeconfig's ``certificate-authority-data``
    and friends, decoded); data wins over a file, as in client-go.
    """

    insecure: bool = False
    ca_file: str | None = None
    ca_data: bytes | None = None
    cert_file: str | None = None
    cert_data: bytes | None = None
    key_file: str | None = None
    key_data: bytes | None = None
    server_name: str | None = None
    # the official client's assert_hostname=False: verify the chain but not the name
    check_hostname: bool = True

    def context(self) -> ssl.SSLContext:
        """The SSL context for these settings; raises ``ssl.SSLError``/``OSError`` when a
        certificate or key cannot be loaded."""
        ctx = ssl.create_default_context()
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx.check_hostname = self.check_hostname
            if self.ca_data:
                ctx.load_verify_locations(cadata=self.ca_data.decode("ascii"))
            elif self.ca_file:
                ctx.load_verify_locations(cafile=self.ca_file)
        if self.cert_data or self.cert_file:
            _load_client_certificate(ctx, self)
        return ctx


def _load_client_certificate(ctx: ssl.SSLContext, tls: TLSSettings) -> None:
    """``ssl`` loads a certificate chain from files only: inline data goes through a private
    temporary directory that is removed as soon as the context holds the key."""
    if not (tls.cert_data or tls.key_data):
        ctx.load_cert_chain(str(tls.cert_file), tls.key_file)
        return
    # (imported here: tempfile brings shutil and its compressors, ~0.3 MB, for this one use)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="client-cert-") as tmp:  # mode 0700
        cert, key = tls.cert_file, tls.key_file
        if tls.cert_data:
            cert = os.path.join(tmp, "cert.pem")
            _write_private(cert, tls.cert_data)
        if tls.key_data:
            key = os.path.join(tmp, "key.pem")
            _write_private(key, tls.key_data)
        ctx.load_cert_chain(str(cert), key)


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


@dataclass(frozen=True, slots=True)
class Proxy:
    """An ``http://`` proxy: where to connect and the headers it is sent (client-go twin: the
    ``*url.URL`` that ``http.ProxyFromEnvironment`` returns, with its user info)."""

    host: str
    port: int
    headers: Mapping[str, str] = field(default_factory=dict)


def _env(name: str, environ: Mapping[str, str]) -> str:
    # Go's httpproxy.FromEnvironment: the upper-case name first, then the lower-case one
    return environ.get(name.upper()) or environ.get(name.lower()) or ""


def proxy_for(
    url: str,
    proxy_url: str | None = None,
    proxy_headers: Mapping[str, str] | None = None,
    no_proxy: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Proxy | None:
    """The proxy for requests to ``url`` (scheme://host:port), or None to connect directly.

    ``proxy_url`` is the config's (a kubeconfig's ``proxy-url``) and is used as given, as
    client-go's ``rest.Config.Proxy`` is; without one the environment decides, as
    ``http.ProxyFromEnvironment`` does, ``no_proxy`` (or ``NO_PROXY``) included.
    """
    environ = os.environ if environ is None else environ
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not proxy_url:
        if _is_localhost(host):
            return None  # Go's ProxyFromEnvironment never proxies localhost
        proxy_url = _env("https_proxy" if parts.scheme == "https" else "http_proxy", environ)
        if not proxy_url:
            return None
        bypass = no_proxy if no_proxy is not None else _env("no_proxy", environ)
        if _bypassed(host, parts.port or (443 if parts.scheme == "https" else 80), bypass):
            return None
    elif no_proxy and _bypassed(host, parts.port or 443, no_proxy):
        return None
    if "://" not in proxy_url:
        proxy_url = "http://" + proxy_url  # Go reads a bare host:port as http://
    proxy = urlsplit(proxy_url)
    if proxy.scheme != "http":
        raise ProxyError(
            f"proxy {proxy.scheme}://{proxy.hostname}: only http:// proxies are supported"
        )
    headers = dict(proxy_headers or {})
    if proxy.username is not None and "Proxy-Authorization" not in headers:
        user = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + b64encode(user.encode()).decode()
    return Proxy(proxy.hostname or "", proxy.port or 80, headers)


def _is_localhost(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Go's httpproxy ``useProxy``: ``*``, an IP or CIDR, or a domain that matches the host or
    one of its parents (``example.com`` and ``.example.com`` alike), with an optional port."""
    host = host.lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry and address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, _, want = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if want and want != str(port):
            continue
        name = name.strip("[]")
        if address is not None:
            try:
                if address == ipaddress.ip_address(name):
                    return True
            except ValueError:
                pass
            continue
        name = name.lstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


class Connection(http.client.HTTPConnection):
    """One connection to the API server, through the proxy's tunnel when there is one.

    client-go twin: the ``net.Conn`` that ``http.Transport`` dials (``DialContext``, then the
    proxy's ``CONNECT``, then ``tls.Client``).

    ``http.client.HTTPConnection.connect`` makes the TCP connection and, after
    ``set_tunnel``, the proxy's ``CONNECT``; TLS (with the server name the settings give,
    which may differ from the address dialled) is then started on that socket.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        tls: ssl.SSLContext | None,
        server_name: str | None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._tls = tls
        self._server_name = server_name
        # the socket of the last connect, kept after http.client lets go of it (a response
        # that closes the connection keeps reading from it): a watch is ended by shutting it
        self.connected_socket: socket.socket | None = None

    def connect(self) -> None:
        super().connect()
        sock = self.sock
        # Go's net.Dialer and urllib3 turn Nagle's algorithm off: a request's last segment is
        # not held back waiting for the ACK of the one before
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):  # Linux; macOS has only the switch above
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_SECONDS)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_SECONDS)
        if self._tls is not None:
            self.sock = self._tls.wrap_socket(sock, server_hostname=self._server_name)
        self.connected_socket = self.sock

    @property
    def is_closed(self) -> bool:
        return self.sock is None

    def is_dropped(self) -> bool:
        """Whether an idle connection was closed by the server (or sent something unasked):
        readable while no request is in flight. Go's transport learns it from the read it
        keeps pending on every idle connection; here one poll, before the connection is lent,
        keeps a request off a connection that cannot carry it (a POST is not sent twice)."""
        sock = self.sock
        if sock is None:
            return True
        try:
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError):
            return True


class Pool:
    """Connections to one API server, lent one request at a time and kept alive after.

    client-go twin: the ``http.Transport`` that ``transport.New`` builds (its idle connection
    pool, ``MaxIdleConnsPerHost``).

    Thread-safe. ``get`` lends an idle connection (the most recently returned, as Go's
    transport does) or a new, unconnected one; ``put`` takes it back for reuse, ``discard``
    when its state is unknown. A connection is connected by its first request.
    """

    def __init__(
        self,
        url: str,
        tls: TLSSettings | None = None,
        proxy: Proxy | None = None,
        max_idle: int = MAX_IDLE,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        tls = tls or TLSSettings()
        self._context = tls.context() if self.https else None
        self._server_name = tls.server_name or self.host
        self.proxy = proxy
        # A plain-HTTP destination behind a proxy: the request line carries the absolute URL
        # and the proxy's headers go with every request (no tunnel to put them on).
        self.forwarding = proxy is not None and not self.https
        self._max_idle = max_idle
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self.opened = 0  # connections made, for tests and debugging: one per new connection

    @property
    def idle(self) -> int:
        """How many connections wait for reuse."""
        return len(self._idle)

    def _new(self) -> Connection:
        with self._lock:
            self.opened += 1
        if self.proxy is None:
            return Connection(
                self.host, self.port, tls=self._context, server_name=self._server_name
            )
        conn = Connection(
            self.proxy.host, self.proxy.port, tls=self._context, server_name=self._server_name
        )
        if self.https:
            conn.set_tunnel(self.host, self.port, headers=dict(self.proxy.headers))
        return conn

    def get(self) -> Connection:
        """An idle connection that the server has not closed, or a new one (connected by its
        first request)."""
        while True:
            with self._lock:
                if not self._idle:
                    break
                conn = self._idle.pop()
            if not conn.is_dropped():
                return conn
            conn.close()
        return self._new()

    def put(self, conn: Connection) -> None:
        """Take ``conn`` back after a whole answer was read; closed when not kept."""
        with self._lock:
            if not self._closed and not conn.is_closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection; connections lent out close when they come back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
