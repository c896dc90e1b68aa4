"""Which webhooks a request calls: rules, scope, namespaceSelector, objectSelector, matchPolicy.

Twin of k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go (``ShouldCallHook``),
predicates/rules/rules.go (``Matcher``: operations, groups, versions, resources with ``*`` and
subresources, scope), predicates/namespace/matcher.go (``MatchNamespaceSelector``,
``GetNamespaceLabels``) and predicates/object/matcher.go (``MatchObjectSelector``), plus
rules.IsExemptAdmissionConfigurationResource and the configuration managers' ordering
(configurations sorted by name, webhooks in the order they are listed).

``matchConditions`` are evaluated apart (conditions.py), on the objects at the version the
webhook is called with.

Deliberate difference: equivalent resources (matchPolicy:
Equivalent) are the other served versions of the same stored resource, which for kubesim is
every version of a CRD's resource and the two Event groups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubesim.api import errors
from kubesim.api.labels import SelectorParseError, selector_from_label_selector
from kubesim.api.resources import ResourceInfo
from kubesim.registry.admission import Attributes

__all__ = [
    "ADMISSIONREGISTRATION",
    "Hook",
    "Invocation",
    "exempt",
    "hooks_of",
    "rule_matches",
    "should_call",
]

ADMISSIONREGISTRATION = "admissionregistration.k8s.io"
# the resources whose writes no webhook sees, so that a broken webhook cannot lock itself in
_EXEMPT = (
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
)


@dataclass(frozen=True)
class Hook:
    """One webhook of a configuration (webhook.WebhookAccessor)."""

    uid: str  # "<configuration>/<webhook>/<n>": what reinvocation remembers it by
    configuration: str  # the configuration's name
    spec: dict  # the webhook as stored (defaulted by the configuration's strategy)

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))


@dataclass(frozen=True)
class Invocation:
    """A webhook to call, and the resource and version to call it with (generic.WebhookInvocation):
    the request's own, or under matchPolicy Equivalent another version that its rules name."""

    hook: Hook
    info: ResourceInfo
    subresource: str


def exempt(attrs: Attributes) -> bool:
    """rules.IsExemptAdmissionConfigurationResource: the webhook configurations themselves."""
    return attrs.info.group == ADMISSIONREGISTRATION and attrs.info.plural in _EXEMPT


def hooks_of(configurations: Iterable[dict]) -> list[Hook]:
    """The webhooks of the configurations, sorted by configuration name, each in its order."""
    out: list[Hook] = []
    for config in sorted(configurations, key=lambda c: c["metadata"]["name"]):
        name = config["metadata"]["name"]
        seen: dict[str, int] = {}
        for spec in config.get("webhooks") or []:
            n = seen.get(spec.get("name", ""), 0)
            seen[spec.get("name", "")] = n + 1
            out.append(Hook(f"{name}/{spec.get('name', '')}/{n}", name, spec))
    return out


def _exact_or_wildcard(items: Iterable[str], requested: str) -> bool:
    return any(item in ("*", requested) for item in items)


def rule_matches(rule: dict, attrs: Attributes, info: ResourceInfo) -> bool:
    """rules.Matcher.Matches for one RuleWithOperations, against the resource ``info``."""
    return (
        _scope_matches(rule.get("scope") or "*", attrs, info)
        and _exact_or_wildcard(rule.get("operations") or (), attrs.operation)
        and _exact_or_wildcard(rule.get("apiGroups") or (), info.group)
        and _exact_or_wildcard(rule.get("apiVersions") or (), info.version)
        and _resource_matches(rule.get("resources") or (), info.plural, attrs.subresource)
    )


def _scope_matches(scope: str, attrs: Attributes, info: ResourceInfo) -> bool:
    """A Namespace is cluster-scoped though its requests name it as their namespace."""
    is_namespace = info.plural == "namespaces" and info.group == ""
    if scope == "Namespaced":
        return not is_namespace and attrs.namespace != ""
    if scope == "Cluster":
        return is_namespace or attrs.namespace == ""
    return True


def _resource_matches(resources: Iterable[str], plural: str, subresource: str) -> bool:
    """``*`` is every resource but no subresource, ``*/*`` everything, ``pods/*`` every
    subresource of pods, ``*/status`` the status of every resource."""
    for entry in resources:
        res, _, sub = entry.partition("/")
        if res in ("*", plural) and sub in ("*", subresource):
            return True
    return False


def _labels_of(obj: Any) -> dict | None:
    if not isinstance(obj, dict):
        return None
    meta = obj.get("metadata")
    return (meta.get("labels") or {}) if isinstance(meta, dict) else {}


def _selector(hook: Hook, field: str) -> Any:
    try:
        return selector_from_label_selector(hook.spec.get(field) or {})
    except (SelectorParseError, ValueError) as e:
        raise errors.internal_error(str(e)) from None


def _namespace_matches(
    hook: Hook, attrs: Attributes, namespace_labels: Callable[[str], dict | None]
) -> tuple[bool, errors.ApiError | None]:
    """MatchNamespaceSelector: a cluster-scoped object (not a Namespace) always matches; a
    Namespace being created or updated is matched by its own labels, anything else by its
    namespace's (a namespace that does not exist is an internal error, as the lister's miss
    followed by the client's 404 is upstream)."""
    is_namespace = attrs.info.plural == "namespaces" and attrs.info.group == ""
    if not attrs.namespace and not is_namespace:
        return True, None
    try:
        selector = _selector(hook, "namespaceSelector")
    except errors.ApiError as e:
        return False, e
    if selector.empty():
        return True, None
    if is_namespace and not attrs.subresource and attrs.operation in ("CREATE", "UPDATE"):
        labels = _labels_of(attrs.obj) or {}
    else:
        found = namespace_labels(attrs.namespace)
        if found is None:
            return False, errors.internal_error(f'namespaces "{attrs.namespace}" not found')
        labels = found
    return selector.matches(labels), None


def _object_matches(hook: Hook, attrs: Attributes) -> tuple[bool, errors.ApiError | None]:
    """MatchObjectSelector: the new object's labels or the old one's (either may be absent)."""
    try:
        selector = _selector(hook, "objectSelector")
    except errors.ApiError as e:
        return False, e
    if selector.empty():
        return True, None
    return any(
        labels is not None and selector.matches(labels)
        for labels in (_labels_of(attrs.obj), _labels_of(attrs.old))
    ), None


def should_call(
    hook: Hook,
    attrs: Attributes,
    namespace_labels: Callable[[str], dict | None],
    equivalents: Callable[[ResourceInfo], list[ResourceInfo]],
) -> Invocation | None:
    """ShouldCallHook: the invocation, None when the webhook does not apply; raises the
    selectors' errors only for a webhook whose rules match."""
    ns_match, ns_err = _namespace_matches(hook, attrs, namespace_labels)
    if not ns_match and ns_err is None:
        return None
    obj_match, obj_err = _object_matches(hook, attrs)
    if not obj_match and obj_err is None:
        return None
    rules = hook.spec.get("rules") or []
    invocation: Invocation | None = None
    for rule in rules:
        if rule_matches(rule, attrs, attrs.info):
            invocation = Invocation(hook, attrs.info, attrs.subresource)
            break
    if invocation is None and hook.spec.get("matchPolicy", "Equivalent") == "Equivalent":
        own = (attrs.info.group, attrs.info.version)
        others = [i for i in equivalents(attrs.info) if (i.group, i.version) != own]
        invocation = next(
            (
                Invocation(hook, other, attrs.subresource)
                for rule in rules
                for other in others
                if rule_matches(rule, attrs, other)
            ),
            None,
        )
    if invocation is None:
        return None
    if ns_err is not None:
        raise ns_err
    if obj_err is not None:
        raise obj_err
    return invocation
