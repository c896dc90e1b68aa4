"""Who a verified client certificate names: the x509 request authenticator's user conversion.

Twin of k8s.io/apiserver/pkg/authentication/request/x509/x509.go (``Authenticator`` and
``CommonNameUserConversion``): the user is the Subject's CommonName, its groups the Subject's
Organizations in order, its UID the Subject's UID attribute (OID 1.3.6.1.4.1.57683.2, the
AllowParsingUserUIDFromCertAuth feature, on since v1.34), and its extra
``authentication.kubernetes.io/credential-id`` is ``X509SHA256=`` and the hex SHA-256 of the
certificate's DER. A certificate without a CommonName authenticates no one, and the next
authenticator (the bearer token) is asked.

Deliberate difference: kube-apiserver asks for a client certificate without checking it in the
TLS handshake (``tls.RequestClientCert``, k8s.io/apiserver/pkg/server/secure_serving.go) and
verifies the chain here, so a certificate of another CA is a 401 unless a token authenticates
the request. Python's ``ssl`` module has no verify callback: a server that asks for a
certificate has OpenSSL verify it in the handshake (``CERT_OPTIONAL``, Go's
``VerifyClientCertIfGiven``), so there a certificate of another CA ends the connection, and
what reaches this module has been verified already.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from kubesim.auth.user import CREDENTIAL_ID, UserInfo

__all__ = ["CertificateRejected", "PeerCertificate", "common_name_user"]

# The Subject attribute of the user's UID (asn1util.X509UID), as Python's ssl module names an
# attribute OpenSSL has no name for: its dotted OID.
X509_UID = "1.3.6.1.4.1.57683.2"
_COMMON_NAME = "commonName"
_ORGANIZATION = "organizationName"


class CertificateRejected(Exception):
    """A verified certificate that names no valid user (the message is the real one's)."""


@dataclass(frozen=True)
class PeerCertificate:
    """The leaf of a client's verified chain: its Subject's attributes in order, and its DER."""

    subject: tuple[tuple[str, str], ...]  # (attribute name, value), every RDN flattened
    der: bytes

    @classmethod
    def from_ssl(cls, decoded: dict, der: bytes) -> PeerCertificate:
        """From ``SSLSocket.getpeercert()`` (the decoded dict) and its ``binary_form``."""
        rdns: Iterable[Iterable[tuple[str, str]]] = decoded.get("subject", ())
        return cls(tuple((name, value) for rdn in rdns for name, value in rdn), der)


def common_name_user(cert: PeerCertificate) -> UserInfo | None:
    """CommonNameUserConversion: the certificate's user, or None when its Subject has no
    CommonName (CertificateRejected when its UID attribute is unusable)."""
    # pkix.Name.FillFromRDNSequence: a later CommonName replaces an earlier one, every
    # Organization is kept
    common_name = ""
    organizations: list[str] = []
    uids: list[str] = []
    for name, value in cert.subject:
        if name == _COMMON_NAME:
            common_name = value
        elif name == _ORGANIZATION:
            organizations.append(value)
        elif name == X509_UID:
            uids.append(value)
    if not common_name:
        return None
    if len(uids) > 1:
        raise CertificateRejected(f"expected 1 UID, but found multiple: [{' '.join(uids)}]")
    if uids and not uids[0]:
        raise CertificateRejected("UID cannot be an empty string")
    fingerprint = hashlib.sha256(cert.der).hexdigest()
    return UserInfo(
        common_name,
        uids[0] if uids else "",
        tuple(organizations),
        {CREDENTIAL_ID: (f"X509SHA256={fingerprint}",)},
    )
