"""The TLS certificates of the metrics and webhook servers: checked, loaded, watched, or made
self-signed.

controller-runtime twins: ``pkg/certwatcher`` (``CertWatcher``: the files of
``--metrics-cert-path``, re-read every 10 s, a changed pair served from the next TLS handshake
on, without a restart) and the self-signed certificate ``pkg/metrics/server`` makes at start-up
when no certificate is given (what matters is that the traffic is encrypted).

Apart from ``runtime.metrics.server`` so that the CLI can check the certificate flags (one
line and exit 2) without importing the server, and so that a process that serves no /metrics
loads neither.

The self-signed certificate is made by ``runtime.selfsigned`` with ``cryptography``, in a
child process so that the controller does not keep the library in memory. The standard library
can load a certificate but cannot make one, and the ``openssl`` command-line tool is not in
every image.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import sys
import threading
from typing import Protocol

__all__ = [
    "CERT_WATCH_INTERVAL",
    "CertWatcher",
    "CertificateError",
    "CertificateSource",
    "StaticCertificate",
    "certificate_error",
    "self_signed_certificate",
    "server_context",
]

log = logging.getLogger("runtime.metrics.reconcile")

# certwatcher's defaultWatchInterval.
CERT_WATCH_INTERVAL = 10.0


class CertificateError(Exception):
    """A certificate and key that cannot be served: unreadable, not PEM, or not a pair (what
    Go's ``tls.X509KeyPair`` refuses in controller-runtime's certwatcher)."""


def _no_password() -> bytes:
    # An encrypted key fails to load instead of OpenSSL prompting on the terminal.
    return b""


def server_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """A server-side TLS context for one certificate (chain) and key, TLS 1.2 at least (Go's
    server default), ALPN ``http/1.1`` only. Raises ``CertificateError``.

    ``ssl`` loads certificates from files only, so the PEM goes through a private temporary
    directory that is gone again when this returns.
    """
    # here: a process that serves no TLS never imports tempfile (with shutil, bz2, lzma)
    import tempfile

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    with tempfile.TemporaryDirectory(prefix="metrics-tls-") as d:
        cert_file, key_file = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        for path, data in ((cert_file, cert_pem), (key_file, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            ctx.load_cert_chain(cert_file, key_file, password=_no_password)
        except ssl.SSLError as err:
            reason = err.reason or str(err)
            raise CertificateError(f"not a certificate and its key ({reason})") from None
    return ctx


def _read_pair(cert_file: str, key_file: str) -> tuple[bytes, bytes]:
    pems = []
    for path in (cert_file, key_file):
        try:
            with open(path, "rb") as f:
                pems.append(f.read())
        except OSError as err:
            raise CertificateError(f"cannot read {path}: {err.strerror or err}") from None
    return pems[0], pems[1]


def certificate_error(
    directory: str, cert_name: str, key_name: str, flags: str = "--metrics-cert"
) -> str | None:
    """What is wrong with ``directory/cert_name`` and ``directory/key_name`` as a serving
    pair, in one sentence, or None (the CLI's check of ``<flags>-path``, ``-name``, ``-key``:
    ``--metrics-cert-*`` or ``--webhook-cert-*``)."""
    if not os.path.isdir(directory):
        return f"{flags}-path: {directory!r} is not a directory"
    cert_file, key_file = os.path.join(directory, cert_name), os.path.join(directory, key_name)
    for path, flag in ((cert_file, f"{flags}-name"), (key_file, f"{flags}-key")):
        if not os.path.exists(path):
            return f"{flag}: {path!r} does not exist"
    try:
        server_context(*_read_pair(cert_file, key_file))
    except CertificateError as err:
        return f"{flags}-path: {cert_file} and {key_file}: {err}"
    return None


class CertificateSource(Protocol):
    """Where each TLS handshake takes its certificate: Go's ``tls.Config.GetCertificate``,
    which controller-runtime's metrics server sets to the certwatcher's."""

    def context(self) -> ssl.SSLContext: ...


class StaticCertificate:
    """One certificate for the process, the self-signed one (controller-runtime's metrics
    server puts it in ``tls.Config.Certificates``)."""

    def __init__(self, ctx: ssl.SSLContext) -> None:
        self._ctx = ctx

    def context(self) -> ssl.SSLContext:
        return self._ctx


def self_signed_certificate() -> tuple[bytes, bytes]:
    """A self-signed certificate and key (PEM) for localhost and 127.0.0.1, made by
    ``runtime.selfsigned`` in a child process: importing ``cryptography`` and making the key
    costs 12 MB of resident memory that the controller would otherwise carry for its whole
    life, for a few milliseconds of work at start-up. Raises ``CertificateError``."""
    import subprocess

    try:
        child = subprocess.run(
            [sys.executable, "-m", "runtime.selfsigned"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise CertificateError(f"cannot make a self-signed certificate: {err}") from None
    if child.returncode != 0:
        why = (child.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise CertificateError(f"cannot make a self-signed certificate: {why}")
    pems = json.loads(child.stdout)
    return pems["cert"].encode(), pems["key"].encode()


class CertWatcher:
    """controller-runtime ``certwatcher.CertWatcher``: the certificate and key files, re-read
    every ``interval``; a pair that differs from the one served, and loads, is served from the
    next handshake on. A pair that does not load (a rotation caught half-written) is logged and
    the previous one kept.

    Polling only, no inotify: a Secret volume rotates by swapping a symlink, which a poll of
    the paths sees as it is, and every 10 s is the upstream poll interval as well.
    """

    def __init__(self, cert_file: str, key_file: str, interval: float = CERT_WATCH_INTERVAL):
        self.cert_file, self.key_file = cert_file, key_file
        self.interval = interval
        self._lock = threading.Lock()  # guards _pems and _ctx
        self._pems = _read_pair(cert_file, key_file)  # what _ctx was built from
        self._ctx = server_context(*self._pems)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def context(self) -> ssl.SSLContext:
        with self._lock:
            return self._ctx

    def read_certificate(self) -> bool:
        """Re-read the files; True when a new pair is now served."""
        try:
            pems = _read_pair(self.cert_file, self.key_file)
            with self._lock:
                if pems == self._pems:
                    return False
            ctx = server_context(*pems)
        except CertificateError as err:
            log.error(
                "failed to read the serving certificate",
                extra={"cert": self.cert_file, "error": str(err)},
            )
            return False
        with self._lock:
            self._pems, self._ctx = pems, ctx
        log.info("updated the serving TLS certificate", extra={"cert": self.cert_file})
        return True

    def start(self) -> CertWatcher:
        self._thread = threading.Thread(target=self._poll, name="certwatcher", daemon=True)
        self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self.read_certificate()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
