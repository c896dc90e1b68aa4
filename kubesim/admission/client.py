"""POST an AdmissionReview to a webhook over HTTPS, verified against its caBundle.

Twin of k8s.io/apiserver/pkg/util/webhook (client.go's ``ClientManager.HookClient``: the URL of
a ``clientConfig.url`` or of a ``clientConfig.service``, TLS verified against ``caBundle`` or,
without one, the system roots; the service's DNS name ``<name>.<namespace>.svc`` as the name
the certificate must carry) and of the rest client's ``Post().Body(...).Timeout(t).Do(ctx)``
(the ``?timeout=Ns`` parameter, the deadline). Failures are worded as Go's net/http, crypto/tls
and crypto/x509 word them, since they reach the client inside ``failed calling webhook``.

Deliberate differences: kubesim has no service network, so a service reference is dialled at
the address ``KubeSim(webhook_services=...)`` maps it to (the URL in messages still names the
service, as upstream's does); no proxy, no egress selector, no client certificates
(``--admission-control-config-file`` kubeconfigs); a response that is not an HTTP 2xx is
worded by a short table of apimachinery's generic messages.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["CallError", "Endpoint", "endpoint_of", "post"]

# apimachinery's NewGenericServerResponse messages for the codes a webhook may answer with
_GENERIC = {
    400: "the server rejected our request for an unknown reason",
    401: "Unauthorized",
    403: "Forbidden",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    415: "the server responded with the status code 415 but did not return more information",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: (
        "the server was unable to return a response in the time allotted, but may still be "
        "processing the request"
    ),
}


class CallError(Exception):
    """The call failed before a response could be read (webhookutil.ErrCallingWebhook's
    Reason, worded as Go's client would word it)."""


@dataclass(frozen=True)
class Endpoint:
    """Where to POST: the URL as messages show it, the name the certificate must carry, the
    address to dial, and the CA bundle (PEM) to trust (None: the system roots)."""

    url: str
    server_name: str
    dial: tuple[str, int]
    ca_bundle: str | None


def endpoint_of(client_config: dict, services: Mapping[str, str]) -> Endpoint:
    """The endpoint of a webhook's clientConfig; CallError when it cannot be reached at all.

    services maps ``namespace/name:port`` (or ``namespace/name`` for port 443) to the
    ``host:port`` kubesim dials for that service.
    """
    ca = client_config.get("caBundle")
    ca_pem = base64.b64decode(ca).decode() if ca else None
    if client_config.get("url"):
        url = client_config["url"]
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or 443
        # the rest client's base path is at least "/" (DefaultVersionedAPIPath)
        return Endpoint(url if parts.path else url + "/", host, (host, port), ca_pem)
    svc = client_config.get("service") or {}
    ns, name, port = svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or 443)
    server_name = f"{name}.{ns}.svc"
    url = f"https://{server_name}:{port}{svc.get('path') or '/'}"
    target = services.get(f"{ns}/{name}:{port}") or (
        services.get(f"{ns}/{name}") if port == 443 else None
    )
    if target is None:
        # the service resolver's answer for a service with no endpoint
        raise CallError(f'service "{name}" not found')
    host, _, dial_port = target.rpartition(":")
    return Endpoint(url, server_name, (host, int(dial_port)), ca_pem)


def _timeout_param(seconds: float) -> str:
    """rest.Request.Timeout's parameter: whole seconds, rounded up (as the dispatcher does)."""
    whole = int(seconds)
    return f"{whole if whole == seconds else whole + 1}s"


def post(endpoint: Endpoint, body: dict, timeout: float) -> dict:
    """POST body; the decoded JSON answer, or CallError worded as the Go client's error."""
    url = f"{endpoint.url}?timeout={_timeout_param(timeout)}"
    prefix = f'Post "{url}": '
    deadline = time.monotonic() + timeout
    parts = urlsplit(url)
    context = ssl.create_default_context(cadata=endpoint.ca_bundle)
    # the name is checked below with Go's rules and words; the chain is checked here
    context.check_hostname = False
    conn = _Connection(endpoint.server_name, endpoint.dial, timeout, context)
    try:
        try:
            conn.connect()
            _check_name(conn.peer_certificate(), endpoint.server_name)
            conn.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            path = parts.path or "/"
            conn.request(
                "POST",
                f"{path}?{parts.query}",
                json.dumps(body).encode(),
                {"Content-Type": "application/json", "Accept": "application/json, */*"},
            )
            response = conn.getresponse()
            raw = response.read()
        except ConnectionRefusedError:
            host, port = endpoint.dial
            raise CallError(
                f"{prefix}dial tcp {host}:{port}: connect: connection refused"
            ) from None
        except TimeoutError:
            raise CallError(f"{prefix}context deadline exceeded") from None
        except ssl.SSLCertVerificationError as e:
            raise CallError(f"{prefix}tls: failed to verify certificate: {_x509(e)}") from None
        except _NameMismatch as e:
            raise CallError(f"{prefix}tls: failed to verify certificate: {e}") from None
        except (ssl.SSLError, OSError, http.client.HTTPException) as e:
            raise CallError(f"{prefix}{e}") from None
    finally:
        conn.close()
    return _decode(response.status, raw)


def _decode(status: int, raw: bytes) -> dict:
    """The answer of a 2xx, or the rest client's error for another code."""
    if not 200 <= status < 300:
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and answer.get("kind") == "Status" and answer.get("message"):
            raise CallError(str(answer["message"]))
        if status >= 500 and status not in _GENERIC:
            text = raw.decode(errors="replace")
            raise CallError(
                f"an error on the server ({json.dumps(text)}) has prevented the request from "
                "succeeding"
            )
        raise CallError(
            _GENERIC.get(
                status,
                f"the server responded with the status code {status} but did not return more "
                "information",
            )
        )
    try:
        answer = json.loads(raw)
    except ValueError as e:
        raise CallError(f"couldn't get version/kind; json parse error: {e}") from None
    if not isinstance(answer, dict):
        raise CallError("couldn't get version/kind; json parse error: not an object")
    if not answer.get("kind"):
        raise CallError(f"Object 'Kind' is missing in '{raw.decode(errors='replace')}'")
    return answer


class _NameMismatch(Exception):
    """The certificate does not name the server (crypto/x509's HostnameError)."""


class _Connection(http.client.HTTPSConnection):
    """An HTTPS connection that dials one address and verifies the certificate for another
    name: a service reference is dialled where kubesim maps it, yet verified as
    ``<name>.<namespace>.svc``, as upstream dials the service's endpoint."""

    def __init__(
        self, server_name: str, dial: tuple[str, int], timeout: float, context: ssl.SSLContext
    ):
        super().__init__(server_name, dial[1], timeout=timeout, context=context)
        self._dial = dial
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection(self._dial, self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)

    def peer_certificate(self) -> dict:
        sock = self.sock
        assert isinstance(sock, ssl.SSLSocket)
        return sock.getpeercert() or {}


def _x509(e: ssl.SSLCertVerificationError) -> str:
    """crypto/x509's words for a chain that does not verify."""
    if e.verify_code in (2, 18, 19, 20, 21):
        return "x509: certificate signed by unknown authority"
    if e.verify_code == 10:
        return "x509: certificate has expired or is not yet valid"
    return f"x509: {e.verify_message}"


def _check_name(cert: dict, host: str) -> None:
    """crypto/x509's VerifyHostname with HostnameError's words: DNS names (with a leading
    ``*.`` wildcard for one label) for a name, IP SANs for an address."""
    sans = cert.get("subjectAltName") or ()
    dns = [v for k, v in sans if k == "DNS"]
    ips = [v.strip() for k, v in sans if k == "IP Address"]
    if _is_ip(host):
        if host in ips:
            return
        if not ips:
            raise _NameMismatch(
                f"x509: cannot validate certificate for {host} because it doesn't contain any "
                "IP SANs"
            )
        raise _NameMismatch(f"x509: certificate is valid for {', '.join(ips)}, not {host}")
    if any(_dns_matches(pattern, host) for pattern in dns):
        return
    if not dns:
        raise _NameMismatch(
            f"x509: certificate is not valid for any names, but wanted to match {host}"
        )
    raise _NameMismatch(f"x509: certificate is valid for {', '.join(dns)}, not {host}")


def _is_ip(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True


def _dns_matches(pattern: str, host: str) -> bool:
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern.startswith("*."):
        head, _, rest = host.partition(".")
        return bool(head) and rest == pattern[2:]
    return pattern == host
