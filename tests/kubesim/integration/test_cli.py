"""`python -m kubesim`: prints its URL, writes a kubeconfig, serves until SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import yaml
from kubernetes import client, config


def test_cli_serves_until_sigterm(tmp_path):
    kc = tmp_path / "kubeconfig"
    crd = tmp_path / "crd.yaml"
    crd.write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: bars.example.com}\n"
        "spec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: bars, kind: Bar}\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n"
        "    schema:\n"
        "      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesim",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig",
            str(kc),
            "--crd",
            str(crd),
            "--deployment-status-delay",
            "0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        api = config.new_client_from_config(config_file=str(kc))
        assert api.configuration.host == url
        lst = client.CustomObjectsApi(api).list_namespaced_custom_object(
            "example.com", "v1", "default", "bars"
        )
        assert lst["items"] == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_enforces_rbac_with_authorization_mode_rbac(tmp_path):
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesim",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig",
            str(kc),
            "--token",
            "admin-secret",
            "--authorization-mode",
            "RBAC",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        admin = config.new_client_from_config(config_file=str(kc))
        core = client.CoreV1Api(admin)
        # the kubeconfig's token is the admin's: system:masters
        assert "default" in {n.metadata.name for n in core.list_namespace().items}
        core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
        minted = core.create_namespaced_service_account_token(
            "robot",
            "default",
            client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[])),
        )
        cfg = client.Configuration()
        cfg.host = url
        cfg.api_key = {"authorization": minted.status.token}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        with client.ApiClient(cfg) as robot:
            with pytest.raises(client.ApiException) as refused:
                client.CoreV1Api(robot).list_namespace()
        assert refused.value.status == 403
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_logs_the_admin_in_with_a_client_certificate(tmp_path):
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kubesim", "--listen", "127.0.0.1:0"),
            *("--kubeconfig", str(kc), "--token", "admin-secret"),
            *("--authorization-mode", "RBAC", "--admin-client-certificate"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the flag implies TLS, as client certificates are only presented over it
        assert proc.stdout.readline().startswith("https://127.0.0.1:")
        user = yaml.safe_load(kc.read_text())["users"][0]["user"]
        assert set(user) == {"client-certificate", "client-key"}
        admin = config.new_client_from_config(config_file=str(kc))
        review = client.AuthenticationV1Api(admin).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
        assert review.status.user_info.username == "kubernetes-admin"
        assert review.status.user_info.groups == ["kubeadm:cluster-admins", "system:authenticated"]
        # kubeadm's binding makes the group cluster-admin
        assert "default" in {
            n.metadata.name for n in client.CoreV1Api(admin).list_namespace().items
        }
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
