"""kubesim validates what it stores as kube-apiserver does: ObjectMeta, Deployments, Events,
Leases, Namespaces; 422 Invalid with one cause per problem, 400 for what cannot be decoded."""

from __future__ import annotations

import json
import re

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, VERSION, deployment, foo, raw

FOOS = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
EVENTS = "/api/v1/namespaces/default/events"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
NAMESPACES = "/api/v1/namespaces"
LABEL_VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.fixture(scope="module")
def sim():
    with KubeSim(crds=[FOO_CRD]) as s:
        yield s


def post(sim, path: str, body) -> tuple[int, dict]:
    code, _, data = raw(sim, "POST", path, body)
    return code, json.loads(data)


def invalid(sim, path: str, body) -> dict:
    code, st = post(sim, path, body)
    assert (code, st["reason"]) == (422, "Invalid"), st
    return st


def causes(st: dict) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in st["details"]["causes"]]


def controller_deployment(foo_name: str) -> dict:
    """The Deployment the Foo controller makes for a Foo (sample-controller's newDeployment)."""
    labels = {"app": "nginx", "controller": foo_name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "long-foo-deployment", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }


# ---- ObjectMeta ------------------------------------------------------------------------------


def test_a_foo_name_too_long_for_a_label_value_makes_an_invalid_deployment(sim):
    name = "f" * 64  # a valid Foo name (DNS subdomain, up to 253) but not a label value
    code, _ = post(sim, FOOS, foo(name))
    assert code == 201
    st = invalid(sim, DEPLOYMENTS, controller_deployment(name))
    selector = (
        "&LabelSelector{MatchLabels:map[string]string{app: nginx,controller: "
        + name
        + ",},MatchExpressions:[]LabelSelectorRequirement{},}"
    )
    assert causes(st) == [
        (
            "spec.selector.matchLabels",
            "FieldValueInvalid",
            f'Invalid value: "{name}": must be no more than 63 characters',
        ),
        (
            "spec.selector",
            "FieldValueInvalid",
            f"Invalid value: {selector}: invalid label selector",
        ),
    ]
    assert st["details"]["kind"] == "Deployment" and st["details"]["group"] == "apps"
    assert st["message"] == (
        'Deployment.apps "long-foo-deployment" is invalid: [spec.selector.matchLabels: Invalid '
        f'value: "{name}": must be no more than 63 characters, spec.selector: Invalid value: '
        f"{selector}: invalid label selector]"
    )


def test_label_keys_and_values(sim):
    body = foo("labels")
    body["metadata"]["labels"] = {"bad key": "v", "ok": "-bad-", "example.com/x": "y" * 64}
    assert causes(invalid(sim, FOOS, body)) == [
        (
            "metadata.labels",
            "FieldValueInvalid",
            'Invalid value: "bad key": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "metadata.labels",
            "FieldValueInvalid",
            f'Invalid value: "{"y" * 64}": must be no more than 63 characters',
        ),
        ("metadata.labels", "FieldValueInvalid", f'Invalid value: "-bad-": {LABEL_VALUE_REGEX}'),
    ]


def test_annotations_are_capped_at_256_kib_together(sim):
    body = foo("annotated")
    body["metadata"]["annotations"] = {"a": "x" * (128 * 1024), "b": "y" * (128 * 1024)}
    assert causes(invalid(sim, FOOS, body)) == [
        ("metadata.annotations", "FieldValueTooLong", "Too long: must have at most 262144 bytes")
    ]
    body["metadata"]["annotations"] = {"a": "x" * (128 * 1024 - 1), "b": "y" * (128 * 1024 - 1)}
    assert post(sim, FOOS, body)[0] == 201


@pytest.mark.parametrize(
    "path,body,message",
    [
        (
            FOOS,
            foo("Upper"),
            'Invalid value: "Upper": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (NAMESPACES, {"metadata": {"name": "a.b"}}, 'Invalid value: "a.b": must not contain dots'),
        (
            NAMESPACES,
            {"metadata": {"name": "n" * 64}},
            f'Invalid value: "{"n" * 64}": must be no more than 63 characters',
        ),
        (
            "/api/v1/namespaces/default/services",
            {"metadata": {"name": "1st"}, "spec": {"ports": [{"port": 80}]}},
            'Invalid value: "1st": a DNS-1035 label must consist of lower case alphanumeric '
            "characters or '-', start with an alphabetic character, and end with an alphanumeric "
            "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ],
    ids=["foo-subdomain", "namespace-label-dots", "namespace-label-length", "service-dns1035"],
)
def test_names_per_kind(sim, path, body, message):
    assert causes(invalid(sim, path, body))[0] == ("metadata.name", "FieldValueInvalid", message)


def test_names_outside_the_kinds_rules_still_must_be_path_segments(sim):
    # core/v1 Events have no name rule of their own: only the generic path-segment one
    event = {
        "metadata": {"name": "Foo.Bar_1"},
        "involvedObject": {"kind": "Foo", "namespace": "default", "name": "x"},
        "reason": "Test",
    }
    assert post(sim, EVENTS, event)[0] == 201
    event["metadata"]["name"] = "a%b"
    assert causes(invalid(sim, EVENTS, event)) == [
        ("metadata.name", "FieldValueInvalid", "Invalid value: \"a%b\": may not contain '%'")
    ]


def test_generate_name(sim):
    code, created = post(sim, FOOS, foo_with_generate_name("web-"))
    assert code == 201
    assert re.fullmatch("web-[bcdfghjklmnpqrstvwxz2456789]{5}", created["metadata"]["name"])
    # the prefix is cut to 58 characters so that the name stays within 63
    code, created = post(sim, FOOS, foo_with_generate_name("p" * 70))
    assert code == 201 and len(created["metadata"]["name"]) == 63
    assert created["metadata"]["name"].startswith("p" * 58)
    # a bad prefix: both the prefix and the generated name are reported
    st = invalid(sim, FOOS, foo_with_generate_name("Bad-"))
    assert [(f, r) for f, r, _ in causes(st)] == [
        ("metadata.generateName", "FieldValueInvalid"),
        ("metadata.name", "FieldValueInvalid"),
    ]


def foo_with_generate_name(prefix: str) -> dict:
    body = foo("x")
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = prefix
    return body


def test_finalizers_and_owner_references(sim):
    body = foo("owned")
    body["metadata"]["finalizers"] = ["orphan", "foregroundDeletion", "bad name"]
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "", "kind": "Foo", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "Bar", "name": "b", "uid": "2", "controller": True},
    ]
    got = causes(invalid(sim, FOOS, body))
    assert [(f, m.split(":")[0]) for f, _, m in got] == [
        ("metadata.ownerReferences.apiVersion", "Invalid value"),
        ("metadata.ownerReferences", "Invalid value"),
        ("metadata.finalizers", "Invalid value"),
        ("metadata.finalizers", "Invalid value"),
    ]
    assert got[1][2].endswith(
        'Only one reference can have Controller set to true. Found "true" in references for '
        "Foo/a and Bar/b"
    )
    assert got[3][2] == (
        'Invalid value: []string{"orphan", "foregroundDeletion", "bad name"}: finalizer orphan '
        "and foregroundDeletion cannot be both set"
    )


def test_wrong_json_types_in_metadata_are_400(sim):
    body = deployment("typed")
    body["metadata"]["labels"] = {"n": 1}
    code, st = post(sim, DEPLOYMENTS, body)
    assert (code, st["reason"]) == (400, "BadRequest")
    assert st["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "number into Go struct field ObjectMeta.metadata.labels of type string"
    )


def test_empty_body_is_400(sim):
    for path, kind in ((FOOS, "Foo"), (DEPLOYMENTS, "Deployment"), (NAMESPACES, "Namespace")):
        code, _, data = raw(sim, "POST", path, b"")
        st = json.loads(data)
        assert (code, st["reason"]) == (400, "BadRequest")
        assert st["message"] == (
            f"the object provided is unrecognized (must be of type {kind}): couldn't get "
            "version/kind; json parse error: unexpected end of JSON input (<empty>)"
        )
    assert post(sim, NAMESPACES, {"metadata": {"name": "put-empty"}})[0] == 201
    code, _, _ = raw(sim, "PUT", f"{NAMESPACES}/put-empty", b"")
    assert code == 400


# ---- Deployments -------------------------------------------------------------------------------


def test_deployment_spec_checks(sim):
    body = deployment("broken")
    spec = body["spec"]
    spec["replicas"] = -1
    spec["template"]["metadata"]["labels"] = {"app": "other"}
    spec["template"]["spec"]["containers"] = [
        {"name": "Web", "image": ""},
        {"name": "web2", "image": "x", "ports": [{"containerPort": 70000, "protocol": "IP"}]},
    ]
    spec["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"},
    }
    spec["progressDeadlineSeconds"] = 5
    spec["minReadySeconds"] = 10
    got = causes(invalid(sim, DEPLOYMENTS, body))
    assert [(f, r) for f, r, _ in got] == [
        ("spec.replicas", "FieldValueInvalid"),
        ("spec.template.metadata.labels", "FieldValueInvalid"),
        ("spec.template.spec.containers[0].name", "FieldValueInvalid"),
        ("spec.template.spec.containers[0].image", "FieldValueRequired"),
        ("spec.template.spec.containers[1].ports[0].containerPort", "FieldValueInvalid"),
        ("spec.template.spec.containers[1].ports[0].protocol", "FieldValueNotSupported"),
        ("spec.strategy.rollingUpdate.maxUnavailable", "FieldValueInvalid"),
        ("spec.progressDeadlineSeconds", "FieldValueInvalid"),
    ]
    assert got[0][2] == "Invalid value: -1: must be greater than or equal to 0"
    assert got[1][2] == (
        'Invalid value: map[string]string{"app":"other"}: `selector` does not match template '
        "`labels`"
    )
    assert got[4][2] == "Invalid value: 70000: must be between 1 and 65535, inclusive"
    assert got[5][2] == 'Unsupported value: "IP": supported values: "SCTP", "TCP", "UDP"'
    assert got[6][2] == "Invalid value: 0%: may not be 0 when `maxSurge` is 0"
    assert got[7][2] == "Invalid value: 5: must be greater than minReadySeconds"


def test_deployment_without_selector_or_containers(sim):
    body = deployment("bare")
    del body["spec"]["selector"]
    body["spec"]["template"]["spec"]["containers"] = []
    assert causes(invalid(sim, DEPLOYMENTS, body)) == [
        ("spec.selector", "FieldValueRequired", "Required value"),
        (
            "spec.template.metadata.labels",
            "FieldValueInvalid",
            'Invalid value: map[string]string{"app":"bare"}: `selector` does not match template '
            "`labels`",
        ),
        ("spec.template.spec.containers", "FieldValueRequired", "Required value"),
    ]


def test_deployment_selector_is_immutable(sim):
    assert post(sim, DEPLOYMENTS, deployment("fixed"))[0] == 201
    code, _, data = raw(sim, "GET", f"{DEPLOYMENTS}/fixed")
    d = json.loads(data)
    d["spec"]["selector"] = {"matchLabels": {"app": "fixed", "tier": "web"}}
    d["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
    code, _, data = raw(sim, "PUT", f"{DEPLOYMENTS}/fixed", d)
    assert code == 422
    assert causes(json.loads(data)) == [
        (
            "spec.selector",
            "FieldValueInvalid",
            "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: fixed,tier: web,},"
            "MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable",
        )
    ]


# ---- Events ------------------------------------------------------------------------------------


def test_event_involved_object_namespace_must_match(sim):
    event = {
        "metadata": {"name": "mismatch.1"},
        "involvedObject": {"kind": "Foo", "namespace": "other", "name": "x"},
        "reason": "Test",
    }
    st = invalid(sim, EVENTS, event)
    assert causes(st) == [
        (
            "involvedObject.namespace",
            "FieldValueInvalid",
            'Invalid value: "other": does not match event.namespace',
        )
    ]
    assert st["details"]["kind"] == "Event" and "group" not in st["details"]
    # an empty involvedObject.namespace is accepted in "default" only
    event["involvedObject"]["namespace"] = ""
    assert post(sim, EVENTS, event)[0] == 201
    assert post(sim, NAMESPACES, {"metadata": {"name": "events-elsewhere"}})[0] == 201
    event["metadata"]["name"] = "mismatch.2"
    code, st = post(sim, "/api/v1/namespaces/events-elsewhere/events", event)
    assert code == 422 and st["details"]["causes"][0]["message"] == (
        'Invalid value: "": does not match event.namespace'
    )


def test_events_with_event_time_need_reporting_fields(sim):
    event = {
        "metadata": {"name": "new-style"},
        "involvedObject": {"kind": "Foo", "namespace": "default", "name": "x"},
        "eventTime": "2024-05-06T07:08:09.123456+02:00",
        "reason": "r" * 129,
        "message": "m" * 1025,
    }
    got = causes(invalid(sim, EVENTS, event))
    assert got == [
        ("reportingController", "FieldValueRequired", "Required value"),
        (
            "reportingController",
            "FieldValueInvalid",
            'Invalid value: "": name part must be non-empty',
        ),
        (
            "reportingController",
            "FieldValueInvalid",
            "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or"
            " '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        ("reportingInstance", "FieldValueRequired", "Required value"),
        ("action", "FieldValueRequired", "Required value"),
        ("reason", "FieldValueInvalid", 'Invalid value: "": can have at most 128 characters'),
        ("message", "FieldValueInvalid", 'Invalid value: "": can have at most 1024 characters'),
    ]
    event.update(
        reportingComponent="example.com/ctl",
        reportingInstance="ctl-1",
        action="Did",
        reason="Done",
        message="ok",
    )
    code, created = post(sim, EVENTS, event)
    assert code == 201
    assert created["eventTime"] == "2024-05-06T05:08:09.123456Z"  # MicroTime, in UTC


# ---- Leases ------------------------------------------------------------------------------------


def lease(name: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"holderIdentity": "me", **spec}}


def test_lease_spec_checks(sim):
    st = invalid(sim, LEASES, lease("bad", leaseDurationSeconds=0, leaseTransitions=-1))
    assert causes(st) == [
        (
            "spec.leaseDurationSeconds",
            "FieldValueInvalid",
            "Invalid value: 0: must be greater than 0",
        ),
        (
            "spec.leaseTransitions",
            "FieldValueInvalid",
            "Invalid value: -1: must be greater than or equal to 0",
        ),
    ]
    assert st["details"]["kind"] == "Lease"
    code, st = post(sim, LEASES, lease("typed", leaseDurationSeconds="15"))
    assert (code, st["message"]) == (
        400,
        'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into '
        "Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32",
    )


def test_lease_micro_times_are_stored_in_utc_with_six_digits(sim):
    code, created = post(
        sim,
        LEASES,
        lease(
            "times",
            leaseDurationSeconds=15,
            acquireTime="2024-05-06T07:08:09.000001+02:00",
            renewTime="2024-05-06T23:59:59.999999-01:30",
        ),
    )
    assert code == 201
    assert created["spec"]["acquireTime"] == "2024-05-06T05:08:09.000001Z"
    assert created["spec"]["renewTime"] == "2024-05-07T01:29:59.999999Z"
    for bad, detail in (
        ("2024-05-06T07:08:09Z", 'cannot parse "Z" as ".000000"'),
        ("2024-05-06T07:08:09.5Z", 'cannot parse ".5Z" as ".000000"'),
        ("2024-05-06T07:08:09.123456789Z", 'cannot parse "789Z" as "Z07:00"'),
    ):
        code, st = post(sim, LEASES, lease("bad-time", renewTime=bad))
        assert (code, st["message"]) == (
            400,
            'Lease in version "v1" cannot be handled as a Lease: parsing time '
            f'"{bad}" as "2006-01-02T15:04:05.000000Z07:00": {detail}',
        )


# ---- Namespaces --------------------------------------------------------------------------------


def test_namespace_finalizers(sim):
    code, created = post(
        sim, NAMESPACES, {"metadata": {"name": "fin"}, "spec": {"finalizers": ["example.com/x"]}}
    )
    assert code == 201 and created["spec"]["finalizers"] == ["example.com/x", "kubernetes"]
    st = invalid(sim, NAMESPACES, {"metadata": {"name": "fin2"}, "spec": {"finalizers": ["bogus"]}})
    assert causes(st) == [
        (
            "spec.finalizers",
            "FieldValueInvalid",
            'Invalid value: "bogus": name is neither a standard finalizer name nor is it fully '
            "qualified",
        )
    ]
    # a plain update keeps spec.finalizers; /finalize changes them
    created["spec"]["finalizers"] = []
    code, _, data = raw(sim, "PUT", f"{NAMESPACES}/fin", created)
    assert code == 200 and json.loads(data)["spec"]["finalizers"] == ["example.com/x", "kubernetes"]
    code, _, data = raw(sim, "PUT", f"{NAMESPACES}/fin/finalize", created)
    assert code == 200 and "finalizers" not in json.loads(data)["spec"]
