"""A self-signed serving certificate for the metrics server, made in a child process.

client-go twin: ``util/cert.GenerateSelfSignedCertKeyWithFixtures("localhost", [127.0.0.1],
nil)``, which controller-runtime's metrics server calls when no certificate is configured.
Differs: an ECDSA P-256 key (milliseconds to make, where RSA-2048 takes far longer) and no
separate CA (upstream's CA is thrown away too, so no client can verify either: the point is
encryption).

``python -m runtime.selfsigned`` writes ``{"cert": PEM, "key": PEM}`` to stdout;
``runtime.metrics.server.self_signed_certificate`` runs it so that ``cryptography`` is loaded
in a process that ends at once, not in the controller (12 MB of resident memory for its whole
life). Nothing of ours is imported here, so the child starts fast.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["generate"]


def generate(now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    """A certificate and key (PEM) for ``localhost`` and 127.0.0.1, valid for a year, its own
    issuer (client-go ``certutil.GenerateSelfSignedCertKeyWithFixtures("localhost",
    [127.0.0.1], nil)``, which adds a CA of its own; no client can verify either)."""
    now = now or datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"localhost@{int(now.timestamp())}")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def main() -> None:
    cert, key = generate()
    json.dump({"cert": cert.decode(), "key": key.decode()}, sys.stdout)


if __name__ == "__main__":
    main()
