"""kubesim.admission, in-process: which webhooks match, and what a review and its answer say."""

from __future__ import annotations

import base64
import json

import pytest

from kubesim.admission import matching, review
from kubesim.admission.client import CallError, _check_name, _decode, _NameMismatch
from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.registry.admission import Attributes

CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
NAMESPACES = ResourceInfo("", "v1", "namespaces", "Namespace", False)
FOO_V1 = ResourceInfo("example.com", "v1", "foos", "Foo", True, custom=True)
FOO_V2 = ResourceInfo("example.com", "v2", "foos", "Foo", True, custom=True)


def attrs(info=CONFIGMAPS, op="CREATE", ns="default", sub="", obj=None, old=None) -> Attributes:
    obj = obj if obj is not None else {"metadata": {"name": "x"}}
    return Attributes(info, op, ns, "x", obj, old, sub)


def hook(**spec) -> matching.Hook:
    base = {
        "name": "h.example.com",
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
    }
    base.update(spec)
    return matching.Hook("c/h/0", "c", base)


def no_namespaces(name: str) -> dict | None:
    return {}


def no_equivalents(info: ResourceInfo) -> list[ResourceInfo]:
    return [info]


def call(h: matching.Hook, a: Attributes, labels=no_namespaces, eq=no_equivalents):
    return matching.should_call(h, a, labels, eq)


@pytest.mark.parametrize(
    ("resources", "sub", "matches"),
    [
        (["configmaps"], "", True),
        (["configmaps"], "status", False),
        (["*"], "", True),
        (["*"], "status", False),  # "*" is every resource, no subresource
        (["*/*"], "status", True),
        (["configmaps/*"], "status", True),
        (["*/status"], "status", True),
        (["*/status"], "", False),
        (["secrets"], "", False),
    ],
)
def test_resources_with_wildcards_and_subresources(resources, sub, matches):
    rule = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": resources}
    assert matching.rule_matches(rule, attrs(sub=sub), CONFIGMAPS) is matches


@pytest.mark.parametrize(
    ("scope", "info", "ns", "matches"),
    [
        ("Namespaced", CONFIGMAPS, "default", True),
        ("Cluster", CONFIGMAPS, "default", False),
        # a Namespace names itself as its namespace, yet is cluster-scoped
        ("Namespaced", NAMESPACES, "ns1", False),
        ("Cluster", NAMESPACES, "ns1", True),
        ("*", NAMESPACES, "ns1", True),
    ],
)
def test_scope(scope, info, ns, matches):
    rule = {
        "operations": ["*"],
        "apiGroups": ["*"],
        "apiVersions": ["*"],
        "resources": ["*"],
        "scope": scope,
    }
    assert matching.rule_matches(rule, attrs(info=info, ns=ns), info) is matches


def test_operations_must_match():
    assert call(hook(), attrs(op="CREATE")) is not None
    assert call(hook(), attrs(op="DELETE")) is None


def test_namespace_selector_reads_the_namespace_or_the_namespace_being_written():
    h = hook(namespaceSelector={"matchLabels": {"team": "a"}})
    assert call(h, attrs(), lambda ns: {"team": "a"}) is not None
    assert call(h, attrs(), lambda ns: {"team": "b"}) is None
    # a namespace being created is matched by its own labels
    ns_hook = hook(
        namespaceSelector={"matchLabels": {"team": "a"}},
        rules=[{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*"]}],
    )
    created = attrs(info=NAMESPACES, ns="", obj={"metadata": {"labels": {"team": "a"}}})
    assert call(ns_hook, created, lambda ns: None) is not None
    # a missing namespace is an internal error, raised only for a webhook whose rules match
    with pytest.raises(errors.ApiError) as e:
        call(h, attrs(), lambda ns: None)
    assert e.value.code == 500


def test_object_selector_matches_the_new_or_the_old_labels():
    h = hook(objectSelector={"matchLabels": {"app": "x"}})
    labelled = {"metadata": {"labels": {"app": "x"}}}
    assert call(h, attrs(obj=labelled)) is not None
    assert call(h, attrs(op="CREATE", obj={"metadata": {}}, old=labelled)) is not None
    assert call(h, attrs(obj={"metadata": {}})) is None


def test_equivalent_versions_are_matched_only_under_match_policy_equivalent():
    rules = [
        {
            "operations": ["*"],
            "apiGroups": ["example.com"],
            "apiVersions": ["v1"],
            "resources": ["foos"],
        }
    ]
    request = attrs(info=FOO_V2)
    equivalent = call(hook(rules=rules), request, eq=lambda info: [FOO_V1, FOO_V2])
    assert equivalent is not None and equivalent.info is FOO_V1
    exact = hook(rules=rules, matchPolicy="Exact")
    assert call(exact, request, eq=lambda info: [FOO_V1, FOO_V2]) is None


def test_configurations_are_sorted_by_name_and_their_webhooks_kept_in_order():
    hooks = matching.hooks_of(
        [
            {"metadata": {"name": "b"}, "webhooks": [{"name": "b1"}]},
            {"metadata": {"name": "a"}, "webhooks": [{"name": "a2"}, {"name": "a1"}]},
        ]
    )
    assert [h.name for h in hooks] == ["a2", "a1", "b1"]
    assert hooks[0].uid == "a/a2/0"


def test_the_webhook_configurations_are_exempt():
    info = ResourceInfo(
        "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "V", False
    )
    assert matching.exempt(attrs(info=info, ns=""))
    assert not matching.exempt(attrs())


# ---- review -----------------------------------------------------------------------------


def invocation() -> matching.Invocation:
    return matching.Invocation(hook(), CONFIGMAPS, "")


def test_a_review_is_v1_with_null_objects_where_there_are_none():
    a = attrs(op="DELETE", obj=None, old={"metadata": {"name": "x"}})
    uid, body = review.new_review(invocation(), a, None, a.old)
    assert body["apiVersion"] == "admission.k8s.io/v1" and body["request"]["uid"] == uid
    assert body["request"]["object"] is None and body["request"]["oldObject"] == a.old
    assert "subResource" not in body["request"]


def answer(uid: str, **response) -> dict:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": uid, **response},
    }


@pytest.mark.parametrize(
    ("body", "mutating", "reason"),
    [
        (
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
            False,
            "webhook response was absent",
        ),
        (answer("other", allowed=True), False, 'expected response.uid="u", got "other"'),
        (
            {
                "apiVersion": "admission.k8s.io/v1beta1",
                "kind": "AdmissionReview",
                "response": {"uid": "u"},
            },
            False,
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
            "admission.k8s.io/v1beta1, Kind=AdmissionReview",
        ),
        (
            answer("u", allowed=True, patch="W10="),
            True,
            "webhook returned response.patch but not response.patchType",
        ),
        (
            answer("u", allowed=True, patchType="JSONPatch"),
            True,
            "webhook returned response.patchType but not response.patch",
        ),
        (
            answer("u", allowed=True, patch="W10=", patchType="JSONPatch"),
            False,
            "validating webhook may not return response.patch",
        ),
    ],
)
def test_bad_answers_are_refused_with_upstreams_reasons(body, mutating, reason):
    with pytest.raises(review.BadResponse) as e:
        review.verify_response("u", mutating, body)
    assert str(e.value) == reason


def test_a_patch_is_decoded():
    ops = [{"op": "add", "path": "/data", "value": {}}]
    patch = base64.b64encode(json.dumps(ops).encode()).decode()
    got = review.verify_response(
        "u", True, answer("u", allowed=True, patch=patch, patchType="JSONPatch", warnings=["w"])
    )
    assert got.allowed and got.patch == ops and got.warnings == ["w"]


def test_a_denial_keeps_the_webhooks_reason_and_code_of_at_least_400():
    e = review.denied("h", {"code": 200, "reason": "NotAllowed"})
    assert e.code == 400
    assert e.body["message"] == 'admission webhook "h" denied the request: NotAllowed'
    assert e.body["reason"] == "NotAllowed"


# ---- the client's words -------------------------------------------------------------------


def test_an_http_error_is_worded_as_the_rest_client_words_it():
    with pytest.raises(CallError, match="the server could not find the requested resource"):
        _decode(404, b"not here")
    with pytest.raises(CallError, match=r'an error on the server \("boom"\) has prevented'):
        _decode(500, b"boom")
    with pytest.raises(CallError, match="Object 'Kind' is missing"):
        _decode(200, b"{}")


def test_the_certificate_must_name_the_server():
    cert = {"subjectAltName": (("DNS", "*.default.svc"), ("DNS", "hooks.example.com"))}
    _check_name(cert, "x.default.svc")
    with pytest.raises(_NameMismatch) as e:
        _check_name(cert, "a.b.default.svc")
    assert str(e.value) == (
        "x509: certificate is valid for *.default.svc, hooks.example.com, not a.b.default.svc"
    )
    with pytest.raises(_NameMismatch, match="doesn't contain any IP SANs"):
        _check_name(cert, "127.0.0.1")
