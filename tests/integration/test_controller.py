"""The Foo controller end to end against kubesim: lifecycle, repair, collision, events, steady
state."""

from __future__ import annotations

import time

import pytest

from client.rest import resource_path
from controller.__main__ import main
from controller.foo_controller import DEPLOYMENT_GVR
from kubesim import KubeSim
from tests.helpers import foreign_deployment, wait_for
from tests.integration.controller_harness import (
    ControllerHarness,
    foo,
)
from tests.integration.test_faults import FaultHarness

pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05)


@pytest.fixture
def harness(sim):
    h = ControllerHarness(sim, "--resync-period", "1s").start()
    yield h
    h.shutdown()


def available(h, name, n):
    def check():
        f = h.get_foo(name)
        return (f.get("status") or {}).get("availableReplicas") == n and f

    return check


def test_lifecycle_create_scale_repair_delete(harness):
    h = harness
    created = h.create_foo(foo("example-foo", replicas=1))

    dep = wait_for(lambda: h.deployment_or_none("example-foo"), message="deployment created")
    owner = dep["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Foo",
        "example-foo",
        created["metadata"]["uid"],
        True,
    )
    assert dep["spec"]["replicas"] == 1
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:latest"

    # status follows the deployment status loop, with observedGeneration and Ready
    f = wait_for(available(h, "example-foo", 1), message="status.availableReplicas=1")
    assert f["status"]["observedGeneration"] == f["metadata"]["generation"]
    ready = [c for c in f["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "True"

    # scale the Foo: the Deployment follows, then the status
    h.patch_foo("example-foo", {"spec": {"replicas": 3}})
    wait_for(
        lambda: h.get_deployment("example-foo")["spec"]["replicas"] == 3, message="scaled to 3"
    )
    f = wait_for(available(h, "example-foo", 3), message="status.availableReplicas=3")
    assert f["status"]["observedGeneration"] == 2

    # out-of-band: the Deployment scaled by hand is repaired
    d = h.get_deployment("example-foo")
    h.client.request(
        "PATCH",
        resource_path(*DEPLOYMENT_GVR, "default", "example-foo"),
        body={"spec": {"replicas": 7}},
        content_type="application/merge-patch+json",
    )
    wait_for(
        lambda: h.get_deployment("example-foo")["spec"]["replicas"] == 3, message="repaired scale"
    )

    # out-of-band: the Deployment deleted by hand is recreated
    h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, "default", "example-foo"))
    recreated = wait_for(
        lambda: (
            (x := h.deployment_or_none("example-foo"))
            and x["metadata"]["uid"] != d["metadata"]["uid"]
            and x
        ),
        message="deployment recreated",
    )
    assert recreated["spec"]["replicas"] == 3

    # delete the Foo: the garbage collector removes the Deployment
    h.delete_foo("example-foo")
    wait_for(lambda: h.deployment_or_none("example-foo") is None, message="deployment collected")

    # the Synced events were aggregated into one Event with a count, not one per sync
    synced = [e for e in h.events(involved="example-foo") if e["reason"] == "Synced"]
    assert len(synced) == 1
    assert synced[0]["count"] >= 2
    assert (
        h.metric("controller_runtime_reconcile_total", {"controller": "foo", "result": "success"})
        >= 3
    )


def test_collision_with_a_deployment_we_do_not_own(harness):
    h = harness
    foreign = h.client.request(
        "POST",
        resource_path(*DEPLOYMENT_GVR, "default"),
        body=foreign_deployment("taken"),
    )
    h.create_foo(foo("collider", deployment_name="taken", replicas=5))

    warning = wait_for(
        lambda: [e for e in h.events(involved="collider") if e["reason"] == "ErrResourceExists"],
        message="ErrResourceExists event",
    )[0]
    assert warning["type"] == "Warning"
    assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'
    # retried with backoff: errors counted, the foreign Deployment never written
    wait_for(
        lambda: (
            (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) >= 2
        ),
        message="retries",
    )
    wait_for(
        lambda: (h.metric("workqueue_retries_total", {"name": "foo"}) or 0) >= 2,
        message="workqueue retries metric",
    )
    after = h.get_deployment("taken")
    # (not its resourceVersion: kubesim's status loop writes the Deployment's status)
    writes = [
        r
        for r in h.sim.request_log
        if r.resource.startswith("deployments") and r.name == "taken" and r.verb != "get"
        and r.verb not in ("list", "watch") and r.user_agent == "sample-controller-py/test"
    ]  # fmt: skip
    assert writes == [] and foreign["metadata"]["uid"] == after["metadata"]["uid"]
    assert after["spec"]["replicas"] == 2
    assert "ownerReferences" not in after["metadata"]


def status_writes(sim: KubeSim, name: str) -> list:
    return [
        r
        for r in sim.request_log
        if r.resource == "foos/status"
        and r.name == name
        and r.verb == "update"
        and r.user_agent == "sample-controller-py/test"
    ]


def test_a_blocked_foo_says_so_once_and_recovers_as_soon_as_the_blocker_goes(sim):
    # A resync far away: only the Deployment informer can bring the Foo back early.
    h = FaultHarness(sim, "--resync-period", "10m").start()
    try:
        h.client.request(
            "POST", resource_path(*DEPLOYMENT_GVR, "default"), body=foreign_deployment("taken")
        )
        # The blocker in the controller's cache first: the two watches are separate streams, and
        # a Foo seen before its blocker is (rightly) written a status and tried once more.
        deployments = h.parts.deployment_informer.get_indexer()
        wait_for(
            lambda: deployments.get_by_key("default/taken") is not None,
            message="the blocker in the controller's cache",
        )
        created = h.create_foo(foo("collider", deployment_name="taken", replicas=2))
        ready = wait_for(
            lambda: [
                c
                for c in (h.get_foo("collider").get("status") or {}).get("conditions") or []
                if c["type"] == "Ready"
            ],
            message="a Ready condition",
        )[0]
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "False",
            "ErrResourceExists",
            'Resource "taken" already exists and is not managed by Foo',
        )
        # nine retries: the next one is ~2.5 s away (5 ms doubled nine times)
        key = "default/collider"
        queue = h.parts.controller.workqueue
        wait_for(lambda: queue.num_requeues(key) >= 9, timeout=10, message="nine retries")
        assert len(status_writes(sim, "collider")) == 1  # once per change, not once per retry

        deleted = time.monotonic()
        h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, "default", "taken"))
        mine = wait_for(
            lambda: (
                (d := h.deployment_or_none("taken"))
                and (d["metadata"].get("ownerReferences") or [{}])[0].get("uid")
                == created["metadata"]["uid"]
                and d
            ),
            timeout=5,
            message="the Foo's own Deployment",
        )
        took = time.monotonic() - deleted
        assert took < 1.0, (
            f"converged {took:.2f}s after the blocker went: its backoff, not the event"
        )
        assert mine["spec"]["replicas"] == 2
        f = wait_for(available(h, "collider", 2), message="collider available")
        ready = [c for c in f["status"]["conditions"] if c["type"] == "Ready"][0]
        assert (ready["status"], ready["reason"]) == ("True", "DeploymentAvailable")
    finally:
        h.shutdown()


def test_a_converging_run_makes_no_reconcile_errors(sim):
    # Create, scale and delete with nothing wrong: no 409 of our own making is an error (the
    # cache's lag behind our writes is waited out; a conflict with another writer is a requeue).
    h = ControllerHarness(sim, "--resync-period", "1s", "--workers", "4").start()
    try:
        names = [f"calm-{i}" for i in range(30)]
        for name in names:
            h.create_foo(foo(name, replicas=1))
        for name in names:
            wait_for(available(h, name, 1), message=f"{name} available")
        for name in names:
            h.patch_foo(name, {"spec": {"replicas": 2}})
        for name in names:
            wait_for(available(h, name, 2), message=f"{name} scaled")
        for name in names[::2]:
            h.delete_foo(name)
        for name in names[::2]:
            wait_for(lambda n=name: h.deployment_or_none(n) is None, message=f"{name} collected")
        assert h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) == 0
        assert (
            h.metric("controller_runtime_reconcile_total", {"controller": "foo", "result": "error"})
            == 0
        )
        ours = [r for r in sim.request_log if r.user_agent == "sample-controller-py/test"]
        creates = [r for r in ours if r.resource == "deployments" and r.verb == "create"]
        assert len(creates) == len(names)  # no create repeated (it would have met a 409)
        assert [r for r in ours if r.code == 409 and r.resource == "foos/status"] == []
    finally:
        h.shutdown()


def quiet_for(sim: KubeSim, seconds: float) -> bool:
    """No write from the controller has ended in the last ``seconds``."""
    writes = [
        r.time + r.duration
        for r in sim.request_log
        if r.verb in ("create", "update", "patch", "delete")
        and r.user_agent.startswith("sample-controller-py/test")
    ]
    return not writes or max(writes) < time.time() - seconds


def test_converged_foos_cost_no_writes_per_resync(sim):
    h = ControllerHarness(sim, "--resync-period", "1s").start()
    try:
        for i in range(5):
            h.create_foo(foo(f"steady-{i}", replicas=2))
        for i in range(5):
            wait_for(available(h, f"steady-{i}", 2), message=f"steady-{i} converged")
        # let the last Synced events and status writes land, then watch two resync periods:
        # the queue empty, and no write from the controller for a while (its Events are sent
        # by the recorder's own thread, after the sync that recorded them has ended)
        wait_for(
            lambda: h.metric("workqueue_depth", {"name": "foo"}) in (0, None), message="queue empty"
        )
        wait_for(lambda: quiet_for(sim, 0.3), message="the last writes")
        before = h.metric(
            "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}
        )
        sim.clear_request_log()
        wait_for(
            lambda: (
                h.metric(
                    "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}
                )
                >= before + 10
            ),
            timeout=10,
            message="two resyncs",
        )
        writes = [
            r
            for r in sim.request_log
            if r.verb in ("create", "update", "patch", "delete")
            and r.user_agent.startswith("sample-controller-py/test")
        ]
        assert writes == []
    finally:
        h.shutdown()


def test_empty_deployment_name_is_reported_once_without_retry_loop(sim):
    # The project's CRD rejects an empty name; an old sample-controller CRD would accept it.
    crd_without_validation = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "foos.samplecontroller.k8s.io",
            # a *.k8s.io group needs the API review's annotation (KEP-1111)
            "annotations": {"api-approved.kubernetes.io": "unapproved, example API"},
        },
        "spec": {
            "group": "samplecontroller.k8s.io",
            "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    sim.create_crd(crd_without_validation)
    h = ControllerHarness(sim, "--resync-period", "1s").start()
    try:
        h.create_foo(
            foo("nameless", deployment_name="", replicas=1)
            | {"spec": {"deploymentName": "", "replicas": 1}}
        )
        f = wait_for(
            lambda: (h.get_foo("nameless").get("status") or {}).get("conditions"),
            message="InvalidSpec condition",
        )
        assert f[0]["reason"] == "InvalidSpec" and f[0]["status"] == "False"
        wait_for(
            lambda: (
                h.metric(
                    "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}
                )
                >= 3
            ),
            message="a couple of resyncs",
        )
        assert (
            h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0
        ) == 0
        warnings = [e for e in h.events(involved="nameless") if e["reason"] == "InvalidSpec"]
        assert len(warnings) == 1 and warnings[0]["count"] == 1
    finally:
        h.shutdown()


def test_exits_with_a_clear_reason_when_the_crd_is_missing(tmp_path, capsys, kubesim_factory):
    bare = kubesim_factory()
    kubeconfig = bare.write_kubeconfig(tmp_path / "kubeconfig")
    code = main(["--kubeconfig", kubeconfig, "--workers", "1"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the CRD foos.samplecontroller.k8s.io is not installed" in err


def test_exits_with_a_clear_reason_when_the_server_is_unreachable(tmp_path, capsys):
    with KubeSim() as gone:
        kubeconfig = gone.write_kubeconfig(tmp_path / "kubeconfig")
    code = main(["--kubeconfig", kubeconfig])
    assert code == 1
    assert "cannot reach the API server" in capsys.readouterr().err
