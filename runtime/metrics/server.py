"""``/metrics`` as kubebuilder v4 serves it: HTTPS, and a reader the API server vouches for.

controller-runtime twins, read side by side:

- ``pkg/metrics/server`` (``NewServer``, ``createListener``): ``MetricsServer``. TLS with the
  certificate of ``--metrics-cert-path`` (kept fresh by a watcher), else a self-signed one made
  at start-up (upstream's reasoning: what matters is that the traffic is encrypted);
  ``--metrics-secure=false`` serves plain HTTP without any check (local runs, the demo).
- ``pkg/metrics/filters`` ``WithAuthenticationAndAuthorization``: ``AuthFilter``. The bearer
  token is checked with a TokenReview (k8s.io/apiserver ``DelegatingAuthenticatorConfig``:
  anonymous off, results cached 1 minute), then the user with a SubjectAccessReview of verb
  ``get`` on the non-resource URL ``/metrics`` (``DelegatingAuthorizerConfig``: allowed answers
  cached 5 minutes, denied 30 seconds). Both reviews are retried as there (500 ms, x1.5, 5
  tries) and time out after 10 s.
- ``pkg/certwatcher``: ``CertWatcher``. The files are re-read every 10 s and a changed pair is
  served from the next TLS handshake on, without a restart.

The answers and their bodies are the filter's (``http.Error``: text, one line):

====  ===================================================  ==================================
code  when                                                 body
====  ===================================================  ==================================
401   no ``Authorization: Bearer`` token, or a TokenReview  ``Unauthorized``
      that does not authenticate it
500   the TokenReview request failed                        ``Authentication failed``
500   the SubjectAccessReview request failed                ``Authorization for user U failed``
403   the SubjectAccessReview does not allow it             ``Authorization denied for user U``
====  ===================================================  ==================================

One difference, on purpose: controller-runtime answers a token the TokenReview refuses with
500, because k8s.io/apiserver's bearer-token authenticator turns "not authenticated" into an
``invalid bearer token`` error and the filter maps every error to 500. Here a refused token is a
401, as kube-apiserver's own authentication filter answers it; 500 stays for a review that could
not be made, which is what an operator must look at.

HTTP/2 is off whatever ``--enable-http2`` says: ``http.server`` speaks HTTP/1.1 only, so ALPN
offers ``http/1.1`` alone (kubebuilder's ``disableHTTP2`` sets ``NextProtos`` the same way), and
the rapid-reset CVEs the flag's default guards against cannot apply. The flag is accepted so
that kubebuilder's manifests and habits work, and ``--enable-http2=true`` logs that it is not
honoured.

Nothing secret reaches a log line: not the token (and the TokenReview cache is keyed by an
HMAC of it, so the cache does not hold it either), not the Authorization header (``http.server``'s
request log is off), not the reviews' answers (user groups and extra, the authorizer's reason).
A denial is logged at debug with the user's name only, which the 403 body carries anyway.

The certificates, from files (watched) or self-signed, are ``runtime.certwatcher``'.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import urlsplit

from client.errors import APIError, TransportError
from client.rest import Interface
from runtime.certwatcher import (
    CertificateError,
    CertificateSource,
    CertWatcher,
    StaticCertificate,
    certificate_error,
    self_signed_certificate,
    server_context,
)
from runtime.options import Options
from runtime.tlsserver import CONNECTION_TIMEOUT, BoundServer, TLSHandler, serving_certificates

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "DEFAULT_CERT_NAME",
    "DEFAULT_KEY_NAME",
    "METRICS_PATH",
    "SUBJECT_ACCESS_REVIEWS",
    "TOKEN_REVIEWS",
    "WEBHOOK_RETRY_BACKOFF",
    "AuthFilter",
    "Backoff",
    "CertWatcher",
    "CertificateError",
    "CONNECTION_TIMEOUT",
    "CertificateSource",
    "Denial",
    "MetricsServer",
    "ReviewError",
    "StaticCertificate",
    "SubjectAccessReviewAuthorizer",
    "TokenReviewAuthenticator",
    "UserInfo",
    "bearer_token",
    "certificate_error",
    "new_metrics_server",
    "self_signed_certificate",
    "server_context",
]

log = logging.getLogger("runtime.metrics.reconcile")

METRICS_PATH = "/metrics"
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

# controller-runtime's metricsserver defaults for the files in --metrics-cert-path.
DEFAULT_CERT_NAME = "tls.crt"
DEFAULT_KEY_NAME = "tls.key"

# WithAuthenticationAndAuthorization's settings (k8s.io/apiserver's defaults for delegation).
TOKEN_CACHE_TTL = 60.0
ALLOW_CACHE_TTL = 300.0
DENY_CACHE_TTL = 30.0
REVIEW_TIMEOUT = 10.0
# Cached reviews at most, per cache (k8s.io/apiserver's token cache is an LRU of a few
# thousand too): a flood of distinct tokens cannot grow the process without bound.
CACHE_MAX_ENTRIES = 4096

Clock = Callable[[], float]
K = TypeVar("K")
V = TypeVar("V")


class ReviewError(Exception):
    """A TokenReview or SubjectAccessReview could not be made (answer 500): the ``err`` that
    k8s.io/apiserver's webhook authenticator and authorizer return. The message names the
    request and the API server's error, never the token."""


@dataclass(frozen=True)
class UserInfo:
    """Who a TokenReview says the token belongs to (k8s.io/apiserver ``user.Info``)."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    # extra as sorted (key, values) pairs, so that the user can key the authorizer's cache
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Backoff:
    """apimachinery ``wait.Backoff``: try ``steps`` times, sleeping ``duration`` (times
    ``factor`` after each try, plus up to ``jitter`` of it at random) in between."""

    duration: float
    factor: float
    jitter: float
    steps: int


# The filter's WebhookRetryBackoff (k8s.io/apiserver options.DefaultAuthWebhookRetryBackoff).
WEBHOOK_RETRY_BACKOFF = Backoff(duration=0.5, factor=1.5, jitter=0.2, steps=5)


def _should_retry(err: Exception) -> bool:
    """k8s.io/apiserver ``webhook.DefaultShouldRetry``: a lost connection, an internal error, a
    timeout, 429, or any answer that asks to be retried later (Retry-After)."""
    if isinstance(err, TransportError):
        return True
    assert isinstance(err, APIError)
    return err.code in (429, 500, 504) or err.retry_after is not None


def _with_backoff(
    call: Callable[[], dict[str, Any]], what: str, backoff: Backoff, sleep: Callable[[float], None]
) -> dict[str, Any]:
    """``call`` until it answers or fails for good (webhook ``WithExponentialBackoff``)."""
    delay = backoff.duration
    for attempt in range(1, backoff.steps + 1):
        try:
            return call()
        except (TransportError, APIError) as err:
            if attempt == backoff.steps or not _should_retry(err):
                raise ReviewError(f"{what}: {err}") from err
        sleep(delay * (1 + backoff.jitter * random.random()))
        delay *= backoff.factor
    raise AssertionError("unreachable: the last attempt returns or raises")


class _TTLCache(Generic[K, V]):
    """A thread-safe map whose entries expire, each with its own time to live (k8s.io/apiserver
    caches the token and the authorizer answers so, with an LRU bound)."""

    def __init__(self, clock: Clock, max_entries: int = CACHE_MAX_ENTRIES) -> None:
        self._clock = clock
        self._max = max_entries
        self._lock = threading.Lock()  # guards _entries
        # key -> (expiry on clock, value); insertion order is age order, for eviction
        self._entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> tuple[bool, V | None]:
        """(found, value); an expired entry is not found (and is dropped)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            if entry[0] <= self._clock():
                del self._entries[key]
                return False, None
            return True, entry[1]

    def set(self, key: K, value: V, ttl: float) -> None:
        with self._lock:
            now = self._clock()
            self._entries.pop(key, None)
            if len(self._entries) >= self._max:
                # expired ones first; then the oldest, as an LRU would
                for k in [k for k, (expiry, _) in self._entries.items() if expiry <= now]:
                    del self._entries[k]
                while len(self._entries) >= self._max:
                    del self._entries[next(iter(self._entries))]
            self._entries[key] = (now + ttl, value)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def _user_from_status(user: Mapping[str, Any]) -> UserInfo:
    extra = user.get("extra") or {}
    return UserInfo(
        username=str(user.get("username") or ""),
        uid=str(user.get("uid") or ""),
        groups=tuple(str(g) for g in user.get("groups") or ()),
        extra=tuple(sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in extra.items())),
    )


class TokenReviewAuthenticator:
    """Bearer tokens checked by the API server (k8s.io/apiserver webhook token authenticator
    behind its cache, as ``DelegatingAuthenticatorConfig`` builds it).

    An answer is cached for ``ttl`` whether it authenticates the token or not (the cache's
    success and failure TTLs are both ``CacheTTL``); a failed request is not cached. The cache
    key is an HMAC of the token under a key made at start-up, so the tokens themselves are not
    kept.
    """

    def __init__(
        self,
        rest: Interface,
        ttl: float = TOKEN_CACHE_TTL,
        clock: Clock = time.monotonic,
        backoff: Backoff = WEBHOOK_RETRY_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = REVIEW_TIMEOUT,
    ) -> None:
        self._rest = rest
        self._ttl = ttl
        self._backoff = backoff
        self._sleep = sleep
        self._timeout = timeout
        self._key = secrets.token_bytes(32)
        self._cache: _TTLCache[bytes, UserInfo | None] = _TTLCache(clock)

    def authenticate(self, token: str) -> UserInfo | None:
        """The token's user, or None when the API server does not authenticate it; raises
        ``ReviewError`` when the review cannot be made."""
        key = hmac.new(self._key, token.encode(), hashlib.sha256).digest()
        found, user = self._cache.get(key)
        if found:
            return user
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        review = _with_backoff(
            lambda: self._rest.request("POST", TOKEN_REVIEWS, body=body, timeout=self._timeout),
            "create tokenreviews",
            self._backoff,
            self._sleep,
        )
        status = review.get("status") or {}
        user = _user_from_status(status.get("user") or {}) if status.get("authenticated") else None
        self._cache.set(key, user, self._ttl)
        return user


class SubjectAccessReviewAuthorizer:
    """Non-resource requests authorized by the API server (k8s.io/apiserver webhook authorizer,
    as ``DelegatingAuthorizerConfig`` builds it): allowed answers are cached ``allow_ttl``,
    the others ``deny_ttl``, failed requests not at all."""

    def __init__(
        self,
        rest: Interface,
        allow_ttl: float = ALLOW_CACHE_TTL,
        deny_ttl: float = DENY_CACHE_TTL,
        clock: Clock = time.monotonic,
        backoff: Backoff = WEBHOOK_RETRY_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = REVIEW_TIMEOUT,
    ) -> None:
        self._rest = rest
        self._allow_ttl = allow_ttl
        self._deny_ttl = deny_ttl
        self._backoff = backoff
        self._sleep = sleep
        self._timeout = timeout
        self._cache: _TTLCache[tuple[UserInfo, str, str], bool] = _TTLCache(clock)

    def authorize(self, user: UserInfo, verb: str, path: str) -> bool:
        """Whether ``user`` may ``verb`` the non-resource URL ``path``; raises ``ReviewError``
        when the review cannot be made. "No opinion" is not an allow."""
        key = (user, verb, path)
        found, allowed = self._cache.get(key)
        if found:
            return bool(allowed)
        spec: dict[str, Any] = {
            "user": user.username,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(vs) for k, vs in user.extra}
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        review = _with_backoff(
            lambda: self._rest.request(
                "POST", SUBJECT_ACCESS_REVIEWS, body=body, timeout=self._timeout
            ),
            "create subjectaccessreviews",
            self._backoff,
            self._sleep,
        )
        allowed = bool((review.get("status") or {}).get("allowed"))
        self._cache.set(key, allowed, self._allow_ttl if allowed else self._deny_ttl)
        return allowed


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None (k8s.io/apiserver
    ``bearertoken.Authenticator``: the scheme case-insensitive, an empty token is none)."""
    parts = (authorization or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


@dataclass(frozen=True)
class Denial:
    """A request the filter refuses: the status code and the one-line body that
    controller-runtime's filter writes with ``http.Error``."""

    code: int
    message: str


class AuthFilter:
    """controller-runtime ``filters.WithAuthenticationAndAuthorization``: who is asking (a
    TokenReview), then whether they may (a SubjectAccessReview of the method, lowercased, on
    the URL path)."""

    def __init__(
        self, authenticator: TokenReviewAuthenticator, authorizer: SubjectAccessReviewAuthorizer
    ) -> None:
        self.authenticator = authenticator
        self.authorizer = authorizer

    def check(self, authorization: str | None, method: str, path: str) -> Denial | None:
        """None when the request may go on, else what to answer."""
        token = bearer_token(authorization)
        if token is None:
            log.debug("Authentication failed", extra={"path": path, "why": "no bearer token"})
            return Denial(401, "Unauthorized")
        try:
            user = self.authenticator.authenticate(token)
        except ReviewError as err:
            log.error("Authentication failed", extra={"path": path, "error": str(err)})
            return Denial(500, "Authentication failed")
        if user is None:
            log.debug("Authentication failed", extra={"path": path, "why": "token refused"})
            return Denial(401, "Unauthorized")
        try:
            allowed = self.authorizer.authorize(user, method.lower(), path)
        except ReviewError as err:
            message = f"Authorization for user {user.username} failed"
            log.error(message, extra={"path": path, "error": str(err)})
            return Denial(500, message)
        if not allowed:
            message = f"Authorization denied for user {user.username}"
            log.debug(message, extra={"path": path})
            return Denial(403, message)
        return None


# -- the server ---------------------------------------------------------------------------------


class MetricsServer(BoundServer):
    """The metrics endpoint (controller-runtime ``metricsserver.Server``): ``/metrics`` of one
    registry, over TLS when ``certificates`` is given, behind ``auth`` when given. Other paths
    are 404, other methods 501. Same life cycle as the probes' ``EndpointServer``: it binds in
    the constructor, ``start`` serves, ``stop`` ends it. The HTTPS plumbing (a thread and a
    timeout per connection) is ``runtime.tlsserver``'s, shared with the webhook server."""

    def __init__(
        self,
        address: tuple[str, int],
        registry: CollectorRegistry,
        certificates: CertificateSource | None = None,
        auth: AuthFilter | None = None,
        name: str = "metrics",
        closers: tuple[Callable[[], None], ...] = (),
    ) -> None:
        # here, not with the module: the CLI imports it to check certificate flags
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        class Handler(TLSHandler):
            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                text = "text/plain; charset=utf-8"
                if path != METRICS_PATH:
                    self.reply(404, text, b"404 page not found\n")
                    return
                if auth is not None:
                    denial = auth.check(self.headers.get("Authorization"), self.command, path)
                    if denial is not None:
                        self.reply(denial.code, text, f"{denial.message}\n".encode())
                        return
                self.reply(200, CONTENT_TYPE_LATEST, generate_latest(registry))

        super().__init__(address, Handler, certificates, name, closers)


def new_metrics_server(
    options: Options, rest: Interface, registry: CollectorRegistry
) -> MetricsServer | None:
    """The metrics server the flags ask for, bound (kubebuilder's scaffold: ``SecureServing``
    with ``FilterProvider: filters.WithAuthenticationAndAuthorization`` unless
    ``--metrics-secure=false``), or None with ``--metrics-bind-address=0``. Raises OSError when
    the address cannot be bound, ``CertificateError`` when the certificate files went bad
    after the CLI checked them."""
    if options.metrics_bind_address is None:
        return None
    if not options.metrics_secure:
        return MetricsServer(options.metrics_bind_address, registry)
    if options.enable_http2:
        log.warning("--enable-http2 is not honoured: the metrics server speaks HTTP/1.1 only")
    certificates, watcher = serving_certificates(
        options.metrics_cert_path, options.metrics_cert_name, options.metrics_cert_key
    )
    closers = (watcher.stop,) if watcher is not None else ()
    auth = AuthFilter(TokenReviewAuthenticator(rest), SubjectAccessReviewAuthorizer(rest))
    server = MetricsServer(
        options.metrics_bind_address, registry, certificates, auth, closers=closers
    )
    if watcher is not None:
        watcher.start()
    return server
