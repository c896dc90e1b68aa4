"""client/transport.py and client/pool.py over kubesim: kept-alive connections, the headers
prepared once, TLS, proxies, watches."""

import http.client
import json
import socket
import ssl
import threading

import pytest
from kubernetes import client

from client.auth import CachedFileTokenSource, RequestHeaders, StaticTokenSource
from client.pool import Pool, ProxyError, TLSSettings, proxy_for
from client.restconfig import Config
from client.transport import Transport
from kubesim import KubeSim
from kubesim.server.tls import generate_certificate

NAMESPACES = "/api/v1/namespaces"


@pytest.fixture(scope="module")
def sim():
    with KubeSim(token="s3cret") as sim:
        yield sim


def _get(transport, path=NAMESPACES, **kw):
    return transport.roundtrip("GET", path, connect_timeout=5.0, read_timeout=5.0, **kw)


def test_get_and_post_carry_the_cached_headers(sim):
    transport = Transport.from_api_client(sim.new_api_client(), user_agent="transport-test/1")
    resp = _get(transport, NAMESPACES + "?limit=1")
    assert resp.status == 200 and json.loads(resp.data)["kind"] == "NamespaceList"
    body = json.dumps({"metadata": {"name": "transport-test"}}).encode()
    resp = transport.roundtrip(
        "POST",
        NAMESPACES,
        body=body,
        content_type="application/json",
        connect_timeout=5.0,
        read_timeout=5.0,
    )
    assert resp.status == 201
    assert "Content-Type" not in transport.headers.get()  # the shared headers stay untouched
    record = sim.request_log[-1]
    assert record.user_agent == "transport-test/1" and record.user != "system:anonymous"


def test_a_401_sends_the_rotated_token_next_time(sim, tmp_path):
    token = tmp_path / "token"
    token.write_text("stale")
    config = Config(host=sim.url, token_source=CachedFileTokenSource(str(token), clock=lambda: 0.0))
    transport = Transport.for_config(config)
    assert _get(transport).status == 401
    token.write_text("s3cret")  # the clock never moves: only the 401 makes it re-read
    assert _get(transport).status == 200


def test_a_closed_pool_still_serves_the_next_request_on_a_new_connection(sim):
    transport = Transport.for_config(
        Config(host=sim.url, token_source=StaticTokenSource("Bearer s3cret"))
    )
    assert _get(transport).status == 200
    transport.pool.close()  # closes the idle connection; a lent one closes on return
    assert _get(transport).status == 200
    assert transport.pool.opened == 2


def test_a_connection_the_server_closed_while_idle_is_not_lent_again(sim):
    """Before a kept-alive connection is lent, one poll tells whether the server closed it
    meanwhile (a restart, an idle timeout): the request then goes out on a new connection,
    a POST included, instead of failing on the dead one."""
    transport = Transport.for_config(
        Config(host=sim.url, token_source=StaticTokenSource("Bearer s3cret"))
    )
    assert _get(transport).status == 200
    # what the server closing it looks like from here: the socket reads its end
    transport.pool._idle[0].sock.shutdown(socket.SHUT_RDWR)
    resp = transport.roundtrip(
        "POST",
        NAMESPACES,
        body=json.dumps({"metadata": {"name": "after-idle-close"}}).encode(),
        content_type="application/json",
        connect_timeout=5.0,
        read_timeout=5.0,
    )
    assert resp.status == 201 and transport.pool.opened == 2


def _answer_once_per_connection() -> tuple[int, list[bytes]]:
    """A server that answers the first request on each connection (kept alive) and closes
    the connection, unanswered, when a second request arrives on it: a connection that dies
    between the pool's poll and the answer. Records each request line."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    seen: list[bytes] = []

    def serve(conn: socket.socket) -> None:
        answered = False
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    conn.close()
                    return
                data += chunk
            head, _, data = data.partition(b"\r\n\r\n")
            seen.append(head.split(b"\r\n")[0])
            if answered:
                conn.close()
                return
            answered = True
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1], seen


def test_a_request_whose_kept_alive_connection_dies_is_resent_only_when_idempotent():
    """Go's net/http: a GET on a reused connection that dies before its answer is sent once
    more on a new connection; a POST's failure is the caller's (it may have been applied)."""
    port, seen = _answer_once_per_connection()
    transport = Transport.for_config(Config(host=f"http://127.0.0.1:{port}"))
    assert _get(transport, "/a").status == 200
    assert _get(transport, "/b", retry_dropped=True).status == 200
    assert transport.pool.opened == 2
    assert seen == [b"GET /a HTTP/1.1", b"GET /b HTTP/1.1", b"GET /b HTTP/1.1"]
    # (closed unanswered: a FIN, or a reset when the body came after the server's close)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        transport.roundtrip(
            "POST",
            "/c",
            body=b"{}",
            content_type="application/json",
            connect_timeout=5.0,
            read_timeout=5.0,
        )
    assert transport.pool.opened == 2 and seen[-1] == b"POST /c HTTP/1.1"  # not sent again
    assert seen.count(b"POST /c HTTP/1.1") == 1


def test_a_refused_connection_is_not_retried():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    transport = Transport.for_config(Config(host=f"http://127.0.0.1:{port}"))
    with pytest.raises(ConnectionRefusedError):
        _get(transport, retry_dropped=True)
    assert transport.pool.opened == 1


def test_a_watch_streams_and_closes_from_another_thread(sim):
    transport = Transport.from_api_client(sim.new_api_client())
    stream = transport.open(
        "GET",
        NAMESPACES + "?watch=1&resourceVersion=0",
        connect_timeout=5.0,
        read_timeout=30.0,
    )
    assert stream.status == 200
    first = stream.read1(65536)
    assert json.loads(first.split(b"\n")[0])["type"] == "ADDED"
    # a read blocked on a quiet watch ends at once when another thread closes the stream
    ended = threading.Event()

    def drain() -> None:
        try:
            while stream.read1(65536):
                pass
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # how a read ends when another thread shuts its socket down
        ended.set()

    threading.Thread(target=drain, daemon=True).start()
    stream.close()
    assert ended.wait(5)


@pytest.mark.parametrize(
    ("host", "forwarding"), [("http://10.0.0.1", True), ("https://10.0.0.1", False)]
)
def test_a_forwarding_proxy_gets_the_absolute_url(host, forwarding):
    """Through an HTTP proxy, a plain-HTTP destination is forwarded (absolute URL on the
    request line and the proxy's headers); an HTTPS one is tunnelled (CONNECT)."""
    port, got = _record_requests(1)
    proxy = proxy_for(host, f"http://u:p@127.0.0.1:{port}")
    assert proxy is not None and proxy.headers["Proxy-Authorization"] == "Basic dTpw"
    transport = Transport(
        Config(host=host), RequestHeaders(StaticTokenSource(None), {}), Pool(host, proxy=proxy)
    )
    assert transport.pool.forwarding is forwarding
    if forwarding:
        assert _get(transport, "/api?x=1").status == 200
        first, headers, _ = _parsed(got[0])
        assert first == b"GET http://10.0.0.1/api?x=1 HTTP/1.1"
        assert b"Proxy-Authorization: Basic dTpw" in headers


def test_the_environment_names_the_proxy_unless_no_proxy_or_localhost_says_otherwise():
    env = {"HTTPS_PROXY": "proxy.example:3128", "NO_PROXY": "internal.example,10.0.0.0/8"}
    found = proxy_for("https://api.example:6443", environ=env)
    assert found is not None and (found.host, found.port) == ("proxy.example", 3128)
    assert proxy_for("https://k8s.internal.example:6443", environ=env) is None
    assert proxy_for("https://10.1.2.3:6443", environ=env) is None
    assert proxy_for("https://127.0.0.1:6443", environ=env) is None  # Go never proxies it
    assert proxy_for("http://api.example", environ=env) is None  # HTTP_PROXY is not set
    # the config's own proxy is used as given
    assert proxy_for("https://127.0.0.1:6443", "http://p:1", environ={}) is not None
    with pytest.raises(ProxyError, match="socks5://p: only http:// proxies"):
        proxy_for("https://api.example", "socks5://p:1080", environ={})


def test_tls_is_verified_by_default_and_a_client_certificate_loads_from_data(tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    cert, key = generate_certificate(str(tmp_path), "127.0.0.1")
    with open(cert, "rb") as f:
        cert_pem = f.read()
    with open(key, "rb") as f:
        key_pem = f.read()
    ctx = TLSSettings(cert_data=cert_pem, key_data=key_pem, ca_data=cert_pem).context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    # the key went through a private directory that is gone once the context holds it
    assert list(scratch.iterdir()) == []
    assert TLSSettings(insecure=True).context().verify_mode == ssl.CERT_NONE
    with pytest.raises(ssl.SSLError):
        TLSSettings(cert_data=cert_pem, key_data=b"not a key").context()


def test_roundtrips_keep_one_connection_alive_in_the_pool(sim):
    """``roundtrip`` speaks http.client on the pool's connections: one connection carries
    every request in turn, and goes back to the pool after each answer (keep-alive)."""
    api_client = sim.new_api_client()
    transport = Transport.from_api_client(api_client)
    for _ in range(20):
        resp = transport.roundtrip(
            "GET", NAMESPACES, connect_timeout=None, read_timeout=None, total_timeout=10.0
        )
        assert resp.status == 200 and json.loads(resp.data)["kind"] == "NamespaceList"
    body = json.dumps({"metadata": {"name": "roundtrip-test"}}).encode()
    resp = transport.roundtrip(
        "POST",
        NAMESPACES,
        body=body,
        content_type="application/json",
        connect_timeout=5.0,
        read_timeout=5.0,
    )
    assert resp.status == 201 and resp.headers.get("content-type") == "application/json"
    assert transport.pool.opened == 1 and transport.pool.idle == 1
    assert sim.request_log[-1].user != "system:anonymous"  # the cached headers were sent


def _record_requests(count: int) -> tuple[int, list[bytes]]:
    """A server that records the raw bytes of ``count`` requests (one connection each) and
    answers each with an empty 200."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    got: list[bytes] = []

    def serve() -> None:
        for _ in range(count):
            conn, _ = listener.accept()
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(x.split(b":")[1])
                    for x in head.split(b"\r\n")
                    if x.startswith(b"Content-Length")
                ),
                0,
            )
            while len(rest) < length:
                rest += conn.recv(65536)
            got.append(data[: len(head) + 4] + rest)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            conn.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], got


def _parsed(raw: bytes) -> tuple[bytes, list[bytes], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    first, *headers = head.split(b"\r\n")
    return first, sorted(headers), body


@pytest.mark.parametrize(
    ("method", "body", "content_type"),
    [
        ("GET", None, None),
        ("PUT", b'{"status": {}}', "application/json"),
        ("PATCH", b"{}", "application/strategic-merge-patch+json"),
        ("POST", None, None),
    ],
)
def test_roundtrip_writes_the_request_http_client_writes(method, body, content_type):
    """The request line, headers (Host, Content-Length, the credential's) and body that
    ``roundtrip`` writes are those of ``http.client``'s own ``request()`` with the same
    headers; only the order of the header lines may differ. Both the first request on the
    connection and a later one."""
    import http.client

    port, got = _record_requests(3)
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    cfg.api_key = {"BearerToken": "s3cret"}
    cfg.api_key_prefix = {"BearerToken": "Bearer"}
    transport = Transport.from_api_client(client.ApiClient(cfg), user_agent="transport-test/1")
    path = "/api/v1/namespaces/default/events/x?fieldManager=sample-controller"
    for _ in range(2):
        resp = transport.roundtrip(
            method, path, body=body, content_type=content_type, connect_timeout=5, read_timeout=5
        )
        assert resp.status == 200
    headers = dict(transport.headers.get())
    if content_type:
        headers["Content-Type"] = content_type
    plain = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    plain.request(method, path, body=body, headers=headers)
    assert plain.getresponse().status == 200
    plain.close()
    first, later, theirs = _parsed(got[0]), _parsed(got[1]), _parsed(got[2])
    assert first == theirs
    assert later == theirs
    assert b"Authorization: Bearer s3cret" in later[1]


def test_a_header_line_break_is_refused_by_http_client_before_anything_is_sent(sim):
    """Header lines go through http.client's own putheader, with its checks: nothing of the
    refused request reaches the server, and the next request goes out as usual."""
    transport = Transport.from_api_client(sim.new_api_client(), user_agent="transport-test/1")
    before = len(sim.request_log)
    body = json.dumps({"metadata": {"name": "injected"}}).encode()
    with pytest.raises(ValueError, match="Invalid header value"):
        transport.roundtrip(
            "POST",
            NAMESPACES,
            body=body,
            content_type="application/json\r\nX-Injected: 1",
            connect_timeout=5,
            read_timeout=5,
        )
    resp = transport.roundtrip("GET", NAMESPACES, connect_timeout=5, read_timeout=5)
    assert resp.status == 200
    assert [r.verb for r in sim.request_log[before:]] == ["list"]


def test_an_https_server_behind_a_proxy_is_reached_through_a_verified_tunnel(tmp_path):
    """``roundtrip`` on a pool behind an HTTP proxy: a new connection opens the CONNECT tunnel,
    verifies the server's certificate through it, and keeps the tunnelled connection alive for
    the next request."""
    connects: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            dst.close()

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            connects.append(head.split(b"\r\n", 1)[0])
            host, port = head.split(b" ")[1].decode().rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            threading.Thread(target=pipe, args=(conn, upstream), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    with KubeSim(tls=True, token="s3cret") as tls_sim:
        cfg = tls_sim.configuration()
        cfg.proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
        transport = Transport.from_api_client(client.ApiClient(cfg))
        assert transport.pool.proxy is not None and not transport.pool.forwarding
        for _ in range(3):
            resp = transport.roundtrip(
                "GET", NAMESPACES, connect_timeout=None, read_timeout=None, total_timeout=10.0
            )
            assert resp.status == 200
        # one tunnel for the three requests (http.client writes CONNECT as HTTP/1.0)
        assert len(connects) == 1
        assert connects[0].startswith(f"CONNECT 127.0.0.1:{tls_sim.port} ".encode())
        assert tls_sim.request_log[-1].user != "system:anonymous"
        # and through the tunnel too, a certificate the CA did not sign is refused
        other = tmp_path / "other-ca"
        other.mkdir()
        cfg.ssl_ca_cert, _key = generate_certificate(str(other), "127.0.0.1")
        refused = Transport.from_api_client(client.ApiClient(cfg))
        with pytest.raises(ssl.SSLCertVerificationError, match="CERTIFICATE_VERIFY_FAILED"):
            refused.roundtrip("GET", NAMESPACES, connect_timeout=5.0, read_timeout=5.0)
    listener.close()
