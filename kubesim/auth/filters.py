"""``Auth``: what the HTTP server asks of authentication and authorization, per request.

Twin of the filters k8s.io/apiserver/pkg/endpoints/filters installs in front of every handler
(``WithAuthentication``: a bad credential is 401 on any path; ``WithRequestInfo`` and
``WithAuthorization``: a request the authorizer does not allow is 403, before routing, so an
unknown resource is 403 too) and of the installer's review and token endpoints. It wires the
authenticator, the authorizer of ``--authorization-mode``, the RBAC objects in storage and the
review APIs for one kubesim.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from kubesim.api import errors
from kubesim.auth import impersonation
from kubesim.auth.authenticator import Authenticator, Unauthorized
from kubesim.auth.authorizer import (
    ALWAYS_ALLOW,
    AUTHORIZATION_MODES,
    RBAC,
    forbidden,
    new_authorizer,
)
from kubesim.auth.rbac import RBACAuthorizer
from kubesim.auth.requestinfo import Attributes, RequestInfo, resolve
from kubesim.auth.reviews import AUTHN, AUTHZ, Reviews
from kubesim.auth.tokens import TokenIssuer
from kubesim.auth.user import UserInfo
from kubesim.auth.x509 import PeerCertificate
from kubesim.storage.store import Storage

__all__ = ["ALWAYS_ALLOW", "AUTHORIZATION_MODES", "RBAC", "Auth", "StoragePolicy"]

_RBAC_GROUP = "rbac.authorization.k8s.io"

# (group, resource, subresource) of each review endpoint: what it answers (POST only)
REVIEW_ENDPOINTS = {
    ("", "serviceaccounts", "token"),
    (AUTHN, "tokenreviews", ""),
    (AUTHN, "selfsubjectreviews", ""),
    (AUTHZ, "subjectaccessreviews", ""),
    (AUTHZ, "selfsubjectaccessreviews", ""),
    (AUTHZ, "localsubjectaccessreviews", ""),
    (AUTHZ, "selfsubjectrulesreviews", ""),
}


class StoragePolicy:
    """The RBAC objects as they are in storage now (the authorizer's informers)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def cluster_role_bindings(self) -> Iterable[dict]:
        return [s.obj for s in self.storage.items((_RBAC_GROUP, "clusterrolebindings"))]

    def role_bindings(self, namespace: str) -> Iterable[dict]:
        return [
            s.obj
            for s in self.storage.items((_RBAC_GROUP, "rolebindings"))
            if s.obj["metadata"].get("namespace") == namespace
        ]

    def cluster_role(self, name: str) -> dict | None:
        stored = self.storage.get((_RBAC_GROUP, "clusterroles"), "", name)
        return stored.obj if stored is not None else None

    def role(self, namespace: str, name: str) -> dict | None:
        stored = self.storage.get((_RBAC_GROUP, "roles"), namespace, name)
        return stored.obj if stored is not None else None


class Auth:
    """Authentication and authorization for one kubesim (see the module docstring)."""

    def __init__(
        self,
        storage: Storage,
        admin_token: str | None = None,
        authorization_mode: str = ALWAYS_ALLOW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if authorization_mode not in AUTHORIZATION_MODES:
            raise ValueError(
                f"authorization_mode must be one of {', '.join(AUTHORIZATION_MODES)} "
                f"(got {authorization_mode!r})"
            )
        self.storage = storage
        self.mode = authorization_mode  # kube-apiserver's --authorization-mode
        self.issuer = TokenIssuer(clock)  # mints and checks ServiceAccount tokens
        self.policy = StoragePolicy(storage)
        self.authenticator = Authenticator(
            admin_token, self.issuer, self._service_account, open=self.mode == ALWAYS_ALLOW
        )
        self.authorizer = new_authorizer(self.mode, self.policy)
        self.reviews = Reviews(
            self.authenticator,
            self.authorizer,
            RBACAuthorizer(self.policy) if self.mode == RBAC else None,
            self._object,
            open_authorization=self.mode == ALWAYS_ALLOW,
        )

    @property
    def enforcing(self) -> bool:
        """Whether requests are authorized (RBAC); AlwaysAllow lets every request through."""
        return self.mode != ALWAYS_ALLOW

    def _object(self, group: str, plural: str, namespace: str, name: str) -> dict | None:
        stored = self.storage.get((group, plural), namespace, name)
        return stored.obj if stored is not None else None

    def _service_account(self, namespace: str, name: str) -> dict | None:
        return self._object("", "serviceaccounts", namespace, name)

    # ---- the filters -------------------------------------------------------------------------

    def authenticate(
        self, authorization: str | None, certificate: PeerCertificate | None = None
    ) -> UserInfo:
        """WithAuthentication: the request's user (from its verified client certificate, then
        its Authorization header), or a 401 Status."""
        try:
            return self.authenticator.authenticate(authorization, certificate)
        except Unauthorized:
            # the reason stays in the server (the real one logs it); the client learns nothing
            raise errors.unauthorized() from None

    def impersonate(
        self, requestor: UserInfo, headers: Iterable[tuple[str, str]], request_uri: str
    ) -> UserInfo:
        """WithImpersonation: the user the request runs as (impersonation.py); every part of
        an impersonation is authorized for the requestor first, whatever the mode (under
        AlwaysAllow everyone may impersonate anyone, as on a real server in that mode)."""
        return impersonation.impersonate(requestor, headers, self.authorizer.authorize, request_uri)

    @staticmethod
    def request_info(method: str, path: str, query: str) -> RequestInfo:
        """WithRequestInfo: what the request asks for, from its method and URL alone."""
        return resolve(method, path, query)

    def authorize(self, user: UserInfo, info: RequestInfo) -> None:
        """WithAuthorization: nothing when allowed, else a 403 Status."""
        if self.enforcing:
            attrs = Attributes.of(user, info)
            decision = self.authorizer.authorize(attrs)
            if not decision.allowed:
                raise forbidden(attrs, decision.reason)

    # ---- the review endpoints ----------------------------------------------------------------

    @staticmethod
    def is_review(group: str, plural: str, sub: str) -> bool:
        """Whether this resource (and subresource) is one the review APIs answer."""
        return (group, plural, sub) in REVIEW_ENDPOINTS

    def review(
        self, user: UserInfo, group: str, plural: str, namespace: str, name: str, body: dict
    ) -> dict:
        """The answer of a review endpoint to a POSTed body (201 Created)."""
        r = self.reviews
        if plural == "serviceaccounts":
            return r.token_request(namespace, name, body)
        if plural == "tokenreviews":
            return r.token_review(body)
        if plural == "selfsubjectreviews":
            return r.self_subject_review(user, body)
        if plural == "subjectaccessreviews":
            return r.subject_access_review(body)
        if plural == "selfsubjectaccessreviews":
            return r.self_subject_access_review(user, body)
        if plural == "localsubjectaccessreviews":
            return r.local_subject_access_review(namespace, body)
        return r.self_subject_rules_review(user, body)
