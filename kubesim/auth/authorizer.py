"""The authorizer chain and the 403 it answers with.

Twin of pkg/kubeapiserver/authorizer/config.go (``--authorization-mode``: the privileged-groups
authorizer first, then the modes in order), k8s.io/apiserver/pkg/authorization/union (the
first Allow wins; the reasons of those with no opinion are joined), authorizerfactory's
AlwaysAllow and privileged-groups authorizers, and the Forbidden writer of
k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go (``forbiddenMessage``).
"""

from __future__ import annotations

from typing import Protocol

from kubesim.api import errors
from kubesim.auth.rbac import Decision, PolicySource, RBACAuthorizer
from kubesim.auth.requestinfo import Attributes
from kubesim.auth.user import SYSTEM_PRIVILEGED_GROUP

__all__ = [
    "ALWAYS_ALLOW",
    "AUTHORIZATION_MODES",
    "Authorizer",
    "RBAC",
    "forbidden",
    "forbidden_message",
    "new_authorizer",
]

ALWAYS_ALLOW = "AlwaysAllow"
RBAC = "RBAC"
# The values of kube-apiserver's --authorization-mode that kubesim implements.
AUTHORIZATION_MODES = (ALWAYS_ALLOW, RBAC)


class Authorizer(Protocol):
    def authorize(self, a: Attributes) -> Decision: ...


class AlwaysAllow:
    """authorizerfactory.NewAlwaysAllowAuthorizer: every request, no reason."""

    def authorize(self, a: Attributes) -> Decision:
        return Decision(True)


class PrivilegedGroups:
    """authorizerfactory.NewPrivilegedGroups: members of these groups may do anything."""

    def __init__(self, *groups: str) -> None:
        self.groups = frozenset(groups)

    def authorize(self, a: Attributes) -> Decision:
        return Decision(bool(self.groups.intersection(a.user.groups)))


class Union:
    """union.New: the first authorizer that allows decides; otherwise no opinion, with the
    non-empty reasons joined by newlines."""

    def __init__(self, *authorizers: Authorizer) -> None:
        self.authorizers = authorizers

    def authorize(self, a: Attributes) -> Decision:
        reasons, failures = [], []
        for authorizer in self.authorizers:
            decision = authorizer.authorize(a)
            if decision.allowed:
                return decision
            if decision.reason:
                reasons.append(decision.reason)
            if decision.error:
                failures.append(decision.error)
        return Decision(False, "\n".join(reasons), "\n".join(failures))


def new_authorizer(mode: str, policy: PolicySource) -> Authorizer:
    """The chain for one --authorization-mode."""
    if mode == ALWAYS_ALLOW:
        return Union(PrivilegedGroups(SYSTEM_PRIVILEGED_GROUP), AlwaysAllow())
    if mode == RBAC:
        return Union(PrivilegedGroups(SYSTEM_PRIVILEGED_GROUP), RBACAuthorizer(policy))
    raise ValueError(f"unknown authorization mode {mode!r}: choose from {AUTHORIZATION_MODES}")


# Messages must not look like HTML (responsewriters' sanitizer); quotes are fine.
_SANITIZE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def forbidden_message(a: Attributes) -> str:
    """forbiddenMessage: who cannot do what, where."""
    user = a.user.name
    if not a.resource_request:
        return f'User "{user}" cannot {a.verb} path "{a.path}"'
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    what = f'User "{user}" cannot {a.verb} resource "{resource}" in API group "{a.api_group}"'
    if a.namespace:
        return f'{what} in the namespace "{a.namespace}"'
    return f"{what} at the cluster scope"


def forbidden(a: Attributes, reason: str) -> errors.ApiError:
    """responsewriters.Forbidden: a 403 Status, ``apierrors.NewForbidden`` of the request's
    group-resource and name, the reason (when any) after the message."""
    message = forbidden_message(a).translate(_SANITIZE)
    if reason:
        message = f"{message}: {reason}"
    if not a.resource_request or not a.resource:
        # an empty GroupResource: "forbidden: ..." with empty details, as the real one sends
        body = errors.status(403, "Forbidden", f"forbidden: {message}")
        body["details"] = {}
        body["code"] = body.pop("code")
        return errors.ApiError(403, body)
    qualified = errors.qualified(a.resource, a.api_group)
    subject = f'{qualified} "{a.name}"' if a.name else qualified
    return errors.forbidden(a.api_group, a.resource, a.name, f"{subject} is forbidden: {message}")
