"""printPod's STATUS, READY and RESTARTS cells and printReplicaSet's row, for the states the
simulated node never produces (waiting, crashed, initializing, terminating) as well as those
it does."""

from __future__ import annotations

import pytest

from kubesim.views.table_workloads import WORKLOAD_PRINTERS

POD_ROW = WORKLOAD_PRINTERS[("", "Pod")].row
RS_ROW = WORKLOAD_PRINTERS[("apps", "ReplicaSet")].row


def pod(status: dict, **meta) -> dict:
    return {
        "metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z", **meta},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "initContainers": [{"name": "i"}]},
        "status": status,
    }


def running(name: str, ready: bool = True, restarts: int = 0) -> dict:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": "2020-01-01T00:00:00Z"}},
    }


INIT_DONE = [{"name": "i", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]


@pytest.mark.parametrize(
    ("status", "meta", "cells"),
    [
        ({"phase": "Pending"}, {}, ["0/2", "Pending", "0"]),
        (
            {
                "phase": "Pending",
                "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
                ],
            },
            {},
            ["0/2", "SchedulingGated", "0"],
        ),
        (
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    {"name": "i", "state": {"running": {}}, "restartCount": 0}
                ],
            },
            {},
            ["0/2", "Init:0/1", "0"],
        ),
        (
            {
                "phase": "Running",
                "initContainerStatuses": INIT_DONE,
                "containerStatuses": [running("a", restarts=2), running("b")],
            },
            {},
            ["2/2", "Running", "2"],
        ),
        (
            {
                "phase": "Running",
                "initContainerStatuses": INIT_DONE,
                "containerStatuses": [
                    running("a"),
                    {
                        "name": "b",
                        "ready": False,
                        "restartCount": 5,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    },
                ],
            },
            {},
            ["1/2", "CrashLoopBackOff", "5"],
        ),
        (
            {
                "phase": "Running",
                "initContainerStatuses": INIT_DONE,
                "containerStatuses": [running("a"), running("b")],
            },
            {"deletionTimestamp": "2020-01-01T00:01:00Z"},
            ["2/2", "Terminating", "0"],
        ),
    ],
    ids=["pending", "gated", "initializing", "running", "crashing", "terminating"],
)
def test_pod_status_cells(status, meta, cells):
    row = POD_ROW(pod(status, **meta))
    assert row[1:4] == cells
    assert row[5:] == ["<none>", "<none>", "<none>", "<none>"]  # IP, node, nominated, gates


def test_a_running_pods_wide_cells():
    p = pod({"phase": "Running", "podIPs": [{"ip": "10.244.0.5"}]})
    p["spec"]["nodeName"] = "kubesim-node"
    p["spec"]["readinessGates"] = [{"conditionType": "x"}]
    assert POD_ROW(p)[5:] == ["10.244.0.5", "kubesim-node", "<none>", "0/1"]


def test_replica_set_row():
    rs = {
        "metadata": {"name": "web-abc", "creationTimestamp": "2020-01-01T00:00:00Z"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": "abc"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    row = RS_ROW(rs)
    assert row[:4] == ["web-abc", 3, 2, 1]
    assert row[5:] == ["c", "nginx", "app=web,pod-template-hash=abc"]
