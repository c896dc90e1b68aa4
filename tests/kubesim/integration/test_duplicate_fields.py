"""Duplicate keys in a JSON body, as the strict decoder reports them.

sigs.k8s.io/json's UnmarshalStrict names a key that appears twice in one object
``duplicate field "<path>"`` (the last value is the one kept); field validation treats it as
it treats an unknown field: a 400 under Strict, a Warning under Warn, nothing under Ignore.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from tests.kubesim.integration.test_api import FOO_CRD, raw

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
DUPLICATED = (
    b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},'
    b'"data":{"a":"1","a":"2"},"bogus":1}'
)


def _warnings(sim, method: str, path: str, body: bytes) -> tuple[int, list[str], bytes]:
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    out = resp.read()
    conn.close()
    return resp.status, resp.headers.get_all("Warning") or [], out


def test_strict_refuses_a_body_with_a_duplicate_field(sim):
    code, _, body = raw(sim, "POST", f"{CONFIGMAPS}?fieldValidation=Strict", DUPLICATED)
    status = json.loads(body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "data.a", unknown field "bogus"'
    )
    assert raw(sim, "GET", f"{CONFIGMAPS}/dup")[0] == 404


def test_warn_keeps_the_last_value_and_warns(sim):
    code, warnings, body = _warnings(sim, "POST", CONFIGMAPS, DUPLICATED)  # Warn: the default
    assert code == 201 and json.loads(body)["data"] == {"a": "2"}
    assert warnings == ['299 - "duplicate field \\"data.a\\""', '299 - "unknown field \\"bogus\\""']


def test_ignore_says_nothing(sim):
    body = DUPLICATED.replace(b'"dup"', b'"quiet"')
    code, warnings, _ = _warnings(sim, "POST", f"{CONFIGMAPS}?fieldValidation=Ignore", body)
    assert (code, warnings) == (201, [])


@pytest.mark.kubesim(crds=[FOO_CRD])
def test_custom_resources_and_list_items_are_named_by_path(sim):
    body = (
        b'{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"f"},'
        b'"spec":{"replicas":1,"replicas":2}}'
    )
    code, _, answer = raw(sim, "POST", f"{FOOS}?fieldValidation=Strict", body)
    assert code == 400
    assert json.loads(answer)["message"].endswith(
        'strict decoding error: duplicate field "spec.replicas"'
    )
    deploy = (
        b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{'
        b'"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},'
        b'"spec":{"containers":[{"name":"c","image":"i","name":"c"}]}}}}'
    )
    path = "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict"
    code, _, answer = raw(sim, "POST", path, deploy)
    assert code == 400 and json.loads(answer)["message"].endswith(
        'duplicate field "spec.template.spec.containers[0].name"'
    )


def test_an_update_is_checked_too(sim):
    raw(sim, "POST", CONFIGMAPS, {"metadata": {"name": "upd"}, "data": {"a": "1"}})
    body = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"upd"},"data":{"a":"1","a":"3"}}'
    )
    code, _, answer = raw(sim, "PUT", f"{CONFIGMAPS}/upd?fieldValidation=Strict", body)
    assert code == 400 and b'duplicate field \\"data.a\\"' in answer
