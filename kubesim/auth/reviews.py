"""The APIs that ask the authenticator and the authorizer: TokenRequest and the reviews.

Twins, in k8s.io/kubernetes: pkg/registry/core/serviceaccount/storage/token.go (TokenRequest,
the ``serviceaccounts/token`` subresource), pkg/registry/authentication/tokenreview and
selfsubjectreview, pkg/registry/authorization/subjectaccessreview, selfsubjectaccessreview,
localsubjectaccessreview and selfsubjectrulesreview, with the validation of
pkg/apis/authentication/validation and pkg/apis/authorization/validation and the attribute
building of pkg/registry/authorization/util/helpers.go.

None of them is stored: each answers its own body with a status filled in, 201 Created as the
create handler writes it. Each function returns that body.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from kubesim.api import errors
from kubesim.auth.authenticator import Authenticator
from kubesim.auth.authorizer import Authorizer
from kubesim.auth.requestinfo import Attributes
from kubesim.auth.tokens import API_AUDIENCES
from kubesim.auth.user import SYSTEM_PRIVILEGED_GROUP, UserInfo

__all__ = ["AUTHN", "AUTHZ", "Reviews", "TOKEN_REQUEST_DEFAULT_SECONDS"]

AUTHN = "authentication.k8s.io"
AUTHZ = "authorization.k8s.io"
# TokenRequestSpec.expirationSeconds' default (pkg/apis/authentication/v1/defaults.go)
TOKEN_REQUEST_DEFAULT_SECONDS = 3600
_MIN_SECONDS, _MAX_SECONDS = 10 * 60, 1 << 32

ObjectGetter = Callable[[str, str, str, str], "dict | None"]


class RulesResolver(Protocol):
    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[dict], str]: ...


class Reviews:
    """The review endpoints of one kubesim, answering from its authenticator and authorizer."""

    def __init__(
        self,
        authenticator: Authenticator,
        authorizer: Authorizer,
        rules: RulesResolver | None,
        get_object: ObjectGetter,
        open_authorization: bool,
    ) -> None:
        self.authenticator = authenticator  # TokenReview asks it, TokenRequest mints with it
        self.authorizer = authorizer  # the access reviews ask it
        self.rules = rules  # SelfSubjectRulesReview lists these (None: AlwaysAllow)
        self.get_object = get_object  # (group, plural, namespace, name) -> the stored object
        self.open_authorization = open_authorization  # AlwaysAllow: every rule is "*"

    # ---- serviceaccounts/token ---------------------------------------------------------------

    def token_request(self, namespace: str, name: str, body: dict) -> dict:
        """POST .../serviceaccounts/<name>/token: a token for that ServiceAccount."""
        out = _answer(body, "TokenRequest", AUTHN)
        out["metadata"].setdefault("namespace", namespace)
        spec = out["spec"] = dict(out.get("spec") or {})
        seconds = spec.get("expirationSeconds")
        if seconds is None:
            seconds = spec["expirationSeconds"] = TOKEN_REQUEST_DEFAULT_SECONDS
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise errors.bad_request("spec.expirationSeconds: must be an integer")
        causes = []
        if seconds < _MIN_SECONDS:
            causes.append(
                errors.field_invalid(
                    "spec.expirationSeconds",
                    seconds,
                    "may not specify a duration less than 10 minutes",
                )
            )
        if seconds > _MAX_SECONDS:
            causes.append(
                errors.field_invalid(
                    "spec.expirationSeconds",
                    seconds,
                    "may not specify a duration larger than 2^32 seconds",
                )
            )
        if causes:
            raise errors.invalid(AUTHN, "TokenRequest", "", causes)
        sa = self.get_object("", "serviceaccounts", namespace, name)
        if sa is None:
            raise errors.not_found("", "serviceaccounts", name)
        self._check_bound_object(namespace, name, spec.get("boundObjectRef"))
        audiences = list(spec.get("audiences") or API_AUDIENCES)
        spec["audiences"] = audiences
        spec.setdefault("boundObjectRef", None)
        token, expiry = self.authenticator.issuer.mint(sa, seconds, audiences)
        out["status"] = {"token": token, "expirationTimestamp": _rfc3339(expiry)}
        return out

    def _check_bound_object(self, namespace: str, account: str, ref: Any) -> None:
        """The object a token is bound to must exist (token.go's Create): a Pod must run as the
        token's ServiceAccount, and have the uid the reference names, if it names one. The
        token is minted unbound (no pod or secret claims)."""
        if not ref:
            return
        kind, api_version, name = ref.get("kind"), ref.get("apiVersion", ""), ref.get("name", "")
        if api_version == "v1" and kind == "Pod":
            pod = self.get_object("", "pods", namespace, name)
            if pod is None:
                raise errors.not_found("", "pods", name)
            if (pod.get("spec") or {}).get("serviceAccountName") != account:
                raise errors.bad_request(
                    f'cannot bind token for serviceaccount "{account}" to pod running with '
                    "different serviceaccount name."
                )
            uid = pod["metadata"].get("uid", "")
            if ref.get("uid") and ref["uid"] != uid:
                raise errors.conflict(
                    "",
                    "Pod",
                    name,
                    f"the UID in the bound object reference ({ref['uid']}) does not match the "
                    "UID in record. The object might have been deleted and then recreated",
                )
            return
        if api_version == "v1" and kind == "Secret":
            if self.get_object("", "secrets", namespace, name) is None:
                raise errors.not_found("", "secrets", name)
            return
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        gvk = f"{group}/{api_version.rpartition('/')[2]}, Kind={kind}"
        raise errors.bad_request(f"cannot bind token to object of type {gvk}")

    # ---- authentication.k8s.io ----------------------------------------------------------------

    def token_review(self, body: dict) -> dict:
        """TokenReview: who a token is, as the API server's own authenticators say."""
        out = _answer(body, "TokenReview", AUTHN)
        spec = out.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        audiences = list(spec.get("audiences") or ()) or None
        response, error = self.authenticator.authenticate_token(token, audiences)
        status: dict[str, Any] = {}
        if response is not None:
            status["authenticated"] = True
            status["user"] = response.user.to_api()
            status["audiences"] = list(response.audiences)
        else:
            # authenticated: false and the empty audiences are left out (omitempty); the
            # user, a struct, is always there
            status["user"] = {}
            status["error"] = error
        out["status"] = status
        return out

    def self_subject_review(self, user: UserInfo, body: dict) -> dict:
        """SelfSubjectReview: the requester's own user info."""
        out = _answer(body, "SelfSubjectReview", AUTHN)
        out["status"] = {"userInfo": user.to_api()}
        return out

    # ---- authorization.k8s.io -----------------------------------------------------------------

    def subject_access_review(self, body: dict) -> dict:
        """SubjectAccessReview: may spec.user (with spec.groups) do what the spec says?"""
        out = _answer(body, "SubjectAccessReview", AUTHZ)
        spec = out.get("spec") or {}
        causes = _subject_causes(spec)
        causes += _empty_metadata_causes(body, allow_namespace=False)
        if causes:
            raise errors.invalid(AUTHZ, "SubjectAccessReview", "", causes)
        user = UserInfo(
            spec.get("user") or "",
            spec.get("uid") or "",
            tuple(spec.get("groups") or ()),
            {k: tuple(v or ()) for k, v in (spec.get("extra") or {}).items()},
        )
        out["status"] = self._status(_attributes(user, spec))
        return out

    def local_subject_access_review(self, namespace: str, body: dict) -> dict:
        """LocalSubjectAccessReview: a SubjectAccessReview within one namespace."""
        out = _answer(body, "LocalSubjectAccessReview", AUTHZ)
        out["metadata"].setdefault("namespace", namespace)
        spec = out.get("spec") or {}
        causes = _subject_causes(spec)
        causes += _empty_metadata_causes(body, allow_namespace=True)
        attrs = spec.get("resourceAttributes")
        if attrs is not None and (attrs.get("namespace") or "") != namespace:
            causes.append(
                errors.field_invalid(
                    "spec.resourceAttributes.namespace",
                    attrs.get("namespace") or "",
                    "must match metadata.namespace",
                )
            )
        if spec.get("nonResourceAttributes") is not None:
            causes.append(
                errors.field_invalid(
                    "spec.nonResourceAttributes",
                    _go_struct(spec["nonResourceAttributes"]),
                    "disallowed on this kind of request",
                )
            )
        if causes:
            raise errors.invalid(AUTHZ, "LocalSubjectAccessReview", "", causes)
        user = UserInfo(
            spec.get("user") or "", spec.get("uid") or "", tuple(spec.get("groups") or ())
        )
        out["status"] = self._status(_attributes(user, spec))
        return out

    def self_subject_access_review(self, user: UserInfo, body: dict) -> dict:
        """SelfSubjectAccessReview: may the requester do what the spec says?"""
        out = _answer(body, "SelfSubjectAccessReview", AUTHZ)
        spec = out.get("spec") or {}
        causes = _attribute_causes(spec) + _empty_metadata_causes(body, allow_namespace=False)
        if causes:
            raise errors.invalid(AUTHZ, "SelfSubjectAccessReview", "", causes)
        out["status"] = self._status(_attributes(user, spec))
        return out

    def self_subject_rules_review(self, user: UserInfo, body: dict) -> dict:
        """SelfSubjectRulesReview: the rules the requester holds in spec.namespace."""
        out = _answer(body, "SelfSubjectRulesReview", AUTHZ)
        namespace = (out.get("spec") or {}).get("namespace") or ""
        if not namespace:
            raise errors.bad_request("no namespace on request")
        wildcard = self.open_authorization or SYSTEM_PRIVILEGED_GROUP in user.groups
        rules, error = ([], "") if self.rules is None else self.rules.rules_for(user, namespace)
        if wildcard:
            rules = [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
                *rules,
            ]
        status: dict[str, Any] = {
            "resourceRules": [
                {
                    k: list(r[k])
                    for k in ("verbs", "apiGroups", "resources", "resourceNames")
                    if r.get(k)
                }
                for r in rules
                if r.get("resources")
            ],
            "nonResourceRules": [
                {k: list(r[k]) for k in ("verbs", "nonResourceURLs") if r.get(k)}
                for r in rules
                if r.get("nonResourceURLs")
            ],
            "incomplete": False,
        }
        if error:
            status["evaluationError"] = error
        out["status"] = status
        return out

    def _status(self, attrs: Attributes) -> dict:
        """SubjectAccessReviewStatus: allowed always written, the rest when set."""
        decision = self.authorizer.authorize(attrs)
        status: dict[str, Any] = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
        if decision.error:
            status["evaluationError"] = decision.error
        return status


def _answer(body: dict, kind: str, group: str) -> dict:
    """The review object to fill in: the body as sent, with its kind, apiVersion and a
    metadata that carries creationTimestamp: null, as an unstored object's does."""
    given = copy.deepcopy(body) if isinstance(body, dict) else {}
    meta = dict(given.pop("metadata", None) or {})
    meta.setdefault("creationTimestamp", None)
    given.pop("kind", None)
    given.pop("apiVersion", None)
    # Go's field order: kind, apiVersion, metadata, spec, status
    return {"kind": kind, "apiVersion": f"{group}/v1", "metadata": meta, **given}


def _attribute_causes(spec: dict) -> list[dict]:
    """ValidateSubjectAccessReviewSpec's attribute rules: exactly one kind of attributes."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        return [
            errors.field_invalid(
                "spec.nonResourceAttributes",
                _go_struct(non_resource),
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if resource is None and non_resource is None:
        return [
            errors.field_invalid(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def _subject_causes(spec: dict) -> list[dict]:
    """ValidateSubjectAccessReviewSpec, as the two reviews that name a subject share it: the
    attribute rules, then a user or a group."""
    causes = _attribute_causes(spec)
    if not spec.get("user") and not spec.get("groups"):
        causes.append(
            errors.field_invalid(
                "spec.user",
                spec.get("user") or "",
                "at least one of user or group must be specified",
            )
        )
    return causes


def _empty_metadata_causes(body: dict, allow_namespace: bool) -> list[dict]:
    """The reviews' metadata must be empty (managedFields and, for the local review, the
    namespace aside)."""
    meta = {
        k: v
        for k, v in (body.get("metadata") or {}).items()
        if v not in (None, "", {}, [])
        and k not in ("managedFields", "creationTimestamp")
        and not (allow_namespace and k == "namespace")
    }
    if not meta:
        return []
    detail = "must be empty except for namespace" if allow_namespace else "must be empty"
    return [errors.field_invalid("metadata", _go_struct(meta), detail)]


def _go_struct(value: Any) -> errors.GoStringer:
    """A struct value in a field error (Go prints it with %#v; kubesim shows its JSON)."""
    return errors.GoStringer(json.dumps(value, separators=(",", ":"), sort_keys=True))


def _attributes(user: UserInfo, spec: dict) -> Attributes:
    """AuthorizationAttributesFrom: the request a review's spec describes."""
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(
            user,
            resource.get("verb") or "",
            True,
            namespace=resource.get("namespace") or "",
            api_group=resource.get("group") or "",
            # an empty version matches every version
            api_version=resource.get("version") or "*",
            resource=resource.get("resource") or "",
            subresource=resource.get("subresource") or "",
            name=resource.get("name") or "",
        )
    non_resource = spec.get("nonResourceAttributes") or {}
    return Attributes(
        user, non_resource.get("verb") or "", False, path=non_resource.get("path") or ""
    )


def _rfc3339(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
