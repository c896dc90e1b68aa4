"""The controller's scenarios against an API server reached through a kubeconfig.

Written once for every target (tests/e2e/conftest.py picks kubesim, envtest or a cluster):
lifecycle, collision with someone else's Deployment, out-of-band repair, leader election between
two real processes, and the least-privilege RBAC of manifests/. What the cluster cannot show
(tests/e2e/capabilities.py probes it) is asserted as what it does show instead, and recorded
with the reason for the terminal summary (``skip_assertion``), never skipped silently:

- no garbage collector (envtest): the deleted Foo's Deployment stays, still owned by the
  deleted Foo's uid, and is removed by the test;
- the Deployment's status (tests/e2e/rollout.py): where pods run, the Foo reports every replica
  available (a cluster must be able to pull nginx:latest); where the deployment controller has
  no schedulable node, the Foo mirrors its status (0 available, Ready=False); where there is no
  deployment controller, the Foo mirrors the status as it stands, then the status the suite
  writes as kubesim's loop does.

Every test works in its own namespace, and the controller watches only that namespace
(``--namespace``), so tests do not see each other's objects.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from client.errors import APIError
from client.rest import resource_path
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from tests.e2e.cluster import LEASES, Cluster, load_manifests, wait_for
from tests.e2e.conftest import ControllerCredentials
from tests.e2e.controllers import ControllerProcess
from tests.e2e.identity import service_account_username, token_claims, who_am_i
from tests.e2e.rollout import settle

pytestmark = pytest.mark.e2e

LEASE_NAME = "sample-controller"  # the only Lease the leader-election Role lets it update


def foo_body(name: str, deployment_name: str | None = None, replicas: int | None = 1) -> dict:
    spec: dict = {"deploymentName": deployment_name or name}
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": spec,
    }


def create_foo(cluster: Cluster, ns: str, body: dict) -> dict:
    return cluster.admin.request("POST", resource_path(*FOO_GVR, ns), body=body)


def patch(cluster: Cluster, gvr: tuple[str, str, str], ns: str, name: str, body: dict) -> dict:
    return cluster.admin.request(
        "PATCH",
        resource_path(*gvr, ns, name),
        body=body,
        content_type="application/merge-patch+json",
    )


def delete(cluster: Cluster, gvr: tuple[str, str, str], ns: str, name: str) -> None:
    cluster.admin.request("DELETE", resource_path(*gvr, ns, name))


def owned_deployment(
    cluster: Cluster, ns: str, name: str, foo: dict
) -> Callable[[], dict | bool | None]:
    def check() -> dict | bool | None:
        d = cluster.get_or_none(DEPLOYMENT_GVR, ns, name)
        refs = (d or {}).get("metadata", {}).get("ownerReferences") or []
        return (
            bool(d)
            and [r["uid"] for r in refs if r.get("controller")] == [foo["metadata"]["uid"]]
            and d
        )

    return check


# -- lifecycle -------------------------------------------------------------------------------------


def test_lifecycle(cluster, namespace, start_controller, skip_assertion):
    start_controller("--namespace", namespace)
    foo = create_foo(cluster, namespace, foo_body("example-foo", replicas=1))

    dep = wait_for(
        owned_deployment(cluster, namespace, "example-foo", foo), message="the Foo's Deployment"
    )
    ref = dep["metadata"]["ownerReferences"][0]
    assert (
        ref["apiVersion"],
        ref["kind"],
        ref["name"],
        ref["controller"],
        ref["blockOwnerDeletion"],
    ) == ("samplecontroller.k8s.io/v1alpha1", "Foo", "example-foo", True, True)
    assert dep["spec"]["replicas"] == 1
    assert dep["spec"]["selector"]["matchLabels"] == {"app": "nginx", "controller": "example-foo"}
    assert [c["image"] for c in dep["spec"]["template"]["spec"]["containers"]] == ["nginx:latest"]
    f = settle(cluster, namespace, "example-foo", 1, skip_assertion)
    assert f["status"]["observedGeneration"] == 1

    # scale: the Deployment follows, the status describes generation 2
    patch(cluster, FOO_GVR, namespace, "example-foo", {"spec": {"replicas": 3}})
    f = settle(cluster, namespace, "example-foo", 3, skip_assertion)
    assert f["status"]["observedGeneration"] == 2

    synced = wait_for(
        lambda: [e for e in cluster.events(namespace, "example-foo") if e["reason"] == "Synced"],
        message="a Synced event",
    )
    assert synced[0]["type"] == "Normal" and synced[0]["message"] == "Foo synced successfully"
    assert synced[0]["involvedObject"]["uid"] == foo["metadata"]["uid"]

    delete(cluster, FOO_GVR, namespace, "example-foo")
    if cluster.can.garbage_collector:
        wait_for(
            lambda: cluster.get_or_none(DEPLOYMENT_GVR, namespace, "example-foo") is None,
            timeout=60,
            message="the garbage collector to delete the Deployment",
        )
    else:
        # a bare API server has no garbage collector: the Deployment stays, still pointing at
        # the deleted Foo, and the controller (which has no delete handler for Foos) leaves it
        skip_assertion(
            "the garbage collector deletes the Foo's Deployment with the Foo",
            "no garbage collector (the probe's dependent outlived its owner); asserted instead: "
            "the Deployment stays, owned by the deleted Foo's uid",
        )
        wait_for(
            lambda: cluster.get_or_none(FOO_GVR, namespace, "example-foo") is None,
            message="the Foo gone",
        )
        left = cluster.get(DEPLOYMENT_GVR, namespace, "example-foo")
        assert left["metadata"]["ownerReferences"][0]["uid"] == foo["metadata"]["uid"]
        delete(cluster, DEPLOYMENT_GVR, namespace, "example-foo")


# -- collision -------------------------------------------------------------------------------------


def test_collision_with_a_deployment_owned_by_someone_else(cluster, namespace, start_controller):
    foreign = cluster.admin.request(
        "POST",
        resource_path(*DEPLOYMENT_GVR, namespace),
        params={"fieldManager": "someone-else"},
        body={
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "taken", "labels": {"owner": "someone-else"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "other"}},
                "template": {
                    "metadata": {"labels": {"app": "other"}},
                    "spec": {"containers": [{"name": "other", "image": "nginx:latest"}]},
                },
            },
        },
    )
    controller = start_controller("--namespace", namespace)
    create_foo(cluster, namespace, foo_body("collider", deployment_name="taken", replicas=2))

    warning = wait_for(
        lambda: [
            e for e in cluster.events(namespace, "collider") if e["reason"] == "ErrResourceExists"
        ],
        message="the ErrResourceExists Warning",
    )[0]
    assert warning["type"] == "Warning"
    assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'
    wait_for(
        lambda: controller.metric("workqueue_retries_total", {"name": "foo"}) >= 3,
        message="the key retried with backoff",
    )

    # never touched: its spec, labels and owners are as created, and the controller's field
    # manager never wrote to it (the status may move: a cluster's deployment controller runs it)
    after = cluster.get(DEPLOYMENT_GVR, namespace, "taken")
    assert after["metadata"]["uid"] == foreign["metadata"]["uid"]
    assert after["spec"]["replicas"] == 1
    assert after["metadata"].get("labels") == {"owner": "someone-else"}
    assert not after["metadata"].get("ownerReferences")
    managers = {m.get("manager") for m in after["metadata"].get("managedFields") or []}
    assert "sample-controller" not in managers
    status = cluster.get(FOO_GVR, namespace, "collider").get("status") or {}
    assert "availableReplicas" not in status  # no status is claimed from someone else's Deployment


# -- repair ----------------------------------------------------------------------------------------


def test_out_of_band_changes_are_repaired(cluster, namespace, start_controller, skip_assertion):
    start_controller("--namespace", namespace)
    foo = create_foo(cluster, namespace, foo_body("repaired", replicas=2))
    first = wait_for(owned_deployment(cluster, namespace, "repaired", foo), message="created")

    # scaled by hand: scaled back
    patch(cluster, DEPLOYMENT_GVR, namespace, "repaired", {"spec": {"replicas": 5}})
    wait_for(
        lambda: cluster.get(DEPLOYMENT_GVR, namespace, "repaired")["spec"]["replicas"] == 2,
        message="the replicas repaired",
    )

    # deleted by hand: recreated, owned by the same Foo
    delete(cluster, DEPLOYMENT_GVR, namespace, "repaired")
    again = wait_for(
        lambda: (
            (d := owned_deployment(cluster, namespace, "repaired", foo)())
            and d["metadata"]["uid"] != first["metadata"]["uid"]
            and d
        ),
        message="the Deployment recreated",
    )
    assert again["spec"]["replicas"] == 2
    f = settle(cluster, namespace, "repaired", 2, skip_assertion)
    assert f["metadata"]["generation"] == 1  # the Foo itself was never changed


# -- leader election -------------------------------------------------------------------------------

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 3.0, 2.0, 0.5
FAST_LEADER_ELECTION = (
    "--leader-elect",
    "--leader-elect-lease-duration",
    f"{LEASE_DURATION}s",
    "--leader-elect-renew-deadline",
    f"{RENEW_DEADLINE}s",
    "--leader-elect-retry-period",
    f"{int(RETRY_PERIOD * 1000)}ms",
)


@pytest.mark.e2e_once  # leases and processes: the same on every kind of cluster
def test_leader_election_two_replicas(
    cluster: Cluster, namespace: str, credentials: ControllerCredentials
):
    lease_ns = credentials.lease_namespace

    def lease() -> dict:
        return cluster.get(LEASES, lease_ns, LEASE_NAME)["spec"]

    def remove_lease() -> None:
        try:
            delete(cluster, LEASES, lease_ns, LEASE_NAME)
        except APIError as err:
            if err.code != 404:
                raise

    remove_lease()
    flags = (
        "--namespace",
        namespace,
        "--leader-elect-namespace",
        lease_ns,
        "--leader-elect-lease-name",
        LEASE_NAME,
        *FAST_LEADER_ELECTION,
    )
    a = ControllerProcess(credentials.kubeconfig, *flags, name="replica-a")
    b = None
    try:
        a.wait_log("became leader", timeout=60)
        b = ControllerProcess(credentials.kubeconfig, *flags, name="replica-b")
        # b sees a as the leader and stands by
        b.wait_log("new leader elected", timeout=60, where=lambda r: r.get("leader") == a.identity)
        held = lease()
        assert held["holderIdentity"] == a.identity
        transitions = held.get("leaseTransitions") or 0

        # the leader does the work
        foo = create_foo(cluster, namespace, foo_body("led-by-a"))
        wait_for(owned_deployment(cluster, namespace, "led-by-a", foo), message="a reconciles")
        assert not b.logs("became leader")

        # the leader crashes (nothing released): b takes over once the lease runs out
        killed = time.monotonic()
        a.kill()
        b.wait_log("became leader", timeout=LEASE_DURATION + 10)
        took = time.monotonic() - killed
        # lease duration + one jittered retry period, plus a second for process scheduling
        assert took <= LEASE_DURATION + RETRY_PERIOD * 1.2 * 2 + 1.0, f"takeover took {took:.1f}s"
        held = lease()
        assert held["holderIdentity"] == b.identity
        assert held["leaseTransitions"] == transitions + 1
        foo = create_foo(cluster, namespace, foo_body("led-by-b"))
        wait_for(owned_deployment(cluster, namespace, "led-by-b", foo), message="b reconciles")

        # SIGTERM: b finishes, releases the lease at once and exits 0
        assert b.terminate() == 0
        released = lease()
        assert not released.get("holderIdentity")
        assert released["leaseDurationSeconds"] == 1
        assert b.logs("released leader lease")
    finally:
        for p in (a, b):
            if p is not None:
                p.close()
        remove_lease()


# -- RBAC ------------------------------------------------------------------------------------------


def _access_review(
    client,
    verb: str,
    group: str,
    resource: str,
    namespace: str | None,
    subresource: str = "",
    name: str = "",
) -> bool:
    attributes = {"verb": verb, "group": group, "resource": resource}
    if namespace:
        attributes["namespace"] = namespace
    if subresource:
        attributes["subresource"] = subresource
    if name:
        attributes["name"] = name
    review = client.request(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        body={
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        },
    )
    return bool(review["status"].get("allowed"))


@pytest.mark.e2e_once  # authorization: the same on every kind of cluster
def test_rbac_least_privilege(
    cluster: Cluster,
    namespace: str,
    credentials: ControllerCredentials,
    skip_assertion: Callable[[str, str], None],
):
    if not cluster.has_rbac:
        pytest.skip("the API server neither enforces RBAC nor mints ServiceAccount tokens")
    sa = Cluster.client_for(credentials.kubeconfig)
    # the token is the ServiceAccount's, and the server says so where it can (1.26+)
    assert service_account_username(token_claims(credentials.token)) == credentials.identity
    who = who_am_i(sa, credentials.token)
    assert who.username == credentials.identity, who.source
    if not who.from_server:
        skip_assertion(
            "the API server names the ServiceAccount (SelfSubjectReview)",
            f"the server has no SelfSubjectReview for it (GA in 1.28): {who.source}; the "
            "SelfSubjectAccessReviews below show the server authenticates the token",
        )

    # every rule of manifests/base/rbac.yaml is in force for the ServiceAccount
    for doc in load_manifests("rbac.yaml"):
        if doc["kind"] not in ("ClusterRole", "Role"):
            continue
        where = doc["metadata"].get("namespace") or namespace
        for rule in doc["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    plural, _, sub = resource.partition("/")
                    for verb in rule["verbs"]:
                        for name in rule.get("resourceNames") or [""]:
                            assert _access_review(sa, verb, group, plural, where, sub, name), (
                                f"{doc['kind']} {doc['metadata']['name']}: {verb} {resource}"
                            )

    # and nothing more: what the controller must not be able to do
    denied = [
        ("delete", "apps", "deployments", namespace, "", ""),
        ("patch", "apps", "deployments", namespace, "", ""),
        ("update", "samplecontroller.k8s.io", "foos", namespace, "", ""),
        ("delete", "samplecontroller.k8s.io", "foos", namespace, "", ""),
        ("create", "samplecontroller.k8s.io", "foos", namespace, "", ""),
        ("get", "", "secrets", namespace, "", ""),
        ("list", "", "secrets", namespace, "", ""),
        ("create", "coordination.k8s.io", "leases", namespace, "", ""),
        (
            "update",
            "coordination.k8s.io",
            "leases",
            credentials.lease_namespace,
            "",
            "someone-elses-lease",
        ),
        ("delete", "", "namespaces", None, "", namespace),
    ]
    for verb, group, resource, ns, sub, name in denied:
        assert not _access_review(sa, verb, group, resource, ns, sub, name), (
            f"the ServiceAccount may {verb} {group}/{resource} in {ns}"
        )

    # the API server itself refuses, with 403, what RBAC does not grant
    with pytest.raises(APIError) as refused:
        sa.request("GET", resource_path("", "v1", "secrets", namespace))
    assert refused.value.code == 403
