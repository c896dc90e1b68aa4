"""The AdmissionReview a webhook receives, the checks on its answer, and the errors it causes.

Twin of k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go
(``CreateV1AdmissionReview``, ``VerifyAdmissionResponse``), of webhook/errors (``ToStatusErr``,
``NewDryRunUnsupportedErr``) and of k8s.io/apiserver/pkg/util/webhook/error.go
(``ErrCallingWebhook``), whose text the client reads inside a 500 ``Internal error occurred``.

Deliberate difference: ``auditAnnotations`` are read and dropped (kubesim keeps no audit log).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from kubesim.admission import requester
from kubesim.admission.matching import Invocation
from kubesim.api import errors
from kubesim.registry.admission import Attributes

__all__ = [
    "BadResponse",
    "Response",
    "calling_error",
    "denied",
    "dry_run_unsupported",
    "new_review",
    "verify_response",
]

_API_VERSION = "admission.k8s.io/v1"
_V1_GVK = "admission.k8s.io/v1, Kind=AdmissionReview"


class BadResponse(Exception):
    """An answer VerifyAdmissionResponse refuses (the reason, as its error text)."""


@dataclass
class Response:
    """request.AdmissionResponse: what a verified answer says."""

    allowed: bool
    patch: list | None = None  # the decoded JSON patch of a mutating webhook
    result: dict | None = None  # the Status of a denial
    warnings: list[str] = field(default_factory=list)


def new_review(
    invocation: Invocation, attrs: Attributes, obj: dict | None, old: dict | None
) -> tuple[str, dict]:
    """(uid, the v1 AdmissionReview) for one call; obj and old at the invocation's version."""
    uid = str(uuid.uuid4())
    info, request_info = invocation.info, attrs.info
    request: dict[str, Any] = {
        "uid": uid,
        "kind": {"group": info.group, "version": info.version, "kind": info.kind},
        "resource": {"group": info.group, "version": info.version, "resource": info.plural},
        "requestKind": {
            "group": request_info.group,
            "version": request_info.version,
            "kind": request_info.kind,
        },
        "requestResource": {
            "group": request_info.group,
            "version": request_info.version,
            "resource": request_info.plural,
        },
        "name": attrs.name,
        "namespace": attrs.namespace,
        "operation": attrs.operation,
        "userInfo": requester.current(),
        "object": obj,
        "oldObject": old,
        "dryRun": attrs.dry_run,
        "options": attrs.options or None,
    }
    # name, namespace and the subresources carry omitempty; object, oldObject and options
    # are RawExtensions, written as null when empty
    if invocation.subresource:
        request["subResource"] = invocation.subresource
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    for key in ("name", "namespace"):
        if not request[key]:
            del request[key]
    return uid, {"kind": "AdmissionReview", "apiVersion": _API_VERSION, "request": request}


def verify_response(uid: str, mutating: bool, review: dict) -> Response:
    """VerifyAdmissionResponse for a v1 answer: BadResponse with upstream's reason."""
    answer = review.get("response")
    if not isinstance(answer, dict):
        raise BadResponse("webhook response was absent")
    if answer.get("uid") != uid:
        raise BadResponse(f'expected response.uid="{uid}", got "{answer.get("uid") or ""}"')
    if review.get("apiVersion") != _API_VERSION or review.get("kind") != "AdmissionReview":
        group, _, version = (review.get("apiVersion") or "").rpartition("/")
        gvk = f"{group + '/' if group else ''}{version}, Kind={review.get('kind') or ''}"
        raise BadResponse(f"expected webhook response of {_V1_GVK}, got {gvk}")
    raw_patch, patch_type = answer.get("patch"), answer.get("patchType")
    if mutating:
        if raw_patch and patch_type is None:
            raise BadResponse("webhook returned response.patch but not response.patchType")
        if not raw_patch and patch_type is not None:
            raise BadResponse("webhook returned response.patchType but not response.patch")
        if patch_type is not None and not patch_type:
            raise BadResponse(f'webhook returned invalid response.patchType of "{patch_type}"')
    else:
        if raw_patch:
            raise BadResponse("validating webhook may not return response.patch")
        if patch_type is not None:
            raise BadResponse("validating webhook may not return response.patchType")
    patch = None
    if raw_patch:
        if patch_type != "JSONPatch":
            raise BadResponse(f'unsupported patch type "{patch_type}"')
        patch = _decode_patch(raw_patch)
    result = answer.get("status")
    return Response(
        allowed=bool(answer.get("allowed")),
        patch=patch,
        result=result if isinstance(result, dict) else None,
        warnings=[w for w in answer.get("warnings") or [] if isinstance(w, str)],
    )


def _decode_patch(raw: str) -> list:
    """The response's ``patch``: base64 of a JSON patch (jsonpatch.DecodePatch's checks)."""
    try:
        ops = json.loads(base64.b64decode(raw, validate=True))
    except (binascii.Error, ValueError) as e:
        raise BadResponse(f"received undecodable patch in webhook response: {e}") from None
    if not isinstance(ops, list):
        raise BadResponse(
            "received undecodable patch in webhook response: json: cannot unmarshal object "
            "into Go value of type jsonpatch.Patch"
        )
    return ops


def denied(webhook: str, result: dict | None) -> errors.ApiError:
    """webhookerrors.ToStatusErr: the webhook's Status, at least a 400, worded as a denial."""
    status = dict(result or {})
    denied_by = f'admission webhook "{webhook}" denied the request'
    given = status.get("code")
    code = given if isinstance(given, int) and given >= 400 else 400
    if status.get("message"):
        message = f"{denied_by}: {status['message']}"
    elif status.get("reason"):
        message = f"{denied_by}: {status['reason']}"
    else:
        message = f"{denied_by} without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return errors.ApiError(code, errors.status(code, status.get("reason"), message, details))


def calling_error(webhook: str, reason: str) -> errors.ApiError:
    """failurePolicy Fail on an ErrCallingWebhook: apierrors.NewInternalError of its text."""
    return errors.internal_error(f'failed calling webhook "{webhook}": {reason}')


def dry_run_unsupported(webhook: str) -> errors.ApiError:
    """NewDryRunUnsupportedErr: a dry run reaching a webhook with side effects."""
    return errors.bad_request(f'admission webhook "{webhook}" does not support dry run')
