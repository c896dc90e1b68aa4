"""A CA and a serving certificate it signs, for the self-managed webhook certificates, made in a
child process.

Twin: open-policy-agent/cert-controller's ``rotator.CreateCACert`` and ``CreateCertPEM`` (a
self-signed CA, then a serving certificate for the webhook Service's DNS name signed by it).
Differs: ECDSA P-256 keys (milliseconds to make) and a validity chosen by the caller, the same
for both (a new CA comes with every new certificate, so no CA outlives what it signed by much).

``python -m runtime.webhook.certgen --hosts a,b --validity SECONDS`` writes
``{"ca": PEM, "cert": PEM, "key": PEM, "not_after": UNIX_SECONDS}`` to stdout;
``runtime.webhook.selfmanaged.generate`` runs it, so that ``cryptography`` is loaded in a
process that ends at once (as ``runtime.selfsigned``). Nothing of ours is imported here.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["generate"]

# Valid from a little before now: clocks of the API server and this pod may differ.
CLOCK_SKEW = datetime.timedelta(minutes=5)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def generate(
    hosts: list[str], validity: datetime.timedelta, now: datetime.datetime | None = None
) -> dict[str, str | float]:
    """A new CA and a serving certificate for ``hosts`` (DNS names or IP addresses), both
    valid for ``validity`` from now."""
    now = now or datetime.datetime.now(datetime.UTC)
    not_after = now + validity
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"webhook-ca@{int(now.timestamp())}")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "ca": ca.public_bytes(pem).decode(),
        "cert": cert.public_bytes(pem).decode(),
        "key": key_pem.decode(),
        "not_after": not_after.timestamp(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m runtime.webhook.certgen")
    parser.add_argument("--hosts", required=True, help="comma-separated DNS names and IPs")
    parser.add_argument("--validity", type=float, required=True, help="seconds")
    args = parser.parse_args(argv)
    hosts = [h for h in args.hosts.split(",") if h]
    if not hosts:
        parser.error("--hosts: at least one name")
    json.dump(generate(hosts, datetime.timedelta(seconds=args.validity)), sys.stdout)


if __name__ == "__main__":
    main()
