"""Admission webhooks run with no storage lock held, as kube-apiserver calls them.

A webhook may call kubesim back while it answers (controller-runtime webhooks list through
their client; the project's Foo webhook reads its cache), and several writes of one object may
be in admission at once: the write is a compare-and-swap at the resourceVersion it was computed
from, computed again when another write got there first (etcd3's GuaranteedUpdate). These tests
fail against a kubesim that holds its lock across the call: the callbacks wait for the
webhook's timeout, and the concurrent calls never overlap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_admission_webhooks import (
    CONFIGMAPS,
    Answer,
    call,
    configmap,
    register,
    url_config,
    webhook,
)
from tests.kubesim.webhook_server import CertificateAuthority, WebhookServer, json_patch

SECRETS = "/api/v1/namespaces/default/secrets"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
SERVICES = "/api/v1/namespaces/default/services"
# the webhooks' timeout: a callback that had to wait for the lock would use all of it
TIMEOUT_SECONDS = 10
# writes of one object in admission at the same time
WRITERS = 6
# the ConfigMaps a webhook's LIST counts (not the namespace's kube-root-ca.crt)
LABELS = {"test": "callbacks"}


@pytest.fixture
def ca() -> CertificateAuthority:
    return CertificateAuthority()


@pytest.fixture
def serve(ca: CertificateAuthority) -> Iterator[Callable[[Callable[[dict], Any]], WebhookServer]]:
    """Start webhook servers with the test's CA; all are stopped when the test ends."""
    servers: list[WebhookServer] = []

    def start(handler: Callable[[dict], Any]) -> WebhookServer:
        server = WebhookServer(ca, handler)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def configmap_hook(name: str, server: WebhookServer, ca: CertificateAuthority, **extra) -> dict:
    """A webhook on configmaps (every operation) that answers within TIMEOUT_SECONDS."""
    return webhook(name, url_config(server, ca), timeoutSeconds=TIMEOUT_SECONDS, **extra)


class Callbacks:
    """What a webhook does with kubesim while it answers: a GET, a LIST and a write of
    another object (a Secret, which no webhook here matches), with each answer's code."""

    def __init__(self, sim: KubeSim) -> None:
        self.sim = sim
        self.codes: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self._n = 0

    def run(self, req: dict) -> int:
        """The three calls for one review; the number of ConfigMaps the LIST saw."""
        with self._lock:
            self._n += 1
            n = self._n
        got = call(self.sim, "GET", "/api/v1/namespaces/default")
        listed = call(self.sim, "GET", f"{CONFIGMAPS}?labelSelector=test%3Dcallbacks")
        secret = {"metadata": {"name": f"seen-{n}"}, "stringData": {"uid": req["uid"]}}
        wrote = call(self.sim, "POST", SECRETS, secret)
        with self._lock:
            self.codes += [("get", got.code), ("list", listed.code), ("create", wrote.code)]
        return len(listed.body.get("items") or [])


def timed(fn: Callable[[], Answer]) -> tuple[Answer, float]:
    start = time.monotonic()
    answer = fn()
    return answer, time.monotonic() - start


# ---- webhooks that call kubesim back -----------------------------------------------------


def test_a_validating_webhook_may_read_and_write_through_the_api(sim, ca, serve):
    callbacks = Callbacks(sim)

    def validate(req: dict) -> dict:
        callbacks.run(req)
        return {"allowed": True}

    server = serve(validate)
    register(
        sim, "ValidatingWebhookConfiguration", "v", configmap_hook("v.example.com", server, ca)
    )

    created, took = timed(lambda: call(sim, "POST", CONFIGMAPS, configmap("c1", data={"a": "1"})))
    assert created.code == 201, created.body
    updated, _ = timed(lambda: call(sim, "PUT", f"{CONFIGMAPS}/c1", dict(created.body, data={})))
    assert updated.code == 200, updated.body
    patch = {"data": {"b": "2"}}
    patched = call(sim, "PATCH", f"{CONFIGMAPS}/c1", patch, "application/merge-patch+json")
    assert patched.code == 200, patched.body
    deleted, _ = timed(lambda: call(sim, "DELETE", f"{CONFIGMAPS}/c1"))
    assert deleted.code == 200, deleted.body

    ops = [r["request"]["operation"] for r in server.requests]
    assert ops == ["CREATE", "UPDATE", "UPDATE", "DELETE"]
    # every callback was answered, none refused or timed out
    assert callbacks.codes == [("get", 200), ("list", 200), ("create", 201)] * 4
    assert took < TIMEOUT_SECONDS / 2
    secrets = call(sim, "GET", SECRETS).body["items"]
    assert sorted(s["metadata"]["name"] for s in secrets) == [f"seen-{n}" for n in range(1, 5)]


def test_a_mutating_webhook_may_read_and_write_through_the_api(sim, ca, serve):
    callbacks = Callbacks(sim)

    def mutate(req: dict) -> dict:
        if req["operation"] == "DELETE":
            return {"allowed": True}
        count = callbacks.run(req)
        # what the webhook read decides its patch, so the object shows the LIST was answered
        ops = [{"op": "add", "path": "/data", "value": {"listed": str(count)}}]
        return json_patch(ops)

    server = serve(mutate)
    register(sim, "MutatingWebhookConfiguration", "m", configmap_hook("m.example.com", server, ca))
    first = call(sim, "POST", CONFIGMAPS, configmap("first", LABELS))
    assert first.code == 201, first.body["message"]

    created, took = timed(lambda: call(sim, "POST", CONFIGMAPS, configmap("second", LABELS)))
    assert created.code == 201, created.body
    assert created.body["data"] == {"listed": "1"}  # the LIST saw "first"
    assert took < TIMEOUT_SECONDS / 2
    applied = call(
        sim,
        "PATCH",
        f"{CONFIGMAPS}/third?fieldManager=test",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "third", "labels": LABELS}},
        "application/apply-patch+yaml",
    )
    assert applied.code == 201, applied.body  # an apply that creates is admitted as a CREATE
    assert applied.body["data"] == {"listed": "2"}
    assert callbacks.codes == [("get", 200), ("list", 200), ("create", 201)] * 3
    assert len(server.requests) == 3


def test_a_scale_write_calls_the_webhook_with_no_lock_held(sim, ca, serve):
    callbacks = Callbacks(sim)

    def validate(req: dict) -> dict:
        callbacks.run(req)
        return {"allowed": True}

    server = serve(validate)
    rule = {
        "operations": ["UPDATE"],
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "resources": ["deployments"],
    }
    hook = webhook(
        "v.example.com", url_config(server, ca), timeoutSeconds=TIMEOUT_SECONDS, rules=[rule]
    )
    register(sim, "ValidatingWebhookConfiguration", "v", hook)
    labels = {"app": "d"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert call(sim, "POST", DEPLOYMENTS, deployment).code == 201
    scale = {"spec": {"replicas": 3}}
    scaled = call(sim, "PATCH", f"{DEPLOYMENTS}/d/scale", scale, "application/merge-patch+json")
    assert scaled.code == 200, scaled.body
    assert scaled.body["spec"]["replicas"] == 3
    assert call(sim, "GET", f"{DEPLOYMENTS}/d").body["spec"]["replicas"] == 3
    # the scale write's UPDATE called back; the deployment controller's status writes (a
    # subresource the rule leaves out) may have made it compute the write again
    assert callbacks.codes[:3] == [("get", 200), ("list", 200), ("create", 201)]
    assert {code for _, code in callbacks.codes} <= {200, 201}


# ---- concurrent writes of one object -------------------------------------------------------


class Gate:
    """A webhook handler's first ``parties`` calls wait for each other, so that that many
    writes are in admission at once; later calls (retries) go straight through. Counts the
    most calls in flight together. Calls before ``arm`` (the test's set-up) are not gated."""

    def __init__(self, parties: int, answer: Callable[[dict], dict]) -> None:
        self.barrier = threading.Barrier(parties, timeout=TIMEOUT_SECONDS / 2)
        self.answer = answer
        self.parties = parties
        self._lock = threading.Lock()
        self.armed = False  # until armed, calls (the test's set-up) are only answered
        self.calls = 0  # calls since armed
        self.in_flight = 0
        self.most_in_flight = 0

    def arm(self) -> None:
        """Gate the next ``parties`` calls."""
        with self._lock:
            self.armed = True

    def __call__(self, req: dict) -> dict:
        with self._lock:
            if not self.armed:
                return self.answer(req)
            self.calls += 1
            first_round = self.calls <= self.parties
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if first_round:
                try:
                    self.barrier.wait()
                except threading.BrokenBarrierError:
                    pass  # the calls did not overlap; most_in_flight says so
            return self.answer(req)
        finally:
            with self._lock:
                self.in_flight -= 1


def all_at_once(calls: list[Callable[[], Answer]]) -> list[Answer]:
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda fn: fn(), calls))


def test_writes_with_one_stale_resource_version_leave_one_winner_and_409s(sim, ca, serve):
    gate = Gate(WRITERS, lambda req: {"allowed": True})
    server = serve(gate)
    register(
        sim, "ValidatingWebhookConfiguration", "v", configmap_hook("v.example.com", server, ca)
    )
    base = call(sim, "POST", CONFIGMAPS, configmap("c", data={"writer": "none"})).body
    gate.arm()  # the create's call was not one of the writers'

    def put(i: int) -> Callable[[], Answer]:
        # every writer read the same resourceVersion and sends it back
        return lambda: call(sim, "PUT", f"{CONFIGMAPS}/c", dict(base, data={"writer": str(i)}))

    answers = all_at_once([put(i) for i in range(WRITERS)])

    assert gate.most_in_flight == WRITERS  # all of them were in admission together
    won = [a for a in answers if a.code == 200]
    lost = [a for a in answers if a.code != 200]
    assert len(won) == 1
    assert [a.code for a in lost] == [409] * (WRITERS - 1)
    assert {a.body["reason"] for a in lost} == {"Conflict"}
    assert lost[0].body["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    stored = call(sim, "GET", f"{CONFIGMAPS}/c").body
    assert stored["data"] == won[0].body["data"]
    assert stored["metadata"]["resourceVersion"] == won[0].body["metadata"]["resourceVersion"]
    # a loser is refused on its precondition, before it is admitted again
    assert gate.calls == WRITERS


@pytest.mark.parametrize("mutating", [False, True], ids=["validating", "mutating"])
def test_patches_without_a_resource_version_are_all_applied_one_after_another(
    sim, ca, serve, mutating
):
    def answer(req: dict) -> dict:
        if not mutating:
            return {"allowed": True}
        # the mutating webhook stamps the keys it saw: it must be called again on a retry
        seen = ",".join(sorted((req["object"].get("data") or {}).keys()))
        return json_patch([{"op": "add", "path": "/metadata/annotations", "value": {"seen": seen}}])

    gate = Gate(WRITERS, answer)
    server = serve(gate)
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    register(sim, kind, "w", configmap_hook("w.example.com", server, ca))
    assert call(sim, "POST", CONFIGMAPS, configmap("c", data={"start": "x"})).code == 201
    gate.arm()

    def patch(i: int) -> Callable[[], Answer]:
        body = {"data": {f"k{i}": str(i)}}
        return lambda: call(sim, "PATCH", f"{CONFIGMAPS}/c", body, "application/merge-patch+json")

    answers = all_at_once([patch(i) for i in range(WRITERS)])

    assert gate.most_in_flight == WRITERS
    assert [a.code for a in answers] == [200] * WRITERS, [a.body for a in answers]
    # each patch was applied at a resourceVersion of its own, on top of the one before: no
    # update was lost, and none was computed from an object another had replaced
    by_rv = sorted(answers, key=lambda a: int(a.body["metadata"]["resourceVersion"]))
    assert len({a.body["metadata"]["resourceVersion"] for a in answers}) == WRITERS
    before = {"start"}
    for a in by_rv:
        keys = set(a.body["data"])
        assert len(keys - before) == 1 and before < keys
        if mutating:
            # the webhook saw exactly the object that was then stored
            assert a.body["metadata"]["annotations"]["seen"] == ",".join(sorted(keys))
        before = keys
    final = call(sim, "GET", f"{CONFIGMAPS}/c").body
    assert set(final["data"]) == {"start"} | {f"k{i}" for i in range(WRITERS)}
    # all but the first to store were admitted again, on the newer object
    assert gate.calls >= 2 * WRITERS - 1


def test_services_that_ask_for_one_address_at_once_get_it_once(sim, ca, serve):
    gate = Gate(2, lambda req: {"allowed": True})
    server = serve(gate)
    hook = webhook(
        "v.example.com",
        url_config(server, ca),
        timeoutSeconds=TIMEOUT_SECONDS,
        rules=[
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["services"],
            }
        ],
    )
    register(sim, "ValidatingWebhookConfiguration", "v", hook)
    gate.arm()

    def create(name: str) -> Callable[[], Answer]:
        svc: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {"clusterIP": "10.96.100.100", "ports": [{"port": 80}]},
        }
        return lambda: call(sim, "POST", SERVICES, svc)

    answers = all_at_once([create("a"), create("b")])

    assert gate.most_in_flight == 2  # both were allocated the address before either stored
    assert sorted(a.code for a in answers) == [201, 422]
    refused = next(a for a in answers if a.code == 422)
    assert refused.body["details"]["causes"][0]["message"] == (
        'Invalid value: []string{"10.96.100.100"}: failed to allocate IP 10.96.100.100: '
        "provided IP is already allocated"
    )


@pytest.mark.parametrize("precondition", [False, True], ids=["plain", "resourceVersion"])
def test_a_delete_admitted_while_the_object_changes_is_checked_again(sim, ca, serve, precondition):
    changed: list[Answer] = []

    def validate(req: dict) -> dict:
        if not changed:
            # while this DELETE is in admission, another client updates the object
            patch = {"data": {"late": "write"}}
            url = f"{CONFIGMAPS}/c"
            changed.append(call(sim, "PATCH", url, patch, "application/merge-patch+json"))
        return {"allowed": True}

    server = serve(validate)
    rule = {"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"]}
    hook = configmap_hook("v.example.com", server, ca, rules=[rule | {"resources": ["configmaps"]}])
    register(sim, "ValidatingWebhookConfiguration", "v", hook)
    created = call(sim, "POST", CONFIGMAPS, configmap("c", data={"a": "1"})).body
    rv = created["metadata"]["resourceVersion"]
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if precondition:
        options["preconditions"] = {"resourceVersion": rv}

    deleted = call(sim, "DELETE", f"{CONFIGMAPS}/c", options)

    assert changed and changed[0].code == 200, changed  # the webhook's own write went through
    if precondition:
        # checked again on the object as it is now: the precondition no longer holds
        assert deleted.code == 409, deleted.body
        late = changed[0].body["metadata"]["resourceVersion"]
        assert deleted.body["message"] == (
            'Operation cannot be fulfilled on ConfigMap "c": Precondition failed: '
            f"ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {late}"
        )
        assert call(sim, "GET", f"{CONFIGMAPS}/c").body["data"] == {"a": "1", "late": "write"}
        assert len(server.requests) == 1  # refused before it was admitted again
    else:
        # the newer object is admitted, then deleted
        assert deleted.code == 200, deleted.body
        assert call(sim, "GET", f"{CONFIGMAPS}/c").code == 404
        assert len(server.requests) == 2
        assert server.requests[1]["request"]["oldObject"]["data"]["late"] == "write"
