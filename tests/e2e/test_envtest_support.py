"""The envtest launcher (tests/e2e/envtest.py) checked here, where no envtest binaries exist.

What can be proven without etcd and kube-apiserver is proven with stand-ins: the certificates
(a TLS handshake against the serving certificate, verified with the CA, for 127.0.0.1), the
exact flags each binary gets (envtest's, plus RBAC, the token file, the service-account keys and
``--endpoint-reconciler-type=none``), the health waits, the admin kubeconfig (used by the
official client's loader against the stand-in apiserver, over TLS with the token), a binary
that dies at start-up (a clear error with its log), and teardown (both processes gone).
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.e2e.cluster import Cluster
from tests.e2e.envtest import EnvTest, EnvTestError, make_certificates

# A stand-in for etcd: answers /health on its --listen-client-urls, records its argv.
FAKE_ETCD = r"""
import json, sys, http.server
args = sys.argv[1:]
if "--help" in args:
    print("  --unsafe-no-fsync  Disables fsync"); sys.exit(0)
json.dump(args, open(sys.argv[0] + ".args", "w"))
url = [a for a in args if a.startswith("--listen-client-urls=")][0].split("=", 1)[1]
port = int(url.rsplit(":", 1)[1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"health":"true","reason":""}'
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""

# A stand-in for kube-apiserver: serves /readyz and /version over TLS with the certificate it
# is given, only to the bearer token of its --token-auth-file; records its argv.
FAKE_APISERVER = r"""
import json, ssl, sys, http.server
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
json.dump(sys.argv[1:], open(sys.argv[0] + ".args", "w"))
token = open(args["token-auth-file"]).read().split(",")[0]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") != "Bearer " + token:
            self.send_response(401); self.end_headers(); return
        body = b"ok" if self.path == "/readyz" else json.dumps(
            {"major": "1", "minor": "99", "gitVersion": "v1.99.0-fake"}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
srv = http.server.HTTPServer((args["bind-address"], int(args["secure-port"])), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(args["tls-cert-file"], args["tls-private-key-file"])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
"""


def _install(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{source}")
    path.chmod(0o755)
    return path


def test_certificates_serve_tls_for_loopback(tmp_path):
    certs = make_certificates(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(certs["apiserver.crt"], certs["apiserver.key"])
    client_ctx = ssl.create_default_context(cafile=str(certs["ca.crt"]))
    hosts = ("127.0.0.1", "localhost")  # both SANs must verify against the CA
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def serve() -> None:
            for _ in hosts:
                conn, _ = listener.accept()
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)

        server = threading.Thread(target=serve, name="tls-test-server", daemon=True)
        server.start()
        for host in hosts:
            with (
                socket.create_connection(("127.0.0.1", port)) as raw,
                client_ctx.wrap_socket(raw, server_hostname=host) as tls,
            ):
                assert tls.getpeercert()["subject"] == ((("commonName", "kube-apiserver"),),)
                tls.send(b"x")
        server.join(5)
    assert certs["sa-signer.pub"].read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert "PRIVATE KEY" in certs["sa-signer.key"].read_text()


def test_envtest_starts_both_binaries_with_envtests_flags_and_tears_down(tmp_path):
    assets = tmp_path / "assets"
    assets.mkdir()
    etcd = _install(assets, "etcd", FAKE_ETCD)
    apiserver = _install(assets, "kube-apiserver", FAKE_APISERVER)
    env = EnvTest(assets, workdir=tmp_path / "work")
    kubeconfig = env.start()
    try:
        etcd_args = json.loads(Path(f"{etcd}.args").read_text())
        assert f"--listen-client-urls={env.etcd_url}" in etcd_args
        assert f"--advertise-client-urls={env.etcd_url}" in etcd_args
        assert "--unsafe-no-fsync=true" in etcd_args
        assert any(a.startswith("--listen-peer-urls=http://127.0.0.1:") for a in etcd_args)
        assert any(a.startswith("--data-dir=") for a in etcd_args)

        flags = dict(a[2:].split("=", 1) for a in json.loads(Path(f"{apiserver}.args").read_text()))
        assert flags["etcd-servers"] == env.etcd_url
        assert flags["authorization-mode"] == "RBAC"
        assert flags["endpoint-reconciler-type"] == "none"
        assert flags["advertise-address"] == flags["bind-address"] == "127.0.0.1"
        assert flags["service-cluster-ip-range"] == "10.0.0.0/24"
        assert flags["disable-admission-plugins"] == "ServiceAccount"
        assert flags["allow-privileged"] == "true"
        assert flags["service-account-issuer"] == f"{env.server_url}/"
        for key in (
            "service-account-key-file",
            "service-account-signing-key-file",
            "tls-cert-file",
            "tls-private-key-file",
            "token-auth-file",
        ):
            assert os.path.exists(flags[key]), key
        assert ',admin,admin-uid,"system:masters"' in Path(flags["token-auth-file"]).read_text()

        # the kubeconfig works with the official client's loader: TLS verified with the CA,
        # the admin token accepted
        admin = Cluster.client_for(kubeconfig)
        assert admin.request("GET", "/version")["gitVersion"] == "v1.99.0-fake"
        processes = (env.etcd, env.apiserver)
    finally:
        env.stop()
    assert all(p.poll() is not None for p in processes)


def test_envtest_reports_a_binary_that_dies_at_start(tmp_path):
    assets = tmp_path / "assets"
    assets.mkdir()
    _install(assets, "etcd", FAKE_ETCD)
    _install(
        assets, "kube-apiserver", 'import sys\nprint("Error: unknown flag: --bogus")\nsys.exit(1)\n'
    )
    env = EnvTest(assets, workdir=tmp_path / "work")
    with pytest.raises(EnvTestError, match="kube-apiserver exited with 1:\nError: unknown flag"):
        env.start()
    assert env.etcd is None and env.apiserver is None  # etcd was stopped again


def test_envtest_start_keeps_to_its_timeout_and_says_so(tmp_path):
    assets = tmp_path / "assets"
    assets.mkdir()
    _install(assets, "etcd", FAKE_ETCD)
    _install(assets, "kube-apiserver", "import time\nprint('starting')\ntime.sleep(600)\n")
    env = EnvTest(assets, workdir=tmp_path / "work")
    started = time.monotonic()
    # (kube-apiserver is the one that hangs; on a loaded machine the fake etcd, a Python process,
    # may itself take the 3 s, and is then the one named: either way the timeout is kept)
    with pytest.raises(EnvTestError, match="(kube-apiserver|etcd) not healthy within the 3s given"):
        env.start(timeout=3)
    assert time.monotonic() - started < 3 + 2  # the wait itself, plus stopping both processes
    assert env.etcd is None and env.apiserver is None


def test_envtest_says_where_binaries_come_from(tmp_path):
    with pytest.raises(EnvTestError, match="setup-envtest"):
        EnvTest(tmp_path).start()
