"""Where a client finds its API server: flags, in-cluster config, or kubeconfig.

client-go twin: ``clientcmd.BuildConfigFromFlags(masterURL, kubeconfigPath)`` as
sample-controller's main.go calls it, with the same precedence:

1. neither ``--kubeconfig`` nor ``--master``, and the pod environment is present
   (``KUBERNETES_SERVICE_HOST``/``PORT`` and the ServiceAccount token and CA): in-cluster config,
   with the token re-read as the kubelet rotates it;
2. otherwise the kubeconfig given, or the default loading rules (``$KUBECONFIG``,
   ``~/.kube/config``), with ``--master`` overriding the server when given.

``load_rest_config`` is that function: it returns a ``client.restconfig.Config`` (client-go's
``rest.Config``), built by client/clientconfig.py for the in-cluster environment and for every
kubeconfig whose user needs no plugin, and by the official loader (``kubernetes.config``,
imported only then) for a user with an ``exec`` or ``auth-provider`` plugin or anything else
client/clientconfig.py does not read. TLS verification is on unless the kubeconfig itself says
``insecure-skip-tls-verify``.

``load_client_configuration`` is the official loader's way, kept for tests and tools that
build an official ``ApiClient``: the same precedence and the same one-line errors, returning a
``kubernetes.client.Configuration``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from client.clientconfig import (
    SERVICE_CA_FILE,
    SERVICE_TOKEN_FILE,
    NotInCluster,
    in_cluster_config,
    static_config,
)
from client.kubeconfig import KubeconfigProblem, check_usable, read_kubeconfig
from client.restconfig import Config

__all__ = ["ConfigError", "load_client_configuration", "load_rest_config"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class ConfigError(Exception):
    """No usable client configuration; the message says which source failed and why (the
    error client-go's ``clientcmd.BuildConfigFromFlags`` returns)."""


def load_rest_config(
    kubeconfig: str = "",
    master: str = "",
    environ: Mapping[str, str] | None = None,
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> Config:
    """``clientcmd.BuildConfigFromFlags``: a ``rest.Config`` from the flags, the pod
    environment or a kubeconfig (the module docstring).

    ``environ``, ``token_file`` and ``ca_file`` exist for tests of the in-cluster path.
    """
    environ = os.environ if environ is None else environ
    found = _in_cluster_first(
        kubeconfig, master, environ, lambda: in_cluster_config(environ, token_file, ca_file)
    )
    if found is not None:
        return found
    paths = _kubeconfig_paths(kubeconfig)
    _check_missing(kubeconfig, master, paths)
    if not paths:
        # --master alone and no kubeconfig anywhere: talk to that URL without credentials.
        return Config(host=master.rstrip("/"))
    docs = _check_kubeconfig(paths, master)
    try:
        static = static_config(paths, docs, master)
    except KubeconfigProblem as err:
        raise ConfigError(str(err)) from None
    # None: a plugin (exec, auth-provider) or a field only the official loader knows
    config = static or Config.from_configuration(_official_from_files(paths, kubeconfig, master))
    try:
        # what the official loader finds when it reads the files: said now, in one line (the
        # pool is kept: the client made from this config uses it)
        config.pool()
    except (OSError, ValueError) as err:
        source = os.pathsep.join(paths)
        raise ConfigError(f"cannot load kubeconfig {source}: {_first_line(err)}") from err
    return config


def load_client_configuration(
    kubeconfig: str = "",
    master: str = "",
    environ: Mapping[str, str] | None = None,
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> Any:
    """Build an official ``kubernetes.client.Configuration`` as BuildConfigFromFlags would,
    with the official loaders (imported here, on first use).

    ``environ``, ``token_file`` and ``ca_file`` exist for tests of the in-cluster path.
    """
    from client.official import import_loaders

    import_loaders()
    from kubernetes.client.configuration import Configuration
    from kubernetes.config import incluster_config
    from kubernetes.config.config_exception import ConfigException

    environ = os.environ if environ is None else environ

    def official_in_cluster() -> Any:
        cfg = Configuration()
        try:
            incluster_config.InClusterConfigLoader(
                token_filename=token_file,
                cert_filename=ca_file,
                try_refresh_token=True,
                environ=environ,
            ).load_and_set(cfg)
        except ConfigException as err:
            raise NotInCluster(str(err)) from err
        return cfg

    found = _in_cluster_first(kubeconfig, master, environ, official_in_cluster)
    if found is not None:
        return found
    paths = _kubeconfig_paths(kubeconfig)
    _check_missing(kubeconfig, master, paths)
    if paths:
        _check_kubeconfig(paths, master)
    return _official_from_files(paths, kubeconfig, master)


def _official_from_files(paths: list[str], kubeconfig: str, master: str) -> Any:
    """The official loader's Configuration for the kubeconfig files ``paths`` (checked
    already), with ``master`` as the server when given; ConfigError in one line otherwise."""
    from client.official import import_loaders

    import_loaders()
    from kubernetes.client.configuration import Configuration
    from kubernetes.config import kube_config
    from kubernetes.config.config_exception import ConfigException

    cfg = Configuration()
    try:
        if paths:
            kube_config.load_kube_config(
                config_file=os.pathsep.join(paths),
                client_configuration=cfg,
                persist_config=False,
            )
    # what the loader may still raise on a file that passed the checks (a certificate file it
    # names that is missing, an exec plugin that fails, a key of the wrong type): still one line
    except (ConfigException, OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        problem = _first_line(err)
        if not master:
            source = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
            raise ConfigError(f"cannot load kubeconfig {source}: {problem}") from err
        if kubeconfig:
            raise ConfigError(f"cannot load kubeconfig {kubeconfig}: {problem}") from err
        # --master alone and no kubeconfig anywhere: talk to that URL without credentials.
    if master:
        cfg.host = master.rstrip("/")
    return cfg


def _in_cluster_first(
    kubeconfig: str, master: str, environ: Mapping[str, str], load: Callable[[], T]
) -> T | None:
    """BuildConfigFromFlags' first step: with neither flag, the pod environment when it is
    there and loads (``load`` raises ``NotInCluster`` otherwise), else None and the kubeconfig
    rules, each said in the log as client-go says it."""
    if kubeconfig or master:
        return None
    if not environ.get("KUBERNETES_SERVICE_HOST"):
        log.info(
            "neither --kubeconfig nor --master was specified; using the default "
            "kubeconfig loading rules"
        )
        return None
    try:
        config = load()
    except NotInCluster as err:
        log.warning("in-cluster configuration failed, trying kubeconfig", extra={"error": str(err)})
        return None
    log.info("using in-cluster configuration", extra={"host": getattr(config, "host", "")})
    return config


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def _default_location() -> str:
    """client-go's default loading rules: ``$KUBECONFIG`` (a list of paths), else
    ``~/.kube/config``; read when loading, as clientcmd reads it."""
    return os.environ.get("KUBECONFIG") or os.path.join("~", ".kube", "config")


def _kubeconfig_paths(kubeconfig: str) -> list[str]:
    """The files to read, in order: ``--kubeconfig``, else the existing ones of
    ``$KUBECONFIG`` or ``~/.kube/config``."""
    if kubeconfig:
        return [kubeconfig] if os.path.exists(os.path.expanduser(kubeconfig)) else []
    paths = [p for p in _default_location().split(os.pathsep) if p]
    return [p for p in paths if os.path.exists(os.path.expanduser(p))]


def _check_kubeconfig(paths: list[str], master: str) -> list[dict[str, Any]]:
    """The files read, or ConfigError naming the file and the field when a kubeconfig cannot
    be what the loader needs (client/kubeconfig.py). With ``--master`` the server, and so the
    context chain, may come from the flag (client-go's overrides); a file that does not parse
    is still refused."""
    try:
        docs = [read_kubeconfig(path) for path in paths]
        if not master:
            check_usable(paths, docs)
    except KubeconfigProblem as err:
        raise ConfigError(str(err)) from None
    return docs


def _check_missing(kubeconfig: str, master: str, paths: list[str]) -> None:
    """ConfigError when no kubeconfig file can be read and none may be missing, naming the
    path(s): a ``--kubeconfig`` that does not exist, or no file at all without ``--master``."""
    if paths:
        return
    if kubeconfig:
        raise ConfigError(f"kubeconfig {kubeconfig} does not exist")
    if master:
        return
    location = _default_location()
    if os.environ.get("KUBECONFIG"):
        raise ConfigError(f"kubeconfig {location} (from $KUBECONFIG) does not exist")
    raise ConfigError(
        f"no kubeconfig: {location} does not exist, and there is no --kubeconfig, --master or "
        "usable in-cluster environment"
    )
