"""client.errors: APIError from a response or a watch Status, and the predicates that classify
errors the way apimachinery's ``errors.IsNotFound`` and friends do."""

from __future__ import annotations

import json

import pytest
import urllib3

from client.errors import (
    APIError,
    TransportError,
    api_error_from_status,
    is_already_exists,
    is_conflict,
    is_connection_refused,
    is_expired_error,
    is_gone,
    is_not_found,
    is_too_large_resource_version_error,
    is_too_many_requests,
)

PREDICATES = {is_not_found, is_conflict, is_already_exists, is_gone, is_too_many_requests}


def status(code: int, reason: str, message: str = "", **details: object) -> dict:
    out = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": message,
    }
    if details:
        out["details"] = details
    return out


# -- the predicates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code, reason, check",
    [
        (404, "NotFound", is_not_found),
        (409, "Conflict", is_conflict),
        (409, "AlreadyExists", is_already_exists),
        (410, "Expired", is_gone),
        (429, "TooManyRequests", is_too_many_requests),
    ],
)
def test_each_status_matches_its_predicate_and_no_other(code, reason, check):
    err = APIError(code, reason, f"it is {reason}", status(code, reason))
    assert check(err)
    assert not any(other(err) for other in PREDICATES - {check})


def test_a_409_is_a_conflict_unless_its_reason_is_already_exists():
    # both are 409; a create that lost a race is not a stale update, and callers treat them apart
    assert is_conflict(APIError(409, "Conflict", "the object has been modified"))
    assert not is_already_exists(APIError(409, "Conflict", "the object has been modified"))
    assert is_already_exists(APIError(409, "AlreadyExists", "exists"))
    assert not is_conflict(APIError(409, "AlreadyExists", "exists"))


def test_expired_is_410_or_its_reason():
    # a watch ERROR event may carry the reason without the HTTP code a list would have
    assert is_expired_error(APIError(410, "Gone", "too old resource version"))
    assert is_expired_error(APIError(500, "Expired", "too old resource version"))
    assert is_expired_error(APIError(500, "Gone", "x"))
    assert not is_expired_error(APIError(500, "InternalError", "x"))
    assert is_gone(APIError(410, "", "")) == is_expired_error(APIError(410, "", ""))


def test_predicates_take_any_exception():
    for err in (TransportError("refused"), ValueError("x"), KeyError("x")):
        assert not any(check(err) for check in PREDICATES)
        assert not is_expired_error(err)
        assert not is_too_large_resource_version_error(err)


# -- an APIError from a response -------------------------------------------------------------


def test_from_response_decodes_a_status_body():
    body = status(404, "NotFound", 'foos "x" not found')
    err = APIError.from_response(404, "Not Found", {}, json.dumps(body).encode())
    assert (err.code, err.reason, err.message, err.status) == (
        404,
        "NotFound",
        'foos "x" not found',
        body,
    )
    assert err.retry_after is None
    assert str(err) == '404 NotFound: foos "x" not found'


def test_from_response_reads_retry_after_from_the_header_or_the_details():
    header = APIError.from_response(
        429, "Too Many Requests", {"Retry-After": "3"}, json.dumps({"kind": "Status"}).encode()
    )
    assert header.retry_after == 3.0
    details = APIError.from_response(
        504, "Gateway Timeout", {}, json.dumps(status(504, "Timeout", retryAfterSeconds=1)).encode()
    )
    assert (details.reason, details.retry_after) == ("Timeout", 1.0)
    # an HTTP-date is allowed by HTTP but never sent by kube-apiserver: no delay rather than a crash
    dated = APIError.from_response(
        503, "Service Unavailable", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, b""
    )
    assert dated.retry_after is None


def test_from_response_with_a_body_that_is_not_a_status():
    err = APIError.from_response(404, "Not Found", {}, b"404 page not found\n")
    assert err.status is None
    assert (err.reason, err.message) == ("Not Found", "404 page not found")
    assert is_not_found(err)
    empty = APIError.from_response(502, "", {}, b"")
    assert (empty.reason, empty.message) == ("502", "")


# -- an APIError from a watch ERROR event ----------------------------------------------------


def test_api_error_from_status():
    expired = api_error_from_status({"code": 410, "reason": "Expired", "message": "old"})
    assert (expired.code, expired.reason, expired.message) == (410, "Expired", "old")
    assert is_expired_error(expired)
    assert api_error_from_status(None).code == 500  # an ERROR event without a Status
    throttled = api_error_from_status(status(429, "TooManyRequests", "slow", retryAfterSeconds=2))
    assert is_too_many_requests(throttled) and throttled.retry_after == 2.0


# -- the resourceVersion is newer than the server's ------------------------------------------


def test_too_large_resource_version_by_cause_reason_or_message():
    by_reason = APIError(
        504, "Timeout", "x", {"details": {"causes": [{"reason": "ResourceVersionTooLarge"}]}}
    )
    assert is_too_large_resource_version_error(by_reason)
    by_message = APIError(
        504, "Timeout", "x", {"details": {"causes": [{"message": "Too large resource version"}]}}
    )
    assert is_too_large_resource_version_error(by_message)
    # an older server says it only in the message of its 504
    assert is_too_large_resource_version_error(
        APIError(504, "Timeout", "Too large resource version: 12, current: 10")
    )
    assert not is_too_large_resource_version_error(APIError(504, "Timeout", "slow"))


# -- connection refused ----------------------------------------------------------------------


def test_connection_refused_anywhere_in_the_cause_chain():
    refused = TransportError("boom")
    refused.__cause__ = ConnectionRefusedError()
    assert is_connection_refused(refused)
    assert not is_connection_refused(TransportError("read timed out"))


def test_connection_refused_behind_urllib3s_reason():
    # urllib3 wraps the socket error in MaxRetryError.reason, not in __cause__
    inner = urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection")
    inner.__cause__ = ConnectionRefusedError(111, "Connection refused")
    wrapped = urllib3.exceptions.MaxRetryError(None, "/api", reason=inner)
    assert not is_connection_refused(TransportError("GET /api"))
    err = TransportError("GET /api")
    err.__cause__ = wrapped
    assert is_connection_refused(err)


def test_connection_refused_by_message():
    assert is_connection_refused(OSError("[Errno 111] Connection refused"))
    assert not is_connection_refused(APIError(503, "ServiceUnavailable", "try later"))
