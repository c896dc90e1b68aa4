"""Request headers built once, and credentials refreshed on their own schedule, not per request.

client-go twins (``k8s.io/client-go/transport`` and ``plugin/pkg/client/auth``):

- ``transport.NewCachedFileTokenSource``: a token file (the in-cluster ServiceAccount token, a
  kubeconfig ``tokenFile``) re-read every minute, 10 s early - ``CachedFileTokenSource``;
- ``plugin/pkg/client/auth/exec``: an exec plugin's ``ExecCredential`` kept until its
  ``expirationTimestamp`` - ``ExecCredentialSource``;
- ``tokenSourceTransport.ResetTokenOlderThan`` and the exec authenticator's
  ``maybeRefreshCreds``: a 401 means the token that was sent is stale - ``unauthorized``;
- the ``userAgentRoundTripper`` / ``bearerAuthRoundTripper`` pair: fixed headers on every
  request - ``RequestHeaders``.

Why: the official client rebuilds every request's headers in ``ApiClient.param_serialize``
and asks ``Configuration.refresh_api_key_hook`` for the token each time; the kubeconfig and
in-cluster hooks then re-assign ``Configuration.host``, which re-reads the proxy environment.
That was about 17% of the controller's CPU. Here the headers are one dict, reused until the
credential's own schedule (or a 401) says otherwise.

Where the credential comes from: client/config.py gives a ``client.restconfig.Config`` its
token source directly (a token, a token file, basic auth, or the in-cluster token file) when
it loads the kubeconfig itself. When the official client loads it (a kubeconfig with an exec
or auth-provider plugin, or an official ``Configuration`` a test or tool built), running
those plugins stays the official client's (its ``ExecProvider`` and its refresh hook), and
``token_source_for`` recognises the official loader
behind a ``Configuration`` and picks the matching source; for anything it does not recognise
(auth-provider plugins, a custom hook, a future loader) it calls the configuration's refresh
hook every 10 s instead of on every request, which keeps the hook's own expiry logic.

Differs from client-go: client certificates returned by an exec plugin are read once at load
(as the official client does): the connection pool's TLS context is made once.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from client.errors import TransportError

__all__ = [
    "CachedFileTokenSource",
    "CredentialError",
    "ExecCredentialSource",
    "RefreshHookSource",
    "RequestHeaders",
    "StaticTokenSource",
    "TokenSource",
    "token_source_for",
]

log = logging.getLogger(__name__)

Clock = Callable[[], float]  # wall-clock seconds: credentials expire at wall-clock times

# client-go's NewCachedFileTokenSource: re-read every minute, 10 s before the minute is up
# (half the time between the kubelet refreshing a projected token, at 80% of its 10 min life,
# and the old token expiring).
TOKEN_FILE_PERIOD = 60.0
TOKEN_FILE_LEEWAY = 10.0
# An exec credential is renewed this long before its expirationTimestamp (client-go: at it;
# the official Python client: 5 min before): a plugin can take seconds to run, and a token
# handed out just before expiry is still in flight for a while.
EXEC_LEEWAY = 30.0
# How often an unrecognised refresh hook is asked (official client: on every request).
HOOK_INTERVAL = 10.0
# After a failed refresh with an older token still in hand, wait this long before trying again
# (client-go keeps the old token and logs "Unable to rotate token").
RETRY_INTERVAL = 1.0


class CredentialError(TransportError):
    """No credential could be obtained for a request (the token file is missing or empty, the
    exec plugin failed) and none was obtained before: the request is not sent. A
    ``TransportError``, so callers back off and retry as for an unreachable server (client-go:
    the round tripper's error fails the request the same way)."""


def _refresh_time(expiry: float, now: float, leeway: float) -> float:
    """When to renew a credential expiring at ``expiry``: ``leeway`` early, but for one that
    lives less than twice the leeway, at half its remaining life, not on every request."""
    return expiry - min(leeway, max(0.0, expiry - now) / 2)


class TokenSource(Protocol):
    """Where the ``Authorization`` header's value comes from (``oauth2.TokenSource`` +
    ``ResettableTokenSource`` in client-go)."""

    def token(self) -> str | None:
        """The header value to send now (``"Bearer ..."``, ``"Basic ..."``) or None for none.
        Cheap when nothing is due: called for every request."""
        ...

    def reset(self, stale: str | None) -> None:
        """The server answered 401 to a request sent with ``stale``: refresh before the next
        request, unless the source has moved on from ``stale`` already."""
        ...


class StaticTokenSource:
    """A credential that never changes (a literal kubeconfig ``token``, basic auth, none).

    client-go twin: a fixed ``rest.Config.BearerToken`` behind ``transport``'s
    ``bearerAuthRoundTripper``."""

    def __init__(self, value: str | None) -> None:
        self._value = value

    def token(self) -> str | None:
        return self._value

    def reset(self, stale: str | None) -> None:
        """Nothing to refresh: the next request sends the same credential (client-go too)."""


class _CachingSource:
    """A cached value with a refresh time: lock-free reads, one refresher at a time.

    Subclasses implement ``_fetch() -> (value, refresh_at)``. A failed fetch with an older
    value in hand keeps serving the old value and tries again after ``RETRY_INTERVAL``; with
    none in hand, it raises (the request cannot be authenticated).
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()  # serialises fetches; reads take no lock
        self._value: str | None = None  # the header value being handed out
        self._refresh_at = float("-inf")  # clock time from which the value must be refetched
        self._fetched = False  # a fetch has succeeded at least once

    def _fetch(self) -> tuple[str | None, float]:
        raise NotImplementedError

    def token(self) -> str | None:
        if self._clock() < self._refresh_at:  # the fast path: one clock read, one compare
            return self._value
        with self._lock:
            now = self._clock()
            if now < self._refresh_at:  # another thread refreshed while we waited
                return self._value
            try:
                self._value, self._refresh_at = self._fetch()
                self._fetched = True
            except Exception as err:
                if not self._fetched:
                    raise CredentialError(f"{type(self).__name__}: {err}") from err
                log.error(
                    "unable to rotate credentials, using the previous ones",
                    extra={"source": type(self).__name__, "error": str(err)},
                )
                self._refresh_at = now + RETRY_INTERVAL
            return self._value

    def reset(self, stale: str | None) -> None:
        with self._lock:
            if stale == self._value:
                self._refresh_at = float("-inf")


class CachedFileTokenSource(_CachingSource):
    """A bearer token read from a file and re-read every ``period`` seconds, ``leeway`` early.

    client-go twin: ``transport.NewCachedFileTokenSource`` (``cachingTokenSource`` over
    ``fileTokenSource``): the in-cluster ServiceAccount token, which the kubelet rotates in
    place, and a kubeconfig user's ``tokenFile``.
    """

    def __init__(
        self,
        path: str,
        *,
        period: float = TOKEN_FILE_PERIOD,
        leeway: float = TOKEN_FILE_LEEWAY,
        clock: Clock = time.time,
    ) -> None:
        super().__init__(clock)
        self.path = path  # the token file
        self._period = period  # how long a read token is trusted
        self._leeway = leeway  # re-read this much before the period ends

    def _fetch(self) -> tuple[str | None, float]:
        with open(self.path, encoding="utf-8") as f:
            token = f.read().strip()
        if not token:
            raise ValueError(f"read empty token from file {self.path!r}")
        return "Bearer " + token, self._clock() + self._period - self._leeway


class ExecCredentialSource(_CachingSource):
    """A credential printed by an exec plugin, kept until shortly before it expires.

    client-go twin: ``plugin/pkg/client/auth/exec.Authenticator``. ``run`` executes the plugin
    and returns the ``ExecCredential``'s ``status`` (the official client's
    ``ExecProvider.run``). Without ``expirationTimestamp`` the credential is kept until a 401.
    """

    def __init__(
        self,
        run: Callable[[], Mapping[str, Any]],
        *,
        leeway: float = EXEC_LEEWAY,
        clock: Clock = time.time,
        current: str | None = None,
        expires_at: float | None = None,
    ) -> None:
        super().__init__(clock)
        self._run = run  # runs the plugin, returns ExecCredential.status
        self._leeway = leeway  # refresh this long before expirationTimestamp
        if current:  # a credential the loader already fetched: no second run at startup
            self._value, self._fetched = current, True
            self._refresh_at = (
                float("inf") if expires_at is None else _refresh_time(expires_at, clock(), leeway)
            )

    def _fetch(self) -> tuple[str | None, float]:
        status = self._run()
        token = status.get("token")
        if not token:  # client certificates are only read at load (see the module docstring)
            raise ValueError("exec plugin returned no token")
        expires = status.get("expirationTimestamp")
        if not expires:
            return f"Bearer {token}", float("inf")
        expiry = datetime.fromisoformat(expires).timestamp()
        return f"Bearer {token}", _refresh_time(expiry, self._clock(), self._leeway)


class RefreshHookSource(_CachingSource):
    """Whatever ``Configuration.refresh_api_key_hook`` yields, asked every ``interval``
    seconds and after a 401, instead of on every request.

    For credentials whose refresh logic only the official client knows (auth-provider plugins
    ``oidc`` and ``gcp``, a custom hook): the hook still decides whether to refresh, on its own
    expiry rules; it is only asked less often. No client-go twin: client-go's auth-provider
    plugins (``plugin/pkg/client/auth/oidc``) are token sources themselves.
    """

    def __init__(
        self, configuration: Any, *, interval: float = HOOK_INTERVAL, clock: Clock = time.time
    ) -> None:
        super().__init__(clock)
        self._configuration = configuration  # kubernetes.client.Configuration
        self._interval = interval

    def _fetch(self) -> tuple[str | None, float]:
        # The official lookup, hook included (Configuration.auth_settings()["BearerToken"]).
        value = self._configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
        return value, self._clock() + self._interval


def token_source_for(configuration: Any, *, clock: Clock = time.time) -> TokenSource:
    """The token source matching how ``configuration`` was loaded.

    The official client offers no public way to ask which loader filled a Configuration; its
    refresh hook is a closure over the loader, so that is where we look. Anything not
    recognised gets a ``RefreshHookSource``, which is always correct, only coarser.
    """
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is None:
        value = configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
        return StaticTokenSource(value)
    try:
        source = _source_for_loader(_loader_of(hook), clock)
    except Exception as err:  # any surprise: fall back to the hook itself
        log.debug("refresh hook not recognised", extra={"error": str(err)})
        source = None
    return source if source is not None else RefreshHookSource(configuration, clock=clock)


def _loader_of(hook: Callable[..., Any]) -> Any:
    from kubernetes.config.incluster_config import InClusterConfigLoader
    from kubernetes.config.kube_config import KubeConfigLoader

    for cell in getattr(hook, "__closure__", None) or ():
        contents = cell.cell_contents
        if isinstance(contents, (InClusterConfigLoader, KubeConfigLoader)):
            return contents
    return None


def _source_for_loader(loader: Any, clock: Clock) -> TokenSource | None:
    """The source for an official loader, following its order of precedence
    (``KubeConfigLoader._load_authentication``: auth-provider, token/tokenFile, exec,
    username/password); None leaves it to the hook."""
    from kubernetes.config.incluster_config import InClusterConfigLoader

    if isinstance(loader, InClusterConfigLoader):
        return CachedFileTokenSource(loader._token_filename, clock=clock)
    user = getattr(loader, "_user", None)
    if loader is None or user is None or "auth-provider" in user:
        return None  # oidc / gcp refreshes: the official hook's job
    if "token" in user:
        return StaticTokenSource(f"Bearer {user['token']}") if user["token"] else None
    if "tokenFile" in user:
        base = loader._get_base_path(user.path)
        path = os.path.normpath(os.path.join(base, user["tokenFile"]))
        return CachedFileTokenSource(path, clock=clock)
    if "exec" in user:
        return _exec_source(loader, user, clock)
    return None  # username/password: a fixed value the hook hands back as it is


def _exec_source(loader: Any, user: Any, clock: Clock) -> ExecCredentialSource:
    from kubernetes.config import exec_provider

    make_provider: Any = exec_provider.ExecProvider  # untyped upstream
    cluster = loader._cluster
    provider = make_provider(user["exec"], loader._get_base_path(cluster.path), cluster)
    token = getattr(loader, "token", None)  # the credential the loader fetched at load
    expiry = getattr(loader, "expiry", None)
    return ExecCredentialSource(
        provider.run,
        clock=clock,
        current=token if isinstance(token, str) else None,
        expires_at=expiry.timestamp() if isinstance(expiry, datetime) else None,
    )


class RequestHeaders:
    """The headers every request carries, as one dict rebuilt only when the credential changes.

    client-go twin: the ``userAgentRoundTripper`` and ``bearerAuthRoundTripper`` of
    ``transport/round_trippers.go``, whose bearer round tripper resets its token source on 401.

    ``get()`` returns a shared mapping: add per-request headers (``Content-Type``) to a copy.
    """

    def __init__(self, source: TokenSource, base: Mapping[str, str]) -> None:
        self._source = source  # the Authorization value
        self._base = dict(base)  # Accept, User-Agent, the ApiClient's default headers, Cookie
        # (Authorization value, the headers carrying it): one attribute, so a thread never
        # sees the headers of one token paired with another.
        self._built: tuple[str | None, dict[str, str]] = (None, dict(self._base))

    @classmethod
    def from_api_client(
        cls,
        api_client: Any,
        *,
        user_agent: str | None = None,
        accept: str = "application/json",
        clock: Clock = time.time,
        source: TokenSource | None = None,
    ) -> RequestHeaders:
        """What ``ApiClient.param_serialize`` would send: ``for_config`` of the ApiClient as
        ``client.restconfig.Config.from_api_client`` reads it (default headers, cookie, the
        token source of its loader), with ``source`` for the credential when given."""
        # (imported here: client/restconfig.py builds on this module)
        from client.restconfig import Config

        config = Config.from_api_client(api_client, clock=clock)
        if source is not None:
            config.token_source = source
        return cls.for_config(config, user_agent=user_agent, accept=accept)

    @classmethod
    def for_config(
        cls,
        config: Any,
        *,
        user_agent: str | None = None,
        accept: str = "application/json",
    ) -> RequestHeaders:
        """The headers for a ``client.restconfig.Config``: its own headers, the Accept and
        User-Agent given, and its token source's Authorization."""
        base = {"Accept": accept, **config.headers}
        if user_agent:
            base["User-Agent"] = user_agent
        return cls(config.token_source, base)

    def get(self) -> Mapping[str, str]:
        """The headers for a request sent now (do not modify)."""
        token = self._source.token()
        built = self._built
        if token != built[0]:
            headers = dict(self._base)
            if token:
                headers["Authorization"] = token
            built = self._built = (token, headers)
        return built[1]

    def unauthorized(self, sent: Mapping[str, str]) -> None:
        """The server answered 401 to a request sent with ``sent``: refresh the credential
        before the next request (unless it has changed since)."""
        self._source.reset(sent.get("Authorization"))
