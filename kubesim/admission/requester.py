"""Who sent the request being admitted: the userInfo an AdmissionReview carries.

Twin of the user the apiserver's authentication filter puts in the request's context
(``request.UserFrom(ctx)``, which admission.Attributes' GetUserInfo returns). Go passes it in a
context.Context; here a ContextVar holds it, set by the HTTP server around each request, so the
REST layer need not thread it through every verb (kubesim/api/warning.py does the same for
warnings). Writes made in-process (kubesim's bootstrap) have no requester: an empty username.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current", "requested_by"]

_USER: ContextVar[dict | None] = ContextVar("kubesim_requester", default=None)


@contextmanager
def requested_by(user_info: dict) -> Iterator[None]:
    """While the block runs, admission names ``user_info`` (authentication/v1 UserInfo)."""
    token = _USER.set(user_info)
    try:
        yield
    finally:
        _USER.reset(token)


def current() -> dict:
    """The requester's authentication/v1 UserInfo, as CreateV1AdmissionReview fills it."""
    user = _USER.get() or {}
    out: dict = {"username": user.get("username", "")}
    if user.get("uid"):
        out["uid"] = user["uid"]
    if user.get("groups"):
        out["groups"] = list(user["groups"])
    if user.get("extra"):
        out["extra"] = {k: list(v) for k, v in user["extra"].items()}
    return out
