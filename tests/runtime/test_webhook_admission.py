"""runtime.webhook.admission: reviews decoded and answered as controller-runtime does, and the
defaulting and validating handlers on every operation, allowed, denied and failing."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from runtime.webhook.admission import (
    BadReview,
    Denied,
    Request,
    StatusError,
    defaulting_handler,
    read_review,
    review_answer,
    validating_handler,
)
from runtime.webhook.jsonpatch import apply_patch


def review(request: dict[str, Any] | None, api_version: str = "admission.k8s.io/v1") -> bytes:
    body: dict[str, Any] = {"apiVersion": api_version, "kind": "AdmissionReview"}
    if request is not None:
        body["request"] = request
    return json.dumps(body).encode()


def request(operation: str = "CREATE", obj: Any = None, old: Any = None) -> Request:
    raw: dict[str, Any] = {"uid": "u-1", "operation": operation, "namespace": "ns", "name": "n"}
    if obj is not None:
        raw["object"] = obj
    if old is not None:
        raw["oldObject"] = old
    return Request.from_dict(raw)


# -- decoding -------------------------------------------------------------------------------


def test_a_v1_review_is_read_with_its_request():
    version, req = read_review(review({"uid": "abc", "operation": "CREATE"}), "application/json")
    assert version == "admission.k8s.io/v1"
    assert (req.uid, req.operation, req.object) == ("abc", "CREATE", None)


@pytest.mark.parametrize(
    ("body", "ctype", "message"),
    [
        (b"", "application/json", "request body is empty"),
        (b"{}", "text/plain", "contentType=text/plain, expected application/json"),
        (b"{not json", "application/json", "couldn't decode the AdmissionReview"),
        (b"[]", "application/json", "not a JSON object"),
        (
            review({"uid": "a"}, "admission.k8s.io/v2"),
            "application/json",
            'no kind "AdmissionReview" is registered for version "admission.k8s.io/v2"',
        ),
        (
            json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"}).encode(),
            "application/json",
            'no kind "Pod" is registered for version "admission.k8s.io/v1"',
        ),
        (review(None), "application/json", "the AdmissionReview has no request"),
        (review({"operation": "CREATE"}), "application/json", "request has no uid"),
    ],
)
def test_a_bad_review_is_refused_with_the_reason(body, ctype, message):
    with pytest.raises(BadReview, match=message.replace("(", r"\(")):
        read_review(body, ctype)


def test_the_answer_has_the_reviews_version_the_uid_and_a_200_status():
    answer = json.loads(review_answer({"uid": "x", "allowed": True}, "admission.k8s.io/v1beta1"))
    assert answer == {
        "apiVersion": "admission.k8s.io/v1beta1",
        "kind": "AdmissionReview",
        "response": {"uid": "x", "allowed": True},
    }


# -- defaulting -------------------------------------------------------------------------------


class SetReplicas:
    def default(self, request: Request, obj: dict[str, Any]) -> None:
        obj.setdefault("spec", {}).setdefault("replicas", 1)


def test_the_defaulters_change_is_answered_as_a_json_patch():
    obj = {"metadata": {"name": "n"}, "spec": {}}
    out = defaulting_handler(SetReplicas())(request("CREATE", obj)).complete("u-1")
    assert out["allowed"] is True and out["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(out["patch"]))
    assert patch == [{"op": "add", "path": "/spec/replicas", "value": 1}]
    assert apply_patch(obj, patch) == {"metadata": {"name": "n"}, "spec": {"replicas": 1}}
    assert obj == {"metadata": {"name": "n"}, "spec": {}}  # the request's object untouched


def test_nothing_to_default_is_allowed_without_a_patch():
    out = defaulting_handler(SetReplicas())(request("UPDATE", {"spec": {"replicas": 3}}))
    completed = out.complete("u")
    assert completed["allowed"] is True and "patch" not in completed


def test_a_delete_is_not_defaulted():
    out = defaulting_handler(SetReplicas())(request("DELETE", old={"spec": {}}))
    assert out.allowed and out.patch is None


class Refuses:
    def __init__(self, err: Exception) -> None:
        self.err = err

    def default(self, request: Request, obj: dict[str, Any]) -> None:
        raise self.err


def test_a_defaulter_that_refuses_denies_and_one_that_breaks_is_a_500():
    denied = defaulting_handler(Refuses(Denied("no")))(request("CREATE", {}))
    assert (denied.allowed, denied.code, denied.reason, denied.message) == (
        False,
        403,
        "Forbidden",
        "no",
    )
    broken = defaulting_handler(Refuses(KeyError("x")))(request("CREATE", {}))
    assert (broken.allowed, broken.code) == (False, 500)
    assert "KeyError" in broken.message


# -- validation -------------------------------------------------------------------------------


class Recorder:
    """Validates by the object's ``ok`` field; records what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def _check(self, obj: dict[str, Any]) -> list[str]:
        if not obj.get("ok"):
            err = Denied("not ok")
            err.warnings = ["careful"]  # type: ignore[attr-defined]
            raise err
        return ["fine, but"]

    def validate_create(self, request, obj):
        self.calls.append(("create", obj))
        return self._check(obj)

    def validate_update(self, request, old, new):
        self.calls.append(("update", (old, new)))
        return self._check(new)

    def validate_delete(self, request, obj):
        self.calls.append(("delete", obj))
        if obj.get("protected"):
            raise StatusError(409, "Conflict", "still in use")
        return []


def test_each_operation_reaches_its_method_with_its_objects():
    validator = Recorder()
    handle = validating_handler(validator)
    assert handle(request("CREATE", {"ok": 1})).allowed
    assert handle(request("UPDATE", {"ok": 1}, {"old": 1})).allowed
    assert handle(request("DELETE", old={"gone": 1})).allowed
    assert handle(request("CONNECT")).allowed
    assert validator.calls == [
        ("create", {"ok": 1}),
        ("update", ({"old": 1}, {"ok": 1})),
        ("delete", {"gone": 1}),
    ]


def test_a_denial_carries_its_message_and_warnings():
    out = validating_handler(Recorder())(request("CREATE", {"ok": 0})).complete("u-1")
    assert out == {
        "uid": "u-1",
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": "not ok"},
        "warnings": ["careful"],
    }


def test_an_allowed_request_carries_the_warnings():
    out = validating_handler(Recorder())(request("CREATE", {"ok": 1})).complete("u")
    assert out["allowed"] is True and out["warnings"] == ["fine, but"]


def test_a_status_error_is_answered_with_its_own_status():
    out = validating_handler(Recorder())(request("DELETE", old={"protected": True}))
    assert (out.allowed, out.code, out.reason, out.message) == (
        False,
        409,
        "Conflict",
        "still in use",
    )


@pytest.mark.parametrize(
    ("operation", "obj", "old", "message"),
    [
        ("CREATE", None, None, "CREATE request without object"),
        ("UPDATE", {"ok": 1}, None, "UPDATE request without object and oldObject"),
        ("DELETE", None, None, "DELETE request without oldObject"),
        ("PATCH", {}, None, "unknown operation 'PATCH'"),
    ],
)
def test_a_request_missing_what_its_operation_needs_is_a_400(operation, obj, old, message):
    out = validating_handler(Recorder())(request(operation, obj, old))
    assert (out.allowed, out.code, out.message) == (False, 400, message)
