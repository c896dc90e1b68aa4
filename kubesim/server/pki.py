"""A client CA and the client certificates it signs, for kubesim's certificate logins.

Twin of what kubeadm (and so kind) does at ``kubeadm init``: cmd/kubeadm/app/util/pkiutil
(``NewCertificateAuthority``, ``NewCertAndKey``) and the ``admin.conf`` credential of
cmd/kubeadm/app/phases/kubeconfig, a certificate whose Subject names the user (CN) and its
groups (O), which kube-apiserver's ``--client-ca-file`` authenticator reads
(k8s.io/apiserver/pkg/authentication/request/x509).

Deliberate differences:

- Made with the ``openssl`` command-line tool, as tls.py makes the serving certificate: the
  ``cryptography`` package is not a kubesim dependency. The Subject is written through an
  OpenSSL config file rather than ``-subj``, which silently drops attributes it has no name for,
  such as Kubernetes' UID attribute (OID 1.3.6.1.4.1.57683.2).
- ECDSA P-256 keys (kubeadm: RSA 2048 unless configured), because they are fast to make.
- One CA per process, and one certificate per (user, groups, uid), kept in a directory of the
  process's own that is removed at exit: many test servers then cost one CA between them, and
  no server's files live in another server's temporary directory.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["CertificateAuthority", "KeyPair", "X509_UID_OID", "mint_ca", "process_ca"]

# The Subject attribute kube-apiserver reads a user's UID from (asn1util.X509UID; the
# AllowParsingUserUIDFromCertAuth feature, beta and on since v1.34).
X509_UID_OID = "1.3.6.1.4.1.57683.2"

# An EC key on P-256, for `openssl req -newkey`.
_EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
# A client certificate's extensions, as pkiutil.NewCertAndKey gives kubeadm's admin.conf:
# not a CA, and good for client authentication only.
_CLIENT_EXTENSIONS = (
    "basicConstraints=critical,CA:FALSE\n"
    "keyUsage=critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage=clientAuth\n"
)

_lock = threading.Lock()  # guards _process_ca and _process_dir
_process_ca: CertificateAuthority | None = None
_process_dir: str | None = None


class KeyPair(NamedTuple):
    """A PEM certificate and its PEM private key, as two file paths (``(cert, key)``)."""

    cert: str
    key: str


class CertificateAuthority:
    """A self-signed CA that signs client certificates (a cluster's ``ca.crt``/``ca.key``)."""

    def __init__(self, directory: str, pair: KeyPair) -> None:
        self.directory = directory  # where the certificates it signs are written
        self.pair = pair  # the CA's own certificate (the --client-ca-file) and key
        self._signed: dict[tuple[str, tuple[str, ...], str], KeyPair] = {}
        self._lock = threading.Lock()  # guards _signed (one openssl run per certificate)

    @property
    def cert_file(self) -> str:
        """The CA's certificate: what a server given it as ``--client-ca-file`` trusts."""
        return self.pair.cert

    def client_certificate(self, user: str, groups: Sequence[str] = (), uid: str = "") -> KeyPair:
        """A certificate for ``user`` (Subject CN) in ``groups`` (one O each, in order), with
        the UID attribute when ``uid`` is given; made once, then reused."""
        wanted = (user, tuple(groups), uid)
        with self._lock:
            hit = self._signed.get(wanted)
            if hit is None or not all(os.path.exists(p) for p in (hit.cert, hit.key)):
                hit = self._sign(*wanted)
                self._signed[wanted] = hit
            return hit

    def _sign(self, user: str, groups: tuple[str, ...], uid: str) -> KeyPair:
        # a name per subject, so that certificates for different users never overwrite
        stem = "client-" + hashlib.sha256(repr((user, groups, uid)).encode()).hexdigest()[:16]
        base = os.path.join(self.directory, stem)
        subject = [("O", g) for g in groups]
        if uid:
            subject.append((X509_UID_OID, uid))
        if user:
            subject.append(("CN", user))
        _write(base + ".cnf", _request_config(subject))
        _write(base + ".ext", _CLIENT_EXTENSIONS)
        _openssl(
            *("req", "-new", "-config", base + ".cnf", *_EC_KEY),
            *("-keyout", base + ".key", "-out", base + ".csr"),
        )
        _openssl(
            *("x509", "-req", "-in", base + ".csr", "-days", "365", "-out", base + ".pem"),
            *("-CA", self.pair.cert, "-CAkey", self.pair.key, "-extfile", base + ".ext"),
            # a random serial, as pkiutil draws one (no serial file to share between threads)
            *("-set_serial", str(secrets.randbits(63))),
        )
        return KeyPair(base + ".pem", base + ".key")


def mint_ca(directory: str, common_name: str = "kubesim-client-ca") -> CertificateAuthority:
    """A new CA whose files (and the certificates it will sign) go into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    cert, key = os.path.join(directory, "ca.pem"), os.path.join(directory, "ca.key")
    _write(os.path.join(directory, "ca.cnf"), _request_config([("CN", common_name)]))
    _openssl(
        *("req", "-x509", "-config", os.path.join(directory, "ca.cnf"), *_EC_KEY),
        *("-keyout", key, "-out", cert, "-days", "3650"),
        *("-addext", "basicConstraints=critical,CA:TRUE"),
        *("-addext", "keyUsage=critical,digitalSignature,keyCertSign"),
    )
    return CertificateAuthority(directory, KeyPair(cert, key))


def process_ca() -> CertificateAuthority:
    """This process's client CA, made on first use (RuntimeError without openssl on PATH)."""
    global _process_ca, _process_dir
    with _lock:
        if _process_ca is None or not os.path.exists(_process_ca.cert_file):
            if _process_dir is None:
                _process_dir = tempfile.mkdtemp(prefix="kubesim-pki-")
                atexit.register(shutil.rmtree, _process_dir, ignore_errors=True)
            _process_ca = mint_ca(_process_dir)
        return _process_ca


def _request_config(subject: list[tuple[str, str]]) -> str:
    """An OpenSSL ``req`` config whose distinguished name is ``subject``, in order.

    A repeated attribute (several O) is spelled ``0.O``, ``1.O``: OpenSSL drops the numeric
    prefix, and a config section cannot hold one key twice. Values are escaped, so that a group
    holding ``$``, ``#`` or quotes is written as it is.
    """
    lines = [
        "oid_section = kubesim_oids",
        "[ kubesim_oids ]",
        f"kubernetesUID = {X509_UID_OID}",
        "[ req ]",
        "distinguished_name = dn",
        "prompt = no",
        "[ dn ]",
    ]
    for i, (attribute, value) in enumerate(subject):
        name = "kubernetesUID" if attribute == X509_UID_OID else attribute
        lines.append(f"{i}.{name} = {_escape(value)}")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    """A config value as OpenSSL's parser reads it back (a backslash quotes any character)."""
    return "".join("\\" + c if c in "\\$#\"'" else c for c in value)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("kubesim client certificates need the openssl command-line tool on PATH")
    subprocess.run([openssl, *args], check=True, capture_output=True)
