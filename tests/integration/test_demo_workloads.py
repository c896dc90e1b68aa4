"""The demo's view of the workload chain (``demo.workloads``) and its step-end bookkeeping
(``demo.settle.Handled``), on hand-made objects: no server, no browser.

``make demo``'s and demo-ui's live tests (test_docs.py, test_demo_ui.py) show them working on a
real run; these show the cases a run rarely meets: a Pod that shares its Deployment's labels
but not its owner, a Pod whose ReplicaSet is gone, a handler that has not finished.
"""

from __future__ import annotations

from typing import Any

from demo.settle import Handled
from demo.workloads import pod_ready, pod_ready_column, pod_status, workloads


def owned(name: str, uid: str, owner_uid: str | None, **extra: Any) -> dict[str, Any]:
    refs = [{"kind": "X", "name": "owner", "uid": owner_uid, "controller": True}]
    return {
        "metadata": {
            "name": name,
            "uid": uid,
            "labels": {"app": "nginx"},
            "ownerReferences": refs if owner_uid else [],
        },
        **extra,
    }


def running(name: str, uid: str, rs_uid: str, ready: bool = True) -> dict[str, Any]:
    return owned(
        name,
        uid,
        rs_uid,
        spec={"containers": [{"name": "nginx"}]},
        status={
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [{"ready": ready, "restartCount": 0, "state": {"running": {}}}],
        },
    )


def test_pods_are_found_through_controller_references_not_labels():
    d1, d2 = owned("web", "d1", None), owned("other", "d2", None)
    rs1, rs2 = owned("web-abc", "r1", "d1"), owned("other-xyz", "r2", "d2")
    # a ReplicaSet whose Deployment is gone (being collected), and its Pod
    stray_rs = owned("old-abc", "r3", "gone")
    pods = [
        running("web-abc-2", "p2", "r1"),
        running("web-abc-1", "p1", "r1"),
        running("other-xyz-1", "p3", "r2"),
        running("old-abc-1", "p4", "r3"),
        # same labels as web's Pods, but its ReplicaSet is gone
        running("web-def-1", "p5", "r9"),
    ]
    found, orphans = workloads([d1, d2], [rs1, rs2, stray_rs], pods)
    by_name = {w.name: [p["metadata"]["name"] for p in w.pods] for w in found}
    assert by_name == {"web": ["web-abc-1", "web-abc-2"], "other": ["other-xyz-1"]}
    assert [w.replica_sets for w in found] == [[rs1], [rs2]]
    assert [p["metadata"]["name"] for p in orphans] == ["old-abc-1", "web-def-1"]


def test_a_pods_columns_are_kubectls():
    pod = running("web-abc-1", "p1", "r1")
    assert (pod_ready_column(pod), pod_status(pod), pod_ready(pod)) == ("1/1", "Running", True)
    # admitted by the node, containers not started yet
    creating = running("web-abc-2", "p2", "r1", ready=False)
    creating["status"]["phase"] = "Pending"
    creating["status"]["containerStatuses"][0]["state"] = {
        "waiting": {"reason": "ContainerCreating"}
    }
    assert (pod_ready_column(creating), pod_status(creating)) == ("0/1", "ContainerCreating")
    assert not pod_ready(creating)
    # not bound yet: no container status at all
    assert pod_status({"metadata": {}, "status": {"phase": "Pending"}}) == "Pending"
    # deleting wins over the phase
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert pod_status(pod) == "Terminating"


class FakeRegistration:
    def __init__(self) -> None:
        self.calls: list[str] = []
        outer = self

        class Inner:
            def on_add(self, obj: Any, initial: bool) -> None:
                outer.calls.append("add")

            def on_update(self, old: Any, new: Any) -> None:
                outer.calls.append("update")

            def on_delete(self, obj: Any) -> None:
                outer.calls.append("delete")

        self.handler: Any = Inner()


def foo(rv: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "default", "name": "a", "resourceVersion": rv}}


def test_a_step_is_not_over_until_every_handler_has_finished_the_current_version():
    handled = Handled()
    trace, controller = FakeRegistration(), FakeRegistration()
    handled.tap("Foo", [trace, controller])
    current = {"default/a": foo("2")}
    # never notified
    assert handled.behind("Foo", "default", current) == "default/a"
    trace.handler.on_add(foo("1"), False)
    controller.handler.on_add(foo("1"), False)
    # the wrapped handlers ran, and an older version is not the server's
    assert trace.calls == controller.calls == ["add"]
    assert handled.behind("Foo", "default", current) == "default/a"
    trace.handler.on_update(foo("1"), foo("2"))
    # one handler (the --trace printer) has it, the controller's has not
    assert handled.behind("Foo", "default", current) == "default/a"
    controller.handler.on_update(foo("1"), foo("2"))
    assert handled.behind("Foo", "default", current) is None
    # gone from the server: over once every handler has seen the deletion
    assert handled.behind("Foo", "default", {}) == "default/a"
    trace.handler.on_delete(foo("3"))
    assert handled.behind("Foo", "default", {}) == "default/a"

    class Tombstone:  # informer.store.DeletedFinalStateUnknown's shape
        obj = foo("2")

    controller.handler.on_delete(Tombstone())
    assert handled.behind("Foo", "default", {}) is None
    # another namespace's objects are another step's business
    other = {"metadata": {"namespace": "elsewhere", "name": "b", "resourceVersion": "7"}}
    trace.handler.on_add(other, False)
    assert handled.behind("Foo", "default", {}) is None
    assert handled.behind("Foo", "elsewhere", {}) == "elsewhere/b"
