"""Foo's admission webhooks: ``spec.deploymentName`` defaulted, and a Foo refused whose
Deployment would be someone else's.

kubebuilder twin: the ``internal/webhook/v1alpha1/foo_webhook.go`` that ``kubebuilder create
webhook --defaulting --programmatic-validation`` scaffolds (a ``CustomDefaulter`` and a
``CustomValidator`` registered with ``ctrl.NewWebhookManagedBy(mgr).For(&Foo{})``), on the
runtime's webhook server (``runtime.webhook``).

Which rule lives where, and why:

- **defaulting** (here, mutating): a Foo without ``deploymentName`` gets its own name. A CRD
  ``default`` cannot refer to another field, so only a webhook can say "the Foo's name";
- **uniqueness** (here, validating): a Foo is refused whose ``deploymentName`` is an existing
  Deployment not controlled by it, or the ``deploymentName`` of another Foo of the namespace.
  Both are questions about *other* objects, which no CRD rule can ask (CEL sees the object and
  its old self only); the answers come from the controller's informer cache (the Foo indexer's
  ``DEPLOYMENT_NAME_INDEX``, the Deployment lister), so a webhook costs no API request;
- **immutability** (the CRD, ``x-kubernetes-validations`` on ``deploymentName``: ``self ==
  oldSelf``): a rule about the object alone belongs in the schema, where the API server checks
  it with no webhook to call, to be down, or to be bypassed;
- **the controller keeps its own checks** (``ErrResourceExists``, ``InvalidSpec``): a webhook
  can be off (``--webhook-bind-address=0``), bypassed (``failurePolicy: Ignore``, a Foo
  written before it was installed), or beaten by a race (two Foos admitted at once, each
  before the other reached the cache), and a v1.24 API server drops the CRD's rule.

Deliberate differences from a kubebuilder webhook: an UPDATE is refused only when
``deploymentName`` changed (which the CRD rule already refuses on v1.25 and later): a conflict
that was there before (two Foos written while the webhook was off) is a warning, so that the
Foo can still be scaled or cleaned up. A cache that has not synced answers 503 rather than
guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

from controller.apis import DEPLOYMENT_NAME_INDEX, FOO_GVR, DeploymentLister, Foo
from controller.builders import controller_of, is_controlled_by
from controller.foo_controller import Controller
from informer.lister import NotFoundError
from runtime.webhook.admission import (
    Denied,
    Request,
    StatusError,
    Warnings,
    defaulting_handler,
    validating_handler,
)
from runtime.webhook.server import WebhookServer

__all__ = [
    "MUTATE_PATH",
    "VALIDATE_PATH",
    "FooDefaulter",
    "FooValidator",
    "register",
]

# kubebuilder's paths: /mutate-<group with '-' for '.'>-<version>-<kind, lowercase>
_GROUP, _VERSION, _ = FOO_GVR
MUTATE_PATH = f"/mutate-{_GROUP.replace('.', '-')}-{_VERSION}-foo"
VALIDATE_PATH = f"/validate-{_GROUP.replace('.', '-')}-{_VERSION}-foo"

WARNING_NO_REPLICAS = (
    "spec.replicas is not set: the Deployment gets the API server's default of 1 replica"
)


class FooIndex(Protocol):
    """What the validator reads of the Foo informer's indexer (client-go ``cache.Indexer``)."""

    def by_index(self, index_name: str, indexed_value: str) -> Sequence[Foo]: ...


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


class FooDefaulter:
    """``spec.deploymentName`` defaults to the Foo's own name (controller-runtime
    ``admission.CustomDefaulter``)."""

    def default(self, request: Request, obj: dict[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name") or request.name
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            # no spec, or not an object: the schema will say what is wrong with it
            if spec is not None:
                return
            spec = obj["spec"] = {}
        # A generateName create has no name yet (the API server makes it after admission):
        # then there is nothing to default to, and the schema's `required` refuses the Foo.
        if not spec.get("deploymentName") and name:
            spec["deploymentName"] = name


class FooValidator:
    """Refuses a Foo whose Deployment would be someone else's (controller-runtime
    ``admission.CustomValidator``), from the Foo controller's cache."""

    def __init__(
        self, foos: FooIndex, deployments: DeploymentLister, synced: Callable[[], bool]
    ) -> None:
        """``foos``: the Foo informer's indexer, with ``DEPLOYMENT_NAME_INDEX``;
        ``deployments``: the Deployment lister; ``synced``: whether both have synced."""
        self._foos = foos
        self._deployments = deployments
        self._synced = synced

    def _conflict(self, foo: dict[str, Any]) -> str | None:
        """Why ``foo`` cannot have its ``deploymentName``, naming the object in the way."""
        meta = foo.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        deployment_name = _spec(foo).get("deploymentName")
        if not deployment_name or not isinstance(deployment_name, str):
            return None  # the schema's business
        if not self._synced():
            raise StatusError(
                503,
                "ServiceUnavailable",
                "the webhook's cache of Foos and Deployments has not synced yet; retry",
            )
        for other in self._foos.by_index(DEPLOYMENT_NAME_INDEX, f"{namespace}/{deployment_name}"):
            other_name = (other.get("metadata") or {}).get("name")
            if other_name != name:
                return (
                    f'spec.deploymentName: Foo "{other_name}" in namespace "{namespace}" '
                    f'already names Deployment "{deployment_name}"'
                )
        try:
            deployment = self._deployments.get(namespace, deployment_name)
        except NotFoundError:
            return None
        # (a Foo being created has no uid yet: nothing controls its Deployment)
        if "uid" in meta and is_controlled_by(deployment, cast(Foo, foo)):
            return None
        owner = controller_of(deployment)
        by = f' (controlled by {owner.get("kind")} "{owner.get("name")}")' if owner else ""
        return (
            f'spec.deploymentName: Deployment "{deployment_name}" already exists in namespace '
            f'"{namespace}" and is not controlled by this Foo{by}'
        )

    def validate_create(self, request: Request, obj: dict[str, Any]) -> Warnings:
        conflict = self._conflict(obj)
        if conflict is not None:
            raise Denied(conflict)
        return [] if "replicas" in _spec(obj) else [WARNING_NO_REPLICAS]

    def validate_update(
        self, request: Request, old: dict[str, Any], new: dict[str, Any]
    ) -> Warnings:
        conflict = self._conflict(new)
        if conflict is None:
            return []
        if _spec(old).get("deploymentName") != _spec(new).get("deploymentName"):
            raise Denied(conflict)
        # there before this update: say so, and let the Foo be edited
        return [conflict]

    def validate_delete(self, request: Request, obj: dict[str, Any]) -> Warnings:
        return []


def register(server: WebhookServer, controller: Controller) -> None:
    """Foo's two webhooks on ``server`` (``SetupFooWebhookWithManager``)."""
    server.register(MUTATE_PATH, defaulting_handler(FooDefaulter()))
    validator = FooValidator(
        controller.foos_indexer, controller.deployments_lister, controller.has_synced
    )
    server.register(VALIDATE_PATH, validating_handler(validator))
