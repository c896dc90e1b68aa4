"""Impersonation: ``Impersonate-User``, ``-Group``, ``-Uid`` and ``-Extra-*`` headers.

Twin of k8s.io/apiserver/pkg/endpoints/filters/impersonation.go (``WithImpersonation`` and
``buildImpersonationRequests``), which runs after authentication and before authorization:

- each thing asked for is one request, authorized for the *requestor* with the verb
  ``impersonate``: a user (resource ``users``), or a ServiceAccount when the user name is
  ``system:serviceaccount:<ns>:<name>`` (``serviceaccounts`` in that namespace), each group
  (``groups``), each extra value (``userextras`` with the key as subresource, group
  authentication.k8s.io) and the uid (``uids``, authentication.k8s.io). The first refused is a
  403 with the authorizer's usual message (``users "alice" is forbidden: User "bob" cannot
  impersonate resource "users" in API group "" at the cluster scope``);
- groups, extras or a uid without a user is a 500, in plain text (the filter's
  responsewriters.InternalError);
- the request then runs as the impersonated user: a ServiceAccount gets its two groups unless
  groups were given; ``system:authenticated`` is added unless ``system:authenticated`` or
  ``system:unauthenticated`` was asked for (``system:unauthenticated`` for the anonymous user).

Deliberate difference: Go walks the extra headers in map order (random); here in the order
the request has them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from kubesim.api import errors
from kubesim.auth.authorizer import forbidden
from kubesim.auth.rbac import Decision
from kubesim.auth.requestinfo import Attributes
from kubesim.auth.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    UserInfo,
    service_account_groups,
    service_account_username,
)

__all__ = ["IMPERSONATE_HEADERS", "impersonate"]

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"  # compared lower-cased (Go canonicalises header names)
IMPERSONATE_HEADERS = (USER_HEADER, GROUP_HEADER, UID_HEADER)
_AUTHN_GROUP = "authentication.k8s.io"
_SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class _Request:
    """One thing asked for: a v1.ObjectReference in buildImpersonationRequests."""

    kind: str  # ServiceAccount, User, Group, UserExtra, UID
    name: str
    namespace: str = ""
    api_version: str = ""  # authentication.k8s.io/v1 for UserExtra and UID
    field_path: str = ""  # the extra's key

    def go_value(self) -> str:
        """``%v`` of the ObjectReference: its seven fields, space-separated, in braces."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"


def _split_service_account(username: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: (namespace, name), or None for another user name."""
    if not username.startswith(_SA_PREFIX):
        return None
    parts = username[len(_SA_PREFIX) :].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def _requests(headers: Iterable[tuple[str, str]], request_uri: str) -> list[_Request]:
    """buildImpersonationRequests: what the headers ask for, user first, then groups, extras
    and the uid; a 500 when anything but a user is asked for without one."""
    items = list(headers)
    user = next((v for k, v in items if k.lower() == USER_HEADER.lower() and v), "")
    out: list[_Request] = []
    if user:
        sa = _split_service_account(user)
        if sa is not None:
            out.append(_Request("ServiceAccount", sa[1], sa[0]))
        else:
            out.append(_Request("User", user))
    others = False
    for key, value in items:
        if key.lower() == GROUP_HEADER.lower():
            out.append(_Request("Group", value))
            others = True
    for key, value in items:
        if key.lower().startswith(EXTRA_PREFIX):
            extra_key = unquote(key.lower()[len(EXTRA_PREFIX) :])
            out.append(_Request("UserExtra", value, "", f"{_AUTHN_GROUP}/v1", extra_key))
            others = True
    uid = next((v for k, v in items if k.lower() == UID_HEADER.lower() and v), "")
    if uid:
        out.append(_Request("UID", uid, "", f"{_AUTHN_GROUP}/v1"))
        others = True
    if others and not user:
        shown = "[" + " ".join(r.go_value() for r in out) + "]"
        raise errors.plain_internal_error(
            request_uri, f"requested {shown} without impersonating a user"
        )
    return out


def _attributes(requestor: UserInfo, r: _Request) -> Attributes:
    """The AttributesRecord of one impersonation request (verb impersonate)."""
    group = r.api_version.partition("/")[0] if "/" in r.api_version else ""
    version = r.api_version.partition("/")[2]
    resource, sub = {
        "ServiceAccount": ("serviceaccounts", ""),
        "User": ("users", ""),
        "Group": ("groups", ""),
        "UserExtra": ("userextras", r.field_path),
        "UID": ("uids", ""),
    }[r.kind]
    return Attributes(
        requestor,
        "impersonate",
        True,
        namespace=r.namespace,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=sub,
        name=r.name,
    )


def impersonate(
    requestor: UserInfo,
    headers: Iterable[tuple[str, str]],
    authorize: Callable[[Attributes], Decision],
    request_uri: str = "",
) -> UserInfo:
    """The user a request runs as: ``requestor`` without impersonation headers, else the
    impersonated user once ``authorize`` allowed the requestor every part of it (403 on the
    first refused). request_uri: the request's path and query, for the 500's text."""
    asked = _requests(headers, request_uri)
    if not asked:
        return requestor
    groups_given = any(r.kind == "Group" for r in asked)
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for r in asked:
        if r.kind == "ServiceAccount":
            username = service_account_username(r.namespace, r.name)
            if not groups_given:
                groups = list(service_account_groups(r.namespace))
        elif r.kind == "User":
            username = r.name
        elif r.kind == "Group":
            groups.append(r.name)
        elif r.kind == "UserExtra":
            extra.setdefault(r.field_path, []).append(r.name)
        else:
            uid = r.name
        attrs = _attributes(requestor, r)
        decision = authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)
    if username != ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(username, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})
