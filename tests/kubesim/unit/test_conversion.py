"""kubesim.api.conversion: events.k8s.io/v1 <-> core/v1 Events, Secret and ConfigMap decoding."""

from __future__ import annotations

import pytest

from kubesim.api import errors
from kubesim.api.conversion import CONFIGMAP_V1, EVENTS_V1, SECRET_V1, go_shape
from kubesim.validation.corevalidation import config_map_key_errors

EVENT_V1 = {
    "kind": "Event",
    "apiVersion": "events.k8s.io/v1",
    "metadata": {"name": "web.1", "namespace": "dev"},
    "eventTime": "2024-05-01T12:00:00.123456+02:00",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:01:00.000000Z"},
    "reportingController": "example.com/ctl",
    "reportingInstance": "ctl-1",
    "action": "Scale",
    "reason": "Scaled",
    "regarding": {"kind": "Deployment", "namespace": "dev", "name": "web"},
    "related": {"kind": "ReplicaSet", "name": "web-1"},
    "note": "scaled up",
    "type": "Normal",
    "deprecatedSource": {"component": "ctl"},
    "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z",
    "deprecatedLastTimestamp": "2024-05-01T10:00:05Z",
    "deprecatedCount": 3,
}


def test_events_v1_is_stored_as_core_v1_with_the_fields_renamed():
    core = EVENTS_V1.to_storage(dict(EVENT_V1))
    assert core == {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": "web.1", "namespace": "dev"},
        "involvedObject": {"kind": "Deployment", "namespace": "dev", "name": "web"},
        "reason": "Scaled",
        "message": "scaled up",
        "source": {"component": "ctl"},
        "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": "2024-05-01T10:00:05Z",
        "count": 3,
        "type": "Normal",
        "eventTime": "2024-05-01T10:00:00.123456Z",  # MicroTime in UTC, as Go writes it
        "series": {"count": 2, "lastObservedTime": "2024-05-01T10:01:00.000000Z"},
        "action": "Scale",
        "related": {"kind": "ReplicaSet", "name": "web-1"},
        "reportingComponent": "example.com/ctl",
        "reportingInstance": "ctl-1",
    }


def test_core_events_read_as_events_v1_and_back():
    core = EVENTS_V1.to_storage(dict(EVENT_V1))
    back = EVENTS_V1.from_storage(core)
    expected = dict(EVENT_V1, eventTime="2024-05-01T10:00:00.123456Z")
    assert back == expected
    assert list(back) == list(EVENT_V1)  # events/v1 field order


def test_a_legacy_core_event_read_as_events_v1_has_go_zero_values():
    core = {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": "p.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "Started",
        "message": "started",
        "count": 1,
        "type": "Normal",
    }
    assert EVENTS_V1.from_storage(core) == {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "p.1", "namespace": "default"},
        "eventTime": None,
        "reason": "Started",
        "regarding": {"kind": "Pod", "name": "p"},
        "note": "started",
        "type": "Normal",
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": None,
        "deprecatedLastTimestamp": None,
        "deprecatedCount": 1,
    }


def test_an_event_with_an_unreadable_time_is_a_bad_request():
    with pytest.raises(errors.ApiError) as err:
        EVENTS_V1.to_storage(dict(EVENT_V1, eventTime="yesterday"))
    assert err.value.code == 400
    assert err.value.body["message"].startswith(
        'Event in version "v1" cannot be handled as a Event:'
    )


def test_secret_string_data_is_merged_into_data_and_type_defaults_to_opaque():
    secret = {"metadata": {}, "data": {"a": "YQ==", "b": "Yg=="}, "stringData": {"b": "B"}}
    out = SECRET_V1.to_storage(secret)
    assert out == {"metadata": {}, "data": {"a": "YQ==", "b": "Qg=="}, "type": "Opaque"}
    assert SECRET_V1.to_storage({"metadata": {}, "data": {}}) == {"metadata": {}, "type": "Opaque"}
    kept = SECRET_V1.to_storage({"metadata": {}, "type": "kubernetes.io/tls"})
    assert kept["type"] == "kubernetes.io/tls"


@pytest.mark.parametrize(
    ("value", "offset"),
    [("czNj!", 4), ("abc", 0), ("YQ=", 3), ("YQ==x", 4), ("=", 0), ("Y===", 1)],
)
def test_secret_data_must_be_base64_with_gos_error_offset(value: str, offset: int):
    with pytest.raises(errors.ApiError) as err:
        SECRET_V1.to_storage({"metadata": {}, "data": {"k": value}})
    assert err.value.code == 400
    assert err.value.body["message"] == (
        f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input '
        f"byte {offset}"
    )


def test_base64_with_line_breaks_is_read_and_stored_canonically():
    out = SECRET_V1.to_storage({"metadata": {}, "data": {"k": "czNj\ncjN0\r\n"}})
    assert out["data"] == {"k": "czNjcjN0"}


def test_config_map_data_must_be_strings():
    with pytest.raises(errors.ApiError) as err:
        CONFIGMAP_V1.to_storage({"metadata": {}, "data": {"n": 3}})
    assert err.value.body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ConfigMap.data of type string"
    )
    assert CONFIGMAP_V1.to_storage({"metadata": {}, "data": {}}) == {"metadata": {}}


def test_config_map_keys():
    assert config_map_key_errors("app.properties") == []
    assert config_map_key_errors("a b")[0].startswith("a valid config key must consist of")
    assert config_map_key_errors("..data") == ["must not start with '..'"]
    assert config_map_key_errors(".") == ["must not be '.'"]
    assert config_map_key_errors("k" * 254) == ["must be no more than 253 characters"]


def test_go_shape_orders_fields_and_drops_empty_ones():
    meta = {"labels": {}, "uid": "u", "name": "n", "generation": 0}
    assert go_shape("meta.ObjectMeta", meta) == {
        "name": "n",
        "uid": "u",
        "creationTimestamp": None,
    }
