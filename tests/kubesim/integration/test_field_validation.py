"""Server-side field validation: fieldValidation=Strict, Warn (the default) and Ignore.

As kube-apiserver v1.36 answers (handlers/create.go, update.go, patch.go): Strict refuses an
unknown field with the strict decoding error, Warn accepts and answers one ``Warning: 299``
header per field, Ignore accepts silently; the field is dropped, never stored, in every case.
v1.24 (server_version="1.24") knew no field validation: unknown fields were dropped silently.
"""

from __future__ import annotations

import json

import pytest

from tests.kubesim.integration.test_api import FOO_CRD, deployment, raw

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD])

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"


def bogus_deployment(name: str = "web") -> dict:
    body = deployment(name)
    body["metadata"]["bogus"] = "m"
    body["spec"]["bogus"] = 1
    body["spec"]["template"]["spec"]["containers"][0]["alsoBogus"] = True
    return body


def bogus_foo(name: str = "f") -> dict:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "bogus": "m"},
        "spec": {"deploymentName": name, "replicas": 1, "bogus": 1},
        "topLevel": True,
    }


# (in the body's order: Go's decoder reports them as it meets them)


def warnings_of(headers: list[tuple[str, str]]) -> list[str]:
    return [v for k, v in headers if k.lower() == "warning"]


def request(sim, method: str, path: str, body, ctype: str = "application/json"):
    """raw(), keeping repeated headers (one Warning header per unknown field)."""
    import http.client
    from urllib.parse import urlparse

    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": ctype})
    resp = conn.getresponse()
    out = json.loads(resp.read())
    conn.close()
    return resp.status, resp.getheaders(), out


def test_strict_create_refuses_unknown_fields_with_the_strict_decoding_error(sim):
    code, headers, st = request(
        sim, "POST", DEPLOYMENTS + "?fieldValidation=Strict", bogus_deployment()
    )
    assert (code, st["reason"]) == (400, "BadRequest")
    assert st["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "metadata.bogus", '
        'unknown field "spec.template.spec.containers[0].alsoBogus", unknown field "spec.bogus"'
    )
    assert warnings_of(headers) == []
    assert raw(sim, "GET", DEPLOYMENTS + "/web")[0] == 404


def test_strict_create_of_a_custom_resource(sim):
    code, _, st = request(sim, "POST", FOOS + "?fieldValidation=Strict", bogus_foo())
    assert (code, st["reason"]) == (400, "BadRequest")
    assert st["message"] == (
        'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: '
        'unknown field "metadata.bogus", unknown field "spec.bogus", unknown field "topLevel"'
    )


def test_warn_is_the_default_and_answers_a_warning_per_field(sim):
    code, headers, obj = request(sim, "POST", DEPLOYMENTS, bogus_deployment())
    assert code == 201
    assert warnings_of(headers) == [
        '299 - "unknown field \\"metadata.bogus\\""',
        '299 - "unknown field \\"spec.template.spec.containers[0].alsoBogus\\""',
        '299 - "unknown field \\"spec.bogus\\""',
    ]
    stored = json.loads(raw(sim, "GET", DEPLOYMENTS + "/web")[2])
    for got in (obj, stored):
        assert "bogus" not in got["metadata"] and "bogus" not in got["spec"]
        assert "alsoBogus" not in got["spec"]["template"]["spec"]["containers"][0]
    code, headers, _ = request(sim, "POST", FOOS + "?fieldValidation=Warn", bogus_foo())
    assert code == 201 and len(warnings_of(headers)) == 3


def test_ignore_drops_unknown_fields_silently(sim):
    code, headers, obj = request(sim, "POST", FOOS + "?fieldValidation=Ignore", bogus_foo())
    assert code == 201 and warnings_of(headers) == []
    assert "bogus" not in obj["metadata"] and "topLevel" not in obj
    assert "bogus" not in obj["spec"]


def test_known_fields_are_not_reported(sim):
    body = deployment("clean")
    body["metadata"]["labels"] = {"app": "clean"}
    body["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    code, headers, _ = request(sim, "POST", DEPLOYMENTS + "?fieldValidation=Strict", body)
    assert code == 201 and warnings_of(headers) == []
    # an object read back and written again is known field for field (status included)
    got = json.loads(raw(sim, "GET", DEPLOYMENTS + "/clean")[2])
    code, headers, _ = request(sim, "PUT", DEPLOYMENTS + "/clean?fieldValidation=Strict", got)
    assert code == 200 and warnings_of(headers) == []


def test_strict_update(sim):
    request(sim, "POST", FOOS + "?fieldValidation=Ignore", bogus_foo())
    got = json.loads(raw(sim, "GET", FOOS + "/f")[2])
    got["spec"]["bogus"] = 1
    code, _, st = request(sim, "PUT", FOOS + "/f?fieldValidation=Strict", got)
    assert code == 400 and st["message"] == (
        'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: '
        'unknown field "spec.bogus"'
    )


def test_strict_merge_patch_is_a_422_on_patch(sim):
    request(
        sim,
        "POST",
        FOOS,
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "f"},
            "spec": {"replicas": 1},
        },
    )
    patch = {"spec": {"bogus": 1}}
    code, _, st = request(
        sim, "PATCH", FOOS + "/f?fieldValidation=Strict", patch, "application/merge-patch+json"
    )
    assert (code, st["reason"]) == (422, "Invalid")
    (cause,) = st["details"]["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith('Invalid value: "{')
    assert cause["message"].endswith(': strict decoding error: unknown field "spec.bogus"')
    assert st["message"].startswith(' "" is invalid: patch: Invalid value: ')
    code, headers, obj = request(sim, "PATCH", FOOS + "/f", patch, "application/merge-patch+json")
    assert code == 200 and warnings_of(headers) == ['299 - "unknown field \\"spec.bogus\\""']
    assert "bogus" not in obj["spec"]


def test_strict_strategic_merge_patch_shows_the_patch_map(sim):
    request(sim, "POST", DEPLOYMENTS, deployment("web"))
    patch = {"spec": {"bogus": 1000000, "replicas": 2}}
    code, _, st = request(
        sim,
        "PATCH",
        DEPLOYMENTS + "/web?fieldValidation=Strict",
        patch,
        "application/strategic-merge-patch+json",
    )
    assert code == 422
    assert st["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: map[spec:map[bogus:1e+06 replicas:2]]: "
            'strict decoding error: unknown field "spec.bogus"',
            "field": "patch",
        }
    ]


def test_an_unknown_directive_is_a_422_on_the_options(sim):
    code, _, st = request(sim, "POST", FOOS + "?fieldValidation=Loud", bogus_foo())
    assert code == 422
    assert st["details"] == {
        "group": "meta.k8s.io",
        "kind": "CreateOptions",
        "causes": [
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: "Loud": supported values: "", "Ignore", "Warn", '
                '"Strict"',
                "field": "fieldValidation",
            }
        ],
    }


@pytest.mark.kubesim(crds=[FOO_CRD], server_version="1.24")
def test_v1_24_ignores_field_validation_and_drops_unknown_fields(sim):
    for directive in ("Strict", "Warn", "Loud"):
        name = f"web-{directive.lower()}"
        path = DEPLOYMENTS + f"?fieldValidation={directive}"
        code, headers, obj = request(sim, "POST", path, bogus_deployment(name))
        assert code == 201 and warnings_of(headers) == []
        assert "bogus" not in obj["metadata"] and "bogus" not in obj["spec"]
