"""What the cluster under test can do, probed once per session.

The scenarios are the same on every cluster; what they can assert is not. Three questions
decide it, each answered by asking the cluster rather than trusting the target's name (an
``E2E_KUBECONFIG`` may point at anything from kind to a bare API server):

- **Is a deployment controller running?** A probe Deployment with ``replicas: 0`` (no pod, no
  image pull, nothing scheduled) is created, and the suite watches for
  ``status.observedGeneration`` to reach its generation: the deployment controller writes it
  within milliseconds of seeing the object, whatever the nodes; nothing else writes it. The
  alternative, the ``kube-controller-manager`` Lease in ``kube-system``, answers a different
  question: it exists only with leader election on, managed control planes do not show it, a
  stale one outlives a stopped controller manager, and it does not say whether the deployment
  controller is among ``--controllers``. The probe behaves the same on envtest (never answered:
  the window runs out, once per session), a control plane without nodes and kind (answered at
  once).
- **Is a garbage collector running?** Two Leases, the second owned by the first; the first is
  deleted at once, and the garbage collector deletes the second. Watched in the same window as
  the Deployment, so a bare API server costs the window once, not twice.
- **Are there Ready, schedulable nodes?** ``GET /api/v1/nodes`` (served by every version). A node
  counts when its ``Ready`` condition is ``True``, it is not cordoned (``spec.unschedulable``),
  and it has no ``NoSchedule`` or ``NoExecute`` taint: a plain Deployment's pods tolerate none
  (admission adds tolerations only for the not-ready and unreachable taints, which a Ready node
  does not carry).

From the answers, one of three kinds (``Capabilities.kind``):

- ``"full"``: deployment controller and a schedulable node: replicas become available;
- ``"no-nodes"``: a deployment controller but no schedulable node: it writes status, and no
  replica ever becomes available;
- ``"none"``: no deployment controller: nothing writes Deployment status. The suite writes it
  itself, as kubesim's loop does (tests/e2e/rollout.py), and asserts the Foo mirrors it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from client.errors import APIError, is_not_found
from client.rest import resource_path
from controller.foo_controller import DEPLOYMENT_GVR
from tests.e2e.budget import BUDGET

if TYPE_CHECKING:
    from tests.e2e.cluster import Cluster

__all__ = ["Capabilities", "detect", "node_problem", "schedulable_nodes"]

NODES = ("", "v1", "nodes")
LEASES = ("coordination.k8s.io", "v1", "leases")
PROBE_INTERVAL = 0.05  # seconds between looks at the probe objects


@dataclass(frozen=True)
class Capabilities:
    """The answers of one probe, and how to say them in the test output."""

    deployment_controller: bool  # something wrote the probe Deployment's status
    garbage_collector: bool  # the probe Lease's dependent was deleted with its owner
    schedulable_nodes: tuple[str, ...]  # names of Ready, schedulable nodes
    nodes_note: str  # how many nodes, and what keeps the others from running pods
    probe_seconds: float  # how long the probe took (its window, when something never answered)

    @property
    def kind(self) -> str:
        """ "full", "no-nodes" or "none" (see the module docstring)."""
        if not self.deployment_controller:
            return "none"
        return "full" if self.schedulable_nodes else "no-nodes"

    @property
    def pods_become_available(self) -> bool:
        return self.kind == "full"

    @property
    def why_not_available(self) -> str:
        """Why no replica becomes available on its own here ("" when they do)."""
        if not self.deployment_controller:
            return "no deployment controller: nothing creates the pods or writes their status"
        if not self.schedulable_nodes:
            return f"no Ready, schedulable node to run the pods ({self.nodes_note})"
        return ""

    def describe(self) -> str:
        """One line: the answers, and the kind they make."""

        def yes(flag: bool) -> str:
            return "yes" if flag else "no"

        return (
            f"deployment controller: {yes(self.deployment_controller)}; "
            f"garbage collector: {yes(self.garbage_collector)}; "
            f"schedulable nodes: {self.nodes_note} (probed in {self.probe_seconds:.1f}s) "
            f"-> kind {self.kind!r}"
        )


def node_problem(node: dict) -> str | None:
    """What keeps a plain Deployment's pod off this node, or None when it can run one."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        return "cordoned (spec.unschedulable)"
    ready = [
        c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"
    ]
    if not ready or ready[0].get("status") != "True":
        reason = (ready[0].get("reason") or ready[0].get("status")) if ready else "no condition"
        return f"not Ready ({reason})"
    for taint in spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute"):
            value = f"={taint['value']}" if taint.get("value") else ""
            return f"taint {taint.get('key')}{value}:{taint['effect']}"
    return None


def schedulable_nodes(cluster: Cluster) -> tuple[tuple[str, ...], str]:
    """(names of the nodes a plain pod can run on, a note saying what was found)."""
    try:
        items = cluster.admin.request("GET", resource_path(*NODES))["items"]
    except APIError as err:
        return (), f"cannot list nodes ({err.code} {err.reason}), so none are assumed"
    usable: list[str] = []
    problems: list[str] = []
    for node in items:
        name = node["metadata"]["name"]
        problem = node_problem(node)
        if problem is None:
            usable.append(name)
        else:
            problems.append(f"{name}: {problem}")
    if not items:
        return (), "no nodes"
    note = f"{len(usable)} of {len(items)}"
    if usable:
        note += " (" + ", ".join(usable[:3]) + (", ..." if len(usable) > 3 else "") + ")"
    if problems:
        note += "; " + "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
    return tuple(usable), note


def _probe_deployment(name: str) -> dict:
    labels = {"app.kubernetes.io/name": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": 0,  # nothing to schedule, no image to pull: only the status matters
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "probe", "image": "nginx:latest"}]},
            },
        },
    }


def _lease(name: str, owner: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
            }
        ]
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": {}}


def detect(cluster: Cluster, timeout: float) -> Capabilities:
    """Probe the cluster (in a namespace of its own, deleted afterwards) for ``timeout`` at most.

    On a cluster with kube-controller-manager the answers come at once; ``timeout`` is what a
    bare API server costs, once per session.
    """
    nodes, note = schedulable_nodes(cluster)
    ns = cluster.create_namespace("e2e-capabilities")
    try:
        started = time.monotonic()
        deployment_controller, garbage_collector = _probe_controllers(cluster, ns, timeout)
        took = time.monotonic() - started
    finally:
        cluster.delete_namespace(ns)
    return Capabilities(deployment_controller, garbage_collector, nodes, note, took)


def _probe_controllers(cluster: Cluster, ns: str, timeout: float) -> tuple[bool, bool]:
    admin = cluster.admin
    suffix = uuid.uuid4().hex[:6]
    name = f"capability-probe-{suffix}"
    created = admin.request(
        "POST", resource_path(*DEPLOYMENT_GVR, ns), body=_probe_deployment(name)
    )
    generation = created["metadata"].get("generation", 1)
    owner = admin.request("POST", resource_path(*LEASES, ns), body=_lease(f"owner-{suffix}"))
    dependent = f"dependent-{suffix}"
    admin.request("POST", resource_path(*LEASES, ns), body=_lease(dependent, owner))
    admin.request("DELETE", resource_path(*LEASES, ns, owner["metadata"]["name"]))

    seconds, _ = BUDGET.clamp(timeout)
    deadline = time.monotonic() + seconds
    status_written = collected = False
    while True:
        if not status_written:
            d = admin.request("GET", resource_path(*DEPLOYMENT_GVR, ns, name))
            observed = (d.get("status") or {}).get("observedGeneration")
            status_written = observed is not None and observed >= generation
        if not collected:
            try:
                admin.request("GET", resource_path(*LEASES, ns, dependent))
            except APIError as err:
                if not is_not_found(err):
                    raise
                collected = True
        if (status_written and collected) or time.monotonic() >= deadline:
            break
        time.sleep(PROBE_INTERVAL)
    # what the namespace deletion would do with a namespace controller; explicit for envtest
    for path in (
        resource_path(*DEPLOYMENT_GVR, ns, name),
        resource_path(*LEASES, ns, dependent),
    ):
        try:
            admin.request("DELETE", path)
        except APIError as err:
            if not is_not_found(err):
                raise
    return status_written, collected
