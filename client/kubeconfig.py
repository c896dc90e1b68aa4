"""A kubeconfig file read and checked before the official loader sees it, so that every mistake in
one becomes one sentence naming the file and the field.

client-go twin: ``clientcmd``'s loading (``LoadFromFile``: read, decode, "error loading config
file") and validation (``validation.go``: ``ConfirmUsable``, ``validateClusterInfo``,
``validateContext``), whose messages these follow ("context was not found for specified context",
"no server found for cluster", "cluster ... was not found for context ...").

Why it exists: the official Python loader (``kubernetes.config.kube_config``) lets a file that is
not YAML, not a mapping or not UTF-8 escape as ``yaml.scanner.ScannerError``, ``TypeError`` or
``UnicodeDecodeError`` naming no file, and accepts a cluster with no server (the client then fails
on its first request with an unrelated error). Checking here keeps the loader's own work (tokens,
exec plugins, certificates) untouched: a file that passes is handed to it as before.

Deliberate differences from client-go:

- a ``server`` without ``http://`` or ``https://`` is refused (client-go prepends ``https://``
  to a bare ``host:port``; the official Python client does not, and would fail later);
- ``current-context`` comes from the last file of ``$KUBECONFIG`` that sets it, as the official
  Python loader merges (client-go: the first); entries of the same name: the first file wins,
  in both;
- a context naming a user that is not defined is accepted (no credentials), as in client-go's
  ``ConfirmUsable`` and the Python loader.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import yaml

__all__ = ["KubeconfigProblem", "check_usable", "merge", "read_kubeconfig"]

# the named lists of a kubeconfig, with the key that holds each entry's body
NAMED_LISTS = {"clusters": "cluster", "contexts": "context", "users": "user"}


class KubeconfigProblem(ValueError):
    """What is wrong with a kubeconfig, as one line that names the file (client-go's
    ``errConfigurationInvalid`` and "error loading config file" errors, in one type)."""


def read_kubeconfig(path: str) -> dict[str, Any]:
    """The file at ``path`` decoded, with its named lists checked; KubeconfigProblem otherwise.

    Each check names the file (as given, before ``~`` is expanded) so that the line a user sees
    points at what to open.
    """
    try:
        with open(os.path.expanduser(path), "rb") as f:
            raw = f.read()
    except OSError as err:
        raise KubeconfigProblem(
            f"kubeconfig {path}: cannot read it: {err.strerror or err}"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise KubeconfigProblem(
            f"kubeconfig {path} is not a text file (not UTF-8 at byte {err.start})"
        ) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise KubeconfigProblem(
            f"kubeconfig {path} is not valid YAML: {_yaml_problem(err)}"
        ) from None
    if doc is None:
        raise KubeconfigProblem(f"kubeconfig {path} is empty")
    if not isinstance(doc, dict):
        raise KubeconfigProblem(
            f"kubeconfig {path} is not a kubeconfig: its top level is a {_kind(doc)}, "
            "not a mapping (apiVersion, kind, clusters, contexts, users, current-context)"
        )
    for key, body in NAMED_LISTS.items():
        _check_named_list(path, doc, key, body)
    current = doc.get("current-context")
    if current is not None and not isinstance(current, str):
        raise KubeconfigProblem(
            f"kubeconfig {path}: current-context must be a string, not a {_kind(current)}"
        )
    return doc


def check_usable(paths: Sequence[str], docs: Sequence[dict[str, Any]], master: str = "") -> None:
    """Check that the merged ``docs`` (read from ``paths``, in order) name a context, the
    context a cluster, and the cluster a server (unless ``master`` overrides it): the chain the
    loader follows, as client-go's ``ConfirmUsable`` checks it."""
    where = "kubeconfig " + os.pathsep.join(paths)
    merged = merge(paths, docs)
    current = merged["current-context"]
    if not current:
        raise KubeconfigProblem(
            f"{where}: current-context is not set (choose one: kubectl config use-context NAME)"
        )
    context, _ = merged["contexts"].get(current, (None, ""))
    if context is None:
        known = ", ".join(sorted(merged["contexts"])) or "none"
        raise KubeconfigProblem(
            f"{where}: context was not found for specified context: {current} "
            f"(current-context; defined: {known})"
        )
    cluster_name = context.get("cluster")
    if not cluster_name or not isinstance(cluster_name, str):
        raise KubeconfigProblem(f"{where}: cluster was not specified for context {current!r}")
    cluster, _ = merged["clusters"].get(cluster_name, (None, ""))
    if cluster is None:
        raise KubeconfigProblem(
            f"{where}: cluster {cluster_name!r} was not found for context {current!r}"
        )
    if master:
        return
    server = cluster.get("server")
    if not server:
        raise KubeconfigProblem(
            f"{where}: no server found for cluster {cluster_name!r} (clusters[].cluster.server)"
        )
    url = urlsplit(str(server))
    if url.scheme not in ("http", "https") or not url.netloc:
        raise KubeconfigProblem(
            f"{where}: server {server!r} of cluster {cluster_name!r} is not a URL "
            "(expected https://HOST:PORT)"
        )


def _check_named_list(path: str, doc: dict[str, Any], key: str, body: str) -> None:
    entries = doc.get(key)
    if entries is None:
        return
    if not isinstance(entries, list):
        raise KubeconfigProblem(
            f"kubeconfig {path}: {key} must be a list of {{name, {body}}} entries, "
            f"not a {_kind(entries)}"
        )
    for i, entry in enumerate(entries):
        at = f"kubeconfig {path}: {key}[{i}]"
        if not isinstance(entry, dict):
            raise KubeconfigProblem(
                f"{at} must be a mapping with name and {body}, not a {_kind(entry)}"
            )
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise KubeconfigProblem(f"{at} has no name")
        inner = entry.get(body)
        if inner is None:
            raise KubeconfigProblem(f"{at} ({name}) has no {body}")
        if not isinstance(inner, dict):
            raise KubeconfigProblem(
                f"{at} ({name}): {body} must be a mapping, not a {_kind(inner)}"
            )


def merge(paths: Sequence[str], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The view the official loader builds from several files (KubeConfigMerger): named
    entries, the first file's of each name, each as (entry, the file it came from, for paths
    relative to it); current-context, the last file's that sets it."""
    merged: dict[str, Any] = {key: {} for key in NAMED_LISTS}
    merged["current-context"] = ""
    for path, doc in zip(paths, docs, strict=True):
        for key, body in NAMED_LISTS.items():
            for entry in doc.get(key) or []:
                merged[key].setdefault(entry["name"], (entry[body], path))
        if "current-context" in doc:
            merged["current-context"] = doc["current-context"] or ""
    return merged


def _yaml_problem(err: yaml.YAMLError) -> str:
    """The parser's complaint and where, on one line ("mapping values are not allowed here,
    line 1 column 5")."""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    mark = getattr(err, "problem_mark", None)
    if mark is None:
        return str(problem)
    return f"{problem}, line {mark.line + 1} column {mark.column + 1}"


def _kind(value: object) -> str:
    """A YAML reader's name for a Python value's type."""
    names = {
        str: "string",
        list: "list",
        dict: "mapping",
        int: "number",
        float: "number",
        bool: "boolean",
    }
    return names.get(type(value), type(value).__name__)
