"""client/transport.py over kubesim: the official pool, headers and pool prepared once."""

import json
import ssl

import pytest
import urllib3
from kubernetes import client

from client.auth import CachedFileTokenSource, RequestHeaders
from client.transport import Transport
from kubesim import KubeSim
from kubesim.server.tls import generate_certificate

TIMEOUT = urllib3.Timeout(total=10.0)
NAMESPACES = "/api/v1/namespaces"


@pytest.fixture(scope="module")
def sim():
    with KubeSim(token="s3cret") as sim:
        yield sim


def test_get_and_post_carry_the_cached_headers(sim):
    transport = Transport.from_api_client(sim.new_api_client(), user_agent="transport-test/1")
    resp = transport.send("GET", NAMESPACES + "?limit=1", timeout=TIMEOUT, retries=False)
    assert resp.status == 200 and json.loads(resp.data)["kind"] == "NamespaceList"
    body = json.dumps({"metadata": {"name": "transport-test"}}).encode()
    resp = transport.send(
        "POST",
        NAMESPACES,
        body=body,
        content_type="application/json",
        timeout=TIMEOUT,
        retries=False,
    )
    assert resp.status == 201
    assert "Content-Type" not in transport.headers.get()  # the shared headers stay untouched
    record = sim.request_log[-1]
    assert record.user_agent == "transport-test/1" and record.user != "system:anonymous"


def test_a_401_sends_the_rotated_token_next_time(sim, tmp_path):
    token = tmp_path / "token"
    token.write_text("stale")
    api_client = sim.new_api_client()
    headers = RequestHeaders.from_api_client(
        api_client, source=CachedFileTokenSource(str(token), clock=lambda: 0.0)
    )
    transport = Transport(api_client, headers)
    assert transport.send("GET", NAMESPACES, timeout=TIMEOUT, retries=False).status == 401
    token.write_text("s3cret")  # the clock never moves: only the 401 makes it re-read
    assert transport.send("GET", NAMESPACES, timeout=TIMEOUT, retries=False).status == 200


def test_a_pool_the_manager_closed_is_looked_up_again(sim):
    api_client = sim.new_api_client()
    transport = Transport.from_api_client(api_client)
    assert transport.send("GET", NAMESPACES, timeout=TIMEOUT, retries=False).status == 200
    api_client.rest_client.pool_manager.clear()  # closes every pool it handed out
    assert transport.send("GET", NAMESPACES, timeout=TIMEOUT, retries=False).status == 200


def test_a_watch_streams(sim):
    transport = Transport.from_api_client(sim.new_api_client())
    resp = transport.send(
        "GET",
        NAMESPACES + "?watch=1&resourceVersion=0&timeoutSeconds=1",
        timeout=TIMEOUT,
        retries=False,
        preload_content=False,
    )
    assert resp.status == 200
    lines = [line for line in resp.read().split(b"\n") if line.strip()]
    resp.release_conn()
    assert lines and all(json.loads(line)["type"] == "ADDED" for line in lines)


@pytest.mark.parametrize(
    ("host", "absolute"), [("http://10.0.0.1", True), ("https://10.0.0.1", False)]
)
def test_a_forwarding_proxy_gets_the_absolute_url(host, absolute):
    """Through an HTTP proxy, a plain-HTTP destination is forwarded (absolute URL and proxy
    headers: the ProxyManager's job); an HTTPS one is tunnelled through the host's pool."""
    cfg = client.Configuration()
    cfg.host = host
    cfg.proxy = "http://127.0.0.1:3128"
    api_client = client.ApiClient(cfg)
    manager = api_client.rest_client.pool_manager
    assert isinstance(manager, urllib3.ProxyManager)
    transport = Transport.from_api_client(api_client)
    assert transport._absolute_form is absolute
    sent = []

    def urlopen(method, url, **kw):
        sent.append(url)
        return urllib3.HTTPResponse(body=b"{}", status=200, preload_content=True)

    manager.urlopen = urlopen
    if absolute:
        transport.send("GET", "/api?x=1", timeout=TIMEOUT, retries=False)
        assert sent == [host + "/api?x=1"]


def test_roundtrips_keep_one_connection_alive_in_the_official_pool(sim):
    """``roundtrip`` speaks http.client on the pool's own connections: one connection carries
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
    pool = api_client.rest_client.pool_manager.connection_from_url(transport.host)
    assert pool.num_connections == 1 and pool.pool.qsize() == pool.pool.maxsize
    assert sim.request_log[-1].user != "system:anonymous"  # the cached headers were sent


def _record_requests(count: int) -> tuple[int, list[bytes]]:
    """A server that records the raw bytes of ``count`` requests (one connection each) and
    answers each with an empty 200."""
    import socket
    import threading

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
    """``roundtrip`` on a pool behind an HTTP proxy: a new connection opens the CONNECT tunnel
    as urllib3's urlopen would (``_prepare_proxy``), verifies the server's certificate through
    it, and keeps the tunnelled connection alive for the next request."""
    import socket
    import threading

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
        assert not transport._absolute_form
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
