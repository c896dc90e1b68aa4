"""kubesim.views.table: Table rendering as kube-apiserver's printers, JSONPath cells and ages.

Columns and cells are those of pkg/printers/internalversion/printers.go for the built-in
kinds, apiserver's default convertor for kinds without a printer and apiextensions'
convertor for custom resources.
"""

from __future__ import annotations

import datetime as _dt

import pytest

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.storage.store import Stored
from kubesim.views.table import (
    TableOptions,
    human_duration,
    jsonpath_get,
    render_table,
    request_renderer,
)


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


# ---- built-in kinds: the columns and cells of kube-apiserver's printers ------------------------


def _ago(seconds: int) -> str:
    """A timestamp this many seconds ago (now, not at import: ages are read to the second).

    Written to the microsecond, a hundredth of a second past the mark: cut to the second, the
    age would read ``seconds`` plus whatever fraction of a second the clock was into, and a
    render a moment later could cross into the next second ("5m1s" for "5m")."""
    then = _dt.datetime.now(_dt.UTC) - _dt.timedelta(seconds=seconds, milliseconds=10)
    return then.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _info(group: str, kind: str, custom: bool = False, **kw) -> ResourceInfo:
    return ResourceInfo(group, "v1", kind.lower() + "s", kind, True, custom=custom, **kw)


def _table(group: str, kind: str, obj: dict, **kw) -> dict:
    obj = dict(obj, kind=kind, apiVersion=f"{group}/v1" if group else "v1")
    obj.setdefault("metadata", {})
    obj["metadata"] = {"name": "x", "creationTimestamp": _ago(3600), **obj["metadata"]}
    return render_table(_info(group, kind), [Stored(obj)], None, **kw)


def _columns(t: dict) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in t["columnDefinitions"]]


def test_deployment_columns_and_wide_cells():
    t = _table(
        "apps",
        "Deployment",
        {
            "spec": {
                "replicas": 3,
                "selector": {
                    "matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
                },
                "template": {
                    "spec": {
                        "containers": [{"name": "a", "image": "i:1"}, {"name": "b", "image": "j"}]
                    }
                },
            },
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 1},
        },
    )
    assert _columns(t) == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Up-to-date", "string", 0),
        ("Available", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
        ("Selector", "string", 1),
    ]
    assert t["columnDefinitions"][0]["format"] == "name"
    assert t["rows"][0]["cells"] == [
        "x",
        "2/3",
        3,
        1,
        "60m",
        "a,b",
        "i:1,j",
        "app=web,tier in (a,b)",
    ]
    # spec.replicas defaults to 1 on a real server; an empty selector is "" (Everything)
    bare = _table("apps", "Deployment", {"spec": {"selector": {}}})
    assert bare["rows"][0]["cells"][1] == "0/1" and bare["rows"][0]["cells"][7] == ""


def test_event_columns_and_cells():
    ev = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Deployment", "name": "web", "fieldPath": "spec"},
        "reason": "Scaled",
        "message": "  scaled up \n",
        "type": "Normal",
        "source": {"component": "deployment-controller", "host": "node-1"},
        "firstTimestamp": _ago(7200),
        "lastTimestamp": _ago(300),
        "count": 4,
    }
    t = _table("", "Event", ev)
    assert _columns(t) == [
        ("Last Seen", "string", 0),
        ("Type", "string", 0),
        ("Reason", "string", 0),
        ("Object", "string", 0),
        ("Subobject", "string", 1),
        ("Source", "string", 1),
        ("Message", "string", 0),
        ("First Seen", "string", 1),
        ("Count", "string", 1),
        ("Name", "string", 1),
    ]
    assert t["rows"][0]["cells"] == [
        "5m", "Normal", "Scaled", "deployment/web", "spec", "deployment-controller, node-1",
        "scaled up", "120m", 4, "web.1",
    ]  # fmt: skip
    # a new-API event: eventTime, a series, reportingComponent, no kind name
    new = {
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Node"},
        # MicroTime to the microsecond, so the age is 30 s plus the test's own run time (a
        # whole-second stamp with a fraction pasted on could be up to a second younger)
        "eventTime": (_dt.datetime.now(_dt.UTC) - _dt.timedelta(seconds=30)).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ"
        ),
        "series": {"count": 7, "lastObservedTime": _ago(10).replace("Z", ".000000Z")},
        "reportingComponent": "kubelet",
        "reportingInstance": "n1",
    }
    cells = _table("", "Event", new)["rows"][0]["cells"]
    assert cells[0] == "10s" and cells[3] == "node" and cells[5] == "kubelet, n1"
    assert cells[7] == "30s" and cells[8] == 7
    assert _table("", "Event", {"involvedObject": {}})["rows"][0]["cells"][8] == 1  # singleton


def test_events_v1_event_prints_as_the_core_event():
    ev = {
        "regarding": {"kind": "Pod", "name": "p"},
        "note": "hello",
        "reason": "R",
        "type": "Warning",
        "reportingController": "c",
        "eventTime": _ago(5).replace("Z", ".000000Z"),
    }
    cells = _table("events.k8s.io", "Event", ev)["rows"][0]["cells"]
    assert cells == ["5s", "Warning", "R", "pod/p", "", "c", "hello", "5s", 1, "x"]


def test_lease_namespace_serviceaccount_configmap_secret():
    lease = _table("coordination.k8s.io", "Lease", {"spec": {"holderIdentity": "me"}})
    assert _columns(lease) == [("Name", "string", 0), ("Holder", "string", 0), ("Age", "string", 0)]
    assert lease["rows"][0]["cells"] == ["x", "me", "60m"]
    assert _table("coordination.k8s.io", "Lease", {"spec": {}})["rows"][0]["cells"][1] == ""
    ns = _table("", "Namespace", {"status": {"phase": "Terminating"}})
    assert [c["name"] for c in ns["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert ns["rows"][0]["cells"] == ["x", "Terminating", "60m"]
    sa = _table("", "ServiceAccount", {"secrets": [{"name": "a"}, {"name": "b"}]})
    assert [c["name"] for c in sa["columnDefinitions"]] == ["Name", "Secrets", "Age"]
    assert sa["rows"][0]["cells"] == ["x", 2, "60m"]
    cm = _table("", "ConfigMap", {"data": {"a": "1"}, "binaryData": {"b": "AA=="}})
    assert [c["name"] for c in cm["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert cm["rows"][0]["cells"] == ["x", 2, "60m"]
    secret = _table("", "Secret", {"type": "kubernetes.io/tls", "data": {"a": "", "b": ""}})
    assert [c["name"] for c in secret["columnDefinitions"]] == ["Name", "Type", "Data", "Age"]
    assert secret["rows"][0]["cells"] == ["x", "kubernetes.io/tls", 2, "60m"]
    assert _table("", "Secret", {})["rows"][0]["cells"][1:3] == ["Opaque", 0]


@pytest.mark.parametrize(
    "spec,status,cells",
    [
        (
            {"clusterIP": "10.0.0.1", "ports": [{"port": 80}], "selector": {"b": "2", "a": "1"}},
            {},
            ["ClusterIP", "10.0.0.1", "<none>", "80/TCP", "a=1,b=2"],
        ),
        (
            {"type": "NodePort", "clusterIPs": ["10.0.0.2"], "externalIPs": ["1.2.3.4"],
             "ports": [{"port": 80, "nodePort": 30080, "protocol": "UDP"}, {"port": 443}]},
            {},
            ["NodePort", "10.0.0.2", "1.2.3.4", "80:30080/UDP,443/TCP", "<none>"],
        ),
        (
            {"type": "LoadBalancer", "clusterIP": "10.0.0.3"},
            {},
            ["LoadBalancer", "10.0.0.3", "<pending>", "<none>", "<none>"],
        ),
        (
            {"type": "LoadBalancer", "clusterIP": "10.0.0.3"},
            {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example"}]}},
            ["LoadBalancer", "10.0.0.3", "5.6.7.8,lb.example", "<none>", "<none>"],
        ),
        (
            {"type": "ExternalName", "externalName": "db.example"},
            {},
            ["ExternalName", "<none>", "db.example", "<none>", "<none>"],
        ),
    ],
)  # fmt: skip
def test_service_cells(spec, status, cells):
    t = _table("", "Service", {"spec": spec, "status": status})
    assert [c["name"] for c in t["columnDefinitions"]] == [
        "Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector",
    ]  # fmt: skip
    assert t["columnDefinitions"][-1]["priority"] == 1
    row = t["rows"][0]["cells"]
    assert row[1:5] + row[6:] == cells and row[5] == "60m"


def test_role_bindings_print_role_and_wide_subjects():
    subjects = [
        {"kind": "User", "name": "alice"},
        {"kind": "User", "name": "bob"},
        {"kind": "Group", "name": "devs"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": "ci"},
    ]
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        t = _table(
            "rbac.authorization.k8s.io",
            kind,
            {"roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": subjects},
        )
        assert _columns(t) == [
            ("Name", "string", 0),
            ("Role", "string", 0),
            ("Age", "string", 0),
            ("Users", "string", 1),
            ("Groups", "string", 1),
            ("ServiceAccounts", "string", 1),
        ]
        assert t["rows"][0]["cells"] == [
            "x",
            "ClusterRole/view",
            "60m",
            "alice, bob",
            "devs",
            "ci/robot",
        ]


@pytest.mark.parametrize(
    "group,kind",
    [
        ("rbac.authorization.k8s.io", "Role"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ],
)
def test_kinds_without_a_printer_get_name_and_created_at(group, kind):
    t = _table(group, kind, {"metadata": {"creationTimestamp": "2024-03-01T10:00:00Z"}})
    assert _columns(t) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert t["rows"][0]["cells"] == ["x", "2024-03-01T10:00:00Z"]
    # the default convertor's rows start nil: an empty list's Table has "rows": null
    empty = render_table(_info(group, kind), [], {"resourceVersion": "9"})
    assert empty["rows"] is None and empty["metadata"] == {"resourceVersion": "9"}
    assert render_table(_info("", "Namespace"), [], {})["rows"] == []


def test_include_object_metadata_object_and_none():
    obj = {"spec": {"holderIdentity": "me"}, "metadata": {"labels": {"a": "b"}}}
    meta = _table("coordination.k8s.io", "Lease", obj)["rows"][0]["object"]
    assert meta["kind"] == "PartialObjectMetadata" and meta["apiVersion"] == "meta.k8s.io/v1"
    assert meta["metadata"]["labels"] == {"a": "b"} and "spec" not in meta
    full = _table("coordination.k8s.io", "Lease", obj, options=TableOptions("Object"))
    assert full["rows"][0]["object"]["spec"] == {"holderIdentity": "me"}
    assert full["rows"][0]["object"]["kind"] == "Lease"
    none = _table("coordination.k8s.io", "Lease", obj, options=TableOptions("None"))
    assert none["rows"][0]["object"] is None
    with pytest.raises(errors.ApiError) as e:
        TableOptions.from_query({"includeObject": "Everything"})
    assert e.value.code == 400
    assert e.value.body["message"] == (
        "Unable to convert to Table as requested: includeObject: Invalid value: "
        "\"Everything\": must be 'Metadata', 'Object', 'None', or empty"
    )


def test_a_watch_sends_column_definitions_with_the_first_event_only():
    render = request_renderer(render_table, {}, watch=True)
    obj = Stored({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "a"}})
    first = render(_info("", "Namespace"), [obj], None)
    second = render(_info("", "Namespace"), [obj], None)
    assert [c["name"] for c in first["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert second["columnDefinitions"] is None and second["rows"][0]["cells"][0] == "a"
    once = request_renderer(render_table, {})
    assert once(_info("", "Namespace"), [obj], None)["columnDefinitions"] is not None
    assert once(_info("", "Namespace"), [obj], None)["columnDefinitions"] is not None


def test_human_duration_edges():
    assert human_duration(-1.5) == "0s"  # clock skew of up to a second reads as now
    assert human_duration(-2) == "<invalid>"
    assert human_duration(3 * 365 * 86400 + 10 * 86400) == "3y10d"
    assert human_duration(9 * 365 * 86400) == "9y"


def test_custom_resource_columns_follow_apiextensions_convertor():
    info = ResourceInfo(
        "g",
        "v1",
        "foos",
        "Foo",
        True,
        custom=True,
        printer_columns=[
            {"name": "Str", "type": "string", "jsonPath": ".spec.obj"},
            {"name": "Int", "type": "integer", "jsonPath": ".spec.float", "priority": 1},
            {"name": "Flag", "type": "boolean", "jsonPath": ".spec.flag"},
            {"name": "BadInt", "type": "integer", "jsonPath": ".spec.flag"},
            {"name": "When", "type": "date", "jsonPath": ".status.when", "description": "d"},
            {"name": "Bad", "type": "date", "jsonPath": ".status.bad"},
        ],
    )
    obj = {
        "kind": "Foo",
        "apiVersion": "g/v1",
        "metadata": {"name": "f"},
        "spec": {"obj": {"b": 1, "a": [True]}, "float": 2.9, "flag": True},
        "status": {"when": _ago(90), "bad": "yesterday"},
    }
    t = render_table(info, [Stored(obj)], None)
    cols = t["columnDefinitions"]
    assert (
        cols[1]["description"]
        == "Custom resource definition column (in JSONPath format): .spec.obj"
    )
    assert cols[2]["priority"] == 1 and cols[5]["description"] == "d"
    assert t["rows"][0]["cells"] == ["f", '{"a":[true],"b":1}', 2, True, None, "90s", "<invalid>"]
    default = render_table(ResourceInfo("g", "v1", "foos", "Foo", True, custom=True), [], {})
    assert _columns(default) == [("Name", "string", 0), ("Age", "date", 0)]
    assert default["rows"] == []


def test_node_columns_and_cells():
    node = {
        "metadata": {
            "labels": {
                "node-role.kubernetes.io/control-plane": "",
                "node-role.kubernetes.io/": "x",  # an empty role is not one
                "kubernetes.io/role": "worker",
            }
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True"},
            ],
            "addresses": [
                {"type": "Hostname", "address": "n1"},
                {"type": "InternalIP", "address": "10.0.0.5"},
                {"type": "InternalIP", "address": "10.0.0.6"},
            ],
            "nodeInfo": {"kubeletVersion": "v1.33.1", "osImage": "Debian GNU/Linux 12"},
        },
    }
    t = _table("", "Node", node)
    assert _columns(t) == [
        ("Name", "string", 0),
        ("Status", "string", 0),
        ("Roles", "string", 0),
        ("Age", "string", 0),
        ("Version", "string", 0),
        ("Internal-IP", "string", 1),
        ("External-IP", "string", 1),
        ("OS-Image", "string", 1),
        ("Kernel-Version", "string", 1),
        ("Container-Runtime", "string", 1),
    ]
    assert t["columnDefinitions"][1]["description"] == "The status of the node"
    assert t["rows"][0]["cells"] == [
        "x",
        "Ready,SchedulingDisabled",
        "control-plane,worker",
        "60m",
        "v1.33.1",
        "10.0.0.5",
        "<none>",
        "Debian GNU/Linux 12",
        "<unknown>",
        "<unknown>",
    ]
    not_ready = {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
    assert _table("", "Node", not_ready)["rows"][0]["cells"][1:3] == ["NotReady", "<none>"]
    assert _table("", "Node", {})["rows"][0]["cells"][1] == "Unknown"
