"""A self-signed serving certificate for kubesim's optional TLS.

Generated with the ``openssl`` command-line tool: the ``cryptography`` package is not a
dependency of kubernetes/urllib3 in our environment, and adding it only for a test server is not
worth a dependency. The certificate is its own CA (kubeconfig ``certificate-authority``), with
SANs for the listen address, 127.0.0.1 and localhost, and an ECDSA P-256 key (fast to generate).
One certificate per (process, host) is reused, so many TLS test servers stay cheap.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import ssl
import subprocess
import threading

__all__ = ["make_server_context", "generate_certificate"]

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
    directory: str, host: str, cert: str | None = None, key: str | None = None
) -> tuple[ssl.SSLContext, str, str]:
    """An SSLContext serving a (cached or new) self-signed certificate; (ctx, cert, key)."""
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
    return ctx, cert, key
