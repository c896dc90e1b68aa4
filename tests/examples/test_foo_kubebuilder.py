"""The Foo controller's core behaviour, run against both ways of writing it: the sample-controller
way (``controller/``) and the kubebuilder way (``examples/foo_kubebuilder``), on kubesim.

Each scenario is written once, against ``ControllerHarness``'s helpers, and parametrised over
the two ways: where the behaviour is meant to be the same, one test says so for both.
``KubebuilderHarness`` is the same harness with the kubebuilder way's reconciler set up on the
manager instead of the sample-controller way's controller.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.rest import resource_path
from controller.apis import DEPLOYMENT_GVR
from examples.foo_kubebuilder.controller import FooReconciler
from kubesim import KubeSim
from runtime.manager import Manager
from tests.helpers import foreign_deployment, wait_for
from tests.integration.controller_harness import ControllerHarness, foo

pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05, gc_delay=0.0)


class KubebuilderHarness(ControllerHarness):
    """``ControllerHarness`` running ``examples.foo_kubebuilder`` on the runtime's manager."""

    def _run(self) -> None:
        manager = Manager(self.options, self._rest, registry=self.registry)
        FooReconciler(manager).setup_with_manager(manager)
        self.exit_code = manager.run_runnables(self.stop, self.ready)


WAYS = {"sample-controller": ControllerHarness, "kubebuilder": KubebuilderHarness}


@pytest.fixture(params=sorted(WAYS))
def harness(request: pytest.FixtureRequest, sim: KubeSim) -> Iterator[ControllerHarness]:
    h = WAYS[request.param](sim, "--resync-period", "1s").start()
    yield h
    assert h.shutdown() == 0


def available(h: ControllerHarness, name: str, n: int):
    def check():
        f = h.get_foo(name)
        return (f.get("status") or {}).get("availableReplicas") == n and f

    return check


def ready_condition(f: dict) -> dict:
    return next(c for c in f["status"]["conditions"] if c["type"] == "Ready")


def test_a_foo_gets_its_deployment_scaled_repaired_and_collected(harness):
    h = harness
    created = h.create_foo(foo("example-foo", replicas=1))

    dep = wait_for(lambda: h.deployment_or_none("example-foo"), message="deployment created")
    (owner,) = dep["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Foo",
        "example-foo",
        created["metadata"]["uid"],
        True,
    )
    assert dep["spec"]["replicas"] == 1

    # availableReplicas mirrored from the Deployment, with Ready
    f = wait_for(available(h, "example-foo", 1), message="status.availableReplicas=1")
    assert ready_condition(f)["status"] == "True"

    # scale: the Deployment follows, then the status
    h.patch_foo("example-foo", {"spec": {"replicas": 3}})
    wait_for(lambda: h.get_deployment("example-foo")["spec"]["replicas"] == 3, message="scaled")
    f = wait_for(available(h, "example-foo", 3), message="status.availableReplicas=3")
    assert f["status"]["observedGeneration"] == f["metadata"]["generation"]

    # scaled by hand: repaired
    h.client.request(
        "PATCH",
        resource_path(*DEPLOYMENT_GVR, "default", "example-foo"),
        body={"spec": {"replicas": 7}},
        content_type="application/merge-patch+json",
    )
    wait_for(lambda: h.get_deployment("example-foo")["spec"]["replicas"] == 3, message="repaired")

    # deleted by hand: recreated
    uid = h.get_deployment("example-foo")["metadata"]["uid"]
    h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, "default", "example-foo"))
    again = wait_for(
        lambda: (d := h.deployment_or_none("example-foo")) and d["metadata"]["uid"] != uid and d,
        message="deployment recreated",
    )
    assert again["spec"]["replicas"] == 3

    # the Foo deleted: its Deployment garbage-collected
    h.delete_foo("example-foo")
    wait_for(lambda: h.deployment_or_none("example-foo") is None, message="deployment collected")
    assert (
        h.metric("controller_runtime_reconcile_total", {"controller": "foo", "result": "success"})
        or 0
    ) >= 3


def test_someone_elses_deployment_is_never_written(harness):
    h = harness
    theirs = h.client.request(
        "POST", resource_path(*DEPLOYMENT_GVR, "default"), body=foreign_deployment("taken")
    )
    h.create_foo(foo("collider", deployment_name="taken", replicas=5))

    warning = wait_for(
        lambda: [e for e in h.events(involved="collider") if e["reason"] == "ErrResourceExists"],
        message="ErrResourceExists event",
    )[0]
    assert warning["type"] == "Warning"
    assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'
    # retried with backoff, counted as errors
    wait_for(
        lambda: (
            (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) >= 2
        ),
        message="retries",
    )
    ready = wait_for(
        lambda: (h.get_foo("collider").get("status") or {}).get("conditions"),
        message="a Ready condition",
    )[0]
    assert (ready["status"], ready["reason"]) == ("False", "ErrResourceExists")
    # never written (kubesim's Deployment status loop may have written its status: not us)
    after = h.get_deployment("taken")
    assert after["spec"] == theirs["spec"]
    assert "ownerReferences" not in after["metadata"]
    ours = [
        r
        for r in h.sim.request_log
        if r.resource.startswith("deployments")
        and r.name == "taken"
        and r.verb in ("update", "patch", "delete")
        and r.user_agent == "sample-controller-py/test"
    ]
    assert not ours

    # the blocker goes: the Foo gets its own Deployment
    h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, "default", "taken"))
    mine = wait_for(
        lambda: (d := h.deployment_or_none("taken")) and d["metadata"].get("ownerReferences") and d,
        message="the Foo's own Deployment",
    )
    assert mine["spec"]["replicas"] == 5
    f = wait_for(available(h, "collider", 5), message="collider available")
    assert (ready_condition(f)["status"], ready_condition(f)["reason"]) == (
        "True",
        "DeploymentAvailable",
    )


def test_a_foo_that_cannot_be_acted_on_is_reported_once_not_retried(harness):
    h = harness
    # a valid object name, but too long for the Deployment's label value
    long = "f" * 70
    h.create_foo(foo(long, deployment_name="long-one", replicas=1))
    conditions = wait_for(
        lambda: (h.get_foo(long).get("status") or {}).get("conditions"),
        message="a Ready condition",
    )
    assert (conditions[0]["status"], conditions[0]["reason"]) == ("False", "InvalidName")
    wait_for(
        lambda: (
            (
                h.metric(
                    "controller_runtime_reconcile_total", {"controller": "foo", "result": "success"}
                )
                or 0
            )
            >= 3
        ),
        message="a couple of resyncs",
    )
    warnings = [e for e in h.events(involved=long) if e["reason"] == "InvalidName"]
    assert len(warnings) == 1 and warnings[0]["count"] == 1
    assert (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) == 0
    assert h.deployment_or_none("long-one") is None
