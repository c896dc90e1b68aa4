"""A Foo's Deployment status on each kind of cluster, and the Foo status that must mirror it.

``settle()`` is the one place the scenarios differ by cluster kind (tests/e2e/capabilities.py):

- ``"full"``: the deployment controller and the kubelets make every replica available; the
  suite waits for the Foo to report it (``available_timeout()``, cut to the test's budget);
- ``"no-nodes"``: the deployment controller writes status, and no replica becomes available.
  The suite waits for it to observe the Deployment's current generation, then asserts the Foo
  mirrors what it wrote (0 available, ``Ready=False``). It never writes the status itself: that
  would fight the deployment controller;
- ``"none"``: nothing writes Deployment status. The suite first asserts the Foo mirrors the
  status as it stands (none, or one written for an older generation), then writes what
  kubesim's status loop writes (``kubesim.controllers.manager.deployment_status``: every replica
  available) and asserts the Foo mirrors that too.

What a kind rules out is recorded with the reason (``skip_assertion``) for the summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from client.errors import APIError, is_conflict
from client.rest import resource_path
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from kubesim.controllers.manager import deployment_status
from tests.e2e.cluster import Cluster, wait_for

__all__ = [
    "DEFAULT_AVAILABLE_TIMEOUT",
    "available_timeout",
    "foo_mirrors",
    "settle",
    "write_deployment_status",
]

# Seconds for pods to be scheduled, pull nginx:latest and become available on a real cluster,
# unless E2E_AVAILABLE_TIMEOUT says otherwise; conftest.py refuses a value that is not below
# the per-test timeout, and a wait is cut to what is left of the test's budget anyway.
DEFAULT_AVAILABLE_TIMEOUT = 90.0
KUBESIM_AVAILABLE_TIMEOUT = 15.0  # kubesim's status loop answers in 0.05 s
SkipAssertion = Callable[[str, str], None]  # (what is not asserted, why)


def available_timeout(target: str) -> float:
    """Seconds the Foo of a "full" cluster may take to report every replica available."""
    if target == "kubesim":
        return KUBESIM_AVAILABLE_TIMEOUT
    return float(os.environ.get("E2E_AVAILABLE_TIMEOUT") or DEFAULT_AVAILABLE_TIMEOUT)


def available_of(deployment: dict) -> int:
    """availableReplicas as the controller reads it (omitted when 0, as Go's omitempty does)."""
    return int((deployment.get("status") or {}).get("availableReplicas") or 0)


def foo_mirrors(
    cluster: Cluster, ns: str, name: str, replicas: int, available: int
) -> Callable[[], dict | bool]:
    """The Foo's status describes its current generation and ``available`` of ``replicas``."""

    def check() -> dict | bool:
        f = cluster.get(FOO_GVR, ns, name)
        status = f.get("status") or {}
        ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
        return (
            status.get("observedGeneration") == f["metadata"]["generation"]
            and status.get("availableReplicas") == available
            and [c["status"] for c in ready] == ["True" if available >= replicas else "False"]
            and f
        )

    return check


def write_deployment_status(cluster: Cluster, ns: str, name: str) -> dict:
    """Stand in for the deployment controller where none runs: PUT the Deployment's /status
    with what kubesim's loop writes for its current spec (every replica available)."""
    path = resource_path(*DEPLOYMENT_GVR, ns, name, "status")

    def attempt() -> dict | None:
        d = cluster.get(DEPLOYMENT_GVR, ns, name)
        d["status"] = deployment_status(d, pods_available=True)
        try:
            return cluster.admin.request("PUT", path, body=d)
        except APIError as err:
            if is_conflict(err):  # the controller updated it meanwhile: read again
                return None
            raise

    return wait_for(attempt, message=f"the Deployment {ns}/{name}'s status written")


def settle(
    cluster: Cluster, ns: str, name: str, replicas: int, skip_assertion: SkipAssertion
) -> dict:
    """Wait for the Foo ``name`` (its Deployment has the same name) to mirror the status its
    Deployment gets on this kind of cluster once it runs ``replicas``; return the Foo."""
    can = cluster.can
    deployment = wait_for(
        lambda: (d := cluster.get(DEPLOYMENT_GVR, ns, name))["spec"]["replicas"] == replicas and d,
        message=f"the Deployment {name} at {replicas} replicas",
    )
    if can.kind == "full":
        return wait_for(
            foo_mirrors(cluster, ns, name, replicas, replicas),
            timeout=available_timeout(cluster.target),
            message=(
                f"the Foo {name} to report {replicas}/{replicas} replicas available (the pods "
                "must be scheduled and pull nginx:latest; E2E_AVAILABLE_TIMEOUT)"
            ),
        )
    if can.kind == "no-nodes":
        generation = deployment["metadata"]["generation"]
        deployment = wait_for(
            lambda: (
                (d := cluster.get(DEPLOYMENT_GVR, ns, name))
                .get("status", {})
                .get("observedGeneration", 0)
                >= generation
                and d
            ),
            message=f"the deployment controller to observe generation {generation} of {name}",
        )
        available = available_of(deployment)
        skip_assertion(
            "the Deployment's replicas become available and the Foo reports Ready=True",
            f"{can.why_not_available}; asserted instead: the Foo mirrors the deployment "
            "controller's status (observedGeneration, availableReplicas 0, Ready=False)",
        )
        return wait_for(
            foo_mirrors(cluster, ns, name, replicas, available),
            message=f"the Foo {name} to mirror {available}/{replicas} available",
        )
    # "none": the Foo shows the status as it stands, then the one the suite writes
    available = available_of(deployment)
    wait_for(
        foo_mirrors(cluster, ns, name, replicas, available),
        message=f"the Foo {name} to mirror {available}/{replicas} available (no status written)",
    )
    write_deployment_status(cluster, ns, name)
    skip_assertion(
        "a deployment controller writes the Deployment's status and its replicas become available",
        f"{can.why_not_available}; asserted instead: the Foo mirrors the status as it stands, "
        "then the status the suite wrote (kubesim's: every replica available)",
    )
    return wait_for(
        foo_mirrors(cluster, ns, name, replicas, replicas),
        message=f"the Foo {name} to mirror the status the suite wrote ({replicas} available)",
    )
