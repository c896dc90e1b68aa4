"""The shapes of the objects the controller reads and writes: a Foo, and what it uses of a
Deployment.

sample-controller twin: ``pkg/apis/samplecontroller/v1alpha1/types.go`` (``Foo``, ``FooSpec``,
``FooStatus``), with the parts of ``k8s.io/api/apps/v1`` and ``metav1`` the controller touches.
Objects stay the plain dicts decoded from the API's JSON (no model classes: nothing is converted
on the way in or out); these ``TypedDict``s only tell the type checker and the reader which keys
exist and what they hold. Every key is optional (``total=False``), as on the wire, where a
server or a user may leave any of them out.
"""

from __future__ import annotations

from typing import Any, TypedDict

from informer.interfaces import IndexedInformer, TypedInformer, TypedLister

__all__ = [
    "DEPLOYMENT_GVR",
    "DEPLOYMENT_NAME_INDEX",
    "FOO_GVR",
    "Condition",
    "Deployment",
    "DeploymentInformer",
    "DeploymentLister",
    "DeploymentSpec",
    "DeploymentStatus",
    "Foo",
    "FooInformer",
    "FooLister",
    "FooSpec",
    "FooStatus",
    "ObjectMeta",
    "OwnerReference",
]


# The resources the controller reads and writes (sample-controller's register.go names the
# group and version; the resource is the CRD's plural).
FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENT_GVR = ("apps", "v1", "deployments")

# The Foo informer's own index: Foos by the Deployment they name, "namespace/deploymentName".
DEPLOYMENT_NAME_INDEX = "byDeploymentName"


class OwnerReference(TypedDict, total=False):
    """apimachinery metav1 ``OwnerReference``: who owns an object, and if it is its controller."""

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    """apimachinery metav1 ``ObjectMeta``, the fields the controller reads or sets."""

    name: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    managedFields: list[dict[str, Any]]


class Condition(TypedDict, total=False):
    """apimachinery metav1 ``Condition``: the Foo's ``Ready`` condition."""

    type: str
    # "True" | "False" | "Unknown"
    status: str
    reason: str
    message: str
    lastTransitionTime: str
    observedGeneration: int


class FooSpec(TypedDict, total=False):
    """sample-controller ``FooSpec``: the Deployment to keep, and its replicas."""

    deploymentName: str
    replicas: int


class FooStatus(TypedDict, total=False):
    """sample-controller ``FooStatus`` (``availableReplicas``), plus ``observedGeneration`` and
    the ``Ready`` condition this port adds."""

    availableReplicas: int
    observedGeneration: int
    conditions: list[Condition]


class Foo(TypedDict, total=False):
    """sample-controller ``Foo`` (samplecontroller.k8s.io/v1alpha1)."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: FooSpec
    status: FooStatus


class DeploymentSpec(TypedDict, total=False):
    """k8s.io/api apps/v1 ``DeploymentSpec``: replicas, and the selector and template new_deployment
    fills in."""

    replicas: int
    selector: dict[str, Any]
    template: dict[str, Any]


class DeploymentStatus(TypedDict, total=False):
    """k8s.io/api apps/v1 ``DeploymentStatus``: the counts the Foo's status reports."""

    replicas: int
    updatedReplicas: int
    readyReplicas: int
    availableReplicas: int
    observedGeneration: int


class Deployment(TypedDict, total=False):
    """k8s.io/api apps/v1 ``Deployment``, as far as the controller reads and writes it."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: DeploymentSpec
    status: DeploymentStatus


# What the controller takes, by type: the generated ``informers.FooInformer`` and
# ``appsinformers.DeploymentInformer`` of sample-controller's NewController, as the generic
# Protocols of ``informer.interfaces``.
FooInformer = IndexedInformer[Foo]
FooLister = TypedLister[Foo]
DeploymentInformer = TypedInformer[Deployment]
DeploymentLister = TypedLister[Deployment]
