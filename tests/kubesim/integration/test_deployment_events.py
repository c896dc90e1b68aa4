"""The stand-in deployment controller records ScalingReplicaSet Events, as kube-controller-manager.

On a cluster, ``kubectl get events`` and ``kubectl describe deployment`` show them: Normal,
reason ScalingReplicaSet, source and reportingComponent deployment-controller, message
"Scaled up replica set NAME-HASH from 0 to 2" (pkg/controller/deployment/sync.go; v1.24 said
"Scaled up replica set NAME-HASH to 2").
"""

from __future__ import annotations

import re

import pytest
from kubernetes import client

from tests.helpers import wait_for
from tests.kubesim.integration.test_api import deployment

pytestmark = pytest.mark.kubesim(crds=[], deployment_status_delay=0.01)

RS = r"web-[bcdfghjklmnpqrstvwxz2456789]+"


def scaling_messages(sim) -> list[str]:
    events = client.CoreV1Api(sim.api_client).list_namespaced_event(
        "default", field_selector="reason=ScalingReplicaSet"
    )
    return [e.message for e in sorted(events.items, key=lambda e: e.metadata.name)]


def test_create_scale_and_new_template_record_scaling_events(sim):
    apps = client.AppsV1Api(sim.api_client)
    body = deployment("web")
    body["spec"]["replicas"] = 2
    apps.create_namespaced_deployment("default", body)
    wait_for(lambda: len(scaling_messages(sim)) == 1, message=lambda: scaling_messages(sim))
    (up,) = scaling_messages(sim)
    assert re.fullmatch(f"Scaled up replica set {RS} from 0 to 2", up), up
    rs = up.split()[4]
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    wait_for(lambda: len(scaling_messages(sim)) == 2, message=lambda: scaling_messages(sim))
    assert scaling_messages(sim)[1] == f"Scaled down replica set {rs} from 2 to 1"
    image = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "b:2"}]}}}}
    apps.patch_namespaced_deployment("web", "default", image)
    wait_for(lambda: len(scaling_messages(sim)) == 4, message=lambda: scaling_messages(sim))
    new_up, old_down = scaling_messages(sim)[2:]
    new_rs = new_up.split()[4]
    assert new_rs != rs and re.fullmatch(RS, new_rs)
    assert new_up == f"Scaled up replica set {new_rs} from 0 to 1"
    assert old_down == f"Scaled down replica set {rs} from 1 to 0"


def test_the_event_is_shaped_as_the_recorders(sim):
    apps = client.AppsV1Api(sim.api_client)
    d = apps.create_namespaced_deployment("default", deployment("web"))
    wait_for(lambda: scaling_messages(sim), message="a ScalingReplicaSet event")
    (ev,) = client.CoreV1Api(sim.api_client).list_namespaced_event("default").items
    assert (ev.type, ev.reason, ev.count) == ("Normal", "ScalingReplicaSet", 1)
    assert ev.source.component == "deployment-controller"
    assert (ev.reporting_component, ev.reporting_instance) == ("deployment-controller", "")
    inv = ev.involved_object
    assert (inv.kind, inv.api_version, inv.name, inv.uid) == (
        "Deployment",
        "apps/v1",
        "web",
        d.metadata.uid,
    )
    assert ev.metadata.name.startswith("web.")


@pytest.mark.kubesim(crds=[], deployment_status_delay=0.01, server_version="1.24")
def test_v1_24_says_scaled_to(sim):
    client.AppsV1Api(sim.api_client).create_namespaced_deployment("default", deployment("web"))
    wait_for(lambda: scaling_messages(sim), message="a ScalingReplicaSet event")
    assert re.fullmatch(f"Scaled up replica set {RS} to 1", scaling_messages(sim)[0])


@pytest.mark.kubesim(crds=[])
def test_no_deployment_controller_no_events(sim):
    client.AppsV1Api(sim.api_client).create_namespaced_deployment("default", deployment("web"))
    sim.wait_idle()
    assert scaling_messages(sim) == []
