"""runtime.healthz: probe semantics, metrics exposition, bind addresses."""

import threading
import urllib.error
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter

from runtime.healthz import Checks, EndpointServer, parse_bind_address


def get(server, path):
    host, port = server.address
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize(
    "value, expected",
    [
        (":8080", ("", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("0", None),
        ("[::1]:9", ("::1", 9)),
    ],
)
def test_parse_bind_address(value, expected):
    assert parse_bind_address(value) == expected


def test_parse_bind_address_rejects_garbage():
    with pytest.raises(ValueError):
        parse_bind_address("localhost")


@pytest.fixture
def server():
    s = EndpointServer(("127.0.0.1", 0), "test").start()
    yield s
    s.stop()


def test_probe_ok_then_failing_with_reasons(server):
    synced = {"v": False}
    checks = Checks()
    checks.add("ping", lambda: None)
    checks.add("informer-sync", lambda: None if synced["v"] else "caches not synced")
    server.add_checks("/readyz", checks)
    code, body = get(server, "/readyz")
    assert code == 500
    assert "[+]ping ok" in body and "[-]informer-sync failed: caches not synced" in body
    synced["v"] = True
    assert get(server, "/readyz") == (200, "ok")
    code, body = get(server, "/readyz?verbose")
    assert code == 200 and "[+]informer-sync ok" in body


def test_a_raising_check_fails_the_probe(server):
    checks = Checks()
    checks.add("boom", lambda: 1 / 0)
    server.add_checks("/healthz", checks)
    code, body = get(server, "/healthz")
    assert code == 500 and "ZeroDivisionError" in body


def test_metrics_and_404(server):
    registry = CollectorRegistry()
    Counter("demo_total", "demo", registry=registry).inc(3)
    server.add_metrics(registry=registry)
    code, body = get(server, "/metrics")
    assert code == 200 and "demo_total 3.0" in body
    assert get(server, "/nope")[0] == 404


def test_stop_of_a_server_that_never_started_returns():
    # start_endpoints may fail between constructing and starting; cleanup must not hang
    s = EndpointServer(("127.0.0.1", 0), "never-started")
    stopper = threading.Thread(target=s.stop, name="test-stopper", daemon=True)
    stopper.start()
    stopper.join(5)
    assert not stopper.is_alive(), "stop() of a server that never started hangs"


def test_ipv6_bind_address_serves():
    try:
        s = EndpointServer(parse_bind_address("[::1]:0"), "v6").start()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        checks = Checks()
        checks.add("ping", lambda: None)
        s.add_checks("/healthz", checks)
        with urllib.request.urlopen(f"http://[::1]:{s.address[1]}/healthz", timeout=5) as resp:
            assert resp.status == 200 and resp.read() == b"ok"
    finally:
        s.stop()
