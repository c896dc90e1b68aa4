"""runtime.metrics.server against a small fake API server: the answers (401, 403, 200, 500),
the review caches' TTLs on an injected clock, the certificate watcher, HTTP/2 off, and no
token or review answer in the logs.

The fake answers ``tokenreviews`` and ``subjectaccessreviews`` with the real wire shapes
(authentication.k8s.io/v1, authorization.k8s.io/v1) and records every review it gets;
tests/integration/test_metrics_auth.py runs the same checks against kubesim's RBAC.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import os
import socket
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from prometheus_client import CollectorRegistry, Counter

from client.rest import RESTClient
from runtime.log import configure_logging
from runtime.manager import Manager
from runtime.metrics.server import (
    SUBJECT_ACCESS_REVIEWS,
    TOKEN_REVIEWS,
    AuthFilter,
    Backoff,
    CertWatcher,
    MetricsServer,
    StaticCertificate,
    SubjectAccessReviewAuthorizer,
    TokenReviewAuthenticator,
    UserInfo,
    bearer_token,
    self_signed_certificate,
    server_context,
)
from runtime.options import Options
from runtime.selfsigned import generate
from tests.helpers import wait_for
from workqueue.clock import FakeClock

READER_TOKEN = "reader-7f3e9c2a41d8b6e5"  # a made-up token, in no log redaction pattern
NOBODY_TOKEN = "nobody-0c1d2e3f4a5b6c7d"
READER = "system:serviceaccount:monitoring:prometheus"
NOBODY = "system:serviceaccount:default:nobody"
# a review answer that must never reach a log line
SECRET_GROUP = "group-from-the-review-9a8b7c"


class FakeAPIServer:
    """POST tokenreviews and subjectaccessreviews, answered from two tables."""

    def __init__(self) -> None:
        # token -> the user a TokenReview reports (absent: not authenticated)
        self.users: dict[str, dict[str, Any]] = {
            READER_TOKEN: {"username": READER, "uid": "u-1", "groups": [SECRET_GROUP]},
            NOBODY_TOKEN: {"username": NOBODY, "uid": "u-2", "groups": ["system:authenticated"]},
        }
        self.readers = {READER}  # users a SubjectAccessReview allows to get /metrics
        self.fail: dict[str, int] = {}  # path -> HTTP status to answer instead
        self.reviews: list[tuple[str, dict[str, Any]]] = []  # (path, body), in order
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.reviews.append((self.path, body))
                code, answer = fake.answer(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        cfg = client.Configuration()
        cfg.host = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.rest = RESTClient(client.ApiClient(cfg))

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path in self.fail:
            code = self.fail[path]
            status = {"kind": "Status", "status": "Failure", "code": code, "message": "boom"}
            return code, status
        if path == TOKEN_REVIEWS:
            user = self.users.get(body["spec"]["token"])
            status = {"authenticated": True, "user": user} if user else {"authenticated": False}
            return 201, {**body, "status": status}
        if path == SUBJECT_ACCESS_REVIEWS:
            spec = body["spec"]
            allowed = spec["user"] in self.readers and spec["nonResourceAttributes"] == {
                "path": "/metrics",
                "verb": "get",
            }
            status = {"allowed": allowed, "reason": "RBAC: secret reason" if allowed else ""}
            return 201, {**body, "status": status}
        return 404, {"kind": "Status", "code": 404}

    def count(self, path: str) -> int:
        return sum(p == path for p, _ in self.reviews)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api() -> Iterator[FakeAPIServer]:
    fake = FakeAPIServer()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def pair() -> tuple[bytes, bytes]:
    # made as the process makes it, in a child process (the rotation tests make theirs here)
    return self_signed_certificate()


@pytest.fixture
def registry() -> CollectorRegistry:
    reg = CollectorRegistry()
    Counter("sample_scrapes", "a series to find in the scrape", registry=reg).inc()
    return reg


def no_sleep(_seconds: float) -> None:
    pass


def auth_filter(api: FakeAPIServer, clock: FakeClock | None = None, sleeps=None) -> AuthFilter:
    now = (clock or FakeClock()).now
    sleep = sleeps.append if sleeps is not None else no_sleep
    return AuthFilter(
        TokenReviewAuthenticator(api.rest, clock=now, sleep=sleep),
        SubjectAccessReviewAuthorizer(api.rest, clock=now, sleep=sleep),
    )


@pytest.fixture
def serve(registry, pair):
    servers: list[MetricsServer] = []

    def start(auth: AuthFilter | None, certificates=None) -> MetricsServer:
        certificates = certificates or StaticCertificate(server_context(*pair))
        server = MetricsServer(("127.0.0.1", 0), registry, certificates, auth).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def insecure() -> ssl.SSLContext:
    """What Prometheus does with insecureSkipVerify: encrypt, verify nothing."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def scrape(
    server: MetricsServer, token: str | None = None, path: str = "/metrics"
) -> tuple[int, str]:
    scheme = "https" if server.secure else "http"
    request = urllib.request.Request(f"{scheme}://127.0.0.1:{server.address[1]}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = insecure() if server.secure else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def served_fingerprint(server: MetricsServer, alpn: list[str] | None = None) -> str:
    """sha256 of the certificate a new TLS handshake gets."""
    ctx = insecure()
    if alpn:
        ctx.set_alpn_protocols(alpn)
    with socket.create_connection(("127.0.0.1", server.address[1]), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            der = tls.getpeercert(binary_form=True)
            assert der is not None
            return hashlib.sha256(der).hexdigest()


def fingerprint(cert_pem: bytes) -> str:
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert_pem.decode())).hexdigest()


# -- the three ways, and 500 ---------------------------------------------------------------------


def test_401_without_a_token_403_without_metrics_reader_200_with_it(api, serve):
    server = serve(auth_filter(api))
    assert scrape(server) == (401, "Unauthorized\n")
    # a refused token is a 401 too (not controller-runtime's 500: see the module docstring)
    assert scrape(server, "not-a-token") == (401, "Unauthorized\n")
    assert scrape(server, NOBODY_TOKEN) == (403, f"Authorization denied for user {NOBODY}\n")
    code, body = scrape(server, READER_TOKEN)
    assert code == 200 and "sample_scrapes_total 1.0" in body
    # only /metrics is served, and an unknown path needs no token to be told so
    assert scrape(server, path="/debug") == (404, "404 page not found\n")

    # the reviews' wire shapes
    token_reviews = [b for p, b in api.reviews if p == TOKEN_REVIEWS]
    assert token_reviews[0] == {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": "not-a-token"},
    }
    [denied, allowed] = [b for p, b in api.reviews if p == SUBJECT_ACCESS_REVIEWS]
    assert denied == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": NOBODY,
            "uid": "u-2",
            "groups": ["system:authenticated"],
            "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
        },
    }
    assert allowed["spec"]["user"] == READER and allowed["spec"]["groups"] == [SECRET_GROUP]


def test_a_review_that_fails_is_500_retried_with_backoff_and_not_cached(api, serve):
    sleeps: list[float] = []
    server = serve(auth_filter(api, sleeps=sleeps))

    api.fail[TOKEN_REVIEWS] = 500
    assert scrape(server, READER_TOKEN) == (500, "Authentication failed\n")
    # k8s.io/apiserver's webhook backoff: 5 tries, 500 ms x1.5 each time, up to 20% jitter
    assert api.count(TOKEN_REVIEWS) == 5
    assert len(sleeps) == 4
    for got, base in zip(sleeps, (0.5, 0.75, 1.125, 1.6875), strict=True):
        assert base <= got <= base * 1.2

    # the failure was not cached: the next scrape reviews again, and gets through
    del api.fail[TOKEN_REVIEWS]
    api.fail[SUBJECT_ACCESS_REVIEWS] = 503  # not a retriable answer without Retry-After
    assert scrape(server, READER_TOKEN) == (500, f"Authorization for user {READER} failed\n")
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 1
    del api.fail[SUBJECT_ACCESS_REVIEWS]
    assert scrape(server, READER_TOKEN)[0] == 200


def test_a_review_api_that_cannot_be_reached_is_500(serve):
    cfg = client.Configuration()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        cfg.host = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there
    rest = RESTClient(client.ApiClient(cfg))
    once = Backoff(duration=0.0, factor=1.0, jitter=0.0, steps=1)
    auth = AuthFilter(
        TokenReviewAuthenticator(rest, backoff=once), SubjectAccessReviewAuthorizer(rest)
    )
    assert scrape(serve(auth), READER_TOKEN) == (500, "Authentication failed\n")


# -- the caches ----------------------------------------------------------------------------------


def test_token_reviews_are_cached_one_minute_whatever_they_said(api):
    clock = FakeClock()
    authn = TokenReviewAuthenticator(api.rest, clock=clock.now, sleep=no_sleep)
    reader = authn.authenticate(READER_TOKEN)
    assert reader == UserInfo(READER, "u-1", (SECRET_GROUP,))
    assert authn.authenticate("refused") is None
    assert api.count(TOKEN_REVIEWS) == 2
    clock.step(59.9)
    assert authn.authenticate(READER_TOKEN) == reader
    assert authn.authenticate("refused") is None
    assert api.count(TOKEN_REVIEWS) == 2  # both answers, the refusal too, from the cache
    clock.step(0.2)
    authn.authenticate(READER_TOKEN)
    authn.authenticate("refused")
    assert api.count(TOKEN_REVIEWS) == 4


def test_allowed_answers_are_cached_five_minutes_denied_ones_thirty_seconds(api):
    clock = FakeClock()
    authz = SubjectAccessReviewAuthorizer(api.rest, clock=clock.now, sleep=no_sleep)
    reader, nobody = UserInfo(READER), UserInfo(NOBODY)
    assert authz.authorize(reader, "get", "/metrics") is True
    assert authz.authorize(nobody, "get", "/metrics") is False
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 2

    clock.step(29.9)
    authz.authorize(reader, "get", "/metrics")
    authz.authorize(nobody, "get", "/metrics")
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 2
    clock.step(0.2)  # the denial has expired, the allow has not
    authz.authorize(reader, "get", "/metrics")
    assert authz.authorize(nobody, "get", "/metrics") is False
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 3

    # an allow lives 300 s from when it was made (t=0): still cached at 299.9 s
    clock.step(299.9 - 30.1)
    authz.authorize(reader, "get", "/metrics")
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 3
    clock.step(0.2)
    authz.authorize(reader, "get", "/metrics")
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 4
    # another user, verb or path is another question
    authz.authorize(reader, "get", "/debug")
    assert api.count(SUBJECT_ACCESS_REVIEWS) == 5


def test_the_token_is_not_kept_in_the_cache(api):
    authn = TokenReviewAuthenticator(api.rest, sleep=no_sleep)
    authn.authenticate(READER_TOKEN)
    [key] = list(authn._cache._entries)
    assert READER_TOKEN.encode() not in key and key != hashlib.sha256(READER_TOKEN.encode())


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer", None),
        ("Bearer ", None),
        ("Basic dXNlcjpwYXNz", None),
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("  BEARER abc  ", "abc"),
        ("Bearer  abc", None),  # an empty token, then more: none (bearertoken.go)
    ],
)
def test_bearer_token_is_read_as_the_apiserver_reads_it(header, token):
    assert bearer_token(header) == token


# -- TLS -----------------------------------------------------------------------------------------


def test_the_self_signed_certificate_is_for_localhost_and_127_0_0_1(pair, serve):
    cert_pem, _ = pair
    server = serve(None)
    for host in ("localhost", "127.0.0.1"):
        ctx = ssl.create_default_context(cadata=cert_pem.decode())
        with socket.create_connection(("127.0.0.1", server.address[1]), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_the_controller_does_not_load_cryptography_to_make_it():
    # the child process made it; the library stays out of the long-running process
    probe = (
        "import sys; from runtime.metrics.server import self_signed_certificate, "
        "server_context; server_context(*self_signed_certificate()); "
        "print('cryptography' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_alpn_offers_http_1_1_only(serve):
    server = serve(None)
    ctx = insecure()
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection(("127.0.0.1", server.address[1]), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.selected_alpn_protocol() == "http/1.1"


def test_plain_http_without_the_filter_with_metrics_secure_false(registry):
    server = MetricsServer(("127.0.0.1", 0), registry).start()
    try:
        code, body = scrape(server)
        assert code == 200 and "sample_scrapes_total" in body
    finally:
        server.stop()


def write_pair(directory: Path, pem: tuple[bytes, bytes]) -> None:
    # as a rotation writes them: a new file renamed over the old one
    for name, data in (("tls.crt", pem[0]), ("tls.key", pem[1])):
        (directory / f".{name}.new").write_bytes(data)
        os.replace(directory / f".{name}.new", directory / name)


def test_a_rotated_certificate_is_served_without_a_restart(tmp_path, serve, api):
    first, second = generate(), generate()
    write_pair(tmp_path, first)
    watcher = CertWatcher(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    server = serve(auth_filter(api), certificates=watcher)
    assert served_fingerprint(server) == fingerprint(first[0])
    assert scrape(server, READER_TOKEN)[0] == 200

    assert watcher.read_certificate() is False  # unchanged: nothing to do
    write_pair(tmp_path, second)
    assert watcher.read_certificate() is True
    assert served_fingerprint(server) == fingerprint(second[0])
    assert scrape(server, READER_TOKEN)[0] == 200

    # caught half-way (the new certificate, the old key): the last good pair stays
    (tmp_path / "tls.crt").write_bytes(first[0])
    assert watcher.read_certificate() is False
    assert served_fingerprint(server) == fingerprint(second[0])


def test_the_watcher_polls_the_files_on_its_own(tmp_path, serve):
    first, second = generate(), generate()
    write_pair(tmp_path, first)
    watcher = CertWatcher(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"), interval=0.02)
    server = serve(None, certificates=watcher)
    watcher.start()
    try:
        assert served_fingerprint(server) == fingerprint(first[0])
        write_pair(tmp_path, second)
        wait_for(
            lambda: served_fingerprint(server) == fingerprint(second[0]),
            message="the rotated certificate to be served",
        )
    finally:
        watcher.stop()


# -- the process: the manager's wiring, and the logs ---------------------------------------------


def test_the_manager_serves_https_with_the_filter_by_default(api, registry):
    options = dataclasses.replace(
        Options(), metrics_bind_address=("127.0.0.1", 0), health_probe_bind_address=None
    )
    assert options.metrics_secure  # the default
    manager = Manager(options, api.rest, registry)
    [server] = manager.start_endpoints()
    try:
        assert isinstance(server, MetricsServer) and server.secure
        assert scrape(server) == (401, "Unauthorized\n")
        assert scrape(server, READER_TOKEN)[0] == 200
        # the reviews went through the controller's own client
        assert api.count(TOKEN_REVIEWS) == 1 and api.count(SUBJECT_ACCESS_REVIEWS) == 1
    finally:
        server.stop()

    plain = dataclasses.replace(options, metrics_secure=False)
    [server] = Manager(plain, api.rest, registry).start_endpoints()
    try:
        assert not server.secure and scrape(server)[0] == 200
    finally:
        server.stop()


def test_no_token_or_review_answer_is_logged_even_at_debug(api, serve):
    out = io.StringIO()
    handler = configure_logging("json", verbosity=4, stream=out)
    try:
        server = serve(auth_filter(api))
        scrape(server, READER_TOKEN)
        scrape(server, NOBODY_TOKEN)
        scrape(server, "refused-token-5e6f")
        api.fail[TOKEN_REVIEWS] = 500
        scrape(server, "failing-token-1a2b")
        api.fail = {SUBJECT_ACCESS_REVIEWS: 500}
        scrape(server, "sar-fails-token-77aa")
        api.users["another-token-3c4d"] = {"username": READER, "groups": [SECRET_GROUP]}
        scrape(server, "another-token-3c4d")
    finally:
        logging.getLogger().removeHandler(handler)
    logs = out.getvalue()
    # the filter did log: the failures at error, the denial at debug
    assert "Authentication failed" in logs and f"Authorization denied for user {NOBODY}" in logs
    for secret in (
        READER_TOKEN,
        NOBODY_TOKEN,
        "refused-token-5e6f",
        "failing-token-1a2b",
        "sar-fails-token-77aa",
        "another-token-3c4d",
        SECRET_GROUP,
        "secret reason",
    ):
        assert secret not in logs, secret
