"""A Deployment's ReplicaSets and Pods, found as kube-controller-manager finds them, and a Pod's
row as ``kubectl get pods`` prints it.

No client-go twin: part of the demo (``make demo``'s tables, demo-ui's drawing of the Pods). The
chain is followed by controller references, as the deployment and ReplicaSet controllers follow
it (``metav1.GetControllerOf``): a ReplicaSet belongs to the Deployment its controller
``ownerReference`` names by uid, a Pod to such a ReplicaSet. Labels would do on a cluster
where nobody else reuses them; the references say it for certain, and a Pod whose ReplicaSet
is gone (the garbage collector has not reached it yet) is found as an orphan.

``pod_status`` is the STATUS column of kubectl's pod printer (kubernetes
``pkg/printers/internalversion/printers.go``, ``printPod``), cut to the states kubesim's
simulated node writes: a waiting container's reason (ContainerCreating), Terminating, else the
phase. Deliberate differences: init containers, terminated containers' reasons, NotReady and
the node-lost ``Unknown`` are left out (kubesim's containers never finish, and it has one node).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "Workload",
    "controller_uid",
    "pod_ready",
    "pod_ready_column",
    "pod_restarts",
    "pod_status",
    "workloads",
]

Object = dict[str, Any]


def controller_uid(obj: Object) -> str | None:
    """The uid of the object's controller (its ownerReference with ``controller: true``)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


def pod_ready(pod: Object) -> bool:
    """The Pod's Ready condition is True (what a Service and a ReplicaSet count)."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def pod_ready_column(pod: Object) -> str:
    """kubectl's READY column: ready containers / containers."""
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    return f"{ready}/{len(containers)}"


def pod_restarts(pod: Object) -> int:
    """kubectl's RESTARTS column: the containers' restarts, summed."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses)


def pod_status(pod: Object) -> str:
    """kubectl's STATUS column (see the module's note for what is left out)."""
    status = pod.get("status") or {}
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    reason = str(status.get("reason") or status.get("phase") or "Pending")
    for container in reversed(status.get("containerStatuses") or []):
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            reason = str(waiting["reason"])
    return reason


class Workload:
    """One Deployment and what it runs: its ReplicaSets and their Pods."""

    def __init__(self, deployment: Object, replica_sets: list[Object], pods: list[Object]):
        self.deployment = deployment
        self.replica_sets = replica_sets
        self.pods = pods

    @property
    def name(self) -> str:
        return str(self.deployment["metadata"]["name"])


def workloads(
    deployments: Iterable[Object], replica_sets: Iterable[Object], pods: Iterable[Object]
) -> tuple[list[Workload], list[Object]]:
    """Each Deployment with its ReplicaSets and Pods (by controller reference), and the Pods
    no Deployment's ReplicaSet controls (orphans on their way out, or Pods of their own)."""
    by_owner: dict[str | None, list[Object]] = {}
    for rs in replica_sets:
        by_owner.setdefault(controller_uid(rs), []).append(rs)
    pods_by_owner: dict[str | None, list[Object]] = {}
    for pod in pods:
        pods_by_owner.setdefault(controller_uid(pod), []).append(pod)
    found: list[Workload] = []
    claimed: set[str | None] = set()
    for deployment in deployments:
        owned = by_owner.get(str(deployment["metadata"].get("uid")), [])
        uids = [str(rs["metadata"].get("uid")) for rs in owned]
        claimed.update(uids)
        their_pods = [pod for uid in uids for pod in pods_by_owner.get(uid, [])]
        their_pods.sort(key=lambda p: str(p["metadata"]["name"]))
        found.append(Workload(deployment, owned, their_pods))
    orphans = [pod for uid, group in pods_by_owner.items() if uid not in claimed for pod in group]
    return found, sorted(orphans, key=lambda p: str(p["metadata"]["name"]))
