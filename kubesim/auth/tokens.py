"""ServiceAccount tokens: minted by TokenRequest, checked on every request that carries one.

Twin of pkg/serviceaccount: jwt.go (``JWTTokenGenerator.GenerateToken``, ``jwtTokenAuthenticator
.AuthenticateToken``: issuer, signature, audiences) and claims.go (``Claims``, the validator:
expiry, and the ServiceAccount still existing with the uid the token names). The tokens are
JWTs with the real claims (``iss``, ``sub``, ``aud``, ``exp``, ``iat``, ``nbf``, ``jti`` and
``kubernetes.io``), so a client that reads its token's claims sees what a cluster's would
carry. They are signed with HMAC-SHA256 under a key of this kubesim's own (the real server signs
with RS256 or ES256 under --service-account-signing-key-file): kubesim checks its own tokens
only, and no one else verifies them.

Errors are worded as the real authenticator's; a token that is not a JWT, or not this
issuer's, is not this authenticator's to judge (no opinion).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesim.auth.user import (
    ALL_AUTHENTICATED,
    CREDENTIAL_ID,
    UserInfo,
    service_account_groups,
    service_account_username,
)

__all__ = [
    "API_AUDIENCES",
    "CREDENTIAL_ID",
    "ISSUER",
    "TokenIssuer",
    "TokenRejected",
    "TokenResponse",
]

# --service-account-issuer as kind and kubeadm set it; the API's own audience defaults to it.
ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)

ServiceAccountGetter = Callable[[str, str], "dict | None"]

# How many verified tokens keep their decoded claims (tokencache's size, roughly).
_VERIFIED_CACHE_SIZE = 1024


class TokenRejected(Exception):
    """A token of this issuer that does not authenticate; the message is the real one's."""


@dataclass(frozen=True)
class TokenResponse:
    """authenticator.Response: the user, and the audiences the token is good for here."""

    user: UserInfo
    audiences: tuple[str, ...]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenIssuer:
    """Mints and authenticates one kubesim's ServiceAccount tokens."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._key = os.urandom(32)  # the signing key; lives and dies with this kubesim
        self._kid = _b64(hashlib.sha256(self._key).digest()[:12])  # names the key, not it
        self.clock = clock  # seconds since the epoch; tests move it to expire tokens
        # token -> its claims, once its signature checked out: a request then pays only for the
        # live checks (expiry, the ServiceAccount). Unlike the real token cache, the verdict is
        # not cached, so a deleted ServiceAccount's token is refused at once, not up to 10 s
        # later. Least recently used first.
        self._verified: OrderedDict[str, dict] = OrderedDict()
        self._verified_lock = threading.Lock()  # request threads share the cache

    # ---- GenerateToken -------------------------------------------------------------------------

    def mint(
        self, service_account: dict, expiration_seconds: int, audiences: Sequence[str]
    ) -> tuple[str, int]:
        """A token for the ServiceAccount object; returns (token, expiry in epoch seconds)."""
        meta = service_account["metadata"]
        now = int(self.clock())
        expiry = now + int(expiration_seconds)
        claims = {
            "aud": list(audiences),
            "exp": expiry,
            "iat": now,
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {
                "namespace": meta["namespace"],
                "serviceaccount": {"name": meta["name"], "uid": meta.get("uid", "")},
            },
            "nbf": now,
            "sub": service_account_username(meta["namespace"], meta["name"]),
        }
        header = {"alg": "HS256", "kid": self._kid, "typ": "JWT"}
        signing_input = _b64(_json(header)) + "." + _b64(_json(claims))
        return signing_input + "." + _b64(self._sign(signing_input)), expiry

    def _sign(self, signing_input: str) -> bytes:
        return hmac.new(self._key, signing_input.encode(), hashlib.sha256).digest()

    # ---- AuthenticateToken ---------------------------------------------------------------------

    def authenticate(
        self,
        token: str,
        audiences: Sequence[str] | None,
        service_account: ServiceAccountGetter,
    ) -> TokenResponse | None:
        """The user of a token of ours; None when it is not one (no opinion); TokenRejected
        when it is ours and invalid. ``audiences``: those asked for (None: the API's own)."""
        claims = self._verified_claims(token)
        if claims is None:
            return None

        token_audiences = tuple(_as_list(claims.get("aud"))) or API_AUDIENCES
        requested = tuple(audiences) if audiences else API_AUDIENCES
        granted = tuple(a for a in token_audiences if a in requested)
        if not granted:
            raise TokenRejected(
                f"token audiences {_go_strings(token_audiences)} is invalid for the target "
                f"audiences {_go_strings(requested)}"
            )

        now = self.clock()
        # go-jose's default leeway: one minute either side
        if now - 60 > float(claims.get("exp", 0)):
            raise TokenRejected("service account token has expired")
        if now + 60 < float(claims.get("nbf", 0)):
            raise TokenRejected("service account token is not valid yet")
        bound = claims.get("kubernetes.io") or {}
        namespace = bound.get("namespace") or ""
        ref = bound.get("serviceaccount") or {}
        name, uid = ref.get("name") or "", ref.get("uid") or ""
        sa = service_account(namespace, name)
        if sa is None:
            raise TokenRejected(f'serviceaccounts "{name}" not found')
        if sa["metadata"].get("deletionTimestamp"):
            raise TokenRejected(f"service account {namespace}/{name} has been deleted")
        if sa["metadata"].get("uid") != uid:
            raise TokenRejected(
                f"service account UID ({sa['metadata'].get('uid')}) does not match claim ({uid})"
            )
        user = UserInfo(
            service_account_username(namespace, name),
            uid,
            (*service_account_groups(namespace), ALL_AUTHENTICATED),
            # the token's JTI names it (ServiceAccountTokenJTI, on since 1.30)
            {CREDENTIAL_ID: (f"JTI={claims.get('jti', '')}",)},
        )
        return TokenResponse(user, granted)

    def _verified_claims(self, token: str) -> dict | None:
        """The claims of a token of ours whose signature is good; None when it is not ours;
        TokenRejected when the signature is bad."""
        with self._verified_lock:
            claims = self._verified.get(token)
            if claims is not None:
                self._verified.move_to_end(token)
                return claims
        claims = self._claims_if_ours(token)
        if claims is None:
            return None
        signing_input, _, signature = token.rpartition(".")
        try:
            given = _unb64(signature)
        except (binascii.Error, ValueError):
            given = b""
        if not hmac.compare_digest(given, self._sign(signing_input)):
            raise TokenRejected("go-jose/go-jose: error in cryptographic primitive")
        with self._verified_lock:
            self._verified[token] = claims
            if len(self._verified) > _VERIFIED_CACHE_SIZE:
                self._verified.popitem(last=False)
        return claims

    def _claims_if_ours(self, token: str) -> dict | None:
        """hasCorrectIssuer: the claims of a JWT whose issuer is ours, else None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            claims = json.loads(_unb64(parts[1]))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(claims, dict) or claims.get("iss") != ISSUER:
            return None
        return claims


def _json(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()


def _as_list(value: object) -> list[str]:
    """A JWT's aud: one string or a list of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _go_strings(values: Sequence[str]) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"
