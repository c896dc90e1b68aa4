"""What a client needs to reach one API server: its URL, TLS, proxy and credential.

client-go twin: ``rest.Config`` (``k8s.io/client-go/rest/config.go``): ``Host``,
``TLSClientConfig``, ``Proxy``, ``BearerToken``/``BearerTokenFile``/``ExecProvider`` (here
one ``TokenSource``, client/auth.py), ``UserAgent``. ``client/config.py`` builds one the way
``clientcmd.BuildConfigFromFlags`` does; ``RESTClient`` (client/rest.py) sends through it.

An official ``kubernetes.client.ApiClient`` (or its ``Configuration``) is accepted wherever a
``Config`` is, through ``Config.from_api_client``: tests, tools and kubesim build those, and the
official loader fills one when a kubeconfig needs an exec or auth-provider plugin.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from client.auth import StaticTokenSource, TokenSource, token_source_for
from client.pool import Pool, TLSSettings, proxy_for

__all__ = ["DEFAULT_USER_AGENT", "Config"]

# client-go's DefaultKubernetesUserAgent names the binary; RESTClient's callers give theirs.
DEFAULT_USER_AGENT = "sample-controller-py"


@dataclass
class Config:
    """One API server and how to reach it (client-go twin: ``rest.Config``).

    ``host``: ``scheme://host[:port]``, no trailing slash. ``headers``: sent with every
    request before the credential (the official ApiClient's default headers and cookie when
    made from one).
    """

    host: str
    tls: TLSSettings = field(default_factory=TLSSettings)
    token_source: TokenSource = field(default_factory=lambda: StaticTokenSource(None))
    proxy_url: str | None = None
    proxy_headers: Mapping[str, str] | None = None
    no_proxy: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: {"User-Agent": DEFAULT_USER_AGENT})
    # made by the first pool(), shared by every client of this config
    _pool: Pool | None = field(default=None, init=False, repr=False, compare=False)

    def pool(self) -> Pool:
        """The connection pool for this server, made on the first call and the same one after
        (client-go: ``transport.New``, whose ``tlsTransportCache`` gives the clients of one
        config one transport). Raises ``client.pool.ProxyError`` for a proxy it cannot use,
        ``ssl.SSLError``/``OSError`` for a certificate or key that does not load."""
        if self._pool is None:
            proxy = proxy_for(self.host, self.proxy_url, self.proxy_headers, self.no_proxy)
            self._pool = Pool(self.host, self.tls, proxy)
        return self._pool

    @classmethod
    def from_configuration(cls, configuration: Any, *, clock: Any = time.time) -> Config:
        """The same server, TLS, proxy and credential as an official ``Configuration``: what
        its ``RESTClientObject`` would build its urllib3 pool from
        (``kubernetes/client/rest.py``), and the token source its loader implies."""
        ca_data = getattr(configuration, "ca_cert_data", None)
        if isinstance(ca_data, str):
            ca_data = ca_data.encode("ascii")
        tls = TLSSettings(
            insecure=not configuration.verify_ssl,
            ca_file=configuration.ssl_ca_cert,
            ca_data=ca_data or None,
            cert_file=configuration.cert_file,
            key_file=configuration.key_file,
            server_name=getattr(configuration, "tls_server_name", None),
            check_hostname=getattr(configuration, "assert_hostname", None) is not False,
        )
        return cls(
            host=str(configuration.host).rstrip("/"),
            tls=tls,
            token_source=token_source_for(configuration, clock=clock),
            proxy_url=configuration.proxy,
            proxy_headers=configuration.proxy_headers,
            no_proxy=getattr(configuration, "no_proxy", None),
        )

    @classmethod
    def from_api_client(cls, api_client: Any, *, clock: Any = time.time) -> Config:
        """``from_configuration`` of the ApiClient's configuration, with its default headers
        (the official User-Agent) and cookie, as ``ApiClient.param_serialize`` sends them."""
        config = cls.from_configuration(api_client.configuration, clock=clock)
        headers = dict(api_client.default_headers)
        if getattr(api_client, "cookie", None):
            headers["Cookie"] = api_client.cookie
        config.headers = headers
        return config
