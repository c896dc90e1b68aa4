"""admission.k8s.io/v1 ``AdmissionReview`` in and out, and the two kinds of handler a
controller writes: a defaulter and a validator.

controller-runtime twin: ``pkg/webhook/admission``:

- ``Request`` / ``Response``, with ``allowed``, ``denied``, ``errored``, ``patch_response``
  (``Allowed``, ``Denied``, ``Errored``, ``PatchResponseFromRaw``), and ``Response.complete``
  (``Response.Complete``: the request's uid, a status code of 200 when none was set, the
  patch type);
- ``read_review`` / ``review_answer``: ``Webhook.ServeHTTP``'s decoding and its typed reply
  (a v1beta1 review is answered as v1beta1, everything else as v1);
- ``Defaulter`` and ``defaulting_handler`` (``CustomDefaulter``, ``WithCustomDefaulter``): the
  handler gives the defaulter a copy of the object, and answers with the JSON patch from the
  object as sent to the object as changed (``runtime.webhook.jsonpatch``); a DELETE is allowed
  untouched;
- ``Validator`` and ``validating_handler`` (``Validator[T]``, ``WithValidator``): CREATE gets
  the object, UPDATE the old and the new one, DELETE the old one (the object being deleted);
  CONNECT is allowed unchecked.

A handler says no by raising: ``Denied`` (a 403 ``Forbidden`` with its message, Go's
``return err``) or ``StatusError`` (a status of its own: code, reason, message, as Go's
``apierrors.APIStatus``). Warnings go with the answer either way. Any other exception is a bug
in the handler: it is logged with its traceback and answered 500, as controller-runtime does
for a recovered panic (``RecoverPanic``, on by default).

Deliberate differences:

- a review without ``request.uid`` is refused (400): controller-runtime passes it on, and the
  API server then rejects the answer, whose uid does not match; here the sender learns why;
- the objects are the JSON dicts themselves (no scheme, no typed decoding): a handler reads
  what the API server sent.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runtime.webhook.jsonpatch import create_patch

__all__ = [
    "ADMISSION_V1",
    "ADMISSION_V1BETA1",
    "MAX_REQUEST_SIZE",
    "BadReview",
    "Defaulter",
    "Denied",
    "Handler",
    "Request",
    "Response",
    "StatusError",
    "Validator",
    "Warnings",
    "allowed",
    "defaulting_handler",
    "denied",
    "errored",
    "patch_response",
    "read_review",
    "review_answer",
    "validating_handler",
]

log = logging.getLogger("runtime.webhook")

ADMISSION_V1 = "admission.k8s.io/v1"
ADMISSION_V1BETA1 = "admission.k8s.io/v1beta1"
# The largest body read (controller-runtime's maxRequestSize: the API server's own limit on
# an object is 3 MiB, and a review carries the object and the old object, plus slack).
MAX_REQUEST_SIZE = 7 * 1024 * 1024

Warnings = list[str]


@dataclass(frozen=True)
class Request:
    """One ``AdmissionReview.request`` (controller-runtime ``admission.Request``, k8s.io/api
    ``AdmissionRequest``): the fields handlers read,
    and the whole request in ``raw`` for the rest (``userInfo``, ``options``, ...)."""

    uid: str
    operation: str
    namespace: str
    name: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    raw: dict[str, Any]

    @classmethod
    def from_dict(cls, request: dict[str, Any]) -> Request:
        obj, old = request.get("object"), request.get("oldObject")
        return cls(
            uid=str(request.get("uid") or ""),
            operation=str(request.get("operation") or ""),
            namespace=str(request.get("namespace") or ""),
            name=str(request.get("name") or ""),
            object=obj if isinstance(obj, dict) else None,
            old_object=old if isinstance(old, dict) else None,
            dry_run=bool(request.get("dryRun")),
            raw=request,
        )


@dataclass
class Response:
    """What a handler answers (controller-runtime ``admission.Response``): allowed or not, a
    ``metav1.Status``
    (code, reason, message), warnings, and the JSON patch of a defaulter."""

    allowed: bool
    code: int = 0
    reason: str = ""
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    patch: list[dict[str, Any]] | None = None

    def with_warnings(self, warnings: Sequence[str]) -> Response:
        self.warnings = [*self.warnings, *warnings]
        return self

    def complete(self, uid: str) -> dict[str, Any]:
        """The ``response`` of the review (``Response.Complete``): the request's uid, a
        status whose code is 200 unless set, the patch base64-encoded as JSONPatch."""
        status: dict[str, Any] = {"code": self.code or 200}
        if self.reason:
            status["reason"] = self.reason
        if self.message:
            status["message"] = self.message
        out: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.patch:
            import base64

            out["patchType"] = "JSONPatch"
            out["patch"] = base64.b64encode(json.dumps(self.patch).encode()).decode()
        return out


def allowed(message: str = "") -> Response:
    """Allowed, unchanged (``admission.Allowed``)."""
    return Response(True, 200, message=message)


def denied(message: str, code: int = 403, reason: str = "Forbidden") -> Response:
    """Refused with ``message`` (``admission.Denied``: 403 Forbidden). The API server tells
    the client ``admission webhook "<name>" denied the request: <message>``."""
    return Response(False, code, reason, message)


def errored(code: int, message: str) -> Response:
    """The review could not be handled (``admission.Errored``): not allowed, the code and the
    error, no reason."""
    return Response(False, code, message=message)


def patch_response(original: dict[str, Any], current: dict[str, Any]) -> Response:
    """Allowed, with the patch that takes ``original`` to ``current``
    (``PatchResponseFromRaw``); no patch when nothing changed."""
    return Response(True, 200, patch=create_patch(original, current) or None)


class Denied(Exception):
    """Raised by a defaulter or validator to refuse the request: 403 ``Forbidden`` with the
    exception's message (a plain Go ``error`` returned from controller-runtime's
    ``ValidateCreate``, answered with ``admission.Denied``)."""


class StatusError(Exception):
    """Raised to refuse with a status of one's own (apimachinery's ``apierrors.APIStatus``,
    which controller-runtime answers with that status): e.g. 422 ``Invalid``, or 409
    ``Conflict``."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


Handler = Callable[[Request], Response]
"""What the server calls for one review (``admission.Handler``)."""


class Defaulter(Protocol):
    """Fills in what the user left out (controller-runtime ``admission.CustomDefaulter``):
    change ``obj`` in
    place. ``request`` is the review's (Go: ``admission.RequestFromContext(ctx)``)."""

    def default(self, request: Request, obj: dict[str, Any]) -> None: ...


class Validator(Protocol):
    """Checks what is written (controller-runtime ``admission.Validator``): return warnings,
    raise ``Denied``
    or ``StatusError`` to refuse."""

    def validate_create(self, request: Request, obj: dict[str, Any]) -> Warnings: ...

    def validate_update(
        self, request: Request, old: dict[str, Any], new: dict[str, Any]
    ) -> Warnings: ...

    def validate_delete(self, request: Request, obj: dict[str, Any]) -> Warnings: ...


def _refusal(err: Exception) -> Response | None:
    """The answer to an exception a handler raised on purpose; None for any other (a bug)."""
    if isinstance(err, StatusError):
        return Response(False, err.code, err.reason, err.message)
    if isinstance(err, Denied):
        return denied(str(err))
    return None


def _bug(err: Exception, request: Request) -> Response:
    """controller-runtime's recovered panic: logged with the traceback, answered 500."""
    log.error(
        "the webhook handler failed",
        exc_info=err,
        extra={"uid": request.uid, "operation": request.operation},
    )
    return errored(500, f"panic: {err!r} [recovered]")


def _missing(what: str, request: Request) -> Response:
    return errored(400, f"{request.operation} request without {what}")


def defaulting_handler(defaulter: Defaulter) -> Handler:
    """The handler of a mutating webhook around ``defaulter`` (``WithCustomDefaulter``)."""

    def handle(request: Request) -> Response:
        if request.operation == "DELETE":
            return allowed()
        if request.object is None:
            return _missing("object", request)
        current = copy.deepcopy(request.object)
        try:
            defaulter.default(request, current)
        except Exception as err:
            return _refusal(err) or _bug(err, request)
        return patch_response(request.object, current)

    return handle


def validating_handler(validator: Validator) -> Handler:
    """The handler of a validating webhook around ``validator`` (``WithValidator``)."""

    def handle(request: Request) -> Response:
        warnings: Warnings = []
        try:
            if request.operation == "CREATE":
                if request.object is None:
                    return _missing("object", request)
                warnings = validator.validate_create(request, request.object)
            elif request.operation == "UPDATE":
                if request.object is None or request.old_object is None:
                    return _missing("object and oldObject", request)
                warnings = validator.validate_update(request, request.old_object, request.object)
            elif request.operation == "DELETE":
                if request.old_object is None:
                    return _missing("oldObject", request)
                warnings = validator.validate_delete(request, request.old_object)
            elif request.operation == "CONNECT":
                return allowed()
            else:
                return errored(400, f"unknown operation {request.operation!r}")
        except Exception as err:
            # the warnings of a refusal are not lost: Go returns them beside the error
            refusal = _refusal(err)
            if refusal is None:
                return _bug(err, request)
            return refusal.with_warnings(getattr(err, "warnings", ()))
        return allowed().with_warnings(warnings or ())

    return handle


class BadReview(Exception):
    """A request body that is not an AdmissionReview the handler can answer; the message is
    the answer's (controller-runtime's ``Errored(400, err)`` in ``Webhook.ServeHTTP``)."""


def read_review(body: bytes, content_type: str) -> tuple[str, Request]:
    """The review's apiVersion and request (``Webhook.ServeHTTP``'s checks, in its order).
    Raises ``BadReview``."""
    if not body:
        raise BadReview("request body is empty")
    # Go compares the whole header; a charset parameter is accepted here, as JSON is UTF-8
    if content_type.split(";")[0].strip() != "application/json":
        raise BadReview(f"contentType={content_type}, expected application/json")
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise BadReview(f"couldn't decode the AdmissionReview: {err}") from None
    if not isinstance(review, dict):
        raise BadReview("couldn't decode the AdmissionReview: not a JSON object")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    # apimachinery's scheme errors, as the universal deserializer words them
    if api_version not in (ADMISSION_V1, ADMISSION_V1BETA1):
        raise BadReview(f'no kind "{kind}" is registered for version "{api_version}"')
    if kind != "AdmissionReview":
        raise BadReview(f'no kind "{kind}" is registered for version "{api_version}"')
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("the AdmissionReview has no request")
    if not request.get("uid"):
        raise BadReview("the AdmissionReview's request has no uid")
    return str(api_version), Request.from_dict(request)


def review_answer(response: dict[str, Any], api_version: str = ADMISSION_V1) -> bytes:
    """The AdmissionReview that carries ``response``, as JSON (``writeResponseTyped``)."""
    review = {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}
    return json.dumps(review).encode() + b"\n"
