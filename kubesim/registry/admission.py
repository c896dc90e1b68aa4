"""What the REST verbs hand to admission: one request's attributes, and the two calls.

Twin of k8s.io/apiserver/pkg/admission (interfaces.go's ``Attributes``, ``MutationInterface``
and ``ValidationInterface``; attributes.go's ``NewAttributesRecord``) and of the places the
generic store calls them (``rest.AdmissionToValidateObjectFunc`` in create.go and update.go).
The REST layer owns the order: mutating admission on the decoded (or patched) object before the
kind's strategy runs, validating admission after the strategy's validation, just before the
write. What admission does with these calls lives above the registry (kubesim/admission/): the
verbs see only this Protocol, as the generic store sees only ``admission.Interface``.

Deliberate differences: there is no admission chain of in-tree plugins (NamespaceLifecycle is
the REST layer's own check, the rest are absent), so "reinvocation" involves the webhooks alone;
and the in-process controllers (garbage collector, namespace and CRD finalizers) write without
admission, where upstream's go through the API and so through admission.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesim.api.resources import ResourceInfo

__all__ = ["Admission", "Attributes", "CONNECT", "CREATE", "DELETE", "UPDATE"]

# admission.Operation's values, as AdmissionReview spells them
CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
CONNECT = "CONNECT"


@dataclass
class Attributes:
    """admission.Attributes: what one write asks, at the version the client asked for.

    ``obj`` is the object being written (None on DELETE) and ``old`` the stored one (None on
    CREATE); both are at ``info``'s version. Mutating admission replaces ``obj``.
    """

    info: ResourceInfo  # the resource and version of the request (requestResource)
    operation: str  # CREATE, UPDATE or DELETE
    namespace: str  # "" for cluster-scoped objects; a Namespace's own name for namespaces
    name: str  # "" on a create with generateName (the name is not chosen yet)
    obj: dict | None
    old: dict | None
    subresource: str = ""  # "status", "scale", ... ("" for the object itself)
    dry_run: bool = False
    # CreateOptions, UpdateOptions or DeleteOptions as the handler decoded them
    options: dict[str, Any] = field(default_factory=dict)


class Admission(Protocol):
    """The admission the REST verbs call (admission.MutationInterface + ValidationInterface)."""

    def mutate(self, attrs: Attributes) -> None:
        """Call the mutating admission on ``attrs.obj`` (replacing it); raise ApiError to deny."""

    def validate(self, attrs: Attributes) -> None:
        """Call the validating admission; raise ApiError to deny."""
