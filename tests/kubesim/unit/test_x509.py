"""The x509 authenticator's user conversion, and where it stands in the authenticator union.

Subjects are built as Python's ``ssl`` decodes them, so that the rules are checked without a
handshake: the last CommonName wins, every Organization is a group in order, the UID attribute
must be single and non-empty, a certificate without a CommonName is no one's, and an error of
the certificate is a 401 unless a token authenticates the request.
"""

from __future__ import annotations

import hashlib

import pytest

from kubesim.auth.authenticator import Authenticator, Unauthorized
from kubesim.auth.tokens import TokenIssuer
from kubesim.auth.x509 import X509_UID, CertificateRejected, PeerCertificate, common_name_user

DER = b"\x30\x03\x02\x01\x01"  # any bytes: the fingerprint is their SHA-256
FINGERPRINT = "X509SHA256=" + hashlib.sha256(DER).hexdigest()


def certificate(*attributes: tuple[str, str]) -> PeerCertificate:
    """A certificate whose Subject has these attributes, one RDN each, as ssl decodes it."""
    return PeerCertificate.from_ssl({"subject": tuple((a,) for a in attributes)}, DER)


def authenticator(admin_token: str | None = "admin") -> Authenticator:
    return Authenticator(admin_token, TokenIssuer(), lambda namespace, name: None, open=False)


def test_the_subject_names_the_user_its_groups_and_uid():
    user = common_name_user(
        certificate(
            ("organizationName", "devs"),
            ("organizationName", "qa"),
            (X509_UID, "u-1"),
            ("organizationalUnitName", "ignored"),
            ("commonName", "alice"),
        )
    )
    assert user is not None
    assert user.to_api() == {
        "username": "alice",
        "uid": "u-1",
        "groups": ["devs", "qa"],
        "extra": {"authentication.kubernetes.io/credential-id": [FINGERPRINT]},
    }


def test_a_later_common_name_replaces_an_earlier_one():
    user = common_name_user(certificate(("commonName", "first"), ("commonName", "second")))
    assert user is not None and user.name == "second"


def test_a_subject_without_a_common_name_is_no_ones():
    assert common_name_user(certificate(("organizationName", "devs"))) is None
    assert common_name_user(certificate(("commonName", ""))) is None


@pytest.mark.parametrize(
    ("uids", "message"),
    [
        (["a", "b"], "expected 1 UID, but found multiple: [a b]"),
        ([""], "UID cannot be an empty string"),
    ],
)
def test_an_unusable_uid_is_rejected(uids, message):
    cert = certificate(("commonName", "alice"), *((X509_UID, u) for u in uids))
    with pytest.raises(CertificateRejected) as rejected:
        common_name_user(cert)
    assert str(rejected.value) == message


def test_the_certificate_is_asked_first_and_gets_system_authenticated():
    cert = certificate(("organizationName", "devs"), ("commonName", "alice"))
    user = authenticator().authenticate("Bearer not-looked-at", cert)
    assert (user.name, user.groups) == ("alice", ("devs", "system:authenticated"))


def test_a_group_that_says_who_is_authenticated_is_left_alone():
    # AuthenticatedGroupAdder adds nothing when either all-user group is already there
    for group in ("system:authenticated", "system:unauthenticated"):
        cert = certificate(("organizationName", group), ("commonName", "alice"))
        assert authenticator().authenticate(None, cert).groups == (group,)


def test_a_rejected_certificate_is_401_unless_the_token_authenticates():
    bad = certificate(("commonName", "alice"), (X509_UID, ""))
    with pytest.raises(Unauthorized, match="UID cannot be an empty string"):
        authenticator().authenticate(None, bad)
    with pytest.raises(Unauthorized):
        authenticator().authenticate("Bearer wrong", bad)
    assert authenticator().authenticate("Bearer admin", bad).name == "kubesim-user"


def test_a_nameless_certificate_leaves_the_request_to_the_token_or_anonymous():
    nameless = certificate(("organizationName", "devs"))
    assert authenticator().authenticate("Bearer admin", nameless).name == "kubesim-user"
    assert authenticator().authenticate(None, nameless).name == "system:anonymous"
