"""Typed names for the decoded JSON the layers pass around.

client-go twins: ``k8s.io/apimachinery/pkg/apis/meta/v1/unstructured`` (``Unstructured``, whose
``Object`` is a ``map[string]interface{}``) and ``meta/v1`` ``Status``, ``StatusDetails`` and
``StatusCause``.

Objects stay plain dicts straight from ``json.loads`` (model classes are slow to decode into
and cannot hold custom resources), so ``Object`` is an alias, not a class: it costs nothing at
run time and says what a ``dict`` is.
``Status`` is a ``TypedDict`` because its fields are fixed by the API and code reads them by
name (``reason``, ``details.causes``, ``details.retryAfterSeconds``).
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Object", "Status", "StatusCause", "StatusDetails"]

Object = dict[str, Any]
"""One decoded API object (or List): the JSON as ``json.loads`` returns it. An object that an
informer has cached is shared and must never be mutated in place."""


class StatusCause(TypedDict, total=False):
    """One reason a request failed (apimachinery metav1 ``StatusCause``)."""

    reason: str  # machine-readable, e.g. "FieldValueInvalid", "ResourceVersionTooLarge"
    message: str  # human-readable
    field: str  # the offending field's path, e.g. "spec.replicas"


class StatusDetails(TypedDict, total=False):
    """What a failed request was about (apimachinery metav1 ``StatusDetails``)."""

    name: str
    group: str
    kind: str
    uid: str
    causes: list[StatusCause]
    retryAfterSeconds: int  # the server asks the client to wait this long before retrying


class Status(TypedDict, total=False):
    """The body of an error answer, and the object of a watch ERROR event.

    apimachinery metav1 ``Status``.
    """

    kind: str  # "Status"
    apiVersion: str  # "v1"
    metadata: dict[str, Any]
    status: str  # "Failure" or "Success"
    message: str
    reason: str  # e.g. "NotFound", "Conflict", "AlreadyExists", "Expired"
    details: StatusDetails
    code: int  # the HTTP status code
