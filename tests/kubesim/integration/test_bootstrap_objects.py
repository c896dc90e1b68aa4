"""The objects a fresh v1.36 control plane has: what clients and e2e frameworks wait for.

kube-apiserver makes the ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``
namespaces and the ``kubernetes`` Service; kube-controller-manager gives every active
namespace a ``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap, and puts
them back when they are deleted or changed (controllers/bootstrap.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from kubesim import KubeSim
from kubesim.controllers.bootstrap import ROOT_CA_DESCRIPTION
from tests.kubesim.integration.test_api import raw

SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}


def _get(sim: KubeSim, path: str) -> dict | None:
    code, _, body = raw(sim, "GET", path)
    return json.loads(body) if code == 200 else None


def _eventually(check: Callable[[], object], timeout: float = 5.0) -> object:
    """Poll ``check`` until it returns something truthy (the controllers' thread is async)."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.01)


def _names(sim: KubeSim, path: str) -> set[str]:
    doc = _get(sim, path)
    assert doc is not None, path
    return {(i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in doc["items"]}


def test_a_fresh_kubesim_has_the_system_namespaces_and_their_objects(sim):
    names = {n for _, n in _names(sim, "/api/v1/namespaces")}
    assert names == SYSTEM_NAMESPACES
    # present at once, before any controller ran: nothing to wait for
    assert _names(sim, "/api/v1/serviceaccounts") == {(n, "default") for n in names}
    assert _names(sim, "/api/v1/configmaps") == {(n, "kube-root-ca.crt") for n in names}
    cm = _get(sim, "/api/v1/namespaces/kube-public/configmaps/kube-root-ca.crt")
    assert cm["metadata"]["annotations"] == {"kubernetes.io/description": ROOT_CA_DESCRIPTION}
    assert cm["data"] == {"ca.crt": ""}  # no TLS: kubesim has no CA
    sa = _get(sim, "/api/v1/namespaces/default/serviceaccounts/default")
    # made with a name only: the controller's entry would own nothing, so there is none
    assert "managedFields" not in sa["metadata"]
    assert [e["manager"] for e in cm["metadata"]["managedFields"]] == ["kube-controller-manager"]


def test_the_kubernetes_service_is_the_bootstrap_controllers(sim):
    svc = _get(sim, "/api/v1/namespaces/default/services/kubernetes")
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    spec = svc["spec"]
    assert spec["ports"] == [
        {"name": "https", "protocol": "TCP", "port": 443, "targetPort": sim.port}
    ]
    assert (spec["type"], spec["clusterIP"], spec["clusterIPs"]) == (
        "ClusterIP",
        "10.96.0.1",
        ["10.96.0.1"],
    )
    assert (spec["sessionAffinity"], spec["ipFamilies"]) == ("None", ["IPv4"])
    assert "selector" not in spec  # its endpoints are the apiserver's, not pods'
    assert [e["manager"] for e in svc["metadata"]["managedFields"]] == ["kube-apiserver"]
    # a restart reconciles it: nothing to change, no write
    rv = svc["metadata"]["resourceVersion"]
    sim.restart()
    svc = _get(sim, "/api/v1/namespaces/default/services/kubernetes")
    assert svc["metadata"]["resourceVersion"] == rv


def test_the_kubernetes_service_is_put_back_when_its_ports_changed(sim):
    path = "/api/v1/namespaces/default/services/kubernetes"
    patch = {"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 1}]}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert raw(sim, "PATCH", path, patch, headers)[0] == 200
    sim.restart()
    assert _get(sim, path)["spec"]["ports"][0]["targetPort"] == sim.port


def test_a_new_namespace_gets_its_service_account_and_root_ca(sim):
    raw(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": "later"}})
    sa = "/api/v1/namespaces/later/serviceaccounts/default"
    cm = "/api/v1/namespaces/later/configmaps/kube-root-ca.crt"
    assert _eventually(lambda: _get(sim, sa) and _get(sim, cm))


def test_deleted_or_changed_defaults_are_put_back(sim):
    sa = "/api/v1/namespaces/default/serviceaccounts/default"
    cm = "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"
    old_uid = _get(sim, sa)["metadata"]["uid"]
    assert raw(sim, "DELETE", sa)[0] == 200
    assert _eventually(lambda: (_get(sim, sa) or {}).get("metadata", {}).get("uid") != old_uid)
    assert _get(sim, sa) is not None
    headers = {"Content-Type": "application/merge-patch+json"}
    patch = {"data": {"ca.crt": "tampered", "extra": "x"}, "metadata": {"annotations": None}}
    assert raw(sim, "PATCH", cm, patch, headers)[0] == 200
    assert _eventually(lambda: _get(sim, cm)["data"] == {"ca.crt": ""})
    assert _get(sim, cm)["metadata"]["annotations"]["kubernetes.io/description"]
    assert raw(sim, "DELETE", cm)[0] == 200
    assert _eventually(lambda: _get(sim, cm))


def test_a_terminating_namespace_gets_nothing_back(sim):
    raw(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": "going"}})
    sa = "/api/v1/namespaces/going/serviceaccounts/default"
    assert _eventually(lambda: _get(sim, sa))
    # a finalizer keeps the namespace Terminating while its content is removed
    cm = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    assert raw(sim, "POST", "/api/v1/namespaces/going/configmaps", cm)[0] == 201
    assert raw(sim, "DELETE", "/api/v1/namespaces/going")[0] == 200
    assert _eventually(lambda: _get(sim, sa) is None)
    assert sim.wait_idle()
    assert _get(sim, sa) is None
    assert _get(sim, "/api/v1/namespaces/going/configmaps/kube-root-ca.crt") is None


def test_without_kube_controller_manager_there_are_none(kubesim_factory):
    sim = kubesim_factory(namespace_defaults=False)
    assert _names(sim, "/api/v1/serviceaccounts") == set()
    assert _names(sim, "/api/v1/configmaps") == set()
    raw(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": "bare"}})
    assert sim.wait_idle()
    assert _names(sim, "/api/v1/namespaces/bare/serviceaccounts") == set()
    # the apiserver's own objects are there all the same
    assert _get(sim, "/api/v1/namespaces/default/services/kubernetes") is not None


def test_with_tls_the_root_ca_is_kubesims_certificate(kubesim_factory):
    sim = kubesim_factory(tls=True)
    pem = Path(sim.ca_file).read_text()
    assert pem.startswith("-----BEGIN CERTIFICATE-----")
    from kubernetes import client

    core = client.CoreV1Api(sim.api_client)
    for ns in SYSTEM_NAMESPACES:
        assert core.read_namespaced_config_map("kube-root-ca.crt", ns).data == {"ca.crt": pem}
