"""Self-managed webhook certificates: the process makes its CA and serving certificate, rotates
them before they expire, and writes the CA into its own webhook configurations' ``caBundle``.

Twin: open-policy-agent/cert-controller's ``rotator.CertRotator`` (used by Gatekeeper and
others that do not want cert-manager): make a CA and a certificate, re-check them on a timer,
refresh ahead of expiry, and inject the CA into named webhook configurations. Differences, on
purpose:

- nothing is stored in a Secret: each replica keeps its CA and key in memory, so the process
  needs no access to Secrets at all, only get/update on its two webhook configurations (by
  ``resourceNames``). The price is one CA per replica, which is why the bundle is a union:
- the ``caBundle`` holds every replica's CA (PEM certificates concatenated, which the API
  server trusts all of). A replica puts its own CA first and keeps the others' that are there,
  up to ``MAX_BUNDLE_CAS``; the oldest beyond that drop out, and a live replica whose CA was
  dropped puts it back on its next check (every ``CHECK_INTERVAL``). The same check repairs a
  bundle that ``kubectl apply`` of the manifests emptied;
- a rotation makes a new CA with the new certificate. The new CA goes into the bundle first;
  only once it is there is the new certificate served (the API server would refuse it
  before), and the old CA stays in the bundle until it ages out.

A certificate is renewed once ``RENEW_AFTER`` of its lifetime has passed (two thirds: the
kubelet's certificate manager renews between 70 % and 90 %), so a failing API server has a
third of the lifetime to come back before anything expires.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from client.errors import APIError, TransportError
from client.rest import Interface
from runtime.certwatcher import CertificateError, server_context

__all__ = [
    "CHECK_INTERVAL",
    "DEFAULT_VALIDITY",
    "MAX_BUNDLE_CAS",
    "RENEW_AFTER",
    "CertRotator",
    "Pair",
    "generate",
    "merge_bundle",
]

log = logging.getLogger("runtime.webhook.selfmanaged")

ADMISSIONREGISTRATION = "/apis/admissionregistration.k8s.io/v1"
# A year, as the kubelet's serving certificates; renewed after two thirds of it.
DEFAULT_VALIDITY = 365 * 24 * 3600.0
RENEW_AFTER = 2 / 3
# How often the certificate's age and the configurations' bundles are looked at.
CHECK_INTERVAL = 60.0
# CAs kept in a bundle at most: replicas, plus the CAs of recent rotations.
MAX_BUNDLE_CAS = 8

_PEM_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----\r?\n.*?-----END CERTIFICATE-----", re.S)


@dataclass(frozen=True)
class Pair:
    """A CA and the serving certificate and key it signed (PEM; cert-controller's
    ``rotator.KeyPairArtifacts``, no client-go twin), valid until ``not_after``
    (seconds since the epoch), made at ``made``."""

    ca: bytes
    cert: bytes
    key: bytes
    not_after: float
    made: float


def generate(hosts: list[str], validity: float) -> Pair:
    """A new CA and serving certificate for ``hosts``, made by ``runtime.webhook.certgen`` in
    a child process (as ``runtime.certwatcher.self_signed_certificate``: ``cryptography``
    stays out of the controller). Raises ``CertificateError``."""
    import subprocess

    argv = [sys.executable, "-m", "runtime.webhook.certgen", "--hosts", ",".join(hosts)]
    argv += ["--validity", str(validity)]
    try:
        child = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise CertificateError(f"cannot make the webhook certificate: {err}") from None
    if child.returncode != 0:
        why = (child.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise CertificateError(f"cannot make the webhook certificate: {why}")
    out = json.loads(child.stdout)
    return Pair(
        out["ca"].encode(), out["cert"].encode(), out["key"].encode(), out["not_after"], time.time()
    )


def merge_bundle(bundle_b64: str, ours: bytes, limit: int = MAX_BUNDLE_CAS) -> str:
    """The ``caBundle`` with our CA first, then the others already in it (without repeats), at
    most ``limit`` CAs; base64 of the PEM, as the field holds it. A bundle that does not
    decode is replaced by ours alone."""
    try:
        pems = _PEM_CERT.findall(base64.b64decode(bundle_b64 or "", validate=True))
    except ValueError:
        pems = []
    ours = ours.strip()
    kept = [ours]
    for pem in pems:
        if pem.strip() not in kept:
            kept.append(pem.strip())
    return base64.b64encode(b"\n".join(kept[:limit]) + b"\n").decode()


class CertRotator:
    """The webhook server's certificate (a ``CertificateSource``), made, renewed and
    injected here (cert-controller's ``rotator.CertRotator``; no client-go or
    controller-runtime twin). ``ensure`` makes the first one and writes its CA into the
    configurations; ``start`` re-checks every ``interval`` until ``stop``."""

    def __init__(
        self,
        rest: Interface,
        hosts: list[str],
        configurations: list[tuple[str, str]],
        validity: float = DEFAULT_VALIDITY,
        interval: float = CHECK_INTERVAL,
        make: Callable[[list[str], float], Pair] = generate,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``configurations``: (resource, name) pairs, the resource being
        ``mutatingwebhookconfigurations`` or ``validatingwebhookconfigurations``."""
        self._rest = rest
        self._hosts = hosts
        self._configurations = configurations
        self._validity = validity
        self._interval = interval
        self._make = make
        self._clock = clock
        self._lock = threading.Lock()  # guards _pair, _ctx
        self._pair: Pair | None = None
        self._ctx: ssl.SSLContext | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def context(self) -> ssl.SSLContext:
        with self._lock:
            if self._ctx is None:
                raise CertificateError("the webhook certificate has not been made yet")
            return self._ctx

    @property
    def ca(self) -> bytes:
        """The CA of the certificate served now."""
        with self._lock:
            if self._pair is None:
                raise CertificateError("the webhook certificate has not been made yet")
            return self._pair.ca

    def _due(self) -> bool:
        pair = self._pair
        if pair is None:
            return True
        return self._clock() >= pair.made + (pair.not_after - pair.made) * RENEW_AFTER

    def ensure(self) -> None:
        """Make a certificate if there is none or it is due, put its CA into the
        configurations, and serve it once that worked (the first one at once: nothing else
        could be served). Raises ``CertificateError`` when none can be made."""
        with self._lock:
            due = self._due()
        if due:
            pair = self._make(self._hosts, self._validity)
            ctx = server_context(pair.cert, pair.key)
            injected = self.inject(pair.ca)
            with self._lock:
                first = self._pair is None
                if first or injected:
                    self._pair, self._ctx = pair, ctx
            if first or injected:
                log.info(
                    "serving a new webhook certificate",
                    extra={"hosts": ",".join(self._hosts), "not_after": int(pair.not_after)},
                )
            return
        self.inject(self.ca)

    def inject(self, ca: bytes) -> bool:
        """Put ``ca`` into every webhook of every configuration; True when all of them hold
        it now. A configuration that is missing, or that could not be written, is logged and
        tried again on the next check."""
        done = True
        for resource, name in self._configurations:
            path = f"{ADMISSIONREGISTRATION}/{resource}/{name}"
            try:
                configuration = self._rest.request("GET", path, timeout=10)
                changed = False
                for hook in configuration.get("webhooks") or []:
                    client_config = hook.setdefault("clientConfig", {})
                    bundle = merge_bundle(client_config.get("caBundle") or "", ca)
                    if bundle != client_config.get("caBundle"):
                        client_config["caBundle"] = bundle
                        changed = True
                if changed:
                    # an update: a conflict (someone else wrote it) is retried on the next check
                    self._rest.request("PUT", path, body=configuration, timeout=10)
                    log.info("wrote the webhook CA", extra={"configuration": f"{resource}/{name}"})
            except (APIError, TransportError) as err:
                done = False
                log.warning(
                    "cannot write the webhook CA",
                    extra={"configuration": f"{resource}/{name}", "error": str(err)},
                )
        return done

    def start(self) -> CertRotator:
        self._thread = threading.Thread(target=self._loop, name="webhook-certs", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.ensure()
            except CertificateError as err:
                log.error("cannot renew the webhook certificate", extra={"error": str(err)})

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
