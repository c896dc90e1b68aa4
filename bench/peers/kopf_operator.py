"""Peer (a) of bench.e2e_bench: the Foo controller as a kopf operator.

Written the way kopf's documentation writes operators (handlers per event kind, the official
client inside sync handlers, ``patch.status`` for the status): kopf's defaults are kept
(annotations as diff-base and progress storage, k8s Events for handler results), because they
are what a kopf user gets. The Deployment is the one ``controller.builders.new_deployment``
builds, so the three controllers in the benchmark produce the same objects.

- on.create / on.resume of a Foo: create its Deployment (a 409 means it exists: fix replicas);
- on.update of a Foo's spec: patch the Deployment's replicas;
- on.event of a Deployment controlled by a Foo: patch the Foo's status.availableReplicas, so
  the Foo reports the rollout as our controller does (kopf has no lister for another resource;
  the event carries the Deployment).

    kopf run --standalone -A bench/peers/kopf_operator.py    (KUBECONFIG=... in the environment)
"""

from __future__ import annotations

import kopf
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from controller.builders import controller_of, new_deployment

GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"

_api: dict[str, object] = {}


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_) -> None:
    config.load_kube_config()
    api_client = client.ApiClient()
    api_client.user_agent = "kopf-peer"
    _api["apps"] = client.AppsV1Api(api_client)
    _api["custom"] = client.CustomObjectsApi(api_client)


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(body, spec, namespace, **_) -> None:
    apps: client.AppsV1Api = _api["apps"]  # type: ignore[assignment]
    try:
        apps.create_namespaced_deployment(
            namespace, new_deployment(body), field_manager="kopf-peer"
        )
    except ApiException as err:
        if err.status != 409:
            raise
        scale(spec, namespace)


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
def update_fn(spec, namespace, **_) -> None:
    scale(spec, namespace)


def scale(spec, namespace: str) -> None:
    if spec.get("replicas") is None:
        return
    apps: client.AppsV1Api = _api["apps"]  # type: ignore[assignment]
    apps.patch_namespaced_deployment(
        spec["deploymentName"],
        namespace,
        {"spec": {"replicas": spec["replicas"]}},
        field_manager="kopf-peer",
    )


@kopf.on.event("apps", "v1", "deployments")
def deployment_event(type, body, namespace, **_) -> None:  # kopf passes `type` by that name
    if type not in ("ADDED", "MODIFIED", None):  # None: the initial listing
        return
    owner = controller_of(body)
    if (
        owner is None
        or owner.get("kind") != "Foo"
        or not owner.get("apiVersion", "").startswith(GROUP)
    ):
        return
    available = int((body.get("status") or {}).get("availableReplicas") or 0)
    custom: client.CustomObjectsApi = _api["custom"]  # type: ignore[assignment]
    try:
        custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            namespace,
            PLURAL,
            owner["name"],
            {"status": {"availableReplicas": available}},
        )
    except ApiException as err:
        if err.status != 404:
            raise
