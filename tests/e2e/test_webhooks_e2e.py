"""Foo's webhooks registered with a real API server by ``url``, with the CA the controller makes
itself (``--webhook-self-managed-certs``): the same cases as tests/integration/test_webhooks.py,
a defaulted deploymentName, two denials, the CRD's immutability rule, and the controller gone
under failurePolicy Fail and Ignore.

The API server must reach the controller, which runs in this process: on envtest and kubesim it
is 127.0.0.1. Against a cluster (``E2E_KUBECONFIG``) set ``E2E_WEBHOOK_HOST`` to an address of
this machine that the API server can reach (for kind: the Docker network's gateway), or the
test is skipped. The configurations match the test's namespace only, and are deleted at the
end whatever happens, so no other test or tenant ever meets them.
"""

from __future__ import annotations

import base64
import copy
import os
from collections.abc import Iterator

import pytest
import yaml

from client.errors import APIError
from client.rest import resource_path
from controller.foo_controller import FOO_GVR
from tests.e2e.cluster import Cluster, object_path, wait_for
from tests.e2e.conftest import ControllerCredentials
from tests.e2e.controllers import InProcessController
from tests.e2e.envtest import free_port
from tests.helpers import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.e2e_once]  # admission: the same on every cluster

ADMREG = "/apis/admissionregistration.k8s.io/v1"
COMPONENT = ROOT / "manifests/components"
DENIED = 'admission webhook "vfoo.samplecontroller.k8s.io" denied the request: '


def webhook_host(cluster: Cluster) -> str:
    host = os.environ.get("E2E_WEBHOOK_HOST", "")
    if not host and cluster.target == "kubeconfig":
        pytest.skip("E2E_WEBHOOK_HOST: an address of this machine the API server can reach")
    return host or "127.0.0.1"


def configurations(namespace: str, url: str) -> list[tuple[str, dict]]:
    """The shipped configurations, by ``url`` and for ``namespace`` only: (resource, body)."""
    out = []
    with open(COMPONENT / "webhooks/webhook-configurations.yaml") as f:
        for doc in yaml.safe_load_all(f):
            doc = copy.deepcopy(doc)
            for hook in doc["webhooks"]:
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {"url": url + path}
                hook["namespaceSelector"] = {
                    "matchLabels": {"kubernetes.io/metadata.name": namespace}
                }
            out.append((doc["kind"].lower() + "s", doc))
    return out


def foo(name: str, deployment_name: str | None = None) -> dict:
    spec: dict = {"replicas": 1}
    if deployment_name:
        spec["deploymentName"] = deployment_name
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": spec,
    }


def refused(call) -> APIError:
    try:
        call()
    except APIError as err:
        return err
    raise AssertionError("the request was admitted")


@pytest.fixture
def registered(cluster: Cluster, namespace: str) -> Iterator[tuple[int, list[tuple[str, dict]]]]:
    """The self-managed mode's RBAC, and both configurations for this namespace; deleted after."""
    with open(COMPONENT / "webhooks-self-managed/rbac.yaml") as f:
        rbac = [doc for doc in yaml.safe_load_all(f) if doc]
    for doc in rbac:
        cluster.apply(doc, remember=False)
    port = free_port()
    configs = configurations(namespace, f"https://{webhook_host(cluster)}:{port}")
    try:
        for resource, body in configs:
            cluster.admin.request("POST", f"{ADMREG}/{resource}", body=body)
        yield port, configs
    finally:
        for resource, body in configs:
            try:
                cluster.admin.request("DELETE", f"{ADMREG}/{resource}/{body['metadata']['name']}")
            except APIError:
                pass
        # the ServiceAccount's extra rights end with the test: the RBAC scenario checks it has
        # exactly the base's
        for doc in reversed(rbac):
            try:
                cluster.admin.request("DELETE", object_path(doc))
            except APIError:
                pass


def test_webhooks_with_the_self_managed_ca(
    cluster: Cluster,
    namespace: str,
    credentials: ControllerCredentials,
    registered: tuple[int, list[tuple[str, dict]]],
):
    port, configs = registered
    host = webhook_host(cluster)
    controller = InProcessController(
        credentials.kubeconfig,
        "--namespace",
        namespace,
        f"--webhook-bind-address={'0.0.0.0' if host != '127.0.0.1' else host}:{port}",
        "--webhook-self-managed-certs",
        f"--webhook-cert-hosts={host}",
    ).start()
    running = True
    try:
        # the process wrote its CA into both configurations, with its ServiceAccount's rights
        def bundles() -> bool:
            for resource, body in configs:
                got = cluster.admin.request(
                    "GET", f"{ADMREG}/{resource}/{body['metadata']['name']}"
                )
                bundle = got["webhooks"][0]["clientConfig"].get("caBundle", "")
                if b"BEGIN CERTIFICATE" not in base64.b64decode(bundle):
                    return False
            return True

        wait_for(bundles, timeout=30, message="the CA in both configurations")
        foos = resource_path(*FOO_GVR, namespace)

        # defaulted
        created = cluster.admin.request("POST", foos, body=foo("defaulted"))
        assert created["spec"]["deploymentName"] == "defaulted"

        # denied: someone else's Deployment (once the webhook's cache has it)
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "taken"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "taken"}},
                "template": {
                    "metadata": {"labels": {"app": "taken"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        }
        cluster.admin.request(
            "POST", resource_path("apps", "v1", "deployments", namespace), body=deployment
        )

        def denial() -> APIError | None:
            try:
                cluster.admin.request("POST", foos, body=foo("intruder", "taken"))
            except APIError as err:
                return err
            cluster.admin.request("DELETE", f"{foos}/intruder")  # the cache was behind: again
            return None

        err = wait_for(denial, timeout=30, message="the webhook to see the Deployment")
        assert err.code == 403
        assert str(err).endswith(
            DENIED + f'spec.deploymentName: Deployment "taken" already exists in namespace '
            f'"{namespace}" and is not controlled by this Foo'
        )

        # denied: another Foo's deploymentName
        err = refused(lambda: cluster.admin.request("POST", foos, body=foo("second", "defaulted")))
        assert err.code == 403
        assert DENIED + 'spec.deploymentName: Foo "defaulted"' in str(err)

        # immutable (the CRD's rule, on any server from v1.25)
        err = refused(
            lambda: cluster.admin.request(
                "PATCH",
                f"{foos}/defaulted",
                body={"spec": {"deploymentName": "renamed"}},
                content_type="application/merge-patch+json",
            )
        )
        assert err.code == 422 and "deploymentName is immutable" in str(err)

        # the controller gone: Fail refuses every write of a Foo ...
        controller.shutdown()
        running = False
        err = refused(lambda: cluster.admin.request("POST", foos, body=foo("down", "down")))
        assert err.code == 500
        assert 'failed calling webhook "mfoo.samplecontroller.k8s.io"' in str(err)
        # ... Ignore lets it through, unchecked
        for resource, body in configs:
            path = f"{ADMREG}/{resource}/{body['metadata']['name']}"
            cluster.admin.request(
                "PATCH",
                path,
                body=[{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}],
                content_type="application/json-patch+json",
            )
        assert cluster.admin.request("POST", foos, body=foo("down", "down"))["metadata"]["uid"]
    finally:
        if running:
            controller.shutdown()
