"""The RBAC authorizer: which PolicyRules bind to a user, and whether one allows a request.

Twin of plugin/pkg/auth/authorizer/rbac/rbac.go (``RBACAuthorizer.Authorize``, ``RuleAllows``),
pkg/apis/rbac/v1/evaluation_helpers.go (``VerbMatches``, ``APIGroupMatches``,
``ResourceMatches``, ``ResourceNameMatches``, ``NonResourceURLMatches``) and
pkg/registry/rbac/validation/rule.go (``DefaultRuleResolver.VisitRulesFor``, ``appliesTo``,
and the binding describers that name the source of an allow in its reason).

Rules are additive and there is no deny: a request is allowed by the first rule that matches,
found through the ClusterRoleBindings, then (for a namespaced request) the RoleBindings of its
namespace. A binding whose role is missing contributes an error, which the reason of a refusal
carries, as the real authorizer's does. ClusterRole aggregation is not done: an
``aggregationRule`` is stored, and the role's own ``rules`` are what counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from kubesim.auth.requestinfo import Attributes
from kubesim.auth.user import UserInfo, matches_service_account

__all__ = [
    "Decision",
    "PolicySource",
    "aggregate",
    "RBACAuthorizer",
    "api_group_matches",
    "non_resource_url_matches",
    "resource_matches",
    "resource_name_matches",
    "rule_allows",
    "verb_matches",
]

# rbacv1.VerbAll, APIGroupAll, ResourceAll, NonResourceAll
_ALL = "*"


@dataclass(frozen=True)
class Decision:
    """An authorizer's answer: Allow, or no opinion (RBAC never denies), with its reason and
    the errors met on the way (evaluationError in an access review)."""

    allowed: bool
    reason: str = ""
    error: str = ""


class PolicySource(Protocol):
    """The RBAC objects the resolver reads (the real one reads them from informers)."""

    def cluster_role_bindings(self) -> Iterable[dict]: ...
    def role_bindings(self, namespace: str) -> Iterable[dict]: ...
    def cluster_role(self, name: str) -> dict | None: ...
    def role(self, namespace: str, name: str) -> dict | None: ...


# ---- one rule against one request: evaluation_helpers.go ---------------------------------------


def verb_matches(rule: dict, verb: str) -> bool:
    return any(v in (_ALL, verb) for v in rule.get("verbs") or ())


def api_group_matches(rule: dict, group: str) -> bool:
    return any(g in (_ALL, group) for g in rule.get("apiGroups") or ())


def resource_matches(rule: dict, combined: str, subresource: str) -> bool:
    """``combined`` is "resource" or "resource/subresource"; "*/sub" matches any resource's
    subresource sub, "*" everything, anything else only exactly."""
    for r in rule.get("resources") or ():
        if r in (_ALL, combined):
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def resource_name_matches(rule: dict, name: str) -> bool:
    """No resourceNames: every name (and requests without one); else only those listed."""
    names = rule.get("resourceNames") or ()
    return not names or name in names


def non_resource_url_matches(rule: dict, path: str) -> bool:
    """ "*" matches every path, a URL ending in "*" a prefix, anything else only exactly."""
    for url in rule.get("nonResourceURLs") or ():
        if url in (_ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(a: Attributes, rule: dict) -> bool:
    """RuleAllows: resource requests match verb, group, resource and name; non-resource
    requests verb and URL."""
    if a.resource_request:
        combined = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        return (
            verb_matches(rule, a.verb)
            and api_group_matches(rule, a.api_group)
            and resource_matches(rule, combined, a.subresource)
            and resource_name_matches(rule, a.name)
        )
    return verb_matches(rule, a.verb) and non_resource_url_matches(rule, a.path)


# ---- which rules apply to a user: rule.go -------------------------------------------------


def _applies_to_user(user: UserInfo, subject: dict, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        # a RoleBinding's ServiceAccount subject without a namespace means the binding's own
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and matches_service_account(sa_namespace, name, user.name)
    return False


def _applying_subject(user: UserInfo, binding: dict, namespace: str) -> dict | None:
    """appliesTo: the first of the binding's subjects that is this user, or None."""
    for subject in binding.get("subjects") or ():
        if _applies_to_user(user, subject, namespace):
            return subject
    return None


def _describe_subject(subject: dict, binding_namespace: str) -> str:
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _describe(binding: dict, subject: dict) -> str:
    """What an allow's reason names: clusterRoleBindingDescriber and roleBindingDescriber."""
    meta, ref = binding.get("metadata") or {}, binding.get("roleRef") or {}
    namespace = meta.get("namespace") or ""
    if namespace:
        return (
            f'RoleBinding "{meta.get("name")}/{namespace}" of {ref.get("kind")} '
            f'"{ref.get("name")}" to {_describe_subject(subject, namespace)}'
        )
    return (
        f'ClusterRoleBinding "{meta.get("name")}" of {ref.get("kind")} "{ref.get("name")}" '
        f"to {_describe_subject(subject, '')}"
    )


Visitor = Callable[[str, "dict | None", str], bool]


class RBACAuthorizer:
    """RBACAuthorizer over a PolicySource; reads the current objects on every request."""

    def __init__(self, policy: PolicySource) -> None:
        self.policy = policy  # where bindings and roles are read

    def role_reference_rules(self, ref: dict, namespace: str) -> tuple[list[dict], str]:
        """GetRoleReferenceRules: the rules a roleRef names, or the lister's error."""
        kind, name = ref.get("kind"), ref.get("name") or ""
        if kind == "Role":
            role = self.policy.role(namespace, name)
            if role is None:
                return [], f'role.rbac.authorization.k8s.io "{name}" not found'
        elif kind == "ClusterRole":
            role = self.policy.cluster_role(name)
            if role is None:
                return [], f'clusterrole.rbac.authorization.k8s.io "{name}" not found'
        else:
            return [], f'unsupported role reference kind: "{kind}"'
        return list(role.get("rules") or ()), ""

    def visit_rules_for(self, user: UserInfo, namespace: str, visitor: Visitor) -> None:
        """Call visitor(source, rule, error) for each rule bound to user in namespace (and
        each resolution error); stop when it returns False."""
        scopes: list[tuple[Iterable[dict], str]] = [(self.policy.cluster_role_bindings(), "")]
        if namespace:
            scopes.append((self.policy.role_bindings(namespace), namespace))
        for bindings, scope in scopes:
            for binding in bindings:
                subject = _applying_subject(user, binding, scope)
                if subject is None:
                    continue
                rules, error = self.role_reference_rules(binding.get("roleRef") or {}, scope)
                if error:
                    if not visitor("", None, error):
                        return
                    continue
                source = _describe(binding, subject)
                for rule in rules:
                    if not visitor(source, rule, ""):
                        return

    def authorize(self, a: Attributes) -> Decision:
        """Allow with "RBAC: allowed by <source>", or no opinion with the errors met."""
        allowed_by: list[str] = []
        errors: list[str] = []

        def visit(source: str, rule: dict | None, error: str) -> bool:
            if rule is not None and rule_allows(a, rule):
                allowed_by.append(source)
                return False
            if error:
                errors.append(error)
            return True

        self.visit_rules_for(a.user, a.namespace, visit)
        if allowed_by:
            return Decision(True, f"RBAC: allowed by {allowed_by[0]}")
        return Decision(False, f"RBAC: {aggregate(errors)}" if errors else "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[dict], str]:
        """RulesFor: every rule bound to user in namespace, and the errors (aggregated)."""
        rules: list[dict] = []
        errors: list[str] = []

        def visit(source: str, rule: dict | None, error: str) -> bool:
            if rule is not None:
                rules.append(rule)
            if error:
                errors.append(error)
            return True

        self.visit_rules_for(user, namespace, visit)
        return rules, aggregate(errors)


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as it is, several in brackets."""
    # the same message twice is shown once, as the aggregate's Error() skips repeats
    unique = list(dict.fromkeys(errors))
    if not unique:
        return ""
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
