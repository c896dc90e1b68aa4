"""The objects the Foo controller writes, computed from what it read: pure functions, no I/O.

sample-controller twin: ``newDeployment`` at the end of controller.go, and apimachinery's
``metav1.GetControllerOf`` / ``metav1.IsControlledBy``; ``desired_status`` and its ``Ready``
condition have none (upstream's status is ``availableReplicas`` only). They are apart from
``controller.foo_controller`` so that the reconcile reads as decisions and writes, and so that
each can be tested on plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from controller.apis import Condition, Deployment, DeploymentSpec, Foo, FooStatus, OwnerReference
from controller.validation import Problem

__all__ = [
    "FOO_API_VERSION",
    "READY",
    "blocked_before",
    "controller_of",
    "deployment_name_index_func",
    "desired_status",
    "is_controlled_by",
    "keep_transition_times",
    "name_of",
    "new_deployment",
    "status_differs",
]

FOO_API_VERSION = "samplecontroller.k8s.io/v1alpha1"

# The type of the one condition the controller owns on a Foo.
READY = "Ready"


def deployment_name_index_func(obj: Any) -> list[str]:
    """The Foo's index value: ``namespace/spec.deploymentName``, none without a name.

    client-go twin: an ``IndexFunc`` such as ``MetaNamespaceIndexFunc``. It is what lets a
    Deployment event find the Foos that *name* it, where the ownerReference only finds the Foo
    that *controls* it: a Foo blocked by someone else's Deployment is not its owner.
    """
    name = (obj.get("spec") or {}).get("deploymentName")
    if not name:
        return []
    return [f"{(obj.get('metadata') or {}).get('namespace', '')}/{name}"]


def controller_of(obj: Foo | Deployment) -> OwnerReference | None:
    """The ownerReference with controller=true (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Deployment, owner: Foo) -> bool:
    """metav1.IsControlledBy: the controller ownerReference points at this very owner (uid)."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == owner["metadata"].get("uid")


def new_deployment(foo: Foo, extra_labels: Mapping[str, str] | None = None) -> Deployment:
    """The Deployment a Foo asks for (sample-controller's newDeployment). ``extra_labels`` go
    on the Deployment's own metadata only (sharding's bucket label), never on its selector or
    pods: a selector is immutable, and the pods are not ours to sort."""
    labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
    spec: DeploymentSpec = {
        "selector": {"matchLabels": dict(labels)},
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
        },
    }
    replicas = (foo.get("spec") or {}).get("replicas")
    if replicas is not None:
        spec["replicas"] = replicas
    deployment: Deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": foo["spec"]["deploymentName"],
            "namespace": foo["metadata"]["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": FOO_API_VERSION,
                    "kind": "Foo",
                    "name": foo["metadata"]["name"],
                    "uid": foo["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }
    if extra_labels:
        deployment["metadata"]["labels"] = dict(extra_labels)
    return deployment


def desired_status(
    foo: Foo,
    deployment: Deployment | None,
    problem: Problem | None = None,
    blocked: bool = False,
) -> FooStatus:
    """The status a Foo should show, given its Deployment as last seen.

    With a ``problem`` (why nothing can be done), ``Ready`` is False with its reason and
    message, and ``availableReplicas`` is left as it was; ``blocked`` (the Deployment of its
    name is someone else's) removes it: no replica is the Foo's, and none is claimed from the
    other Deployment. Keeps the fields we do not own (anything another writer added) and
    replaces ours.
    """
    status = FooStatus(**(foo.get("status") or {}))
    generation = (foo.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    if problem is not None:
        condition = _condition("False", problem.reason, problem.message, generation)
        if blocked:
            status.pop("availableReplicas", None)
    else:
        available = int(((deployment or {}).get("status") or {}).get("availableReplicas") or 0)
        desired = (foo.get("spec") or {}).get("replicas")
        desired = 1 if desired is None else desired
        status["availableReplicas"] = available
        if available >= desired:
            condition = _condition(
                "True",
                "DeploymentAvailable",
                f"{available}/{desired} replicas available",
                generation,
            )
        else:
            condition = _condition(
                "False",
                "DeploymentNotAvailable",
                f"{available}/{desired} replicas available",
                generation,
            )
    others = [c for c in status.get("conditions") or [] if c.get("type") != READY]
    status["conditions"] = others + [condition]
    return status


def _condition(status: str, reason: str, message: str, generation: int | None) -> Condition:
    cond: Condition = {
        "type": READY,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def keep_transition_times(current: FooStatus, desired: FooStatus) -> FooStatus:
    """lastTransitionTime changes only when a condition's status does (API conventions)."""
    old = {c.get("type"): c for c in current.get("conditions") or []}
    conditions = []
    for cond in desired.get("conditions") or []:
        prev = old.get(cond.get("type"))
        if prev is not None and prev.get("status") == cond.get("status"):
            # a condition another writer made may have no time: it is kept as found
            kept = cast(str, prev.get("lastTransitionTime"))
            cond = {**cond, "lastTransitionTime": kept}
        conditions.append(cond)
    return {**desired, "conditions": conditions}


def blocked_before(foo: Foo, reason: str) -> bool:
    """The Foo's status already says it is not ready for ``reason`` (e.g. blocked by a
    Deployment it does not own)."""
    conditions = (foo.get("status") or {}).get("conditions") or []
    return any(c.get("type") == READY and c.get("reason") == reason for c in conditions)


def status_differs(foo: Foo, status: FooStatus) -> bool:
    """``status`` would change the Foo's (the controller's status write would be made)."""
    current = foo.get("status") or {}
    return current != keep_transition_times(current, status)


def name_of(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` of an object, as its cache key (and the log's ``key``) spells it."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
