"""kubesim.table: Table rendering, JSONPath cells and HumanDuration ages."""

from __future__ import annotations

from kubesim.resources import ResourceInfo
from kubesim.storage import Stored
from kubesim.table import human_duration, jsonpath_get, render_table


def test_human_duration_matches_apimachinery():
    assert [
        human_duration(s)
        for s in (5, 119, 125, 600, 3 * 3600 + 60, 30 * 3600, 3 * 86400 + 3600, 20 * 86400)
    ] == ["5s", "119s", "2m5s", "10m", "3h1m", "30h", "3d1h", "20d"]


def test_jsonpath_forms():
    obj = {"spec": {"items": [{"n": 1}], "a.b": 2}}
    assert jsonpath_get(obj, ".spec.items[0].n") == 1
    assert jsonpath_get(obj, "{.spec['a.b']}") == 2
    assert jsonpath_get(obj, ".spec.missing") is None


def test_jsonpath_equality_filter_for_condition_columns():
    obj = {
        "status": {
            "conditions": [
                {"type": "Progressing", "status": "False"},
                {"type": "Ready", "status": "True"},
            ]
        }
    }
    assert jsonpath_get(obj, '.status.conditions[?(@.type=="Ready")].status') == "True"
    assert jsonpath_get(obj, ".status.conditions[?(@.type=='Progressing')].status") == "False"
    assert jsonpath_get(obj, '.status.conditions[?(@.type=="Missing")].status') is None
    assert jsonpath_get({"status": {}}, '.status.conditions[?(@.type=="Ready")].status') is None


def test_default_and_printer_column_tables():
    obj = Stored(
        {
            "kind": "Foo",
            "apiVersion": "g/v1",
            "metadata": {"name": "x", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"replicas": 2},
        }
    )
    plain = render_table(
        ResourceInfo("g", "v1", "foos", "Foo", True, custom=True), [obj], {"resourceVersion": "5"}
    )
    assert [c["name"] for c in plain["columnDefinitions"]] == ["Name", "Age"]
    assert (
        plain["rows"][0]["cells"][0] == "x"
        and plain["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    )
    info = ResourceInfo(
        "g",
        "v1",
        "foos",
        "Foo",
        True,
        custom=True,
        printer_columns=[
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Missing", "type": "string", "jsonPath": ".status.x"},
        ],
    )
    t = render_table(info, [obj], None)
    assert t["rows"][0]["cells"] == ["x", 2, None]
