"""kubesim as each kind of cluster an e2e suite meets: its deployment controller modes and Nodes.

``KubeSim(deployment_controller=...)``: "full" (one Ready Node, replicas become available),
"no-nodes" (kube-controller-manager without a schedulable node: status written, nothing ever
available, no Node) and "none" (a bare API server: no Deployment status, no Node); and
``garbage_collector=False`` (no kube-controller-manager: dependents of a deleted owner stay).
Everything is observed over HTTP through the official client, as the e2e suite observes it.
"""

from __future__ import annotations

import pytest
from kubernetes import client

from kubesim import KubeSim
from kubesim.controllers.manager import NODE_NAME, deployment_status
from tests.helpers import wait_for


def deployment(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]},
            },
        },
    }


def status_of(apps: client.AppsV1Api, name: str) -> dict:
    raw = apps.api_client.sanitize_for_serialization(
        apps.read_namespaced_deployment_status(name, "default")
    )
    return raw.get("status") or {}


def nodes(sim: KubeSim) -> list[dict]:
    listed = client.CoreV1Api(sim.api_client).list_node()
    return [sim.api_client.sanitize_for_serialization(n) for n in listed.items]


def test_full_mode_registers_a_ready_schedulable_node_and_makes_replicas_available():
    with KubeSim(deployment_controller="full", deployment_status_delay=0.01) as sim:
        [node] = nodes(sim)
        assert node["metadata"]["name"] == NODE_NAME
        assert not node["spec"].get("unschedulable") and not node["spec"].get("taints")
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert [c["status"] for c in ready] == ["True"]
        # a single Node is read, and watched, like any cluster-scoped object
        core = client.CoreV1Api(sim.api_client)
        assert core.read_node(NODE_NAME).metadata.name == NODE_NAME

        apps = client.AppsV1Api(sim.api_client)
        apps.create_namespaced_deployment("default", deployment("web", 3))
        status = wait_for(
            lambda: (s := status_of(apps, "web")).get("availableReplicas") == 3 and s,
            message="the Deployment available",
        )
        assert status == {
            "observedGeneration": 1,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
        }


def test_no_nodes_mode_writes_status_but_never_makes_a_replica_available():
    with KubeSim(deployment_controller="no-nodes") as sim:
        assert nodes(sim) == []
        apps = client.AppsV1Api(sim.api_client)
        apps.create_namespaced_deployment("default", deployment("web", 2))
        wait_for(lambda: status_of(apps, "web").get("observedGeneration") == 1, message="status")
        apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 4}})
        wait_for(lambda: status_of(apps, "web").get("observedGeneration") == 2, message="scaled")
        assert sim.wait_idle(5)
        assert status_of(apps, "web") == {
            "observedGeneration": 2,
            "replicas": 4,
            "updatedReplicas": 4,
            "unavailableReplicas": 4,
        }


def test_none_mode_writes_no_deployment_status_and_has_no_node():
    with KubeSim(deployment_controller="none") as sim:
        assert nodes(sim) == []
        apps = client.AppsV1Api(sim.api_client)
        apps.create_namespaced_deployment("default", deployment("web", 1))
        assert sim.wait_idle(5)
        assert status_of(apps, "web") == {}


def test_the_default_mode_follows_the_status_delay_as_it_always_has():
    with KubeSim() as bare, KubeSim(deployment_status_delay=0.01) as ready:
        assert bare.controllers.deployment_controller == "none"
        assert ready.controllers.deployment_controller == "full"
        assert nodes(bare) == [] and len(nodes(ready)) == 1


@pytest.mark.parametrize(
    "options, message",
    [
        ({"deployment_controller": "some"}, "deployment_controller must be one of"),
        (
            {"deployment_controller": "none", "deployment_status_delay": 1.0},
            "deployment_status_delay needs a deployment controller",
        ),
    ],
)
def test_inconsistent_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        KubeSim(**options)


def test_deployment_status_is_the_one_the_e2e_suite_writes_where_nothing_else_does():
    obj = deployment("web", 0)
    obj["metadata"]["generation"] = 3
    assert deployment_status(obj) == {"observedGeneration": 3}  # zero counts omitted
    obj["spec"]["replicas"] = 2
    assert deployment_status(obj, pods_available=False) == {
        "observedGeneration": 3,
        "replicas": 2,
        "updatedReplicas": 2,
        "unavailableReplicas": 2,
    }


def test_without_a_garbage_collector_dependents_of_a_deleted_owner_stay():
    with KubeSim(garbage_collector=False) as sim:
        apps = client.AppsV1Api(sim.api_client)
        owner = apps.create_namespaced_deployment("default", deployment("owner", 1))
        dependent = deployment("dependent", 1)
        dependent["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "owner",
                "uid": owner.metadata.uid,
            }
        ]
        apps.create_namespaced_deployment("default", dependent)
        apps.delete_namespaced_deployment("owner", "default")
        assert sim.wait_idle(5)
        kept = apps.read_namespaced_deployment("dependent", "default")
        assert kept.metadata.owner_references[0].uid == owner.metadata.uid
