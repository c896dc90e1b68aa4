"""The workload chain of ``KubeSim(deployment_controller="pods")``, with and without the
simulated node: Deployment -> ReplicaSets -> Pods, observed through the official client.

The steps, names, labels, owner references, Events, status and conditions are upstream's
deployment and ReplicaSet controllers'; the node binds and runs Pods as KWOK does.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from kubernetes import client

from kubesim import KubeSim
from kubesim.controllers.kwok import SIMULATED_NODE
from kubesim.protobuf import CONTENT_TYPE, decode, encode
from tests.helpers import wait_for

pytestmark = pytest.mark.kubesim(
    crds=[], deployment_controller="pods", simulated_node=True, deployment_status_delay=0.02
)


def deployment(name: str, replicas: int, image: str = "nginx:1.25", **strategy) -> dict:
    labels = {"app": name}
    spec: dict = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }
    if strategy:
        spec["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def plain(sim: KubeSim, obj) -> dict:
    return sim.api_client.sanitize_for_serialization(obj)


def apis(sim: KubeSim) -> tuple[client.AppsV1Api, client.CoreV1Api]:
    return client.AppsV1Api(sim.api_client), client.CoreV1Api(sim.api_client)


def available(sim: KubeSim, name: str, replicas: int) -> dict:
    """Wait until the Deployment's rollout of its current spec is complete; its status."""
    apps, _ = apis(sim)

    def done() -> dict | None:
        d = plain(sim, apps.read_namespaced_deployment_status(name, "default"))
        status = d["status"]
        conditions = {c["type"]: c["reason"] for c in status.get("conditions") or []}
        complete = (
            # the controller has seen the latest spec (not a completed rollout of an older one)
            status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("availableReplicas") == replicas
            and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas
            and conditions.get("Progressing") == "NewReplicaSetAvailable"
        )
        return status if complete else None

    return wait_for(done, message=f"deployment {name} available with {replicas} replicas")


def scaling_events(core: client.CoreV1Api, name: str) -> list[str]:
    events = core.list_namespaced_event(
        "default", field_selector=f"involvedObject.name={name},reason=ScalingReplicaSet"
    ).items
    return [e.message for e in sorted(events, key=lambda e: e.metadata.resource_version)]


def test_a_deployment_owns_a_replica_set_that_owns_running_pods(sim):
    apps, core = apis(sim)
    d = apps.create_namespaced_deployment("default", deployment("web", 3))
    status = available(sim, "web", 3)
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "terminatingReplicas": 0,
    }
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Available", "True", "MinimumReplicasAvailable"),
        ("Progressing", "True", "NewReplicaSetAvailable"),
    ]
    [rs] = apps.list_namespaced_replica_set("default").items
    pod_hash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{pod_hash}"
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": pod_hash}
    [ref] = rs.metadata.owner_references
    assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "Deployment",
        "web",
        d.metadata.uid,
        True,
        True,
    )
    assert rs.metadata.annotations == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
    }
    written = apps.read_namespaced_deployment("web", "default")
    assert written.metadata.annotations == {"deployment.kubernetes.io/revision": "1"}
    assert written.metadata.generation == 1  # the annotation came with a status write
    pods = core.list_namespaced_pod("default", label_selector=f"pod-template-hash={pod_hash}")
    assert len(pods.items) == 3
    for p in pods.items:
        raw = plain(sim, p)
        assert p.metadata.generate_name == f"{rs.metadata.name}-"
        [pref] = p.metadata.owner_references
        assert (pref.kind, pref.uid, pref.controller) == ("ReplicaSet", rs.metadata.uid, True)
        assert p.spec.node_name == SIMULATED_NODE and p.status.phase == "Running"
        assert [c["type"] for c in raw["status"]["conditions"]] == [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        ]
        [cs] = raw["status"]["containerStatuses"]
        assert cs["ready"] and cs["started"] and "startedAt" in cs["state"]["running"]
        assert cs["image"] == "docker.io/library/nginx:1.25"
        assert cs["containerID"].startswith("containerd://") and "@sha256:" in cs["imageID"]
        assert raw["status"]["podIP"] and raw["status"]["hostIP"] and raw["status"]["startTime"]
    assert scaling_events(core, "web") == [f"Scaled up replica set {rs.metadata.name} from 0 to 3"]


def test_a_rolling_update_moves_in_max_surge_and_max_unavailable_steps(sim):
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 4))
    available(sim, "web", 4)
    [old] = apps.list_namespaced_replica_set("default").items
    apps.patch_namespaced_deployment(
        "web",
        "default",
        {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}}},
    )
    status = available(sim, "web", 4)
    assert status["observedGeneration"] == 2
    rss = {rs.metadata.name: rs for rs in apps.list_namespaced_replica_set("default").items}
    [new] = [name for name in rss if name != old.metadata.name]
    assert rss[old.metadata.name].spec.replicas == 0
    assert rss[new].metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    # 25% of 4: one surge and one unavailable pod at a time, every step an Event
    events = scaling_events(core, "web")
    assert events[:3] == [
        f"Scaled up replica set {old.metadata.name} from 0 to 4",
        f"Scaled up replica set {new} from 0 to 1",
        f"Scaled down replica set {old.metadata.name} from 4 to 3",
    ]
    assert events[-1] == f"Scaled down replica set {old.metadata.name} from 1 to 0"
    ups = [e for e in events[1:] if e.startswith(f"Scaled up replica set {new}")]
    downs = [e for e in events if e.startswith(f"Scaled down replica set {old.metadata.name}")]
    assert len(ups) >= 2 and len(downs) >= 2  # more than one step each way
    images = {p.spec.containers[0].image for p in core.list_namespaced_pod("default").items}
    assert images == {"nginx:1.26"}


def test_a_deleted_pod_is_replaced_and_a_scale_down_deletes_pods(sim):
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    available(sim, "web", 2)
    first = core.list_namespaced_pod("default").items[0].metadata.name
    core.delete_namespaced_pod(first, "default")

    def replaced() -> list[str] | None:
        names = [p.metadata.name for p in core.list_namespaced_pod("default").items]
        return names if len(names) == 2 and first not in names else None

    wait_for(replaced, message="the deleted pod replaced")
    available(sim, "web", 2)
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 1}})
    available(sim, "web", 1)
    assert len(core.list_namespaced_pod("default").items) == 1
    [rs] = apps.list_namespaced_replica_set("default").items
    assert scaling_events(core, "web")[-1] == (
        f"Scaled down replica set {rs.metadata.name} from 2 to 1"
    )
    reasons = {
        e.reason
        for e in core.list_namespaced_event(
            "default", field_selector=f"involvedObject.name={rs.metadata.name}"
        ).items
    }
    assert reasons == {"SuccessfulCreate", "SuccessfulDelete"}


def test_deleting_the_deployment_collects_its_replica_sets_and_pods(sim):
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    available(sim, "web", 2)
    apps.delete_namespaced_deployment("web", "default")
    wait_for(
        lambda: (
            not apps.list_namespaced_replica_set("default").items
            and not core.list_namespaced_pod("default").items
        ),
        message="the chain garbage-collected",
    )


def test_the_simulated_node_is_registered_as_a_kubelet_registers_it(sim):
    _, core = apis(sim)
    node = plain(sim, core.read_node(SIMULATED_NODE))
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == SIMULATED_NODE
    status = node["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
        "Ready": "True",
    }
    info = status["nodeInfo"]
    assert info["kubeletVersion"].startswith("v1.36") and info["operatingSystem"] == "linux"
    assert status["allocatable"]["pods"] == "110"


@pytest.mark.kubesim(crds=[], deployment_controller="pods")
def test_without_a_node_pods_stay_pending_and_the_deployment_unavailable(sim):
    apps, core = apis(sim)
    assert core.list_node().items == []
    apps.create_namespaced_deployment("default", deployment("web", 2))

    def settled() -> dict | None:
        status = plain(sim, apps.read_namespaced_deployment_status("web", "default"))["status"]
        conditions = {c["type"] for c in status.get("conditions") or []}
        counted = status.get("replicas") == 2 and status.get("unavailableReplicas") == 2
        return status if counted and conditions == {"Available", "Progressing"} else None

    status = wait_for(settled, message="the Deployment's status counting its two pods")
    assert "availableReplicas" not in status and "readyReplicas" not in status
    assert {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]} == {
        "Available": ("False", "MinimumReplicasUnavailable"),
        "Progressing": ("True", "ReplicaSetUpdated"),
    }
    phases = [p.status.phase for p in core.list_namespaced_pod("default").items]
    assert phases == ["Pending", "Pending"]


def test_the_modes_that_make_status_up_take_no_simulated_node():
    with pytest.raises(ValueError, match="simulated_node"):
        KubeSim(deployment_controller="full", simulated_node=True)


def test_pods_travel_as_protobuf_with_every_field_the_chain_writes(sim):
    """client-go's protobuf clients create and read Pods: a running Pod, with what admission,
    the scheduler and the kubelet wrote, survives the protobuf form unchanged; one created from
    a protobuf body is answered in protobuf."""
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 1))
    available(sim, "web", 1)
    [running] = core.list_namespaced_pod("default").items
    url = f"{sim.url}/api/v1/namespaces/default/pods/{running.metadata.name}"
    with urllib.request.urlopen(url, timeout=10) as answer:
        stored = json.loads(answer.read())  # as stored: the client's models reformat times
    assert stored["status"]["containerStatuses"] and stored["spec"]["volumes"]
    assert decode(encode(stored)) == stored
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "direct"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
    }
    request = urllib.request.Request(
        f"{sim.url}/api/v1/namespaces/default/pods",
        data=encode(body),
        method="POST",
        headers={"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 201
        assert answer.headers["Content-Type"] == CONTENT_TYPE
        created = decode(answer.read())
    assert created["metadata"]["name"] == "direct"
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert created["spec"]["serviceAccountName"] == "default"


def progressing(sim: KubeSim, name: str) -> tuple[str, str] | None:
    apps, _ = apis(sim)
    status = plain(sim, apps.read_namespaced_deployment_status(name, "default"))["status"]
    for c in status.get("conditions") or []:
        if c["type"] == "Progressing":
            return c["status"], c["reason"]
    return None


def test_a_paused_deployment_scales_but_does_not_roll_out_until_resumed(sim):
    apps, _ = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    available(sim, "web", 2)
    apps.patch_namespaced_deployment("web", "default", {"spec": {"paused": True}})
    wait_for(
        lambda: progressing(sim, "web") == ("Unknown", "DeploymentPaused"),
        message="Progressing Unknown while paused",
    )
    apps.patch_namespaced_deployment(
        "web",
        "default",
        {
            "spec": {
                "replicas": 3,
                "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}},
            }
        },
    )
    wait_for(
        lambda: (
            [rs.spec.replicas for rs in apps.list_namespaced_replica_set("default").items] == [3]
        ),
        message="the one ReplicaSet scaled, no new one while paused",
    )
    apps.patch_namespaced_deployment("web", "default", {"spec": {"paused": False}})
    available(sim, "web", 3)
    assert len(apps.list_namespaced_replica_set("default").items) == 2


def test_recreate_scales_the_old_replica_set_to_zero_before_the_new_one_up(sim):
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 2, type="Recreate"))
    available(sim, "web", 2)
    [old] = apps.list_namespaced_replica_set("default").items
    apps.patch_namespaced_deployment(
        "web", "default", {"spec": {"template": {"metadata": {"labels": {"v": "2"}}}}}
    )
    available(sim, "web", 2)
    [new] = [
        rs.metadata.name
        for rs in apps.list_namespaced_replica_set("default").items
        if rs.metadata.name != old.metadata.name
    ]
    assert scaling_events(core, "web") == [
        f"Scaled up replica set {old.metadata.name} from 0 to 2",
        f"Scaled down replica set {old.metadata.name} from 2 to 0",
        f"Scaled up replica set {new} from 0 to 2",
    ]


@pytest.mark.kubesim(crds=[], simulated_node=True)
def test_the_simulated_node_runs_pods_made_by_hand_without_the_chain(sim):
    _, core = apis(sim)
    body = {
        "metadata": {"name": "solo"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    core.create_namespaced_pod("default", body)
    pod = wait_for(
        lambda: (p := core.read_namespaced_pod("solo", "default")).status.phase == "Running" and p,
        message="the hand-made pod running",
    )
    assert pod.spec.node_name == SIMULATED_NODE and pod.status.pod_ip.startswith("10.244.0.")
    ip = pod.status.pod_ip
    core.delete_namespaced_pod("solo", "default")
    core.create_namespaced_pod("default", dict(body, metadata={"name": "again"}))
    again = wait_for(
        lambda: (p := core.read_namespaced_pod("again", "default")).status.phase == "Running" and p,
        message="the second pod running",
    )
    assert again.status.pod_ip == ip  # a deleted pod's address is handed out again


def test_deleting_a_namespace_takes_its_chain_with_it(sim):
    apps, core = apis(sim)
    core.create_namespace({"metadata": {"name": "team"}})
    # made a moment after the namespace, as kube-controller-manager makes it: the official
    # client's 404 (not ours, which wait_for knows) means "not yet"
    wait_for(
        lambda: core.read_namespaced_service_account("default", "team"),
        message="the namespace's default ServiceAccount",
        not_yet=lambda err: isinstance(err, client.ApiException) and err.status == 404,
    )
    labels = {"app": "web"}
    body = deployment("web", 2)
    body["spec"]["selector"] = {"matchLabels": labels}
    apps.create_namespaced_deployment("team", body)
    wait_for(lambda: len(core.list_namespaced_pod("team").items) == 2, message="the team's pods")
    core.delete_namespace("team")

    def gone() -> bool:
        try:
            core.read_namespace("team")
        except client.ApiException as err:
            return err.status == 404
        return False

    wait_for(gone, message="the namespace deleted with its chain")
    assert core.list_pod_for_all_namespaces(field_selector="metadata.namespace=team").items == []


@pytest.mark.kubesim(
    crds=[], deployment_controller="pods", simulated_node=True, deployment_status_delay=60
)
def test_a_bound_pod_is_creating_its_containers_until_the_start_delay_passes(sim):
    apps, core = apis(sim)
    apps.create_namespaced_deployment("default", deployment("web", 1))

    def creating() -> dict | None:
        pods = core.list_namespaced_pod("default").items
        raw = plain(sim, pods[0]) if pods else {}
        return raw if (raw.get("status") or {}).get("containerStatuses") else None

    pod = wait_for(creating, message="the pod admitted by the simulated kubelet")
    status = pod["status"]
    assert status["phase"] == "Pending" and status["hostIP"] and status["startTime"]
    assert "podIP" not in status
    [container] = status["containerStatuses"]
    assert container["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert (container["ready"], container["started"], container["imageID"]) == (False, False, "")
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "PodReadyToStartContainers": "False",
        "Initialized": "True",
        "Ready": "False",
        "ContainersReady": "False",
        "PodScheduled": "True",
    }
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["reason"], ready["message"]) == (
        "ContainersNotReady",
        "containers with unready status: [web]",
    )


@pytest.mark.kubesim(crds=[], simulated_node=True)
def test_a_new_image_restarts_the_container_on_the_simulated_node(sim):
    _, core = apis(sim)
    body = {
        "metadata": {"name": "solo"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    core.create_namespaced_pod("default", body)
    first = wait_for(
        lambda: (
            (p := plain(sim, core.read_namespaced_pod("solo", "default")))["status"].get("phase")
            == "Running"
            and p
        ),
        message="the pod running",
    )
    core.patch_namespaced_pod(
        "solo", "default", {"spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}}
    )

    def restarted() -> dict | None:
        p = plain(sim, core.read_namespaced_pod("solo", "default"))
        [cs] = p["status"]["containerStatuses"]
        return p if cs["image"] == "docker.io/library/busybox:1.37" else None

    pod = wait_for(restarted, message="the container restarted from the new image")
    [before] = first["status"]["containerStatuses"]
    [cs] = pod["status"]["containerStatuses"]
    assert cs["restartCount"] == 1 and cs["containerID"] != before["containerID"]
    assert cs["lastState"]["terminated"]["containerID"] == before["containerID"]
    assert pod["metadata"]["generation"] == pod["status"]["observedGeneration"] == 2
