"""API errors and the predicates that classify them.

client-go twin: ``k8s.io/apimachinery/pkg/api/errors`` (``StatusError``, ``IsNotFound``,
``IsConflict``, ``IsResourceExpired``, ``FromObject``, ...) and ``k8s.io/apimachinery/pkg/util/net``
(``IsConnectionRefused``).

Two exception types, because a caller must tell them apart: ``APIError`` means the server
answered and said no (a ``Status``), ``TransportError`` means no HTTP answer arrived at all. The
predicates take any exception, so ``except Exception as err: if is_conflict(err): ...`` reads like
its Go twin ``if errors.IsConflict(err)``.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any, cast

from client.objects import Status

__all__ = [
    "APIError",
    "TransportError",
    "api_error_from_status",
    "is_already_exists",
    "is_connection_refused",
    "is_conflict",
    "is_expired_error",
    "is_gone",
    "is_not_found",
    "is_too_large_resource_version_error",
    "is_too_many_requests",
]


class TransportError(OSError):
    """The request did not get an HTTP answer: refused, reset, TLS failure or read timeout
    (what client-go sees as a ``*url.Error`` from its transport)."""


class APIError(Exception):
    """The server answered with a non-2xx status (apimachinery ``StatusError``).

    Attributes mirror the ``Status`` object the server sends, so callers test ``reason`` the way
    client-go's ``errors.IsConflict`` and friends do.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        status: Status | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code  # HTTP status code
        self.reason = reason  # Status.reason (e.g. "Conflict"), else the HTTP reason phrase
        self.message = message  # Status.message, else the (truncated) response text
        self.status = status  # the decoded Status object, when the body was one
        self.retry_after = retry_after  # seconds, from Retry-After or details.retryAfterSeconds

    @classmethod
    def from_response(
        cls,
        code: int,
        phrase: str,
        headers: Mapping[str, str] | http.client.HTTPMessage,
        data: bytes,
    ) -> APIError:
        status: Status | None = None
        try:
            decoded = json.loads(data) if data else None
            if isinstance(decoded, dict) and decoded.get("kind") == "Status":
                status = cast(Status, decoded)
        except ValueError:
            pass
        reason = (status or {}).get("reason") or phrase or str(code)
        message = (status or {}).get("message") or data[:500].decode("utf-8", "replace").strip()
        retry_after: float | None = None
        header = headers.get("Retry-After")
        if header:
            try:
                retry_after = float(header)
            except ValueError:
                retry_after = None  # an HTTP-date; kube-apiserver only ever sends seconds
        if retry_after is None and status:
            seconds = (status.get("details") or {}).get("retryAfterSeconds")
            if seconds:
                retry_after = float(seconds)
        return cls(code, reason, message, status, retry_after)


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 404


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 409 and err.reason != "AlreadyExists"


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 409 and err.reason == "AlreadyExists"


def is_gone(err: BaseException) -> bool:
    """410: the resourceVersion is older than the server's history.

    client-go ``IsResourceExpired`` / ``IsGone``.
    """
    return isinstance(err, APIError) and (err.code == 410 or err.reason in ("Expired", "Gone"))


def is_too_many_requests(err: BaseException) -> bool:
    return isinstance(err, APIError) and err.code == 429


def api_error_from_status(status: Mapping[str, Any] | None) -> APIError:
    """The APIError a watch ERROR event's Status stands for (apimachinery ``FromObject``)."""
    # A copy, and unchecked: the event's object is decoded JSON that claims to be a Status.
    copied = cast(Status, dict(status or {}))
    details = copied.get("details") or {}
    retry = details.get("retryAfterSeconds")
    return APIError(
        int(copied.get("code") or 500),
        copied.get("reason") or "",
        copied.get("message") or "watch error",
        copied,
        float(retry) if retry else None,
    )


def is_expired_error(err: BaseException) -> bool:
    """410 Expired / Gone: the resourceVersion is older than the server's history
    (``IsResourceExpired``)."""
    return is_gone(err)


def is_too_large_resource_version_error(err: BaseException) -> bool:
    """The server has not yet reached the resourceVersion we asked for.

    The cause is ``ResourceVersionTooLarge`` (client-go ``IsTooLargeResourceVersionError``).
    """
    if not isinstance(err, APIError):
        return False
    details = (err.status or {}).get("details") or {}
    for cause in details.get("causes") or []:
        if cause.get("reason") == "ResourceVersionTooLarge":
            return True
        if cause.get("message") == "Too large resource version":
            return True
    return err.code == 504 and "Too large resource version" in (err.message or "")


def is_connection_refused(err: BaseException) -> bool:
    """True for a refused connection anywhere in the error's cause chain
    (apimachinery ``utilnet.IsConnectionRefused``)."""
    seen: set[int] = set()
    stack: list[Any] = [err]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ConnectionRefusedError):
            return True
        if isinstance(e, BaseException) and "connection refused" in str(e).lower():
            return True
        stack.extend(
            [
                getattr(e, "__cause__", None),
                getattr(e, "__context__", None),
                getattr(e, "reason", None),
            ]
        )
    return False
