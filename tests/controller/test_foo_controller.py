"""controller.foo_controller with fake listers and a fake client that records actions.

The first four cases are sample-controller's controller_test.go (TestCreatesDeployment,
TestDoNothing, TestUpdateDeployment, TestNotControlledByUs); the rest cover what our version
adds or what upstream only covers implicitly.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time

import pytest
from prometheus_client import CollectorRegistry

from client.errors import APIError
from controller.builders import desired_status, new_deployment
from controller.foo_controller import (
    DEPLOYMENT_NAME_INDEX,
    Controller,
    ResourceExistsError,
    deployment_name_index_func,
)
from informer.lister import NotFoundError
from informer.store import DeletedFinalStateUnknown, Indexer
from runtime.context import background
from runtime.metrics.reconcile import ReconcileMetrics
from runtime.shutdown import ShutdownBudget
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


class FakeIndexer:
    """The informer's index, over the lister's objects (client-go cache.Indexer's ByIndex)."""

    def __init__(self, lister):
        self.lister = lister
        self.indexers = {}

    def by_index(self, index_name, indexed_value):
        func = self.indexers[index_name]
        return [o for o in self.lister.objects.values() if indexed_value in func(o)]


class FakeInformer:
    def __init__(self, objects=()):
        self._lister = FakeLister(objects)
        self._indexer = FakeIndexer(self._lister)
        self.handlers = []

    def lister(self):
        return self._lister

    def add_indexers(self, indexers):
        self._indexer.indexers.update(indexers)

    def get_indexer(self):
        return self._indexer

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
        self.versions = itertools.count(100)  # every write makes a new resourceVersion
        self.returned = []  # (verb, path, object) the server answered, for Fixture.catch_up

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
        out["metadata"]["resourceVersion"] = str(next(self.versions))
        self.returned.append((method, path, copy.deepcopy(out)))
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
        self.controller.sync_handler(background(), key)
        return self.sync_actions()

    def sync_actions(self):
        return [(verb, path) for verb, path, _ in self.rest.actions]

    def catch_up(self):
        """Put what the server returned for every write so far into the caches, as the
        informers would once the watch events arrived (without calling the handlers)."""
        for _, path, out in self.rest.returned:
            meta = out["metadata"]
            informer = self.foo_informer if "/foos/" in path else self.dep_informer
            informer.lister().objects[(meta["namespace"], meta["name"])] = out
        self.rest.returned.clear()


def available(dep, n):
    dep = copy.deepcopy(dep)
    dep["status"] = {"availableReplicas": n}
    return dep


def test_creates_deployment():
    foo = new_foo()
    f = Fixture(foos=[foo])
    actions = f.sync()
    # status first (upstream creates first): the write, guarded by the Foo's resourceVersion,
    # proves the Foo still exists before a Deployment is made for it
    assert actions == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    created = f.rest.actions[1][2]
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
    status = f.rest.actions[0][2]["status"]
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
    # The status follows the Deployment's progress: no Synced Event for it (the create's
    # sync recorded one), so a new Foo costs one Event write, not a POST and a PATCH.
    assert f.recorder.events == []


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
    assert f.recorder.events == [("test", "Normal", "Synced", "Foo synced successfully")]


def test_not_controlled_by_us():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"] = []
    f = Fixture(foos=[foo], deployments=[dep])
    with pytest.raises(
        ResourceExistsError, match='Resource "test" already exists and is not managed by Foo'
    ):
        f.sync()
    # the foreign Deployment is never touched; the Foo's status says why it waits
    assert [(verb, path) for verb, path, _ in f.rest.actions] == [("PUT", FOO_PATH)]
    assert_blocked(f.rest.actions[0][2]["status"], "test")
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
    assert [(verb, path) for verb, path, _ in f.rest.actions] == [("PUT", FOO_PATH)]
    assert_blocked(f.rest.actions[0][2]["status"], "test")
    assert f.recorder.events == [("test", "Warning", "ErrResourceExists", message)]


def assert_blocked(status, deployment):
    """Ready=False with the collision's reason and message; no replicas claimed."""
    assert "availableReplicas" not in status
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        (
            "Ready",
            "False",
            "ErrResourceExists",
            f'Resource "{deployment}" already exists and is not managed by Foo',
        )
    ]


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
    # the status write comes first, and its conflict stops the sync before the create
    assert [(verb, path) for verb, path, _ in f.rest.actions] == [("PUT", FOO_PATH)]
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
    assert f.controller.workers.process_next_work_item()
    assert f.queue.num_requeues("default/test") == 1
    assert len(f.queue) == 0  # waiting out its backoff (5 ms), not queued yet
    f.catch_up()  # the cache shows the status the first sync wrote
    f.clock.step(0.006)
    wait_for(lambda: len(f.queue) == 1, message="the key back in the queue")
    assert f.controller.workers.process_next_work_item()
    assert f.queue.num_requeues("default/test") == 2

    # fix the collision: the next success forgets the failures
    f.dep_informer.lister().objects.clear()
    f.clock.step(0.011)
    wait_for(lambda: len(f.queue) == 1, message="the key back in the queue")
    assert f.controller.workers.process_next_work_item()
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
    # the cached Foo names another Deployment: only the ownerReference could lead to it
    f = Fixture(foos=[new_foo(deployment_name="elsewhere")])
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
    assert f.controller.workers.started() == 0 and f.queue.shutting_down()

    g = Fixture(foos=[new_foo()])
    g.foo_informer.has_synced = lambda: False
    stop = threading.Event()
    stop.set()
    g.controller.run(2, stop)  # stopped while waiting: returns quietly
    assert g.controller.workers.started() == 0 and g.queue.shutting_down()


@pytest.mark.parametrize(
    "conflict",
    [
        APIError(409, "Conflict", "the object has been modified"),
        APIError(409, "AlreadyExists", 'deployments.apps "test" already exists'),
    ],
)
def test_conflicts_are_requeues_other_errors_are_errors(caplog, conflict):
    # A 409 is optimistic concurrency doing its job: a requeue (controller-runtime's
    # result="requeue"), logged at debug, not counted as an error and not logged as one.
    foo = new_foo()
    f = Fixture(foos=[foo], errors={("PUT", FOO_PATH): conflict})
    f.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    f.queue.add("default/test")
    with caplog.at_level("DEBUG", logger="controller.foo_controller"):
        assert f.controller.workers.process_next_work_item()
    assert not [r for r in caplog.records if r.getMessage() == "error syncing, requeuing"]
    (record,) = [r for r in caplog.records if r.getMessage() == "conflict, requeuing"]
    assert record.levelname == "DEBUG" and "409" in record.error and record.requeues == 1
    assert f.queue.num_requeues("default/test") == 1  # retried with backoff all the same
    assert reconcile_counts(f) == {"success": 0, "error": 0, "requeue": 1, "errors_total": 0}

    caplog.clear()
    dep = new_deployment(foo)
    dep["metadata"]["ownerReferences"] = []
    g = Fixture(foos=[foo], deployments=[dep])
    g.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    g.queue.add("default/test")
    with caplog.at_level("INFO", logger="controller.foo_controller"):
        assert g.controller.workers.process_next_work_item()
    (record,) = [r for r in caplog.records if r.getMessage() == "error syncing, requeuing"]
    assert record.levelname == "ERROR"
    assert reconcile_counts(g) == {"success": 0, "error": 1, "requeue": 0, "errors_total": 1}
    f.queue.shut_down()
    g.queue.shut_down()


def reconcile_counts(f):
    metrics = f.controller.workers.metrics
    counts = {
        result: metrics.total.labels("foo", result)._value.get()
        for result in ("success", "error", "requeue")
    }
    counts["errors_total"] = metrics.errors.labels("foo")._value.get()
    return counts


# -- the index of Foos by the Deployment they name --------------------------------------------


def test_the_index_keys_foos_by_namespace_and_deployment_name():
    indexer = Indexer(indexers={DEPLOYMENT_NAME_INDEX: deployment_name_index_func})
    a = new_foo("a", deployment_name="web")
    b = new_foo("b", deployment_name="web")
    c = new_foo("c", deployment_name="db")
    other_ns = new_foo("d", deployment_name="web")
    other_ns["metadata"]["namespace"] = "other"
    nameless = new_foo("e", deployment_name="")
    for obj in (a, b, c, other_ns, nameless):
        indexer.add(obj)
    names = lambda value: sorted(  # noqa: E731
        f["metadata"]["name"] for f in indexer.by_index(DEPLOYMENT_NAME_INDEX, value)
    )
    assert names("default/web") == ["a", "b"]
    assert names("default/db") == ["c"] and names("other/web") == ["d"]
    assert deployment_name_index_func(nameless) == []  # no name, no entry
    b2 = copy.deepcopy(b)
    b2["spec"]["deploymentName"] = "db"  # renamed: the index follows the update
    indexer.update(b2)
    assert names("default/web") == ["a"] and names("default/db") == ["b", "c"]


def foreign_deployment(name="taken", owner_refs=None):
    dep = new_deployment(new_foo(name))
    dep["metadata"]["ownerReferences"] = owner_refs or []
    dep["metadata"]["resourceVersion"] = "3"
    return dep


def test_a_foreign_deployment_enqueues_the_foos_it_blocks_on_add_update_and_delete():
    blocked = new_foo("blocked", deployment_name="taken")
    bystander = new_foo("bystander", deployment_name="other")
    f = Fixture(foos=[blocked, bystander])
    # the constructor added the index to the informer
    assert DEPLOYMENT_NAME_INDEX in f.foo_informer.get_indexer().indexers
    h = handler(f, "dep")
    dep = foreign_deployment()
    h.on_add(dep, False)
    assert drain(f.queue) == ["default/blocked"]
    newer = copy.deepcopy(dep)
    newer["metadata"]["resourceVersion"] = "4"
    h.on_update(dep, newer)
    assert drain(f.queue) == ["default/blocked"]
    h.on_update(newer, newer)  # a resync changes nothing: nothing to do
    assert drain(f.queue) == []
    h.on_delete(newer)  # the blocker is gone: the Foo is synced now, not after its backoff
    assert drain(f.queue) == ["default/blocked"]
    h.on_delete(DeletedFinalStateUnknown("default/taken", newer))
    assert drain(f.queue) == ["default/blocked"]


def test_a_deployment_controlled_by_another_foo_enqueues_both():
    owner = new_foo("owner", deployment_name="shared")
    blocked = new_foo("blocked", deployment_name="shared")
    f = Fixture(foos=[owner, blocked])
    dep = new_deployment(owner)
    dep["metadata"]["resourceVersion"] = "3"
    handler(f, "dep").on_delete(dep)
    assert sorted(drain(f.queue)) == ["default/blocked", "default/owner"]


def test_blocker_deleted_then_the_foo_gets_its_deployment():
    foo = new_foo()
    f = Fixture(foos=[foo], deployments=[foreign_deployment("test")])
    with pytest.raises(ResourceExistsError):
        f.sync()
    f.catch_up()
    del f.dep_informer.lister().objects[("default", "test")]  # the blocker is deleted
    handler(f, "dep").on_delete(foreign_deployment("test"))
    assert drain(f.queue) == ["default/test"]
    f.rest.actions.clear()
    assert f.sync() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    assert f.rest.actions[0][2]["status"]["conditions"][0]["reason"] == "DeploymentNotAvailable"


def test_a_blocked_foo_writes_its_status_once_across_retries():
    foo = new_foo()
    f = Fixture(foos=[foo], deployments=[foreign_deployment("test")])
    for _ in range(4):
        with pytest.raises(ResourceExistsError):
            f.sync()
        f.catch_up()  # the cache shows what was written
    assert [(verb, path) for verb, path, _ in f.rest.actions] == [("PUT", FOO_PATH)]
    assert_blocked(f.rest.actions[0][2]["status"], "test")
    # the Warning Event is recorded on every retry (aggregated into one Event with a count)
    assert [e[2] for e in f.recorder.events] == ["ErrResourceExists"] * 4


def test_a_new_generation_of_a_blocked_foo_is_written_again():
    foo = new_foo()
    f = Fixture(foos=[foo], deployments=[foreign_deployment("test")])
    with pytest.raises(ResourceExistsError):
        f.sync()
    f.catch_up()
    cached = f.foo_informer.lister().objects[("default", "test")]
    cached["metadata"]["generation"] = 2  # spec.replicas changed, still blocked
    cached["spec"]["replicas"] = 3
    with pytest.raises(ResourceExistsError):
        f.sync()
    puts = [body for verb, _, body in f.rest.actions if verb == "PUT"]
    assert [p["status"]["observedGeneration"] for p in puts] == [1, 2]


# -- Foos being deleted, or gone -------------------------------------------------------------


def test_a_foo_being_deleted_is_left_alone():
    foo = new_foo()
    foo["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    foo["metadata"]["finalizers"] = ["foregroundDeletion"]
    f = Fixture(foos=[foo])  # its Deployment is already gone (the garbage collector)
    assert f.sync() == []  # not re-created, no status written
    assert f.recorder.events == []


def test_a_foo_gone_before_its_first_write_gets_no_deployment_and_no_event():
    # Our cache still holds the Foo, the server has deleted it: the status write, made before
    # any create, meets the 404, and nothing else happens.
    f = Fixture(foos=[new_foo()], errors={("PUT", FOO_PATH): APIError(404, "NotFound", "gone")})
    assert f.sync() == [("PUT", FOO_PATH)]
    assert f.recorder.events == []


def test_a_deployment_to_recreate_is_preceded_by_a_write_even_without_a_status_change():
    # The status already says 0 available: the write that proves the Foo exists is then a
    # no-op update of the same status (the server keeps the resourceVersion).
    foo = new_foo()
    foo["status"] = desired_status(foo, None)
    f = Fixture(foos=[foo])
    assert f.sync() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    assert f.rest.actions[0][2]["status"] == foo["status"]
    assert f.recorder.events == [("test", "Normal", "Synced", "Foo synced successfully")]


# -- the cache behind our own writes ---------------------------------------------------------


def test_a_create_is_not_repeated_while_the_cache_lacks_it():
    foo = new_foo()
    f = Fixture(foos=[foo])
    assert f.sync() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    # the Foo's echo has arrived, the Deployment's not yet: no second create (a 409)
    f.catch_up()
    f.dep_informer.lister().objects.clear()
    f.rest.actions.clear()
    assert f.sync() == []
    # the Deployment's add event lowers the expectation, and the sync it causes is a no-op
    created = new_deployment(foo)
    created["metadata"].update(resourceVersion="7", uid="dep-uid")
    f.dep_informer.lister().objects[("default", "test")] = created
    handler(f, "dep").on_add(created, False)
    assert drain(f.queue) == ["default/test"]
    assert len(f.controller.expectations) == 0
    assert f.sync() == []


def test_no_write_from_a_copy_our_last_write_replaced():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(foos=[foo], deployments=[available(dep, 1)])
    assert f.sync() == [("PUT", FOO_PATH)]  # status: 1/1 available
    f.rest.actions.clear()
    # a Deployment event re-runs the sync before the Foo's echo: the cached Foo is still the
    # copy our write replaced, and writing from it would be refused with a 409
    assert f.sync() == []
    # the echo no sync waited for is not enqueued; one a sync waited for is
    (_, _, written) = f.rest.returned[-1]
    h = handler(f, "foo")
    h.on_update(foo, written)
    assert drain(f.queue) == ["default/test"]  # the sync above skipped: it waits for this


def test_the_echo_of_our_own_status_write_is_not_enqueued():
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(foos=[foo], deployments=[available(dep, 1)])
    assert f.sync() == [("PUT", FOO_PATH)]
    (_, _, written) = f.rest.returned[-1]
    h = handler(f, "foo")
    h.on_update(foo, written)  # nothing new in it: the sync that wrote it saw it all
    assert drain(f.queue) == []
    someone_else = copy.deepcopy(written)
    someone_else["metadata"]["resourceVersion"] = "999"
    h.on_update(written, someone_else)
    assert drain(f.queue) == ["default/test"]


def test_a_replica_update_is_not_repeated_from_the_copy_it_replaced():
    foo = new_foo(replicas=3)
    dep = available(new_deployment(new_foo(replicas=1)), 1)
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(foos=[foo], deployments=[dep])
    assert f.sync() == [("PUT", DEP_PATH + "/test"), ("PUT", FOO_PATH)]
    f.rest.actions.clear()
    assert f.sync() == []  # the Deployment cache still says 1 replica, at the replaced version
    f.catch_up()
    assert f.sync() == []  # caught up: converged, nothing to write


# -- a name that cannot be a label value -----------------------------------------------------


def test_a_name_too_long_for_a_label_value_is_reported_once_per_generation():
    name = "n" * 64
    path = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/{name}/status"
    foo = new_foo(name)
    f = Fixture(foos=[foo])
    assert f.sync(f"default/{name}") == [("PUT", path)]  # no Deployment the server would refuse
    status = f.rest.actions[0][2]["status"]
    [ready] = status["conditions"]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "InvalidName")
    assert "64 characters" in ready["message"] and "at most" not in ready["message"]
    assert "must be no more than 63 characters" in ready["message"]
    assert f.recorder.events == [(name, "Warning", "InvalidName", ready["message"])]
    # retried (a resync, or any event): nothing new to say, no write, no Event
    f.catch_up()
    for _ in range(3):
        f.sync(f"default/{name}")
    assert len(f.rest.actions) == 1 and len(f.recorder.events) == 1
    # a new generation is written and reported once more
    f.foo_informer.lister().objects[("default", name)]["metadata"]["generation"] = 2
    f.sync(f"default/{name}")
    f.catch_up()
    f.sync(f"default/{name}")
    assert len(f.rest.actions) == 2 and len(f.recorder.events) == 2


def test_a_name_of_63_characters_gets_its_deployment():
    name = "n" * 63
    f = Fixture(foos=[new_foo(name)])
    actions = f.sync(f"default/{name}")
    assert [verb for verb, _ in actions] == ["PUT", "POST"]
    assert f.rest.actions[1][2]["spec"]["selector"]["matchLabels"]["controller"] == name


def test_no_sync_error_for_an_invalid_name():
    name = "n" * 100
    f = Fixture(foos=[new_foo(name)])
    f.queue.add(f"default/{name}")
    assert f.controller.workers.process_next_work_item()
    assert f.queue.num_requeues(f"default/{name}") == 0  # not retried: only a new Foo helps
    f.queue.shut_down()


# -- shutdown ------------------------------------------------------------------------------------


class BlockingRest(FakeRest):
    """A FakeRest whose Deployment creates wait until `release` is set."""

    def __init__(self):
        super().__init__()
        self.release = threading.Event()
        self.creates_started = []

    def request(self, method, path, **kwargs):
        if method == "POST" and path == DEP_PATH:
            self.creates_started.append(kwargs["body"]["metadata"]["name"])
            self.release.wait(10)
        return super().request(method, path, **kwargs)


def test_run_starts_no_key_after_the_drain_deadline_and_abandons_what_is_in_flight():
    foos = [new_foo(f"f{i}") for i in range(9)]
    f = Fixture(foos=foos)
    f.rest = f.controller.writes.rest = BlockingRest()
    budget = ShutdownBudget(0.8)
    stop = threading.Event()
    t = threading.Thread(target=f.controller.run, args=(6, stop), kwargs={"budget": budget})
    t.start()
    for foo in foos:
        f.queue.add(f"default/{foo['metadata']['name']}")
    # Six workers, each waiting on its create: six keys started (each with its status write
    # made), three still queued.
    wait_for(lambda: len(f.rest.creates_started) == 6, message="six creates in flight")
    assert len(f.queue) == 3
    started = sorted(path for _, path, _ in f.rest.actions)
    assert started == [FOO_PATH.replace("/test/", f"/f{i}/") for i in range(6)]
    stop.set()
    t.join(5)
    returned = time.monotonic()
    assert not t.is_alive()
    # run() returned at the drain deadline (0.6 s: 0.8 s less its quarter for the Lease release
    # and the Event flush), not when the work ended, nor a second timeout later
    assert budget.drain_deadline == pytest.approx(budget.deadline - 0.2)
    assert budget.drain_deadline - 0.01 <= returned < budget.deadline
    # the six in flight are abandoned: released now, they land but make no further write
    in_flight = sorted(f.rest.creates_started)
    f.rest.release.set()
    wait_for(lambda: f.controller.workers.longest_running_sync() == 0, message="the syncs ended")
    assert sorted(f.rest.creates_started) == in_flight  # no other key was started
    assert [path for _, path, _ in f.rest.actions[6:]] == [DEP_PATH] * 6
    assert f.recorder.events == []  # no Synced for work that was cut
    assert len(f.queue) == 3  # the rest were never handed to a sync


def test_a_foo_whose_deployment_was_replaced_by_a_foreign_one_claims_no_replicas():
    foo = new_foo(status={"availableReplicas": 1, "observedGeneration": 1})
    f = Fixture(foos=[foo], deployments=[foreign_deployment("test")])
    with pytest.raises(ResourceExistsError):
        f.sync()
    assert_blocked(f.rest.actions[0][2]["status"], "test")


@pytest.mark.parametrize(("delivered", "enqueued"), [("200", []), ("55", ["default/test"])])
def test_a_foo_event_handled_while_our_status_write_is_in_flight(delivered, enqueued):
    # The watch event of our write can reach the handler before the worker has read the
    # response. Our echo (the version the write produces, 200 here) must not cost a sync;
    # someone else's change (55) must not be lost.
    foo = new_foo()
    dep = available(new_deployment(foo), 1)
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(foos=[foo], deployments=[dep])
    f.rest.versions = itertools.count(200)
    h = handler(f, "foo")
    request = f.rest.request

    def racing(method, path, **kwargs):
        if method == "PUT" and path == FOO_PATH:
            event = copy.deepcopy(foo)
            event["metadata"]["resourceVersion"] = delivered
            h.on_update(foo, event)
        return request(method, path, **kwargs)

    f.rest.request = racing
    assert f.sync() == [("PUT", FOO_PATH)]
    assert drain(f.queue) == enqueued


# -- one thread per key, from get to done (runtime.worker) ---------------------------------


def test_a_key_is_held_from_get_to_done_while_its_sync_writes():
    foo = new_foo()
    f = Fixture(foos=[foo])
    f.rest = f.controller.writes.rest = BlockingRest()
    f.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    f.queue.add("default/test")
    # the worker makes the status write (its answer decides the create), then the create
    returned = []
    worker = threading.Thread(
        target=lambda: returned.append(f.controller.workers.process_next_work_item()),
        name="foo-worker-0",
    )
    worker.start()
    wait_for(lambda: f.rest.creates_started == ["test"], message="the create on the worker")
    assert [verb for verb, _, _ in f.rest.actions] == ["PUT"]
    assert reconcile_counts(f)["success"] == 0  # the sync has not ended
    assert f.controller.workers.longest_running_sync() > 0
    # the key is still being processed: an add marks it dirty, nobody else gets it
    f.queue.add("default/test")
    assert len(f.queue) == 0
    f.rest.release.set()
    worker.join(5)
    assert not worker.is_alive() and returned == [True]
    assert [verb for verb, _, _ in f.rest.actions] == ["PUT", "POST"]
    assert f.recorder.events == [("test", "Normal", "Synced", "Foo synced successfully")]
    assert reconcile_counts(f)["success"] == 1
    assert f.controller.workers.longest_running_sync() == 0
    assert len(f.queue) == 1  # done() handed the dirty key back
    f.queue.shut_down()


def test_the_worker_makes_every_write_of_its_sync_before_it_returns():
    f = Fixture(foos=[new_foo()])
    f.queue.add("default/test")
    assert f.controller.workers.process_next_work_item()
    # made on this thread before the call returned, and the key finished
    assert f.sync_actions() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    assert f.queue.num_requeues("default/test") == 0 and len(f.queue) == 0
    f.queue.shut_down()


@pytest.mark.parametrize(
    ("error", "counts", "requeues"),
    [
        (
            APIError(500, "InternalError", "etcd timeout"),
            {"success": 0, "error": 1, "requeue": 0, "errors_total": 1},
            1,
        ),
        (
            APIError(409, "Conflict", "the object has been modified"),
            {"success": 0, "error": 0, "requeue": 1, "errors_total": 0},
            1,
        ),
        # the Foo was deleted meanwhile: nothing left to report on, not an error
        (
            APIError(404, "NotFound", "gone"),
            {"success": 1, "error": 0, "requeue": 0, "errors_total": 0},
            0,
        ),
    ],
)
def test_the_last_write_of_a_sync_ends_its_key(error, counts, requeues):
    foo = new_foo()
    dep = new_deployment(foo)
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(foos=[foo], deployments=[available(dep, 1)], errors={("PUT", FOO_PATH): error})
    f.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    f.queue.add("default/test")
    assert f.controller.workers.process_next_work_item()
    assert f.sync_actions() == [("PUT", FOO_PATH)]  # the status write (1/1 available) only
    assert reconcile_counts(f) == counts
    assert f.queue.num_requeues("default/test") == requeues
    assert f.recorder.events == []  # no Synced for a write that did not land
    f.queue.shut_down()


def test_the_drain_waits_for_a_held_write_and_syncs_its_key_again():
    # A key added again while its last write was in flight is handed back by done(); after
    # the queue has shut down, a worker must still be there to take it.
    f = Fixture(foos=[new_foo()])
    f.rest = f.controller.writes.rest = BlockingRest()
    f.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    stop = threading.Event()
    budget = ShutdownBudget(10)
    t = threading.Thread(target=f.controller.run, args=(1, stop), kwargs={"budget": budget})
    t.start()
    f.queue.add("default/test")
    wait_for(lambda: f.rest.creates_started == ["test"], message="the create on the worker")
    f.queue.add("default/test")  # a change meanwhile: the key is dirty
    stop.set()
    wait_for(lambda: f.queue.shutting_down(), message="the drain begun")
    assert t.is_alive()  # waiting for the write in flight
    f.rest.release.set()
    t.join(5)
    assert not t.is_alive()
    # synced twice: the create, then the dirty key (a no-op: the create is not cached yet)
    assert reconcile_counts(f)["success"] == 2
    assert len(f.queue) == 0
    assert [verb for verb, _, _ in f.rest.actions] == ["PUT", "POST"]


def test_a_deployment_deleted_before_its_update_is_a_requeue_not_an_error(caplog):
    # The cache still held the Deployment when the sync read it; the garbage collector (its
    # Foo being deleted) or a user deleted it before the replicas update arrived. Its delete
    # event enqueues the Foo again: a requeue, as a 409, with no status write.
    foo = new_foo(replicas=3)
    dep = new_deployment(new_foo(replicas=1))
    dep["metadata"]["resourceVersion"] = "5"
    f = Fixture(
        foos=[foo],
        deployments=[dep],
        errors={("PUT", DEP_PATH + "/test"): APIError(404, "NotFound", "deployments not found")},
    )
    f.controller.workers.metrics = ReconcileMetrics("foo", CollectorRegistry())
    f.queue.add("default/test")
    with caplog.at_level("DEBUG", logger="controller.foo_controller"):
        assert f.controller.workers.process_next_work_item()
    assert f.sync_actions() == [("PUT", DEP_PATH + "/test")]
    assert reconcile_counts(f) == {"success": 0, "error": 0, "requeue": 1, "errors_total": 0}
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert f.queue.num_requeues("default/test") == 1
    f.queue.shut_down()


def test_a_create_whose_events_overtake_its_response_leaves_nothing_to_wait_for():
    # The Foo was deleted right after its status write: the garbage collector removes the
    # new Deployment at once, and both its ADDED and DELETED events are handled before the
    # worker has read the POST's response. A Foo re-created under the same name must then
    # get a new Deployment, not wait for an event that has already come.
    f = Fixture(foos=[new_foo()])
    created = new_deployment(new_foo())
    created["metadata"].update(resourceVersion="100", uid="dep-uid")

    class EventsFirst(FakeRest):
        def request(self, method, path, **kwargs):
            if method == "POST":
                handler(f, "dep").on_add(created, False)
                handler(f, "dep").on_delete(created)
            return super().request(method, path, **kwargs)

    f.rest = f.controller.writes.rest = EventsFirst()
    f.sync()
    assert f.sync_actions() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]
    f.catch_up()
    f.dep_informer.lister().objects.clear()  # the Deployment is gone again
    drain(f.queue)
    f.rest.actions.clear()
    assert f.sync() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]  # created again at once


def test_a_foo_made_again_under_its_name_does_not_wait_for_its_predecessors_create():
    # The Deployment created for the old Foo came and went while the watch was down (no
    # event will ever say so); the new Foo, same name, new uid, gets its own at once.
    f = Fixture(foos=[new_foo()])
    f.controller.expectations.begin_create("deployments", "default/test", owner="uid-old")
    f.controller.expectations.end_update("deployments", "default/test", "50")
    assert f.sync() == [("PUT", FOO_PATH), ("POST", DEP_PATH)]  # new_foo's uid is uid-test
