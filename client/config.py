"""Where the controller finds its API server: flags, in-cluster config, or kubeconfig.

client-go twin: ``clientcmd.BuildConfigFromFlags(masterURL, kubeconfigPath)`` as sample-controller's
main.go calls it, with the same precedence:

1. neither ``--kubeconfig`` nor ``--master``, and the pod environment is present
   (``KUBERNETES_SERVICE_HOST``/``PORT`` and the ServiceAccount token and CA): in-cluster config,
   with the token re-read as the kubelet rotates it;
2. otherwise the kubeconfig given, or the default loading rules (``$KUBECONFIG``,
   ``~/.kube/config``), with ``--master`` overriding the server when given.

All of the loading is the official client's (``kubernetes.config``): tokens, exec plugins,
client certificates and TLS verification stay its job. TLS verification is on unless the
kubeconfig itself says ``insecure-skip-tls-verify``. The loaders are imported by
``client/official.py``, without the parts of the official client the process does not use.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from client.kubeconfig import KubeconfigProblem, check_usable, read_kubeconfig
from client.official import import_loaders

# Before the first import of the official client: what it loads is this module's choice.
import_loaders()

from kubernetes.client.configuration import Configuration  # noqa: E402
from kubernetes.config import incluster_config, kube_config  # noqa: E402
from kubernetes.config.config_exception import ConfigException  # noqa: E402

__all__ = ["ConfigError", "load_client_configuration"]

log = logging.getLogger(__name__)


class ConfigError(Exception):
    """No usable client configuration; the message says which source failed and why (the
    error client-go's ``clientcmd.BuildConfigFromFlags`` returns)."""


def load_client_configuration(
    kubeconfig: str = "",
    master: str = "",
    environ: Mapping[str, str] | None = None,
    token_file: str = incluster_config.SERVICE_TOKEN_FILENAME,
    ca_file: str = incluster_config.SERVICE_CERT_FILENAME,
) -> Configuration:
    """Build a ``kubernetes.client.Configuration`` as BuildConfigFromFlags would.

    ``environ``, ``token_file`` and ``ca_file`` exist for tests of the in-cluster path.
    """
    environ = os.environ if environ is None else environ
    cfg = Configuration()
    if not kubeconfig and not master:
        if environ.get(incluster_config.SERVICE_HOST_ENV_NAME):
            try:
                incluster_config.InClusterConfigLoader(
                    token_filename=token_file,
                    cert_filename=ca_file,
                    try_refresh_token=True,
                    environ=environ,
                ).load_and_set(cfg)
                log.info("using in-cluster configuration", extra={"host": cfg.host})
                return cfg
            except ConfigException as err:
                log.warning(
                    "in-cluster configuration failed, trying kubeconfig", extra={"error": str(err)}
                )
        else:
            log.info(
                "neither --kubeconfig nor --master was specified; using the default "
                "kubeconfig loading rules"
            )
    missing = _missing_kubeconfig(kubeconfig)
    if missing is not None and (kubeconfig or not master):
        # said plainly: the official loader calls a missing file "Invalid kube-config file"
        raise ConfigError(missing)
    if missing is None:
        _check_kubeconfig(kubeconfig, master)
    try:
        if missing is None:
            kube_config.load_kube_config(
                config_file=kubeconfig or None, client_configuration=cfg, persist_config=False
            )
    # what the loader may still raise on a file that passed the checks (a certificate file it
    # names that is missing, an exec plugin that fails, a key of the wrong type): still one line
    except (ConfigException, OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        problem = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if not master:
            source = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
            raise ConfigError(f"cannot load kubeconfig {source}: {problem}") from err
        if kubeconfig:
            raise ConfigError(f"cannot load kubeconfig {kubeconfig}: {problem}") from err
        # --master alone and no kubeconfig anywhere: talk to that URL without credentials.
    if master:
        cfg.host = master.rstrip("/")
    return cfg


def _kubeconfig_paths(kubeconfig: str) -> list[str]:
    """The files the official loader will read, in its order: ``--kubeconfig``, else the
    existing ones of ``$KUBECONFIG`` (as read at import) or ``~/.kube/config``."""
    if kubeconfig:
        return [kubeconfig]
    location = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    paths = [p for p in location.split(kube_config.ENV_KUBECONFIG_PATH_SEPARATOR) if p]
    return [p for p in paths if os.path.exists(os.path.expanduser(p))]


def _check_kubeconfig(kubeconfig: str, master: str) -> None:
    """ConfigError naming the file and the field when a kubeconfig cannot be what the loader
    needs (client/kubeconfig.py). With ``--master`` the server, and so the context chain, may
    come from the flag (client-go's overrides); a file that does not parse is still refused."""
    paths = _kubeconfig_paths(kubeconfig)
    try:
        docs = [read_kubeconfig(path) for path in paths]
        if not master:
            check_usable(paths, docs)
    except KubeconfigProblem as err:
        raise ConfigError(str(err)) from None


def _missing_kubeconfig(kubeconfig: str) -> str | None:
    """Why no kubeconfig file can be read, naming the path(s), or None when one exists.

    Without ``--kubeconfig`` the default rules apply as the official loader applies them:
    ``$KUBECONFIG`` (a list of paths, the first existing one wins) as read at import, else
    ``~/.kube/config``.
    """
    if kubeconfig:
        if os.path.exists(os.path.expanduser(kubeconfig)):
            return None
        return f"kubeconfig {kubeconfig} does not exist"
    location = kube_config.KUBE_CONFIG_DEFAULT_LOCATION  # $KUBECONFIG or ~/.kube/config
    paths = [p for p in location.split(kube_config.ENV_KUBECONFIG_PATH_SEPARATOR) if p]
    if any(os.path.exists(os.path.expanduser(p)) for p in paths):
        return None
    if os.environ.get("KUBECONFIG"):
        return f"kubeconfig {location} (from $KUBECONFIG) does not exist"
    return (
        f"no kubeconfig: {location} does not exist, and there is no --kubeconfig, --master or "
        "usable in-cluster environment"
    )
