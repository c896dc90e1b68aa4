"""Status bodies for every error kubesim returns, shaped exactly as kube-apiserver shapes them.

Twin of k8s.io/apimachinery/pkg/api/errors (errors.go): one builder per reason. The quirks come
from recordings of real v1.24 and v1.36 servers and are easy to get wrong, so they live here only:

- details.kind is the RESOURCE (plural) for NotFound, AlreadyExists, Conflict on update and the
  successful-delete Status, but the KIND for 422 Invalid and for Conflict from DELETE
  preconditions;
- details.group is omitted for the core group (Go's omitempty);
- a successful-delete Status has status Success and neither code nor reason.

Handlers raise ``ApiError``; the HTTP layer turns it into a response.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "GoStringer",
    "already_exists",
    "bad_request",
    "conflict",
    "delete_success",
    "expired",
    "field_duplicate",
    "field_forbidden",
    "field_invalid",
    "go_format",
    "field_not_supported",
    "field_required",
    "field_too_long",
    "forbidden",
    "generate_name_conflict",
    "generic_not_found",
    "go_quote",
    "go_value",
    "internal_error",
    "invalid",
    "method_not_allowed",
    "not_found",
    "page_not_found",
    "plain_internal_error",
    "qualified",
    "service_unavailable",
    "status",
    "timeout",
    "too_many_requests",
    "unauthorized",
    "unrecognized_body",
    "unsupported_media_type",
]


class ApiError(Exception):
    """An HTTP error response: a Status body (dict) or, for unknown paths, plain text.

    body: the Status dict, or None for a text/plain answer: ``text``, by default the
    "404 page not found" of unknown paths.
    headers: extra response headers (Retry-After for 429).
    """

    def __init__(
        self,
        code: int,
        body: dict | None,
        headers: dict[str, str] | None = None,
        text: str = "404 page not found\n",
    ):
        super().__init__(body.get("message") if body else text.rstrip("\n"))
        self.code = code  # HTTP status code, equal to body["code"] when body has one
        self.body = body  # the Status object sent to the client; None means text/plain
        self.headers = headers or {}  # extra response headers, e.g. {"Retry-After": "1"}
        self.text = text  # the text/plain body when there is no Status


def status(
    code: int | None,
    reason: str | None,
    message: str | None,
    details: dict | None = None,
    success: bool = False,
) -> dict:
    """A metav1.Status with Go's omitempty rules applied (empty fields are left out)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if success else "Failure",
    }
    if message:
        body["message"] = message
    if reason:
        body["reason"] = reason
    if details:
        body["details"] = details
    if code:
        body["code"] = code
    return body


def _details(name: str | None, group: str, kind: str, **extra: Any) -> dict:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:
        d["kind"] = kind
    d.update({k: v for k, v in extra.items() if v is not None})
    return d


def qualified(resource: str, group: str) -> str:
    """schema.GroupResource.String(): "deployments.apps", or "namespaces" for core."""
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> ApiError:
    msg = f'{qualified(resource, group)} "{name}" not found'
    return ApiError(404, status(404, "NotFound", msg, _details(name, group, resource)))


def already_exists(group: str, resource: str, name: str, deleting: bool = False) -> ApiError:
    """409 AlreadyExists; ``deleting``: the existing object is being deleted (the store says so)."""
    msg = f'{qualified(resource, group)} "{name}" already exists'
    if deleting:
        msg = f"object is being deleted: {msg}"
    return ApiError(409, status(409, "AlreadyExists", msg, _details(name, group, resource)))


def generate_name_conflict(group: str, resource: str, name: str) -> ApiError:
    """NewGenerateNameConflict: no free name was found for metadata.generateName."""
    msg = (
        f'{qualified(resource, group)} "{name}" already exists, the server was not able to '
        "generate a unique name for the object"
    )
    details = _details(name, group, resource, retryAfterSeconds=1)
    return ApiError(409, status(409, "AlreadyExists", msg, details))


def conflict(group: str, kind_or_resource: str, name: str, why: str) -> ApiError:
    """409 Conflict. Pass the plural for update conflicts, the Kind for DELETE preconditions."""
    msg = f'Operation cannot be fulfilled on {qualified(kind_or_resource, group)} "{name}": {why}'
    return ApiError(409, status(409, "Conflict", msg, _details(name, group, kind_or_resource)))


STALE_OBJECT = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(group: str, kind: str, name: str, causes: list[dict]) -> ApiError:
    """422 Invalid; causes are {"reason","message","field"} dicts, one per bad field.

    The message mirrors NewInvalid: '<Kind>.<group> "<name>" is invalid: <field>: <msg>, ...'
    (a single cause) or '[<field>: <msg>, ...]' for several.
    """
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    msg = f'{qualified(kind, group)} "{name}" is invalid: {joined}'
    return ApiError(
        422, status(422, "Invalid", msg, _details(name, group, kind, causes=causes or None))
    )


def invalid_plain(message: str) -> ApiError:
    """422 Invalid without details (failed JSON-patch test/remove, unknown op)."""
    return ApiError(422, status(422, "Invalid", message))


class GoStringer:
    """A bad value whose Go type has a String() method: shown as that text, unquoted.

    Field errors print a value by its Go type (field.Error.ErrorBody): %q for strings, %v for
    numbers, String() when there is one (LabelSelector, IntOrString), %#v otherwise.
    """

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def go_quote(s: str) -> str:
    """Go's %q / strconv.Quote: printable characters as they are, the rest escaped."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def go_value(value: Any) -> str:
    """A bad value as field.Error prints it (see GoStringer)."""
    if value is None:
        return "null"
    if isinstance(value, GoStringer):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        inner = ", ".join(f"{go_quote(k)}:{go_quote(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + inner + "}"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if not value:
            return "[]string(nil)"
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    import json

    return json.dumps(value, separators=(",", ":"))


def go_format(value: Any) -> str:
    """A decoded JSON value as Go's fmt %v prints an interface{} holding it: maps with sorted
    keys as ``map[k:v ...]``, slices as ``[a b]``, strings bare, numbers as float64s."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _go_float(float(value))
    return str(value)


def _go_float(number: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), what %v prints: the shortest digits that read
    back, in exponent form when the exponent is below -4 or at least 6."""
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    text = repr(abs(number))
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + int(exp_text or 0) - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    exp = point - 1
    if exp < -4 or exp >= 6:
        tail = digits[1:]
        return (
            f"{sign}{digits[0]}{'.' + tail if tail else ''}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
        )
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def field_invalid(field: str, value: Any, detail: str) -> dict:
    """A FieldValueInvalid cause, its message formatted as field.ErrorList does."""
    msg = f"Invalid value: {go_value(value)}"
    if detail:
        msg += f": {detail}"
    return {"reason": "FieldValueInvalid", "message": msg, "field": field}


def field_required(field: str, detail: str = "") -> dict:
    msg = "Required value" + (f": {detail}" if detail else "")
    return {"reason": "FieldValueRequired", "message": msg, "field": field}


def field_forbidden(field: str, detail: str) -> dict:
    msg = "Forbidden" + (f": {detail}" if detail else "")
    return {"reason": "FieldValueForbidden", "message": msg, "field": field}


def field_not_supported(field: str, value: Any, allowed: list[str]) -> dict:
    msg = f"Unsupported value: {go_value(value)}"
    if allowed:
        msg += ": supported values: " + ", ".join(go_quote(a) for a in allowed)
    return {"reason": "FieldValueNotSupported", "message": msg, "field": field}


def field_too_long(field: str, max_length: int) -> dict:
    """field.TooLong: the value is not shown."""
    return {
        "reason": "FieldValueTooLong",
        "message": f"Too long: must have at most {max_length} bytes",
        "field": field,
    }


def field_duplicate(field: str, value: Any) -> dict:
    return {
        "reason": "FieldValueDuplicate",
        "message": f"Duplicate value: {go_value(value)}",
        "field": field,
    }


def bad_request(message: str) -> ApiError:
    return ApiError(400, status(400, "BadRequest", message))


def unrecognized_body(kind: str, body: bytes) -> ApiError:
    """transformDecodeError for a body whose kind cannot even be read (an empty body)."""
    if not body:
        summary = "<empty>"
    elif body[:1] == b"{":
        summary = body[:30].decode(errors="replace") + (" ..." if len(body) > 30 else "")
    else:
        summary = body[:30].hex() + (" ..." if len(body) > 30 else "")
    return bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: unexpected end of JSON input ({summary})"
    )


def unauthorized() -> ApiError:
    return ApiError(401, status(401, "Unauthorized", "Unauthorized"))


def forbidden(group: str, resource: str, name: str, message: str, causes=None) -> ApiError:
    return ApiError(
        403,
        status(403, "Forbidden", message, _details(name, group, resource, causes=causes)),
    )


def method_not_allowed() -> ApiError:
    msg = "the server does not allow this method on the requested resource"
    return ApiError(405, status(405, "MethodNotAllowed", msg, {}))


def unsupported_media_type(accepted: list[str]) -> ApiError:
    """negotiation.NewUnsupportedMediaTypeError (415): a body in a format no serializer reads
    (``accepted``: the serializers' media types), or a PATCH whose Content-Type is not one of
    the resource's patch types (handlers/patch.go lists them, in the server's order)."""
    msg = (
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )
    return ApiError(415, status(415, "UnsupportedMediaType", msg))


def expired(message: str, continue_token: str = "") -> ApiError:
    """410 Gone with reason Expired (NewResourceExpired): too old resourceVersion/continue.

    continue_token: for an expired continue, the token that resumes the list at the latest RV
    (etcd3's handleCompactedErrorForPaging puts it in the Status's list metadata).
    """
    body = status(410, "Expired", message)
    if continue_token:
        body["metadata"] = {"continue": continue_token}
    return ApiError(410, body)


def too_many_requests(retry_after: int, message: str = "") -> ApiError:
    body = status(
        429,
        "TooManyRequests",
        message or "Too many requests, please try again later.",
        {"retryAfterSeconds": retry_after},
    )
    return ApiError(429, body, {"Retry-After": str(retry_after)})


def internal_error(message: str) -> ApiError:
    body = status(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )
    return ApiError(500, body)


def plain_internal_error(request_uri: str, message: str) -> ApiError:
    """responsewriters.InternalError, what a filter answers when it fails: not a Status but
    http.Error's text/plain ``Internal Server Error: "<uri>": <error>``, HTML-sanitized."""
    text = f"Internal Server Error: {go_quote(request_uri)}: {message}"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return ApiError(500, None, {"X-Content-Type-Options": "nosniff"}, text + "\n")


def internal_error_no_reason(message: str) -> ApiError:
    """500 without reason, as the server sends for a create carrying a resourceVersion."""
    return ApiError(500, status(500, None, message))


def service_unavailable(
    message: str = "the server is currently unable to handle the request",
) -> ApiError:
    return ApiError(503, status(503, "ServiceUnavailable", message))


def timeout(message: str, retry_after: int | None = None, causes=None) -> ApiError:
    details = {}
    if causes:
        details["causes"] = causes
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
    return ApiError(504, status(504, "Timeout", message, details or None))


def generic_not_found() -> dict:
    """NewGenericServerResponse(404, "", GroupResource{}, "", ...): what go-restful's
    ServiceErrorHandler answers for a path no route of a built-in group-version matches. Its
    StatusDetails is empty but not nil, so Go writes ``"details":{}``."""
    body = status(404, "NotFound", "the server could not find the requested resource")
    del body["code"]
    body["details"] = {}
    body["code"] = 404
    return body


def page_not_found() -> ApiError:
    """The text/plain 404 for unknown groups, versions and CR-group resources."""
    return ApiError(404, None)


def delete_success(group: str, resource: str, name: str, uid: str) -> dict:
    """The Status a DELETE returns for an object removed at once: no code, no reason."""
    return status(None, None, None, _details(name, group, resource, uid=uid), success=True)
