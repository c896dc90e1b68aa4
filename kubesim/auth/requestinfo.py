"""What a request asks for, in the authorizer's terms: verb, group, resource, namespace, name.

Twin of k8s.io/apiserver/pkg/endpoints/request/requestinfo.go (``RequestInfoFactory``,
``NewRequestInfo``), which the real server runs on every request before authorization, from
the URL and method alone: it knows no resources, so ``/api/v1/namespaces/ns/bogus`` is a
request for resource "bogus" that RBAC judges before routing answers 404. And of
k8s.io/apiserver/pkg/authorization/authorizer (``AttributesRecord``): the request info plus
the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

from kubesim.auth.user import UserInfo

__all__ = ["Attributes", "RequestInfo", "resolve"]

_API_PREFIXES = ("api", "apis")
# Prefixes without a group segment: /api/v1/...
_GROUPLESS_PREFIXES = ("api",)
# /namespaces/<ns>/<x>: these <x> are the Namespace's own subresources, not a resource.
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
# Verbs taken from the first path segment (/watch/..., /proxy/...), the legacy forms.
_SPECIAL_VERBS = ("proxy", "watch")
_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass(frozen=True)
class RequestInfo:
    """request.RequestInfo: a resource request's parts, or a non-resource path and verb."""

    is_resource_request: bool
    path: str
    # get list watch create update patch delete deletecollection (resources); the lowercase
    # HTTP method for non-resource paths
    verb: str
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


@dataclass(frozen=True)
class Attributes:
    """authorizer.AttributesRecord: who asks (user) and what (the request info's fields)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    @classmethod
    def of(cls, user: UserInfo, info: RequestInfo) -> Attributes:
        return cls(
            user,
            info.verb,
            info.is_resource_request,
            info.path,
            info.namespace,
            info.api_group,
            info.api_version,
            info.resource,
            info.subresource,
            info.name,
        )


def resolve(method: str, path: str, query: str = "") -> RequestInfo:
    """NewRequestInfo: the request info of ``method`` on ``path`` (raw query ``query``)."""
    non_resource = RequestInfo(False, path, method.lower())
    # splitPath: the segments between slashes, none for "/"
    trimmed = path.strip("/")
    parts = trimmed.split("/") if trimmed else []
    if len(parts) < 3 or parts[0] not in _API_PREFIXES:
        return non_resource
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix not in _GROUPLESS_PREFIXES:
        # the prefix is consumed: "do we have four parts?"
        if len(parts) < 3:
            return non_resource
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]

    if parts and parts[0] in _SPECIAL_VERBS:
        if len(parts) < 2:
            # "unable to determine kind and namespace from url": the real resolver errors,
            # and the filter answers 500; a non-resource request is as good a refusal here
            return non_resource
        verb, parts = parts[0], parts[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")

    namespace = ""
    if parts and parts[0] == "namespaces":
        if len(parts) > 1:
            namespace = parts[1]
            # a step after the namespace's name that is not one of its subresources is a
            # resource in its own right
            if len(parts) > 2 and parts[2] not in _NAMESPACE_SUBRESOURCES:
                parts = parts[2:]

    # parts: resource/name/subresource/anything/else
    resource = parts[0] if parts else ""
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and verb != "proxy" else ""

    if not name and verb == "get":
        values = parse_qs(query, keep_blank_values=True) if query else {}
        verb = "watch" if _watch(values.get("watch")) else "list"
        exact = _exact_name(values.get("fieldSelector"))
        if exact and _valid_path_segment(exact):
            # a list or watch of one object by field selector is authorized as that name
            name = exact
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(
        True, path, verb, prefix, group, version, namespace, resource, subresource, name
    )


def _watch(values: list[str] | None) -> bool:
    """ListOptions.Watch as the parameter codec decodes it (Go's strconv.ParseBool of the
    first value); a value ParseBool rejects falls back to "anything but false or 0"."""
    if not values:
        return False
    value = values[0]
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return value.lower() not in ("false", "0")


def _exact_name(values: list[str] | None) -> str:
    """fields.Selector.RequiresExactMatch("metadata.name") of the first fieldSelector."""
    if not values:
        return ""
    for term in values[0].split(","):
        key, op, value = term.partition("==")
        if not op:
            key, op, value = term.partition("=")
        if op and not key.endswith("!") and key.strip() == "metadata.name":
            return value.strip()
    return ""


def _valid_path_segment(name: str) -> bool:
    """path.IsValidPathSegmentName: not "." or "..", and no "/" or "%"."""
    return name not in (".", "..") and "/" not in name and "%" not in name
