"""A self-signed serving certificate for kubesim's optional TLS.

Generated with the ``openssl`` command-line tool: the ``cryptography`` package is not a
dependency of kubernetes/urllib3 in our environment, and adding it only for a test server is not
worth a dependency. The certificate is its own CA (kubeconfig ``certificate-authority``), with
SANs for the listen address, 127.0.0.1 and localhost, and an ECDSA P-256 key (fast to generate).
One certificate per (process, host) is reused, so many TLS test servers stay cheap.

With client CAs (kube-apiserver's ``--client-ca-file``), the server asks each client for a
certificate and accepts a connection without one. kube-apiserver asks without verifying
(``tls.RequestClientCert``) and leaves the chain to its x509 authenticator; Python's ``ssl``
has no verify callback, so here OpenSSL verifies a given certificate in the handshake
(``CERT_OPTIONAL``, Go's ``VerifyClientCertIfGiven``) and one of another CA ends the
connection (kubesim/auth/x509.py says what that changes).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import ssl
import subprocess
import threading
from collections.abc import Sequence

__all__ = ["check_ca_file", "check_key_pair", "make_server_context", "generate_certificate"]

_cache_lock = threading.Lock()  # guards _cache
_cache: dict[str, tuple[str, str]] = {}  # host -> (cert path, key path) generated this process


def generate_certificate(directory: str, host: str) -> tuple[str, str]:
    """Write cert.pem and key.pem into directory; return their paths."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("kubesim TLS needs the openssl command-line tool on PATH")
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    sans = {"IP:127.0.0.1", "DNS:localhost"}
    try:
        ipaddress.ip_address(host)
        sans.add(f"IP:{host}")
    except ValueError:
        sans.add(f"DNS:{host}")
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "365",
            "-subj",
            "/CN=kubesim",
            "-addext",
            "subjectAltName=" + ",".join(sorted(sans)),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,digitalSignature,keyCertSign",
            "-addext",
            "extendedKeyUsage=serverAuth",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def make_server_context(
    directory: str,
    host: str,
    cert: str | None = None,
    key: str | None = None,
    client_cas: Sequence[str] = (),
) -> tuple[ssl.SSLContext, str, str]:
    """An SSLContext serving a (cached or new) self-signed certificate; (ctx, cert, key).
    With ``client_cas`` (PEM files), it asks clients for a certificate signed by one of them."""
    if cert is None or key is None:
        with _cache_lock:
            hit = _cache.get(host)
            if hit is None or not all(os.path.exists(p) for p in hit):
                d = os.path.join(directory, "tls")
                os.makedirs(d, exist_ok=True)
                hit = generate_certificate(d, host)
                _cache[host] = hit
        cert, key = hit
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_cas:
        # asked for, not required: a client may still log in with a token, or not at all
        ctx.verify_mode = ssl.CERT_OPTIONAL
        for ca in client_cas:
            ctx.load_verify_locations(cafile=ca)
    return ctx, cert, key


def check_ca_file(path: str, flag: str = "--client-ca-file") -> None:
    """ValueError naming ``flag`` and the problem when ``path`` holds no PEM certificate
    (kube-apiserver: "unable to load client CA provider")."""
    try:
        with open(path, "rb") as f:
            head = f.read()
    except OSError as err:
        raise ValueError(f"argument {flag}: cannot read {path}: {err.strerror or err}") from None
    if b"-----BEGIN CERTIFICATE-----" not in head:
        raise ValueError(f"argument {flag}: {path} holds no PEM certificate")
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=path)
    except ssl.SSLError as err:
        raise ValueError(
            f"argument {flag}: {path} does not load as a PEM certificate: {_reason(err)}"
        ) from None


def check_key_pair(cert: str, key: str) -> None:
    """ValueError naming the file and the problem when ``cert`` and ``key`` cannot serve.

    kube-apiserver twin: ``dynamiccertificates.NewDynamicServingContentFromFiles`` at start-up
    ("unable to load server certificate"). The stdlib's ``load_cert_chain`` says "[SSL] PEM lib"
    and names neither file, so each file is read first (a missing or unreadable one is named),
    then the certificate is loaded alone, then the pair.
    """
    for flag, path in (("--tls-cert-file", cert), ("--tls-private-key-file", key)):
        try:
            with open(path, "rb") as f:
                head = f.read()
        except OSError as err:
            raise ValueError(
                f"argument {flag}: cannot read {path}: {err.strerror or err}"
            ) from None
        if b"-----BEGIN " not in head:
            raise ValueError(f"argument {flag}: {path} holds no PEM block (-----BEGIN ...)")
    # the certificate alone first, so that a bad one is not blamed on the key
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=cert)
    except ssl.SSLError as err:
        raise ValueError(
            f"argument --tls-cert-file: {cert} does not load as a PEM certificate: {_reason(err)}"
        ) from None
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except ssl.SSLError as err:
        if err.reason == "KEY_VALUES_MISMATCH":
            problem = f"the key {key} does not match the certificate {cert}"
        else:
            problem = f"{key} does not load as a PEM private key: {_reason(err)}"
        raise ValueError(f"argument --tls-private-key-file: {problem}") from None


def _reason(err: ssl.SSLError) -> str:
    """OpenSSL's short reason ("NO_CERTIFICATE_OR_CRL_FOUND"), else its whole message."""
    return str(err.reason or err.strerror or err)
