"""runtime.webhook.server over real HTTPS: reviews answered, bad requests answered (never a
crash), controller-runtime's metrics, the readiness check, and a slow client that blocks no
one."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from runtime.certwatcher import StaticCertificate, self_signed_certificate, server_context
from runtime.webhook.admission import MAX_REQUEST_SIZE, Request, Response, allowed, denied
from runtime.webhook.server import WebhookServer


@pytest.fixture(scope="module")
def certificate() -> StaticCertificate:
    return StaticCertificate(server_context(*self_signed_certificate()))


def deny_odd(request: Request) -> Response:
    number = (request.object or {}).get("n", 0)
    return denied(f"{number} is odd") if number % 2 else allowed()


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def server(certificate, registry) -> Iterator[WebhookServer]:
    server = WebhookServer(("127.0.0.1", 0), certificate, registry)
    server.register("/validate", deny_odd)
    server.start()
    yield server
    server.stop()


def insecure() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def post(
    server: WebhookServer,
    body: bytes,
    path: str = "/validate",
    ctype: str = "application/json",
    method: str = "POST",
) -> tuple[int, Any]:
    conn = http.client.HTTPSConnection(
        "127.0.0.1", server.address[1], context=insecure(), timeout=10
    )
    try:
        conn.request(method, path, body=body, headers={"Content-Type": ctype})
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(data)
    except ValueError:
        return resp.status, data.decode()


def review(n: int, uid: str = "uid-1") -> bytes:
    request = {"uid": uid, "operation": "CREATE", "object": {"n": n}}
    return json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    ).encode()


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_a_review_is_answered_allowed_or_denied(server):
    code, answer = post(server, review(2))
    assert code == 200
    assert answer["response"] == {"uid": "uid-1", "allowed": True, "status": {"code": 200}}
    code, answer = post(server, review(3, uid="uid-2"))
    assert answer["response"]["uid"] == "uid-2"
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"] == {
        "code": 403,
        "reason": "Forbidden",
        "message": "3 is odd",
    }


@pytest.mark.parametrize(
    ("body", "ctype", "message"),
    [
        (b"{oops", "application/json", "couldn't decode the AdmissionReview"),
        (b"{}", "text/yaml", "contentType=text/yaml, expected application/json"),
        (b"", "application/json", "request body is empty"),
        (
            json.dumps(
                {
                    "apiVersion": "admission.k8s.io/v1",
                    "kind": "AdmissionReview",
                    "request": {"operation": "CREATE"},
                }
            ).encode(),
            "application/json",
            "request has no uid",
        ),
    ],
)
def test_a_bad_review_gets_an_answer_and_the_server_goes_on(server, body, ctype, message):
    code, answer = post(server, body, ctype=ctype)
    assert code == 200
    response = answer["response"]
    assert response["allowed"] is False and response["status"]["code"] == 400
    assert message in response["status"]["message"]
    assert post(server, review(2))[1]["response"]["allowed"] is True


def test_a_body_above_the_limit_is_refused_unread(server):
    conn = http.client.HTTPSConnection(
        "127.0.0.1", server.address[1], context=insecure(), timeout=10
    )
    conn.putrequest("POST", "/validate")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(MAX_REQUEST_SIZE + 1))
    conn.endheaders()
    resp = conn.getresponse()
    assert resp.status == 413
    assert "request entity too large" in resp.read().decode()
    conn.close()


def test_unknown_paths_and_other_methods(server):
    assert post(server, review(2), path="/nope")[0] == 404
    assert post(server, b"", method="GET")[0] == 405


def test_controller_runtime_metrics_count_by_path_and_code(server, registry):
    post(server, review(2))
    post(server, review(3))
    post(server, b"{", ctype="application/json")
    assert (
        sample(
            registry, "controller_runtime_webhook_requests_total", webhook="/validate", code="200"
        )
        == 3
    )
    assert (
        sample(registry, "controller_runtime_webhook_latency_seconds_count", webhook="/validate")
        == 3
    )
    assert (
        sample(registry, "controller_runtime_webhook_requests_in_flight", webhook="/validate") == 0
    )


def test_a_silent_client_does_not_block_the_others(server):
    # a TLS connection that sends half a request and then nothing
    raw = socket.create_connection(("127.0.0.1", server.address[1]), timeout=10)
    slow = insecure().wrap_socket(raw)
    slow.sendall(b"POST /validate HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
    done = threading.Event()
    threading.Thread(target=lambda: (post(server, review(2)), done.set()), daemon=True).start()
    assert done.wait(5), "a request waited behind a slow client"
    slow.close()


def test_readiness_follows_the_server(certificate):
    server = WebhookServer(("127.0.0.1", 0), certificate)
    assert server.started_check() == "webhook server has not been started yet"
    server.start()
    assert server.started_check() is None
    server.stop()
    assert server.started_check() is not None


def test_a_path_is_registered_once(certificate):
    server = WebhookServer(("127.0.0.1", 0), certificate)
    server.register("/a", deny_odd)
    with pytest.raises(ValueError, match="duplicate path"):
        server.register("/a", deny_odd)
    with pytest.raises(ValueError, match="starts with '/'"):
        server.register("b", deny_odd)


def test_a_busy_port_fails_start_and_runs_the_closers(certificate, server):
    closed: list[bool] = []
    other = WebhookServer(server.address, certificate, closers=(lambda: closed.append(True),))
    with pytest.raises(OSError):
        other.start()
    assert closed == [True]


def test_a_handler_that_raises_is_answered_500(certificate):
    def broken(request: Request) -> Response:
        raise RuntimeError("boom")

    server = WebhookServer(("127.0.0.1", 0), certificate)
    server.register("/validate", broken)
    server.start()
    try:
        code, answer = post(server, review(2))
        assert code == 200
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"]["code"] == 500
        assert "boom" in answer["response"]["status"]["message"]
        assert post(server, review(2))[0] == 200  # and it goes on
    finally:
        server.stop()


def test_a_content_length_that_is_not_a_number_is_400(server):
    conn = http.client.HTTPSConnection(
        "127.0.0.1", server.address[1], context=insecure(), timeout=10
    )
    conn.putrequest("POST", "/validate")
    conn.putheader("Content-Length", "many")
    conn.endheaders()
    resp = conn.getresponse()
    assert (resp.status, resp.read()) == (400, b"bad Content-Length\n")
    conn.close()


def test_a_v1beta1_review_is_answered_as_v1beta1(server):
    body = json.loads(review(2))
    body["apiVersion"] = "admission.k8s.io/v1beta1"
    code, answer = post(server, json.dumps(body).encode())
    assert answer["apiVersion"] == "admission.k8s.io/v1beta1"
    assert answer["response"]["allowed"] is True
