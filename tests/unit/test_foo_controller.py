"""controller.foo_controller with fake listers and a fake client that records actions.

The first four cases are sample-controller's controller_test.go (TestCreatesDeployment,
TestDoNothing, TestUpdateDeployment, TestNotControlledByUs); the rest cover what our version
adds or what upstream only covers implicitly.
"""

from __future__ import annotations

import copy
import threading

import pytest

from client.errors import APIError
from controller.foo_controller import (
    Controller,
    ResourceExistsError,
    desired_status,
    new_deployment,
)
from informer.lister import NotFoundError
from informer.store import DeletedFinalStateUnknown
from tests.helpers import wait_for
from workqueue import FakeClock, RateLimitingQueue, sample_controller_rate_limiter

FOO_PATH = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/test/status"
DEP_PATH = "/apis/apps/v1/namespaces/default/deployments"


def new_foo(name="test", replicas=1, deployment_name=None, status=None, generation=1):
    foo = {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": "10",
            "generation": generation,
        },
        "spec": {
            "deploymentName": name if deployment_name is None else deployment_name,
            "replicas": replicas,
        },
    }
    if status is not None:
        foo["status"] = status
    return foo


class FakeLister:
    def __init__(self, objects=()):
        self.objects = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}

    def get(self, namespace, name):
        try:
            return self.objects[(namespace, name)]
        except KeyError:
            raise NotFoundError("foos", namespace, name) from None


class FakeInformer:
    def __init__(self, objects=()):
        self._lister = FakeLister(objects)
        self.handlers = []

    def lister(self):
        return self._lister

    def add_event_handler(self, handler, resync_period=None):
        self.handlers.append(handler)
        return self

    def has_synced(self):
        return True


class FakeRest:
    """Records (verb, path, body) actions like client-go's fake clientset."""

    def __init__(self, errors=None):
        self.actions = []
        self.errors = dict(errors or {})  # (verb, path) -> exception to raise once

    def request(
        self, method, path, params=None, body=None, content_type="application/json", timeout=None
    ):
        self.actions.append((method, path, copy.deepcopy(body)))
        assert params == {"fieldManager": "sample-controller"}
        err = self.errors.pop((method, path), None)
        if err is not None:
            raise err
        out = copy.deepcopy(body)
        out["metadata"].setdefault("uid", "dep-uid")
        return out


class FakeRecorder:
    def __init__(self):
        self.events = []

    def event(self, obj, event_type, reason, message):
        self.events.append((obj["metadata"]["name"], event_type, reason, message))


class Fixture:
    def __init__(self, foos=(), deployments=(), errors=None):
        self.rest = FakeRest(errors)
        self.recorder = FakeRecorder()
        self.foo_informer = FakeInformer(foos)
        self.dep_informer = FakeInformer(deployments)
        self.clock = FakeClock()
        self.queue = RateLimitingQueue(sample_controller_rate_limiter(), clock=self.clock)
        self.controller = Controller(
            self.rest, self.foo_informer, self.dep_informer, self.recorder, queue=self.queue
        )

    def sync(self, key="default/test"):
        self.controller.sync_handler(key)
        return [(verb, path) for verb, path, _ in self.rest.actions]


def available(dep, n):
    dep = copy.deepcopy(dep)
    dep["status"] = {"availableReplicas": n}
    return dep


def test_creates_deployment():
    foo = new_foo()
    f = Fixture(foos=[foo])
    actions = f.sync()
    assert actions == [("POST", DEP_PATH), ("PUT", FOO_PATH)]
    created = f.rest.actions[0][2]
    assert created == new_deployment(foo)
    assert created["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "name": "test",
            "uid": "uid-test",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert created["spec"]["template"]["metadata"]["labels"] == {
        "app": "nginx",
        "controller": "test",
    }
    assert created["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:latest"}
    ]
    status = f.rest.actions[1][2]["status"]
    assert status["availableReplicas"] == 0 and status["observedGeneration"] == 1
    assert status["conditions"][0]["status"] == "False"
    assert f.recorder.events == [("test", "Normal", "Synced", "Foo synced successfully")]


def test_do_nothing_when_converged():
    foo = new_foo()
    dep = available(new_deployment(foo), 1)
    dep["metadata"]["uid"] = "dep-uid"
    foo["status"] = desired_status(foo, dep)
    cached = copy.deepcopy(foo)
    f = Fixture(foos=[foo], deployments=[dep])
    assert f.sync() == []  # no write, not even status
    assert f.recorder.events == []  # and no Event: a resync of a converged Foo costs nothing
    assert foo == cached


def test_status_only_when_availability_changes():
    foo = new_foo()
    dep = new_deployment(foo)
    foo["status"] = desired_status(foo, dep)
    f = Fixture(foos=[foo], deployments=[available(dep, 1)])
    assert f.sync() == [("PUT", FOO_PATH)]
    written = f.rest.actions[0][2]
    assert written["status"]["availableReplicas"] == 1
    assert written["status"]["conditions"][0]["status"] == "True"
    assert written["metadata"]["resourceVersion"] == "10"  # optimistic concurrency


def test_update_deployment_replicas():
    foo = new_foo(replicas=2)
    dep = new_deployment(new_foo(replicas=1))
    dep["metadata"]["resourceVersion"] = "5"
    cached_dep = copy.deepcopy(dep)
    f = Fixture(foos=[foo], deployments=[dep])
    assert f.sync() == [("PUT", DEP_PATH + "/test"), ("PUT", FOO_PATH)]
    sent = f.rest.actions[0][2]
    assert sent["spec"]["replicas"] == 2
    assert sent["metadata"]["resourceVersion"] == "5"  # updates the object as read
    assert dep == cached_dep  # the cached Deployment was not mutated


def test_not_controlled_by_us():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"] = []
    f = Fixture(foos=[foo], deployments=[dep])
    with pytest.raises(
        ResourceExistsError, match='Resource "test" already exists and is not managed by Foo'
    ):
        f.sync()
    assert f.rest.actions == []  # the foreign Deployment is never touched
    assert f.recorder.events == [
        (
            "test",
            "Warning",
            "ErrResourceExists",
            'Resource "test" already exists and is not managed by Foo',
        )
    ]


def test_controlled_by_another_foo_with_same_name_is_not_ours():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"][0]["uid"] = "uid-of-a-previous-foo"
    f = Fixture(foos=[foo], deployments=[dep])
    message = 'Resource "test" already exists and is not managed by Foo'
    with pytest.raises(ResourceExistsError, match=message):
        f.sync()
    # the same name is not the same Foo: the uid decides, and the Deployment is left alone
    assert f.rest.actions == []
    assert f.recorder.events == [("test", "Warning", "ErrResourceExists", message)]


def test_missing_foo_is_not_an_error():
    f = Fixture()
    assert f.sync("default/gone") == []


def test_empty_deployment_name_warns_once_and_does_not_retry():
    foo = new_foo(deployment_name="")
    f = Fixture(foos=[foo])
    assert f.sync() == [("PUT", FOO_PATH)]
    status = f.rest.actions[0][2]["status"]
    assert status["conditions"][0]["reason"] == "InvalidSpec"
    assert f.recorder.events == [
        ("test", "Warning", "InvalidSpec", "spec.deploymentName must be specified")
    ]
    # the next resync sees the status already written: no write, no new event
    f2 = Fixture(foos=[new_foo(deployment_name="", status=status)])
    assert f2.sync() == [] and f2.recorder.events == []


def test_status_write_conflict_is_returned_for_retry():
    foo = new_foo()
    f = Fixture(foos=[foo], errors={("PUT", FOO_PATH): APIError(409, "Conflict", "stale")})
    with pytest.raises(APIError) as raised:
        f.sync()
    assert raised.value.code == 409  # returned as it is, so the queue retries with backoff
    assert [(verb, path) for verb, path, _ in f.rest.actions] == [
        ("POST", DEP_PATH),
        ("PUT", FOO_PATH),
    ]
    assert f.recorder.events == []  # not synced: no Synced event


def test_foo_deleted_during_status_write_is_done():
    foo = new_foo()
    dep = available(new_deployment(foo), 1)
    dep["metadata"]["uid"] = "x"
    f = Fixture(
        foos=[foo], deployments=[dep], errors={("PUT", FOO_PATH): APIError(404, "NotFound", "gone")}
    )
    # no exception and no event: nothing is left to report on
    assert f.sync() == [("PUT", FOO_PATH)]
    assert f.recorder.events == []


def test_process_next_work_item_forgets_on_success_and_backs_off_on_error():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"] = []  # collision: every sync fails
    f = Fixture(foos=[foo], deployments=[dep])
    f.queue.add("default/test")
    assert f.controller.process_next_work_item()
    assert f.queue.num_requeues("default/test") == 1
    assert len(f.queue) == 0  # waiting out its backoff (5 ms), not queued yet
    f.clock.step(0.006)
    wait_for(lambda: len(f.queue) == 1, message="the key back in the queue")
    assert f.controller.process_next_work_item()
    assert f.queue.num_requeues("default/test") == 2

    # fix the collision: the next success forgets the failures
    f.dep_informer.lister().objects.clear()
    f.clock.step(0.011)
    wait_for(lambda: len(f.queue) == 1, message="the key back in the queue")
    assert f.controller.process_next_work_item()
    assert f.queue.num_requeues("default/test") == 0
    f.queue.shut_down()


# -- handlers ---------------------------------------------------------------------------------


def handler(f, which):
    return (f.foo_informer if which == "foo" else f.dep_informer).handlers[0]


def drain(queue):
    keys = []
    while len(queue):
        key, _ = queue.get()
        queue.done(key)
        keys.append(key)
    return keys


def test_foo_add_and_update_enqueue_key():
    f = Fixture()
    foo = new_foo()
    handler(f, "foo").on_add(foo, False)
    handler(f, "foo").on_update(foo, foo)  # upstream enqueues resyncs of Foos too
    assert drain(f.queue) == ["default/test"]


def test_deployment_events_enqueue_owner():
    foo = new_foo()
    f = Fixture(foos=[foo])
    dep = new_deployment(foo)
    dep["metadata"]["resourceVersion"] = "1"
    h = handler(f, "dep")
    h.on_add(dep, False)
    assert drain(f.queue) == ["default/test"]
    newer = copy.deepcopy(dep)
    newer["metadata"]["resourceVersion"] = "2"
    h.on_update(dep, newer)
    assert drain(f.queue) == ["default/test"]
    h.on_delete(DeletedFinalStateUnknown("default/test", dep))  # tombstone unwrapped
    assert drain(f.queue) == ["default/test"]


def test_deployment_resync_update_is_skipped():
    foo = new_foo()
    f = Fixture(foos=[foo])
    dep = new_deployment(foo)
    dep["metadata"]["resourceVersion"] = "7"
    handler(f, "dep").on_update(dep, dep)
    assert drain(f.queue) == []


@pytest.mark.parametrize(
    "owner_refs",
    [
        [],
        [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "test",
                "uid": "u",
                "controller": True,
            }
        ],
        [
            {
                "apiVersion": "other.io/v1",
                "kind": "Foo",
                "name": "test",
                "uid": "u",
                "controller": True,
            }
        ],
        [
            {
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "name": "test",
                "uid": "u",
            }
        ],
        [
            {
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "name": "missing",
                "uid": "u",
                "controller": True,
            }
        ],
    ],
)
def test_deployment_without_a_known_controlling_foo_is_ignored(owner_refs):
    f = Fixture(foos=[new_foo()])
    dep = new_deployment(new_foo())
    dep["metadata"]["ownerReferences"] = owner_refs
    handler(f, "dep").on_add(dep, False)
    assert drain(f.queue) == []


def test_tombstone_with_garbage_is_ignored():
    f = Fixture(foos=[new_foo()])
    handler(f, "dep").on_delete(DeletedFinalStateUnknown("default/x", "not an object"))
    assert drain(f.queue) == []


def test_run_drains_and_returns_on_stop():
    foo = new_foo()
    f = Fixture(foos=[foo])
    stop = threading.Event()
    t = threading.Thread(target=f.controller.run, args=(2, stop), kwargs={"drain_timeout": 5})
    t.start()
    f.queue.add("default/test")
    wait_for(lambda: len(f.rest.actions) >= 2, message="the sync's writes")
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert f.queue.shutting_down()


def test_run_without_synced_caches_starts_no_worker():
    f = Fixture(foos=[new_foo()])
    f.foo_informer.has_synced = lambda: False
    with pytest.raises(TimeoutError):
        f.controller.run(2, threading.Event(), cache_sync_timeout=0.2)
    assert f.controller.workers_started() == 0 and f.queue.shutting_down()

    g = Fixture(foos=[new_foo()])
    g.foo_informer.has_synced = lambda: False
    stop = threading.Event()
    stop.set()
    g.controller.run(2, stop)  # stopped while waiting: returns quietly
    assert g.controller.workers_started() == 0 and g.queue.shutting_down()


def test_conflicts_are_warnings_other_errors_are_errors(caplog):
    foo = new_foo()
    f = Fixture(foos=[foo], errors={("PUT", FOO_PATH): APIError(409, "Conflict", "stale")})
    f.queue.add("default/test")
    with caplog.at_level("INFO", logger="controller.foo_controller"):
        assert f.controller.process_next_work_item()
    (record,) = [r for r in caplog.records if r.getMessage() == "error syncing, requeuing"]
    assert record.levelname == "WARNING" and "409" in record.error

    caplog.clear()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"] = []
    g = Fixture(foos=[foo], deployments=[dep])
    g.queue.add("default/test")
    with caplog.at_level("INFO", logger="controller.foo_controller"):
        assert g.controller.process_next_work_item()
    (record,) = [r for r in caplog.records if r.getMessage() == "error syncing, requeuing"]
    assert record.levelname == "ERROR"
    f.queue.shut_down()
    g.queue.shut_down()
