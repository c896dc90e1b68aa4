"""Who a set of credentials is, on any kube-apiserver from 1.24 on.

``kubectl auth whoami`` asks the SelfSubjectReview API (``authentication.k8s.io``): v1alpha1
from 1.26 (feature gate), v1beta1 in 1.27, v1 from 1.28. An older server has none of them
(1.24 answers 403 to an identity that RBAC does not allow to create them, whether the resource
exists or not), and a newer one may still forbid it. So ``who_am_i`` asks the versions the
server's discovery lists, newest first, and falls back to the token's own claims: a
ServiceAccount token minted by the TokenRequest API is a JWT whose ``sub`` is
``system:serviceaccount:<namespace>:<name>``, the username the authenticator gives it. The
payload is decoded without verifying the signature: the server verifies it on every request the
token makes, which is what the RBAC scenario's SelfSubjectAccessReviews then exercise.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from client.errors import APIError
from client.rest import Interface

__all__ = ["SELF_SUBJECT_REVIEW_VERSIONS", "Identity", "token_claims", "who_am_i"]

GROUP = "authentication.k8s.io"
# newest first: GA in 1.28, beta in 1.27, alpha (feature gate APISelfSubjectReview) in 1.26
SELF_SUBJECT_REVIEW_VERSIONS = ("v1", "v1beta1", "v1alpha1")


@dataclass(frozen=True)
class Identity:
    username: str
    source: str  # how it was learnt, for messages and the summary
    from_server: bool  # the API server said it (SelfSubjectReview), not the token's claims


def token_claims(token: str) -> dict:
    """The claims of a JWT (its payload), decoded without verifying the signature."""
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError("not a JWT: expected three dot-separated parts")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)  # base64url without its padding
    claims = json.loads(base64.urlsafe_b64decode(payload))
    if not isinstance(claims, dict):
        raise ValueError("not a JWT: the payload is not a JSON object")
    return claims


def service_account_username(claims: dict) -> str:
    """``system:serviceaccount:<ns>:<name>`` from a ServiceAccount token's claims.

    Bound tokens (TokenRequest) carry it as ``sub`` and repeat the parts under
    ``kubernetes.io``; both must agree.
    """
    sub = claims.get("sub") or ""
    if not sub.startswith("system:serviceaccount:"):
        raise ValueError(f"not a ServiceAccount token: sub is {sub!r}")
    bound = claims.get("kubernetes.io") or {}
    if bound:
        ns, name = bound.get("namespace"), (bound.get("serviceaccount") or {}).get("name")
        if sub != f"system:serviceaccount:{ns}:{name}":
            raise ValueError(f"sub {sub!r} disagrees with kubernetes.io claims ({ns}/{name})")
    return sub


def served_versions(client: Interface) -> list[str]:
    """The SelfSubjectReview versions the server's discovery lists, newest first."""
    out = []
    for version in SELF_SUBJECT_REVIEW_VERSIONS:
        try:
            resources = client.request("GET", f"/apis/{GROUP}/{version}").get("resources") or []
        except APIError as err:
            if err.code in (403, 404):
                continue
            raise
        if any(r.get("name") == "selfsubjectreviews" for r in resources):
            out.append(version)
    return out


def who_am_i(client: Interface, token: str) -> Identity:
    """The username the server gives ``client``'s credentials (``token`` is their token)."""
    refused: list[str] = []
    for version in served_versions(client):
        try:
            review = client.request(
                "POST",
                f"/apis/{GROUP}/{version}/selfsubjectreviews",
                body={"apiVersion": f"{GROUP}/{version}", "kind": "SelfSubjectReview"},
            )
        except APIError as err:
            if err.code in (403, 404):
                refused.append(f"{version}: {err.code}")
                continue
            raise
        username = review["status"]["userInfo"]["username"]
        return Identity(username, f"SelfSubjectReview {GROUP}/{version}", True)
    why = f"refused ({', '.join(refused)})" if refused else "not served"
    return Identity(
        service_account_username(token_claims(token)),
        f"the token's claims (SelfSubjectReview {why})",
        False,
    )
