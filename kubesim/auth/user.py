"""Who a request is: the user.Info an authenticator produces and the authorizers read.

Twin of k8s.io/apiserver/pkg/authentication/user (``DefaultInfo`` and the well-known names)
and of k8s.io/apiserver/pkg/authentication/serviceaccount/util.go (how a ServiceAccount's
username and groups are spelled, and ``MatchesUsername``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "ALL_AUTHENTICATED",
    "ALL_UNAUTHENTICATED",
    "ANONYMOUS",
    "CREDENTIAL_ID",
    "SERVICE_ACCOUNTS_GROUP",
    "SYSTEM_PRIVILEGED_GROUP",
    "UserInfo",
    "matches_service_account",
    "service_account_groups",
    "service_account_username",
]

# The group every real cluster allows everything (the privileged-groups authorizer), and the
# one kubesim's admin credentials (its own token, or none) are in.
SYSTEM_PRIVILEGED_GROUP = "system:masters"
# Added to every authenticated user by the authenticated-group adder.
ALL_AUTHENTICATED = "system:authenticated"
# The anonymous user's only group.
ALL_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
# user.CredentialIDKey: the extra key that names the credential a request was authenticated
# with (a ServiceAccount token's JTI, a client certificate's fingerprint).
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
_SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    """user.DefaultInfo: a name, a uid, groups and extra values (read-only once built)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    # authenticator-specific values, e.g. authentication.kubernetes.io/credential-id
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_api(self) -> dict:
        """The authentication.k8s.io/v1 UserInfo of this user (empty fields left out)."""
        out: dict = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


def service_account_username(namespace: str, name: str) -> str:
    """serviceaccount.MakeUsername: ``system:serviceaccount:<namespace>:<name>``."""
    return f"{_SA_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """serviceaccount.MakeGroupNames: every ServiceAccount's group, and its namespace's."""
    return (SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}")


def matches_service_account(namespace: str, name: str, username: str) -> bool:
    """serviceaccount.MatchesUsername: whether ``username`` is that ServiceAccount's."""
    return username == service_account_username(namespace, name)
