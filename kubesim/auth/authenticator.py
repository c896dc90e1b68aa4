"""Who sent a request: the client certificate, the bearer tokens, anonymous, kubesim's admin.

Twin of pkg/kubeapiserver/authenticator/config.go (``New``: the x509 authenticator first, then
the token authenticators in a union behind the bearer-token request authenticator, the
authenticated-group adder, and anonymous last, which an authenticator's error keeps out),
k8s.io/apiserver/pkg/authentication/request/bearertoken (the header's parsing and its
"invalid bearer token"), token/tokenfile (a static token, kubesim's admin token) and
group/authenticated_group_adder.go. The certificate's user is x509.py's.

kubesim's admin is whoever presents its token (``KubeSim(token=...)``), or, when it has none,
a request without credentials: user ``kubesim-user`` or ``system:admin``, in system:masters,
as a cluster's admin kubeconfig is. With no token set and authorization AlwaysAllow (kubesim's
default), a credential no authenticator recognises is the admin too, so clients that send
some token of their own work against kubesim as they always have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from kubesim.auth.tokens import (
    API_AUDIENCES,
    ServiceAccountGetter,
    TokenIssuer,
    TokenRejected,
    TokenResponse,
)
from kubesim.auth.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    SYSTEM_PRIVILEGED_GROUP,
    UserInfo,
)
from kubesim.auth.x509 import CertificateRejected, PeerCertificate, common_name_user

__all__ = ["ADMIN", "ANONYMOUS_USER", "OPEN_ADMIN", "Authenticator", "Unauthorized"]

# The user of kubesim's admin token, and of no token when kubesim has none.
ADMIN = UserInfo("kubesim-user", "", (SYSTEM_PRIVILEGED_GROUP, ALL_AUTHENTICATED))
OPEN_ADMIN = UserInfo("system:admin", "", (SYSTEM_PRIVILEGED_GROUP, ALL_AUTHENTICATED))
ANONYMOUS_USER = UserInfo(ANONYMOUS, "", (ALL_UNAUTHENTICATED,))
# bearertoken.invalidToken: no token authenticator recognised the token
INVALID_BEARER_TOKEN = "invalid bearer token"


class Unauthorized(Exception):
    """The request carried credentials that do not authenticate (the filter answers 401)."""


@dataclass
class Authenticator:
    """The request authenticator of one kubesim."""

    # the static token of kubesim's admin, or None (replaced while serving: a rotated token)
    admin_token: str | None
    issuer: TokenIssuer  # ServiceAccount tokens
    service_account: ServiceAccountGetter  # reads a ServiceAccount (tokens are checked live)
    # an unrecognised credential is the admin (no token set, authorization AlwaysAllow)
    open: bool = True

    def authenticate_token(
        self, token: str, audiences: Sequence[str] | None = None
    ) -> tuple[TokenResponse | None, str]:
        """The token authenticators in a union, as TokenReview and the bearer filter use
        them: (response, "") or (None, the error)."""
        if self.admin_token is not None and token == self.admin_token:
            # a static token knows no audiences: it is good for the API's own
            # (authenticator.WrapAudienceAgnosticToken), and for nothing else
            granted = tuple(a for a in audiences or API_AUDIENCES if a in API_AUDIENCES)
            if granted:
                return TokenResponse(ADMIN, granted), ""
            return None, INVALID_BEARER_TOKEN
        try:
            response = self.issuer.authenticate(token, audiences, self.service_account)
        except TokenRejected as rejected:
            return None, str(rejected)
        if response is None:
            return None, INVALID_BEARER_TOKEN
        return response, ""

    def authenticate(
        self, authorization: str | None, certificate: PeerCertificate | None = None
    ) -> UserInfo:
        """The user of a request with this Authorization header (None: no header) over a
        connection whose client presented this verified certificate (None: none)."""
        # the union's order: the certificate first; one that names a user wins, and the
        # token is not looked at
        certificate_error = ""
        if certificate is not None:
            try:
                user = common_name_user(certificate)
            except CertificateRejected as rejected:
                user, certificate_error = None, str(rejected)
            if user is not None:
                return _with_authenticated_group(user)
        # bearertoken: the scheme is case-insensitive (the official client's in-cluster loader
        # sends "bearer <token>"); a header that is not a bearer token leaves it anonymous
        parts = (authorization or "").strip().split(" ")
        if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
            if certificate_error:
                # union.NewFailOnError: an authenticator's error is not anonymous
                raise Unauthorized(certificate_error)
            if self.admin_token is None:
                return OPEN_ADMIN
            return ANONYMOUS_USER
        response, error = self.authenticate_token(parts[1])
        if response is not None:
            return response.user
        if (
            self.open
            and self.admin_token is None
            and error == INVALID_BEARER_TOKEN
            and not certificate_error
        ):
            return OPEN_ADMIN
        raise Unauthorized(certificate_error or error)


def _with_authenticated_group(user: UserInfo) -> UserInfo:
    """AuthenticatedGroupAdder: ``system:authenticated`` joins the groups, unless the user is
    anonymous or already names either of the two all-user groups."""
    if user.name == ANONYMOUS or {ALL_AUTHENTICATED, ALL_UNAUTHENTICATED} & set(user.groups):
        return user
    return dataclasses.replace(user, groups=(*user.groups, ALL_AUTHENTICATED))
