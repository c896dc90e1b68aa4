"""A tiny HTTPS admission webhook for tests: a CA made with ``cryptography``, a serving
certificate it signs, and a stdlib http.server answering AdmissionReviews with a handler.

The handler gets each review's ``request`` and returns the ``response`` fields (uid is filled
in), or a ``Raw`` answer to send instead (bad responses). Every request is recorded, and each
arrival sets an event, so tests wait on calls rather than sleep.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Raw:
    """An answer sent as is: a status code and a body."""

    code: int
    body: bytes


Handler = Callable[[dict], "dict | Raw"]


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


class CertificateAuthority:
    """A self-signed CA that signs serving certificates for given DNS names and IPs."""

    def __init__(self, common: str = "kubesim-test-ca") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common))
            .issuer_name(_name(common))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    @property
    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def bundle(self) -> str:
        """The caBundle a webhook configuration carries: base64 of the PEM."""
        return base64.b64encode(self.pem).decode()

    def serving(self, dns: list[str], ips: list[str]) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) for the names."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(dns[0] if dns else ips[0]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return cert.public_bytes(serialization.Encoding.PEM), key_pem


class WebhookServer:
    """Serves AdmissionReviews on 127.0.0.1 over HTTPS until stopped."""

    def __init__(
        self,
        ca: CertificateAuthority,
        handler: Handler,
        dns: tuple[str, ...] = ("localhost",),
        ips: tuple[str, ...] = ("127.0.0.1",),
    ) -> None:
        self.handler = handler
        self.requests: list[dict] = []  # every AdmissionReview received, in order
        self.paths: list[str] = []  # the request paths (with the ?timeout= parameter)
        self.arrived = threading.Condition()
        self._release = threading.Event()  # set to free handlers that wait (slow webhooks)
        cert, key = ca.serving(list(dns), list(ips))
        self._dir = tempfile.TemporaryDirectory(prefix="webhook-")
        cert_file, key_file = Path(self._dir.name, "tls.crt"), Path(self._dir.name, "tls.key")
        cert_file.write_bytes(cert)
        key_file.write_bytes(key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(length))
                with server.arrived:
                    server.requests.append(review)
                    server.paths.append(self.path)
                    server.arrived.notify_all()
                answer = server.handler(review["request"])
                if isinstance(answer, Raw):
                    code, body = answer.code, answer.body
                else:
                    response = {"uid": review["request"]["uid"], **answer}
                    body = json.dumps(
                        {
                            "apiVersion": "admission.k8s.io/v1",
                            "kind": "AdmissionReview",
                            "response": response,
                        }
                    ).encode()
                    code = 200
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass  # the caller gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/admit", host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def wait_released(self, timeout: float) -> bool:
        """For slow handlers: block until the test ends (or timeout), without sleeping."""
        return self._release.wait(timeout)

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._dir.cleanup()

    def __enter__(self) -> WebhookServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def json_patch(ops: list[dict]) -> dict:
    """The response fields of a mutating webhook's JSON patch."""
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(json.dumps(ops).encode()).decode(),
    }
