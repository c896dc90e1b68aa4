"""ConfigMaps, Secrets and events.k8s.io/v1 Events through the official client.

kube-apiserver's rules: ConfigMap and Secret data keys must be config keys, a Secret's data is
base64 and its stringData is merged into data on write, its type defaults to Opaque and never
changes, an ``immutable`` object keeps its data. events.k8s.io/v1 serves the core Events,
converted (``note``/``message``, ``regarding``/``involvedObject``, ``deprecatedCount``/``count``,
...), with the stricter rules that version adds for new writes.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubesim import KubeSim
from tests.kubesim.integration.test_api import raw

NS = "default"


@pytest.fixture(scope="module")
def sim():
    with KubeSim() as s:
        yield s


@pytest.fixture(scope="module")
def core(sim):
    return client.CoreV1Api(sim.api_client)


@pytest.fixture(scope="module")
def events(sim):
    return client.EventsV1Api(sim.api_client)


def status_of(exc: ApiException) -> dict:
    return json.loads(exc.body)


def test_discovery_serves_configmaps_secrets_and_events_k8s_io(sim):
    core_v1 = json.loads(raw(sim, "GET", "/api/v1")[2])["resources"]
    by_name = {r["name"]: r for r in core_v1}
    assert by_name["configmaps"]["shortNames"] == ["cm"]
    assert by_name["configmaps"]["kind"] == "ConfigMap" and by_name["secrets"]["kind"] == "Secret"
    assert "serviceaccounts" in by_name
    groups = [g["name"] for g in json.loads(raw(sim, "GET", "/apis")[2])["groups"]]
    assert groups[:2] == ["apps", "events.k8s.io"]
    ev = json.loads(raw(sim, "GET", "/apis/events.k8s.io/v1")[2])
    assert ev["groupVersion"] == "events.k8s.io/v1"
    assert [(r["name"], r["kind"], r["namespaced"]) for r in ev["resources"]] == [
        ("events", "Event", True)
    ]


def test_configmap_round_trip_and_key_validation(core):
    cm = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="settings"),
        data={"mode": "fast", "app.properties": "a=1"},
        binary_data={"blob": "AAEC"},
    )
    created = core.create_namespaced_config_map(NS, cm)
    assert created.data == {"mode": "fast", "app.properties": "a=1"}
    assert created.metadata.generation is None  # ConfigMaps have no generation
    got = core.read_namespaced_config_map("settings", NS)
    assert got.binary_data == {"blob": "AAEC"}
    # (beside the root CA publisher's kube-root-ca.crt, which a new namespace gets soon)
    names = [c.metadata.name for c in core.list_namespaced_config_map(NS).items]
    assert "settings" in names and set(names) <= {"settings", "kube-root-ca.crt"}
    bad = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="bad"), data={"a b": "1"})
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(NS, bad)
    status = status_of(err.value)
    assert err.value.status == 422
    assert status["details"]["causes"][0]["field"] == "data[a b]"
    assert status["message"].startswith(
        'ConfigMap "bad" is invalid: data[a b]: Invalid value: "a b": a valid config key must '
        "consist of alphanumeric characters, '-', '_' or '.'"
    )


def test_immutable_configmap_keeps_its_data(core):
    cm = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="frozen"), data={"k": "v"}, immutable=True
    )
    core.create_namespaced_config_map(NS, cm)
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map("frozen", NS, {"data": {"k": "w"}})
    assert err.value.status == 422
    causes = status_of(err.value)["details"]["causes"]
    assert causes == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: field is immutable when `immutable` is set",
            "field": "data",
        }
    ]
    labelled = core.patch_namespaced_config_map("frozen", NS, {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.labels == {"a": "b"}


def test_secret_string_data_type_and_base64(core, sim):
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="creds"),
        data={"user": "YWRtaW4="},
        string_data={"password": "s3cr3t"},
    )
    created = core.create_namespaced_secret(NS, secret)
    assert created.type == "Opaque"
    assert created.string_data is None
    assert created.data == {"user": "YWRtaW4=", "password": "czNjcjN0"}
    path = f"/api/v1/namespaces/{NS}/secrets"
    code, _, body = raw(
        sim, "POST", path, {"kind": "Secret", "metadata": {"name": "bad"}, "data": {"k": "czNj!"}}
    )
    assert (code, json.loads(body)["message"]) == (
        400,
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4',
    )
    tls = {"kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls"}
    code, _, body = raw(sim, "POST", path, tls)
    assert code == 422
    assert [c["field"] for c in json.loads(body)["details"]["causes"]] == [
        "data[tls.crt]",
        "data[tls.key]",
    ]


def test_secret_type_is_immutable_and_immutable_secrets_keep_data(core):
    core.create_namespaced_secret(
        NS, client.V1Secret(metadata=client.V1ObjectMeta(name="s1"), string_data={"a": "1"})
    )
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_secret("s1", NS, {"type": "kubernetes.io/basic-auth"})
    cause = status_of(err.value)["details"]["causes"][0]
    assert cause == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "kubernetes.io/basic-auth": field is immutable',
        "field": "type",
    }
    core.patch_namespaced_secret("s1", NS, {"immutable": True})
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_secret("s1", NS, {"stringData": {"a": "2"}})
    assert status_of(err.value)["details"]["causes"][0]["field"] == "data"
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_secret("s1", NS, {"immutable": False})
    assert status_of(err.value)["details"]["causes"][0]["field"] == "immutable"
    by_type = core.list_namespaced_secret(NS, field_selector="type=Opaque").items
    assert "s1" in [s.metadata.name for s in by_type]


def _event_v1(name: str, **changes) -> dict:
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2024-05-01T10:00:00.000000Z",
        "reportingController": "example.com/scaler",
        "reportingInstance": "scaler-1",
        "action": "Scale",
        "reason": "Scaled",
        "type": "Normal",
        "regarding": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": NS,
            "name": "web",
        },
        "note": "scaled to 3",
    }
    ev.update(changes)
    return ev


def test_events_k8s_io_and_core_events_are_one_store(events, core, sim):
    created = events.create_namespaced_event(NS, _event_v1("web.1"))
    assert created.note == "scaled to 3" and created.regarding.name == "web"
    as_core = core.read_namespaced_event("web.1", NS)
    assert as_core.message == "scaled to 3"
    assert as_core.involved_object.kind == "Deployment"
    assert as_core.reporting_component == "example.com/scaler"
    legacy = client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="web.2"),
        involved_object=client.V1ObjectReference(kind="Deployment", name="web", namespace=NS),
        reason="Seen",
        message="seen twice",
        count=2,
        type="Normal",
        source=client.V1EventSource(component="watcher"),
    )
    core.create_namespaced_event(NS, legacy)
    # read raw: the official client's model refuses the null eventTime a legacy Event has
    as_v1 = json.loads(raw(sim, "GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events/web.2")[2])
    assert as_v1["eventTime"] is None
    assert (as_v1["note"], as_v1["deprecatedCount"]) == ("seen twice", 2)
    assert as_v1["deprecatedSource"] == {"component": "watcher"}
    listed = json.loads(raw(sim, "GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events")[2])
    assert {"web.1", "web.2"} <= {e["metadata"]["name"] for e in listed["items"]}
    selected = events.list_namespaced_event(NS, field_selector="regarding.name=web,reason=Scaled")
    assert [e.metadata.name for e in selected.items] == ["web.1"]
    code, _, body = raw(
        sim, "GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events?fieldSelector=note=x"
    )
    assert (code, json.loads(body)["message"]) == (400, "field label not supported: note")


def test_events_k8s_io_writes_follow_that_versions_rules(events):
    with pytest.raises(ApiException) as err:
        events.create_namespaced_event(NS, _event_v1("bad", type="Bogus", deprecatedCount=2))
    status = status_of(err.value)
    assert err.value.status == 422
    assert status["message"].startswith('Event.events.k8s.io "bad" is invalid: [')
    assert [c["field"] for c in status["details"]["causes"]] == ["type", "count"]
    events.create_namespaced_event(NS, _event_v1("web.3"))
    series = {"series": {"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"}}
    patched = events.patch_namespaced_event("web.3", NS, series)
    assert patched.series.count == 2
    with pytest.raises(ApiException) as err:
        events.patch_namespaced_event("web.3", NS, {"note": "rewritten"})
    assert status_of(err.value)["details"]["causes"][0]["field"] == "message"
