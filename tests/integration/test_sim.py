"""``make sim`` (``python -m demo.sim``): kubesim for a local run, as a learner starts it.

It prints the ``export KUBECONFIG=...`` line; that kubeconfig reaches a server with the Foo CRD
and the workload chain on a simulated node; a second sim does not overwrite the first one's
file; and Ctrl-C stops it with exit 0, no traceback, and the file removed.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from client.config import load_client_configuration
from client.rest import RESTClient, resource_path
from tests.helpers import ROOT, wait_for

EXPORT = re.compile(r"^\s+export KUBECONFIG=(\S+)$")


class Sim:
    """``python -m demo.sim`` in a subprocess, read until it prints the export line."""

    def __init__(self, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "demo.sim", *flags],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.lines: list[str] = []
        self.kubeconfig: Path | None = None
        for line in self.proc.stdout:
            self.lines.append(line)
            m = EXPORT.match(line.rstrip("\n"))
            if m:
                self.kubeconfig = Path(m.group(1))
                break
        # keep reading, so that a full pipe never blocks it
        self._drain = threading.Thread(
            target=lambda: self.lines.extend(self.proc.stdout or ()), daemon=True
        )
        self._drain.start()

    def interrupt(self) -> tuple[int, str, str]:
        """Ctrl-C; (exit status, stdout, stderr)."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        self._drain.join(5)
        assert self.proc.stderr is not None
        return self.proc.returncode, "".join(self.lines), self.proc.stderr.read()


@pytest.fixture
def sims() -> Iterator[list[Sim]]:
    started: list[Sim] = []
    yield started
    for sim in started:
        if sim.proc.poll() is None:
            sim.proc.kill()
            sim.proc.wait()


def test_make_sim_serves_the_crds_and_stops_cleanly(tmp_path: Path, sims: list[Sim]) -> None:
    kubeconfig = tmp_path / "sim" / "kubeconfig"
    sim = Sim("--kubeconfig", str(kubeconfig), "--status-delay", "0.1")
    sims.append(sim)
    assert sim.kubeconfig == kubeconfig, "".join(sim.lines)
    api = RESTClient(client.ApiClient(load_client_configuration(str(kubeconfig))))
    crds = api.request(
        "GET", resource_path("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    )
    names = {crd["metadata"]["name"] for crd in crds["items"]}
    assert "foos.samplecontroller.k8s.io" in names
    assert (ROOT / "examples" / "bar" / "crd.yaml").exists() == (
        "bars.tutorial.example.com" in names
    )
    # the workload chain on the simulated node: a Deployment's Pods run, and it becomes
    # available through them
    api.request(
        "POST",
        resource_path("apps", "v1", "deployments", "default"),
        body={
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        },
    )
    wait_for(
        lambda: (
            api.request("GET", resource_path("apps", "v1", "deployments", "default", "web"))
            .get("status", {})
            .get("availableReplicas")
            == 2
        ),
        message="the Deployment available",
    )
    pods = api.request("GET", resource_path("", "v1", "pods", "default"))["items"]
    assert len(pods) == 2
    assert {p["status"]["phase"] for p in pods} == {"Running"}

    # a second sim would overwrite the file of this one, still serving: refused, in one line
    second = subprocess.run(
        [sys.executable, "-m", "demo.sim", "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert f"{kubeconfig} belongs to a sim still serving at http://127.0.0.1:" in second.stderr

    code, out, err = sim.interrupt()
    assert code == 0, err
    assert "Traceback" not in out + err
    assert f"removed {kubeconfig}" in out
    assert not kubeconfig.exists()


def test_make_sim_names_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "demo.sim",
                "--listen",
                f"127.0.0.1:{port}",
                "--kubeconfig",
                str(tmp_path / "kubeconfig"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stderr == (
        f"make sim: error: argument --listen: cannot listen on 127.0.0.1:{port}: "
        "Address already in use\n"
    )
    assert not (tmp_path / "kubeconfig").exists()
