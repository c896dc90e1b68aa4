"""A ``rest.Config`` from a kubeconfig's chosen context, or from a pod's environment.

client-go twins: ``clientcmd``'s ``DirectClientConfig.ClientConfig``
(``tools/clientcmd/client_config.go``: the context's cluster and user turned into a
rest.Config, paths resolved against the file that named them) and ``rest.InClusterConfig``
(``rest/config.go``).

Why ours and not the official loader's: the official ``kubernetes.config`` imports its
``Configuration``, urllib3, and modules for OIDC and exec plugins, about 9 MB of RSS in a
process that otherwise needs only ``ssl`` and ``http.client`` (docs/benchmarks.md, "A client
without urllib3"). What a kubeconfig says without a plugin (a server, a CA, a client
certificate, a token, a token file, a user name and password, a proxy) is read here;
``static_config`` returns None for a user with ``exec`` or ``auth-provider``, or with any
field it does not know, and client/config.py then hands the file to the official loader,
whose plugins stay in use.

Deliberate differences from the official Python loader, each as client-go does it:

- a relative path is resolved against the file that named it (the official loader resolves a
  user's certificate paths against the cluster's file);
- a ``tokenFile`` is re-read on client-go's schedule (client/auth.py), not read once.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence
from typing import Any

from client.auth import CachedFileTokenSource, StaticTokenSource, TokenSource
from client.kubeconfig import KubeconfigProblem, merge
from client.pool import TLSSettings
from client.restconfig import Config

__all__ = [
    "SERVICE_CA_FILE",
    "SERVICE_TOKEN_FILE",
    "NotInCluster",
    "in_cluster_config",
    "static_config",
]

# rest.InClusterConfig's files, where the kubelet mounts the ServiceAccount's token and the
# cluster's CA
SERVICE_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

# What this module reads of a user entry; anything else (exec, auth-provider, as, ...) goes to
# the official loader.
_USER_FIELDS = frozenset(
    {
        "token",
        "tokenFile",
        "username",
        "password",
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "client-key-data",
    }
)
# ... and of a cluster entry.
_CLUSTER_FIELDS = frozenset(
    {
        "server",
        "certificate-authority",
        "certificate-authority-data",
        "insecure-skip-tls-verify",
        "tls-server-name",
        "proxy-url",
        "extensions",  # informational only (client-go keeps them for exec plugins)
    }
)


class NotInCluster(Exception):
    """client-go twin: ``rest.ErrNotInCluster``, or the error ``rest.InClusterConfig`` returns
    for a pod environment whose token cannot be read."""


def in_cluster_config(
    environ: Mapping[str, str],
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> Config:
    """``rest.InClusterConfig``: the service's address from the environment, the token file
    (re-read as the kubelet rotates it) and the cluster CA."""
    host, port = (
        environ.get("KUBERNETES_SERVICE_HOST", ""),
        environ.get("KUBERNETES_SERVICE_PORT", ""),
    )
    if not host or not port:
        raise NotInCluster(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
            "KUBERNETES_SERVICE_PORT must be defined"
        )
    try:
        with open(token_file, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as err:
        raise NotInCluster(f"cannot read the ServiceAccount token {token_file}: {err}") from None
    if not token:
        raise NotInCluster(f"the ServiceAccount token {token_file} is empty")
    if not os.path.isfile(ca_file):
        raise NotInCluster(f"cannot read the cluster CA {ca_file}")
    # net.JoinHostPort: an IPv6 address in brackets
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return Config(
        host=f"https://{address}",
        tls=TLSSettings(ca_file=ca_file),
        token_source=CachedFileTokenSource(token_file),
    )


def static_config(
    paths: Sequence[str], docs: Sequence[dict[str, Any]], master: str = ""
) -> Config | None:
    """The rest.Config of the current context of ``docs`` (read and checked from ``paths`` by
    client/kubeconfig.py), or None when its user needs the official loader (a plugin, or a
    field this module does not read). ``master`` replaces the cluster's server.

    Raises ``KubeconfigProblem`` for a value that cannot be used (data that is not base64).
    """
    merged = merge(paths, docs)
    context, _ = merged["contexts"].get(merged["current-context"], ({}, ""))
    cluster, cluster_file = merged["clusters"].get(context.get("cluster"), ({}, ""))
    user, user_file = merged["users"].get(context.get("user"), ({}, ""))
    if set(user) - _USER_FIELDS or set(cluster) - _CLUSTER_FIELDS:
        return None
    host = (master or str(cluster.get("server", ""))).rstrip("/")
    cert_file, cert_data = _file_or_data(user, "client-certificate", user_file)
    key_file, key_data = _file_or_data(user, "client-key", user_file)
    ca_file, ca_data = _file_or_data(cluster, "certificate-authority", cluster_file)
    tls = TLSSettings(
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        ca_file=ca_file,
        ca_data=ca_data,
        cert_file=cert_file,
        cert_data=cert_data,
        key_file=key_file,
        key_data=key_data,
        server_name=cluster.get("tls-server-name") or None,
    )
    return Config(
        host=host,
        tls=tls,
        token_source=_token_source(user, user_file),
        proxy_url=cluster.get("proxy-url") or None,
    )


def _token_source(user: Mapping[str, Any], path: str) -> TokenSource:
    """The official loader's order: a token, else a token file, else a user name and
    password (client-go's: the same, with basic auth and a token refused together)."""
    if user.get("token"):
        return StaticTokenSource(f"Bearer {user['token']}")
    if user.get("tokenFile"):
        return CachedFileTokenSource(_resolve(str(user["tokenFile"]), path))
    if user.get("username") is not None and user.get("password") is not None:
        pair = f"{user['username']}:{user['password']}".encode()
        return StaticTokenSource("Basic " + base64.b64encode(pair).decode("ascii"))
    return StaticTokenSource(None)


def _file_or_data(entry: Mapping[str, Any], key: str, path: str) -> tuple[str | None, bytes | None]:
    """``key`` (a path, resolved) and ``key-data`` (base64, decoded): client-go's pair, where
    the data wins when both are set."""
    data = entry.get(f"{key}-data")
    if data:
        try:
            return None, base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigProblem(f"kubeconfig {path}: {key}-data is not base64") from None
    name = entry.get(key)
    return (_resolve(str(name), path), None) if name else (None, None)


def _resolve(name: str, path: str) -> str:
    """clientcmd's ResolveLocalPaths: relative to the directory of the file that says it."""
    name = os.path.expanduser(name)
    if os.path.isabs(name) or not path:
        return name
    return os.path.join(os.path.dirname(os.path.abspath(os.path.expanduser(path))), name)
