"""API approval of CRDs in the community's protected groups (KEP-1111, ``*.k8s.io``).

Twin of ``GetAPIApprovalState`` and ``IsProtectedCommunityGroup`` in
k8s.io/apiextensions-apiserver/pkg/apihelpers, of ``validateAPIApproval`` in
pkg/apis/apiextensions/validation (what a v1 create or update of such a CRD must carry), and of
``calculateCondition`` in pkg/controller/apiapproval (the ``KubernetesAPIApprovalPolicyConformant``
condition that controller keeps on the CRD's status).

A CRD whose group is ``k8s.io``, ``kubernetes.io`` or ends in ``.k8s.io`` / ``.kubernetes.io``
needs the annotation ``api-approved.kubernetes.io``: a URL (the approving pull request), or a
reason starting with ``unapproved`` for an example API such as this project's Foo. Missing or
anything else: the v1 create is refused with 422. The condition reports the state: True
ApprovedAnnotation, or False UnapprovedAnnotation, MissingAnnotation, InvalidAnnotation.

Deliberate difference: Go's ``url.ParseRequestURI`` is approximated by a scheme and a host
without spaces or control characters.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from kubesim.api import errors

__all__ = [
    "APPROVED",
    "APPROVAL_CONDITION",
    "BYPASSED",
    "INVALID",
    "MISSING",
    "approval_condition",
    "api_approval_state",
    "is_protected_community_group",
    "validate_api_approval",
]

ANNOTATION = "api-approved.kubernetes.io"  # apiextensionsv1.KubeAPIApprovedAnnotation
APPROVAL_CONDITION = "KubernetesAPIApprovalPolicyConformant"
_KEP = "see https://github.com/kubernetes/enhancements/pull/1111"

# APIApprovalState, in apihelpers' iota order
INVALID, APPROVED, BYPASSED, MISSING = "Invalid", "Approved", "Bypassed", "Missing"

# state -> (condition status, reason), calculateCondition's switch
_CONDITIONS = {
    INVALID: ("False", "InvalidAnnotation"),
    MISSING: ("False", "MissingAnnotation"),
    APPROVED: ("True", "ApprovedAnnotation"),
    BYPASSED: ("False", "UnapprovedAnnotation"),
}


def is_protected_community_group(group: str) -> bool:
    """Groups under k8s.io or kubernetes.io, which need an API review."""
    return any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def _is_url(text: str) -> bool:
    """url.ParseRequestURI succeeded and the URL has a scheme and a host."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(parts.scheme) and bool(parts.netloc) and " " not in parts.netloc


def api_approval_state(annotations: dict | None) -> tuple[str, str]:
    """(state, reason) of a CRD's approval annotation, with GetAPIApprovalState's reasons."""
    value = (annotations or {}).get(ANNOTATION, "")
    if not value:
        return MISSING, f'protected groups must have approval annotation "{ANNOTATION}", {_KEP}'
    if value.startswith("unapproved"):
        return BYPASSED, f"not approved: {errors.go_quote(value)}"
    if _is_url(value):
        return APPROVED, f"approved in {value}"
    return INVALID, (
        f'protected groups must have approval annotation "{ANNOTATION}" with either a URL or '
        f'a reason starting with "unapproved", {_KEP}'
    )


def validate_api_approval(new: dict, old: dict | None) -> list[dict]:
    """validateAPIApproval for a v1 request: a protected group needs an approved or
    explicitly unapproved annotation, unless an update leaves the state as it was."""
    if not is_protected_community_group((new.get("spec") or {}).get("group") or ""):
        return []
    state, reason = api_approval_state(new["metadata"].get("annotations"))
    if old is not None and api_approval_state(old["metadata"].get("annotations"))[0] == state:
        return []
    field = f"metadata.annotations[{ANNOTATION}]"
    if state == MISSING:
        return [errors.field_required(field, reason)]
    if state in (APPROVED, BYPASSED):
        return []
    value = new["metadata"]["annotations"][ANNOTATION]
    return [errors.field_invalid(field, value, reason)]


def approval_condition(crd: dict, when: str) -> dict | None:
    """The KubernetesAPIApprovalPolicyConformant condition the apiapproval controller sets on
    a CRD (fields in the Go struct's order, transition time ``when``), or None outside the
    protected groups."""
    if not is_protected_community_group((crd.get("spec") or {}).get("group") or ""):
        return None
    state, reason = api_approval_state(crd["metadata"].get("annotations"))
    status, cond_reason = _CONDITIONS[state]
    return {
        "type": APPROVAL_CONDITION,
        "status": status,
        "lastTransitionTime": when,
        "reason": cond_reason,
        "message": reason,
    }
