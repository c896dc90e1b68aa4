"""Bad input: what users send that the controller must survive.

- Foos the CRD schema refuses (no ``deploymentName``, a name that is no DNS-1123 subdomain,
  replicas 0, 11 or "abc") are rejected with a 422 whose message and causes name the field
  and the rule, so ``kubectl apply`` tells the user what to fix; the controller never sees them;
- a Foo the schema accepts but the controller cannot act on (no ``spec`` at all, or a name of
  more than 63 characters, which cannot be its Deployment's label value) gets one Warning Event
  and a Ready=False condition, and no retry loop;
- a Deployment of the Foo's name owned by someone else is never written to; the Foo gets a
  Warning Event and its key is retried with a backoff that doubles (towards the 1000 s cap),
  visible in ``workqueue_retries_total``; when the other Deployment goes, the Foo gets its own;
- a Foo deleted while its reconcile is in flight (the API slowed down to widen the window)
  crashes nothing and leaves no orphan Deployment; deleted before the sync's first write (the
  status, which proves the Foo exists), it gets no Deployment and no Synced Event at all;
- a Deployment deleted or scaled by hand is recreated or scaled back;
- a Foo with a 1 MiB annotation goes through list, watch, cache and a status write;
- unknown fields in a Foo are pruned by the server and the controller does not care.

Every case also checks that the logs say what happened, and that nothing was logged as an
unexpected error or traceback and no thread died.
"""

from __future__ import annotations

import logging

import pytest

from client.errors import APIError
from client.rest import resource_path
from controller.foo_controller import DEPLOYMENT_GVR
from tests.helpers import foreign_deployment, wait_for
from tests.integration.controller_harness import foo
from tests.integration.test_faults import (  # noqa: F401 - escaped is a fixture
    FaultHarness,
    escaped,
    unexpected_log_records,
)

NS = "default"


pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05)


@pytest.fixture
def h(sim, caplog, escaped):  # noqa: F811 - the imported fixture
    caplog.set_level(logging.INFO)
    # the Deployment writes are announced at V(4), as sample-controller logs its update
    caplog.set_level(logging.DEBUG, logger="controller.foo_controller")
    harness = FaultHarness(sim, "--resync-period", "1s").start()
    yield harness
    sim.faults.clear()
    harness.shutdown()


def messages(caplog, message: str, **fields: str) -> list[logging.LogRecord]:
    """Log records with this message whose extra fields include ``fields``."""
    return [
        r
        for r in caplog.records
        if r.getMessage() == message
        and all(str(getattr(r, k, None)) == v for k, v in fields.items())
    ]


def clean_logs(caplog, escaped, allowed: list[str] = ()) -> None:  # noqa: F811
    """No traceback, no thread died, no ERROR but sync errors that ``allowed`` or a race explains.

    A 409 Conflict is a race any controller may meet (someone wrote after the copy it read);
    it is a requeue, logged at debug, so it should not show here, and is allowed all the same.
    """
    assert unexpected_log_records(caplog.records, [r"409 Conflict", *allowed]) == []
    assert escaped == []


def ready(h, name: str, replicas: int):
    def check():
        f = h.get_foo(name)
        status = f.get("status") or {}
        return (
            status.get("availableReplicas") == replicas
            and status.get("observedGeneration") == f["metadata"]["generation"]
            and f
        )

    return check


# -- schema --------------------------------------------------------------------------------------


# What kube-apiserver adds when a schema error keeps the CRD's x-kubernetes-validations (the
# deploymentName immutability rule) from running: a required field missing, a value too long or
# of the wrong type (apiextensions' hasBlockingErr).
RULES_NOT_CHECKED = {
    "reason": "FieldValueInvalid",
    "message": "Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation",
    "field": "<nil>",
}
BLOCKING = ("FieldValueRequired", "FieldValueTooLong", "FieldValueTypeInvalid")


def test_foo_without_deployment_name_is_rejected_by_the_schema(h):
    body = foo("nameless")
    del body["spec"]["deploymentName"]
    with pytest.raises(APIError) as info:
        h.create_foo(body)
    err = info.value
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == (
        'Foo.samplecontroller.k8s.io "nameless" is invalid: [spec.deploymentName: Required '
        "value, <nil>: Invalid value: null: some validation rules were not checked because the "
        "object was invalid; correct the existing errors to complete validation]"
    )
    assert err.status["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value",
            "field": "spec.deploymentName",
        },
        RULES_NOT_CHECKED,
    ]
    with pytest.raises(APIError) as gone:
        h.get_foo("nameless")
    assert gone.value.code == 404


@pytest.mark.parametrize(
    "spec,field,says",
    [
        ({"deploymentName": "Bad_Name"}, "spec.deploymentName", "should match"),
        ({"deploymentName": "-leading-dash"}, "spec.deploymentName", "should match"),
        ({"deploymentName": ""}, "spec.deploymentName", "should match"),
        ({"deploymentName": "a" * 254}, "spec.deploymentName", "253"),
        (
            {"deploymentName": "ok", "replicas": 0},
            "spec.replicas",
            "should be greater than or equal to 1",
        ),
        (
            {"deploymentName": "ok", "replicas": 11},
            "spec.replicas",
            "should be less than or equal to 10",
        ),
        ({"deploymentName": "ok", "replicas": "abc"}, "spec.replicas", "must be of type integer"),
        ({"deploymentName": "ok", "replicas": 2.5}, "spec.replicas", "must be of type integer"),
    ],
    ids=[
        "uppercase-underscore",
        "leading-dash",
        "empty",
        "too-long",
        "replicas-0",
        "replicas-11",
        "replicas-abc",
        "replicas-2.5",
    ],
)
def test_invalid_values_are_rejected_with_a_clear_message(
    h,
    caplog,
    escaped,  # noqa: F811
    spec,
    field,
    says,
):
    with pytest.raises(APIError) as info:
        h.create_foo({**foo("bad"), "spec": spec})
    err = info.value
    assert (err.code, err.reason) == (422, "Invalid")
    causes = err.status["details"]["causes"]
    # a fractional number for an integer also gets kube-openapi's range check, at the root
    # (field "<nil>"); a blocking error comes with the note that the CRD's rules were not run;
    # with more than one cause the message lists them in brackets
    extra = ["<nil>"] if isinstance(spec.get("replicas"), float) else []
    notes = [RULES_NOT_CHECKED] if causes[0]["reason"] in BLOCKING else []
    opening = "[" if extra or notes else ""
    assert err.message.startswith(
        f'Foo.samplecontroller.k8s.io "bad" is invalid: {opening}{field}: '
    )
    assert says in err.message
    assert causes[0]["field"] == field
    assert [c["field"] for c in causes[1 : 1 + len(extra)]] == extra
    assert causes[1 + len(extra) :] == notes
    # a type error is FieldValueTypeInvalid on kube-apiserver v1.36 (FieldValueInvalid on 1.24)
    type_error = says == "must be of type integer"
    expected = (
        ("FieldValueTypeInvalid",) if type_error else ("FieldValueInvalid", "FieldValueTooLong")
    )
    assert causes[0]["reason"] in expected
    assert says in causes[0]["message"]
    # an update to an invalid value is refused the same way, and the stored Foo is unchanged
    h.create_foo(foo("good", replicas=2))
    with pytest.raises(APIError) as update:
        h.patch_foo("good", {"spec": spec})
    assert update.value.code == 422 and field in update.value.message
    assert h.get_foo("good")["spec"] == {"deploymentName": "good", "replicas": 2}
    wait_for(ready(h, "good", 2), message="the valid Foo converged")
    clean_logs(caplog, escaped)


def test_foo_without_spec_is_reported_once_and_not_retried(h, caplog, escaped):  # noqa: F811
    # "spec" itself is optional in the schema, so this one is accepted: the controller has to
    # say why it does nothing, once, without a retry loop.
    h.create_foo(
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "empty", "namespace": NS},
        }
    )
    conditions = wait_for(
        lambda: (h.get_foo("empty").get("status") or {}).get("conditions"),
        message="a Ready condition",
    )
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Ready", "False", "InvalidSpec")
    ]
    assert conditions[0]["message"] == "spec.deploymentName must be specified"
    wait_for(
        lambda: len(messages(caplog, "deployment name must be specified", key=f"{NS}/empty")) >= 3,
        message="a few resyncs",
    )
    assert (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) == 0
    assert (h.metric("workqueue_retries_total", {"name": "foo"}) or 0) == 0
    warnings = wait_for(
        lambda: [e for e in h.events(involved="empty") if e["reason"] == "InvalidSpec"],
        message="InvalidSpec event",
    )
    assert len(warnings) == 1 and warnings[0]["count"] == 1 and warnings[0]["type"] == "Warning"
    clean_logs(caplog, escaped)


def test_foo_whose_name_cannot_be_a_label_value_is_reported_once_and_not_retried(
    h,
    sim,
    caplog,
    escaped,  # noqa: F811
):
    # 64-253 characters make a valid Foo name but not a label value, and the Foo's name is the
    # value of its Deployment's "controller" label and selector: a real server would refuse the
    # Deployment. The controller says so instead of sending it (and retrying forever).
    name = "a-foo-whose-name-is-longer-than-any-label-value-may-be-" + "x" * 20
    assert 63 < len(name) <= 253
    h.create_foo(foo(name, deployment_name="long-named"))
    conditions = wait_for(
        lambda: (h.get_foo(name).get("status") or {}).get("conditions"),
        message="a Ready condition",
    )
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Ready", "False", "InvalidName")
    ]
    assert f"metadata.name ({len(name)} characters)" in conditions[0]["message"]
    wait_for(
        lambda: len(messages(caplog, "foo name cannot be a label value", key=f"{NS}/{name}")) >= 3,
        message="a few resyncs",
    )
    assert h.deployment_or_none("long-named") is None
    assert not [r for r in sim.request_log if r.resource == "deployments" and r.verb == "create"]
    assert (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) == 0
    assert (h.metric("workqueue_retries_total", {"name": "foo"}) or 0) == 0
    warnings = wait_for(
        lambda: [e for e in h.events(involved=name) if e["reason"] == "InvalidName"],
        message="InvalidName event",
    )
    assert len(warnings) == 1 and warnings[0]["count"] == 1 and warnings[0]["type"] == "Warning"
    status_writes = [r for r in sim.request_log if r.resource == "foos/status" and r.name == name]
    assert len(status_writes) == 1
    clean_logs(caplog, escaped)


# -- someone else's Deployment -------------------------------------------------------------------


def test_deployment_owned_by_someone_else_is_never_touched_and_retried_with_backoff(
    h,
    sim,
    caplog,
    escaped,  # noqa: F811
):
    foreign = h.client.request(
        "POST",
        resource_path(*DEPLOYMENT_GVR, NS),
        body=foreign_deployment("taken"),
    )
    # kubesim's deployment "controller" fills in its status; from then on nobody should write it
    foreign = wait_for(
        lambda: (
            (d := h.get_deployment("taken")).get("status", {}).get("availableReplicas") == 2 and d
        ),
        message="the foreign Deployment's status",
    )
    created = h.create_foo(foo("collider", deployment_name="taken", replicas=5))
    controller = h.parts.controller
    key = f"{NS}/collider"

    # retried with a doubling backoff: 5 ms, 10 ms, 20 ms ... (sample-controller's limiter)
    wait_for(
        lambda: controller.workqueue.num_requeues(key) >= 8, timeout=10, message="eight retries"
    )
    failures = messages(caplog, "error syncing, requeuing", key=key)
    assert all(
        'Resource "taken" already exists and is not managed by Foo' in r.error for r in failures
    )
    assert [r.requeues for r in failures[:8]] == list(range(1, 9))
    gaps = [b.created - a.created for a, b in zip(failures, failures[1:8], strict=False)]
    # each retry waits at least its doubled delay (a loaded machine only adds to a gap, so the
    # lower bounds are what can be asserted; comparing two measured gaps is not)
    for n, gap in enumerate(gaps, start=1):
        assert gap >= 0.005 * 2 ** (n - 1) * 0.9, f"retry {n + 1} came after {gap:.4f}s"
    # ... towards the cap: the very limiter this queue uses stops doubling at 1000 s
    probe = ("probe", "not a key")
    delays = [controller.workqueue.rate_limiter.when(probe) for _ in range(30)]
    controller.workqueue.rate_limiter.forget(probe)
    assert delays[:3] == [0.005, 0.01, 0.02] and max(delays) == delays[-1] == 1000.0

    retries = h.metric("workqueue_retries_total", {"name": "foo"})
    assert retries >= 8
    assert h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) >= 8
    warning = wait_for(
        lambda: [e for e in h.events(involved="collider") if e["reason"] == "ErrResourceExists"],
        message="a Warning",
    )
    assert len(warning) == 1 and warning[0]["type"] == "Warning"
    assert warning[0]["message"] == 'Resource "taken" already exists and is not managed by Foo'
    assert messages(caplog, "event", reason="ErrResourceExists", object=key)

    # never written: same resourceVersion, and no write request from the controller at all
    after = h.get_deployment("taken")
    assert after["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
    assert "ownerReferences" not in after["metadata"] and after["spec"]["replicas"] == 2
    assert [
        r
        for r in sim.request_log
        if r.resource == "deployments"
        and r.name == "taken"
        and r.verb not in ("get", "list", "watch")
        and r.user_agent.startswith("sample-controller-py/test")
    ] == []

    # the other owner removes its Deployment: its delete event enqueues the Foo that names it
    # (the Foo informer's index by deploymentName), and the sync creates ours
    h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, NS, "taken"))
    wait_for(ready(h, "collider", 5), message="the Foo got its own Deployment")
    mine = h.get_deployment("taken")
    assert mine["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert controller.workqueue.num_requeues(key) == 0  # success forgot the failures
    clean_logs(caplog, escaped, [r'Resource "taken" already exists and is not managed by Foo'])


def test_retries_end_when_the_colliding_foo_is_deleted(h, sim, caplog, escaped):  # noqa: F811
    h.client.request(
        "POST",
        resource_path(*DEPLOYMENT_GVR, NS),
        body={
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "taken2"},
            "spec": {
                "selector": {"matchLabels": {"app": "y"}},
                "template": {
                    "metadata": {"labels": {"app": "y"}},
                    "spec": {"containers": [{"name": "y", "image": "busybox:1"}]},
                },
            },
        },
    )
    h.create_foo(foo("quitter", deployment_name="taken2"))
    controller = h.parts.controller
    key = f"{NS}/quitter"
    wait_for(lambda: controller.workqueue.num_requeues(key) >= 3, message="retries")
    h.delete_foo("quitter")
    wait_for(lambda: messages(caplog, "foo no longer exists", key=key), message="the log says so")
    wait_for(lambda: controller.workqueue.num_requeues(key) == 0, message="the key forgotten")
    assert h.get_deployment("taken2").get("metadata", {}).get("ownerReferences") is None
    clean_logs(caplog, escaped, [r'Resource "taken2" already exists and is not managed by Foo'])


# -- deleted while reconciling -------------------------------------------------------------------


def test_foo_deleted_during_its_reconcile(h, sim, caplog, escaped):  # noqa: F811
    # Every Foo update waits 0.5 s in the server, so the sync's first write (the status, which
    # comes before the create to prove the Foo still exists) is surely in flight when the Foo
    # goes. It meets a 404, and no Deployment is ever created for the vanished owner.
    slow = sim.faults.add_latency(0.5, verbs=["update"], resources=["foos"])
    created = h.create_foo(foo("fleeting", replicas=2))
    controller = h.parts.controller
    wait_for(lambda: slow.hits >= 1, message="the status write in flight")
    h.delete_foo("fleeting")
    wait_for(lambda: controller.workers.longest_running_sync() == 0, message="the sync finished")
    sim.faults.remove(slow)
    wait_for(lambda: (h.metric("workqueue_depth", {"name": "foo"}) or 0) == 0, message="idle")
    assert not [r for r in sim.request_log if r.resource == "deployments" and r.verb == "create"], (
        "a Deployment was created for a Foo already deleted"
    )
    assert not messages(caplog, "creating deployment", key=f"{NS}/fleeting")
    # the status write met a 404 and was dropped quietly: a success, not an error to retry
    assert (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) == 0
    assert messages(caplog, "successfully synced", key=f"{NS}/fleeting")
    status_puts = [
        r
        for r in sim.request_log
        if r.resource == "foos/status" and r.name == "fleeting" and r.verb == "update"
    ]
    assert [r.code for r in status_puts] == [404]
    assert messages(caplog, "foo deleted during sync, status not written", key=f"{NS}/fleeting")
    # and no Synced Event for it: nothing was synced
    assert not messages(caplog, "event", reason="Synced", object=f"{NS}/fleeting")
    assert created["metadata"]["uid"]
    clean_logs(caplog, escaped)


def test_foo_deleted_while_its_deployment_is_created(h, sim, caplog, escaped):  # noqa: F811
    # Every Deployment create waits 0.5 s in the server, so the create is surely in flight
    # when the Foo goes; the Deployment is then created for an owner that no longer exists.
    slow = sim.faults.add_latency(0.5, verbs=["create"], resources=["deployments"])
    h.create_foo(foo("fleeting2", replicas=2))
    controller = h.parts.controller
    wait_for(lambda: slow.hits >= 1, message="the create in flight")
    h.delete_foo("fleeting2")
    wait_for(lambda: controller.workers.longest_running_sync() == 0, message="the sync finished")
    sim.faults.remove(slow)
    # the garbage collector removes the Deployment of the vanished owner; nothing re-creates it
    wait_for(lambda: h.deployment_or_none("fleeting2") is None, message="no orphan Deployment")
    wait_for(lambda: (h.metric("workqueue_depth", {"name": "foo"}) or 0) == 0, message="idle")
    assert h.deployment_or_none("fleeting2") is None
    assert h.parts.deployment_informer.lister().list() == []
    created_logs = messages(caplog, "creating deployment", key=f"{NS}/fleeting2")
    assert len(created_logs) == 1
    assert (h.metric("controller_runtime_reconcile_errors_total", {"controller": "foo"}) or 0) == 0
    clean_logs(caplog, escaped)


# -- hands on the Deployment ---------------------------------------------------------------------


def test_deployment_deleted_or_scaled_by_hand_is_repaired(h, caplog, escaped):  # noqa: F811
    h.create_foo(foo("handled", replicas=2))
    wait_for(ready(h, "handled", 2), message="converged")
    first = h.get_deployment("handled")

    h.client.request(
        "PATCH",
        resource_path(*DEPLOYMENT_GVR, NS, "handled"),
        body={"spec": {"replicas": 7}},
        content_type="application/merge-patch+json",
    )
    wait_for(lambda: h.get_deployment("handled")["spec"]["replicas"] == 2, message="scaled back")
    assert messages(
        caplog, "updating deployment replicas", key=f"{NS}/handled", was="7", replicas="2"
    )

    h.client.request("DELETE", resource_path(*DEPLOYMENT_GVR, NS, "handled"))
    again = wait_for(
        lambda: (
            (d := h.deployment_or_none("handled"))
            and d["metadata"]["uid"] != first["metadata"]["uid"]
            and d
        ),
        message="recreated",
    )
    assert again["spec"]["replicas"] == 2
    # Created exactly twice. (A sync that runs before the new Deployment reaches the cache may
    # try a third create and get 409 AlreadyExists: a cache-lag race, retried, never a write.)
    created = [
        r
        for r in h.sim.request_log
        if r.verb == "create"
        and r.resource == "deployments"
        and r.namespace == NS
        and r.code == 201
        and r.user_agent.startswith("sample-controller-py")
    ]
    assert len(created) == 2
    assert len(messages(caplog, "creating deployment", key=f"{NS}/handled")) >= 2
    f = wait_for(ready(h, "handled", 2), message="converged again")
    assert f["metadata"]["generation"] == 1  # the Foo itself never changed
    clean_logs(caplog, escaped)


# -- big and odd objects -------------------------------------------------------------------------


def test_foo_with_the_largest_annotations_flows_through(h, sim, caplog, escaped):  # noqa: F811
    # kube-apiserver caps all annotations of an object at 256 KiB together (keys and values);
    # an object at that limit exercises the watch stream's line framing, the list decoding, the
    # cache and a 256 KiB status PUT. One byte more is refused, as a real server refuses it.
    key = "example.com/blob"
    too_big = foo("too-big", replicas=3)
    too_big["metadata"]["annotations"] = {key: "x" * (256 * 1024 - len(key) + 1)}
    with pytest.raises(APIError) as ei:
        h.create_foo(too_big)
    assert ei.value.code == 422
    big = "x" * (256 * 1024 - len(key))
    body = foo("big", replicas=3)
    body["metadata"]["annotations"] = {key: big}
    h.create_foo(body)
    wait_for(ready(h, "big", 3), message="the big Foo converged")
    cached = h.parts.foo_informer.lister().get(NS, "big")
    assert cached["metadata"]["annotations"]["example.com/blob"] == big
    assert h.get_deployment("big")["spec"]["replicas"] == 3
    # and after a relist (the list path, not the watch), it is still whole
    sim.faults.compact()
    sim.faults.close_watches()
    h.patch_foo("big", {"spec": {"replicas": 4}})
    wait_for(ready(h, "big", 4), message="scaled after the relist")
    assert h.parts.foo_informer.lister().get(NS, "big")["metadata"]["annotations"] == {key: big}
    clean_logs(caplog, escaped)


def test_unknown_fields_are_pruned(h, caplog, escaped):  # noqa: F811
    body = foo("odd", replicas=2)
    body["spec"]["bogus"] = {"nested": True}
    body["extra"] = "top-level"
    body["status"] = {"availableReplicas": 99, "made": "up"}
    stored = h.create_foo(body)
    assert stored["spec"] == {"deploymentName": "odd", "replicas": 2}
    assert "extra" not in stored and "status" not in stored
    patched = h.patch_foo("odd", {"spec": {"alsoBogus": 1, "replicas": 3}})
    assert patched["spec"] == {"deploymentName": "odd", "replicas": 3}
    f = wait_for(ready(h, "odd", 3), message="converged")
    assert set(f["status"]) == {"availableReplicas", "observedGeneration", "conditions"}
    cached = h.parts.foo_informer.lister().get(NS, "odd")
    assert "bogus" not in cached["spec"] and "extra" not in cached
    clean_logs(caplog, escaped)
