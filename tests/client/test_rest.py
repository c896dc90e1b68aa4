"""client.rest: requests, Status errors, Retry-After, throttling and watch streams.

A tiny local HTTP server stands in for the API server so each case controls the exact bytes.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client

from client import jsonutil
from client.errors import APIError, TransportError, is_not_found
from client.rest import RESTClient, resource_path


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    routes: dict = {}
    seen: list = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def _reply(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((self.command, self.path, self.headers, body))
        route = self.routes.get(self.path.split("?")[0])
        if route is None:
            self._reply(
                404,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "NotFound",
                    "code": 404,
                    "message": "not found",
                },
            )
            return
        route(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


@pytest.fixture
def server():
    _Handler.routes = {}
    _Handler.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, args=(0.05,), name="test-http", daemon=True)
    t.start()
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{srv.server_address[1]}"
    cfg.api_key = {"BearerToken": "s3cret"}
    cfg.api_key_prefix = {"BearerToken": "Bearer"}
    yield srv, client.ApiClient(cfg)
    srv.shutdown()
    srv.server_close()


def test_resource_path():
    assert resource_path("", "v1", "namespaces") == "/api/v1/namespaces"
    assert (
        resource_path("apps", "v1", "deployments", "ns", "d")
        == "/apis/apps/v1/namespaces/ns/deployments/d"
    )
    assert (
        resource_path("samplecontroller.k8s.io", "v1alpha1", "foos", "ns", "f", "status")
        == "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos/f/status"
    )


def test_request_sends_json_with_auth_and_params(server):
    _, api = server
    _Handler.routes["/x"] = lambda h: h._reply(201, {"ok": True})
    rc = RESTClient(api, user_agent="sample-controller-py/test")
    out = rc.request(
        "POST", "/x", params={"fieldManager": "m", "dryRun": None, "watch": True}, body={"a": 1}
    )
    assert out == {"ok": True}
    method, path, headers, body = _Handler.seen[-1]
    assert method == "POST"
    assert path == "/x?fieldManager=m&watch=true"  # None dropped, bools as Go writes them
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["User-Agent"] == "sample-controller-py/test"
    assert json.loads(body) == {"a": 1}


@pytest.mark.parametrize(
    "code, reason",
    [
        (404, "NotFound"),
        (409, "Conflict"),
        (409, "AlreadyExists"),
        (410, "Expired"),
        (429, "TooManyRequests"),
    ],
)
def test_status_replies_become_api_errors(server, code, reason):
    # how each (code, reason) is classified is client.errors' part: tests/client/test_errors.py
    _, api = server
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": f"it is {reason}",
    }
    _Handler.routes["/e"] = lambda h: h._reply(code, status)
    with pytest.raises(APIError) as info:
        RESTClient(api).request("GET", "/e")
    err = info.value
    assert (err.code, err.reason, err.message, err.status) == (
        code,
        reason,
        f"it is {reason}",
        status,
    )


def test_an_answer_not_asked_for_is_not_decoded_but_an_error_still_is(server, monkeypatch):
    """``decode=False`` (the Event sender): a 2xx answer comes back as {} and the decoder is
    never called for it; the connection is reused (the body was read); an error answer is
    still decoded into its APIError."""
    _, api = server
    _Handler.routes["/ok"] = lambda h: h._reply(201, {"kind": "Event", "count": 1})
    _Handler.routes["/bad"] = lambda h: h._reply(
        422, {"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422}
    )
    rest = RESTClient(api)
    assert rest.request("POST", "/ok", body={"a": 1}) == {"kind": "Event", "count": 1}
    decoded = []
    real_loads = jsonutil.loads
    monkeypatch.setattr(jsonutil, "loads", lambda data: decoded.append(data) or real_loads(data))
    assert rest.request("POST", "/ok", body={"a": 1}, decode=False) == {}
    assert decoded == []
    with pytest.raises(APIError) as info:
        rest.request("POST", "/bad", body={"a": 1}, decode=False)
    assert info.value.reason == "Invalid"
    assert [s[0] for s in _Handler.seen] == ["POST"] * 3
    pool = rest._transport.pool
    assert pool.opened == 1 and pool.idle == 1  # one kept-alive connection


def test_retry_after_from_header_and_from_details(server):
    _, api = server
    _Handler.routes["/h"] = lambda h: h._reply(
        429, {"kind": "Status", "code": 429}, [("Retry-After", "3")]
    )
    _Handler.routes["/d"] = lambda h: h._reply(
        504,
        {"kind": "Status", "code": 504, "reason": "Timeout", "details": {"retryAfterSeconds": 1}},
    )
    rc = RESTClient(api)
    with pytest.raises(APIError) as a:
        rc.request("GET", "/h")
    assert a.value.retry_after == 3.0
    with pytest.raises(APIError) as b:
        rc.request("GET", "/d")
    assert (b.value.reason, b.value.retry_after) == ("Timeout", 1.0)


def test_non_status_error_body(server):
    _, api = server

    def plain(h):
        data = b"404 page not found\n"
        h.send_response(404)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    _Handler.routes["/p"] = plain
    with pytest.raises(APIError) as info:
        RESTClient(api).request("GET", "/p")
    assert info.value.status is None
    assert info.value.message == "404 page not found"
    assert is_not_found(info.value)


def test_connection_refused_is_transport_error():
    cfg = client.Configuration()
    cfg.host = "http://127.0.0.1:1"
    with pytest.raises(TransportError):
        RESTClient(client.ApiClient(cfg)).request("GET", "/api", timeout=2)


def test_throttle_spaces_requests_beyond_burst(server):
    _, api = server
    _Handler.routes["/t"] = lambda h: h._reply(200, {})
    rc = RESTClient(api, qps=20, burst=2)
    start = time.monotonic()
    for _ in range(6):  # 2 from the burst, then 4 at 20/s = at least ~0.2 s
        rc.request("GET", "/t")
    assert time.monotonic() - start >= 0.18


def _chunked_watch(events, hold: threading.Event | None = None):
    def route(h):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for ev in events:
            line = json.dumps(ev).encode() + b"\n"
            # split each line in two chunks: the client must reassemble lines across chunks
            for part in (line[:5], line[5:]):
                h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            h.wfile.flush()
        if hold is not None:
            hold.wait(10)
        h.wfile.write(b"0\r\n\r\n")

    return route


def test_stream_decodes_lines_across_chunks(server):
    _, api = server
    events = [{"type": "ADDED", "object": {"metadata": {"name": str(i)}}} for i in range(3)]
    _Handler.routes["/w"] = _chunked_watch(events)
    with RESTClient(api).stream("/w", {"watch": True}) as stream:
        assert list(stream) == events


def test_stream_close_from_another_thread_ends_iteration(server):
    _, api = server
    hold = threading.Event()
    _Handler.routes["/w"] = _chunked_watch([{"type": "ADDED", "object": {}}], hold)
    stream = RESTClient(api).stream("/w", timeout=(5, 30))
    got = []
    done = threading.Event()

    def consume():
        for ev in stream:
            got.append(ev)
        done.set()

    threading.Thread(target=consume, name="consume", daemon=True).start()
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    stream.close()
    assert done.wait(2), "iteration must end promptly after close()"
    assert time.monotonic() - start < 1.0
    assert got == [{"type": "ADDED", "object": {}}]
    hold.set()


def test_stalled_stream_raises_transport_error(server):
    _, api = server
    hold = threading.Event()
    _Handler.routes["/w"] = _chunked_watch([], hold)
    stream = RESTClient(api).stream("/w", timeout=(5, 0.3))
    with pytest.raises(TransportError):
        list(stream)
    hold.set()


def test_stream_error_status_raises_before_items(server):
    _, api = server
    _Handler.routes["/w"] = lambda h: h._reply(
        400, {"kind": "Status", "code": 400, "reason": "BadRequest", "message": "bad selector"}
    )
    with pytest.raises(APIError) as info:
        RESTClient(api).stream("/w")
    assert info.value.reason == "BadRequest"


def test_get_on_a_dead_keepalive_connection_is_retried_once_on_a_new_one():
    """The server reads the second request on a kept-alive connection, then hangs up without
    answering (what a restart does to an idle pooled connection): the GET goes out again."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    connections = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(conn)
            threading.Thread(target=handle, args=(conn, len(connections)), daemon=True).start()

    def handle(conn, number):
        body = b'{"ok": true}'
        reply = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
            b"Connection: keep-alive\r\n\r\n%s" % (len(body), body)
        )
        served = 0
        buf = b""
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while b"\r\n\r\n" in buf:
                _, buf = buf.split(b"\r\n\r\n", 1)
                if number == 1 and served == 1:
                    conn.close()  # the first connection dies under its second request
                    return
                conn.sendall(reply)
                served += 1

    threading.Thread(target=serve, daemon=True).start()
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    rc = RESTClient(client.ApiClient(cfg))
    assert rc.request("GET", "/a") == {"ok": True}
    assert rc.request("GET", "/b") == {"ok": True}  # retried on a second connection
    assert len(connections) == 2
    listener.close()


def test_post_on_a_dead_connection_is_not_retried():
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    connections = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            connections.append(conn)
            conn.recv(65536)
            conn.close()  # hang up without answering

    threading.Thread(target=serve, daemon=True).start()
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{listener.getsockname()[1]}"
    with pytest.raises(TransportError):
        RESTClient(client.ApiClient(cfg)).request("POST", "/x", body={}, timeout=5)
    listener.close()
    # a POST may have been applied before the connection died: sending it again could
    # create twice, so the client must not retry it
    assert len(connections) == 1


def test_stream_decodes_many_lines_in_one_chunk_and_lines_split_across_chunks(server):
    _, api = server
    events = [{"type": "MODIFIED", "object": {"metadata": {"name": str(i)}}} for i in range(2000)]
    data = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    cut = len(data) // 2 + 7  # the second chunk starts in the middle of a line

    def route(h):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for part in (data[:cut], data[cut:]):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        h.wfile.write(b"0\r\n\r\n")

    _Handler.routes["/big"] = route
    with RESTClient(api).stream("/big") as stream:
        assert list(stream) == events


def test_get_read_timeout_is_not_retried():
    """Only a dead connection earns a second send; a slow server does not double the timeout."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)  # read nothing, answer nothing

    threading.Thread(target=serve, daemon=True).start()
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{listener.getsockname()[1]}"
    start = time.monotonic()
    with pytest.raises(TransportError):
        RESTClient(client.ApiClient(cfg)).request("GET", "/slow", timeout=(2, 0.3))
    assert time.monotonic() - start < 0.55
    assert len(accepted) == 1
    listener.close()


def test_query_strings_are_the_same_from_the_cache():
    """Repeated params are encoded once; a cached query must be exactly the encoded one, and
    values that compare equal but encode differently (True and 1) must not share one."""
    from client.rest import _query

    assert _query({"fieldManager": "sample-controller"}) == "?fieldManager=sample-controller"
    assert _query({"fieldManager": "sample-controller"}) == "?fieldManager=sample-controller"
    assert _query([("a", "x y"), ("b", None)]) == "?a=x+y"
    assert _query({"watch": True}) == "?watch=true"
    assert _query({"watch": 1}) == "?watch=1"
    assert _query({"watch": True}) == "?watch=true"
    assert _query({"b": None}) == ""
    assert _query({"labelSelector": ["unhashable"]}) == "?labelSelector=%5B%27unhashable%27%5D"


def test_stream_skips_blank_lines_between_events(server):
    """Blank and whitespace-only lines (keep-alive newlines, CRLF endings) are not events."""
    _, api = server
    events = [{"type": "ADDED", "object": {"metadata": {"name": str(i)}}} for i in range(2)]
    data = (
        b"\n\r\n" + json.dumps(events[0]).encode() + b"\r\n \t\n" + json.dumps(events[1]).encode()
    )

    def route(h):
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for part in (data, b"\n  "):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        h.wfile.write(b"0\r\n\r\n")

    _Handler.routes["/blank"] = route
    with RESTClient(api).stream("/blank") as stream:
        assert list(stream) == events


def test_stream_holds_nothing_of_a_chunk_while_it_waits_for_the_next():
    """A backlog in one chunk (WatchList's initial events, tens of MB at 10,000 objects) is
    released as soon as its last line is decoded, not kept until the next event arrives."""
    import sys

    from client.rest import WatchStream

    held: list[int] = []

    class Stream(WatchStream):
        def _chunks(self):
            backlog = b"".join(
                json.dumps({"type": "ADDED", "object": {"n": i}}).encode() + b"\n"
                for i in range(100)
            )
            yield backlog
            # every line decoded, the next read is waiting: who still holds the backlog?
            held.append(sys.getrefcount(backlog) - 1)  # (the call's own reference)
            yield b'{"type": "ADDED", "object": {"n": 100}}\n'

    stream = Stream(response=None, path="/w")  # type: ignore[arg-type]
    stream.close = lambda: None  # no response to close
    assert [ev["object"]["n"] for ev in stream] == list(range(101))
    assert held == [1]  # this generator's variable alone
