"""The secure /metrics of a real controller process: HTTPS by default, a token the API server
reviews, and RBAC that decides, as on a cluster with the manifests applied.

tests/runtime/test_metricsserver.py checks the server piece by piece against a fake API server
(the 500s, the caches' TTLs, the certificate rotation); here the process is the one users run,
and kubesim plays the cluster: ServiceAccounts, TokenRequest, TokenReview, SubjectAccessReview
and RBAC (issue 25 item 3). The scrapers are ServiceAccounts, one bound to the manifests'
metrics-reader ClusterRole and one bound to nothing.
"""

from __future__ import annotations

import json

import pytest
import yaml

from client.rest import RESTClient, resource_path
from kubesim import KubeSim
from tests.helpers import ROOT
from tests.integration.controller_process import ControllerProcess

KUBESIM_HAS_TOKENS = hasattr(KubeSim, "token_for")
needs_kubesim_tokens = pytest.mark.skipif(
    not KUBESIM_HAS_TOKENS,
    reason="kubesim has no ServiceAccounts, TokenRequest, TokenReview, SubjectAccessReview or "
    "RBAC yet (issue 25 item 3, merged separately). Remove at merge.",
)

SECURE_ENDPOINTS = (
    "--metrics-bind-address",
    "127.0.0.1:0",
    "--health-probe-bind-address",
    "127.0.0.1:0",
)


def start(sim: KubeSim, tmp_path, *flags: str) -> ControllerProcess:
    """The controller with the CLI's metrics default (HTTPS, reviews), on loopback ports."""
    return ControllerProcess(
        sim.write_kubeconfig(tmp_path / "controller.kubeconfig"),
        *flags,
        endpoints=SECURE_ENDPOINTS,
    )


def test_the_process_serves_metrics_over_https_and_the_probes_plain(sim, tmp_path):
    proc = start(sim, tmp_path)
    try:
        assert proc.wait_log("serving", server="metrics")["secure"] is True
        assert proc.url("metrics").startswith("https://")
        # no token: refused before any review is made
        assert proc.get("metrics", "/metrics") == (401, "Unauthorized\n")
        # the probes: plain HTTP, no token, as the kubelet calls them
        assert proc.url("health-probes").startswith("http://")
        assert proc.get("health-probes", "/healthz") == (200, "ok")
    finally:
        proc.close()


def metrics_rbac() -> list[dict]:
    text = (ROOT / "manifests/base/metrics-rbac.yaml").read_text()
    return [d for d in yaml.safe_load_all(text) if d]


def service_account_token(sim: KubeSim, api: RESTClient, namespace: str, name: str) -> str:
    api.request(
        "POST",
        resource_path("", "v1", "serviceaccounts", namespace),
        body={"metadata": {"name": name}},
    )
    token: str = sim.token_for(namespace, name)  # type: ignore[attr-defined]
    return token


@needs_kubesim_tokens
@pytest.mark.kubesim(authorization_mode="RBAC")
def test_401_without_a_token_403_without_metrics_reader_200_with_it(sim, tmp_path):
    api = RESTClient(sim.new_api_client())
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    for obj in metrics_rbac():
        plural = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}
        api.request("POST", f"{rbac}/{plural[obj['kind']]}", body=obj)
    [reader] = [o for o in metrics_rbac() if o["metadata"]["name"].endswith("-metrics-reader")]
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "monitoring"}})
    prometheus = service_account_token(sim, api, "monitoring", "prometheus")
    nobody = service_account_token(sim, api, "monitoring", "nobody")
    api.request(
        "POST",
        f"{rbac}/clusterrolebindings",
        body={
            "metadata": {"name": "prometheus-metrics-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": reader["metadata"]["name"],
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}
            ],
        },
    )

    proc = start(sim, tmp_path, "-v", "4")
    try:
        assert proc.get("metrics", "/metrics") == (401, "Unauthorized\n")
        assert proc.get("metrics", "/metrics", token="made-up-token-4f2a") == (
            401,
            "Unauthorized\n",
        )
        assert proc.get("metrics", "/metrics", token=nobody) == (
            403,
            "Authorization denied for user system:serviceaccount:monitoring:nobody\n",
        )
        code, body = proc.get("metrics", "/metrics", token=prometheus)
        assert code == 200 and "workqueue_depth" in body
    finally:
        proc.close()
    # the reviews were the API's, made by the controller
    paths = [r.path for r in sim.request_log if r.verb == "create"]
    assert "/apis/authentication.k8s.io/v1/tokenreviews" in paths
    assert "/apis/authorization.k8s.io/v1/subjectaccessreviews" in paths
    # and no token reached its logs, at -v 4
    logs = json.dumps(proc.records)
    for token in (prometheus, nobody, "made-up-token-4f2a"):
        assert token not in logs
