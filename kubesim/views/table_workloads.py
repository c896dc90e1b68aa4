"""Table columns and cells of Pods and ReplicaSets: what ``kubectl get pods`` and ``get rs`` print.

Twin of printPod and printReplicaSet in k8s.io/kubernetes pkg/printers/internalversion/
printers.go (and their column definitions in AddHandlers). Kept apart from table_printers.py,
whose helpers it uses, because these kinds come with the workload chain.

Deliberate differences: a pod's RESTARTS column is the count alone (kubesim's containers never
restart, so upstream's "(5m ago)" suffix never applies); rows carry no conditions (upstream
marks finished pods Completed for kubectl's filtering, and kubesim's pods never finish); a
container terminated without a reason is shown by its exit code only.
"""

from __future__ import annotations

from kubesim.api.labels import SelectorParseError, selector_from_label_selector
from kubesim.views.table_printers import Printer, since

__all__ = ["WORKLOAD_PRINTERS"]

_CORE = "io.k8s.api.core.v1"
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_POD_IP_DOC = (
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not "
    "yet allocated."
)
_NOMINATED_DOC = (
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it "
    "cannot be scheduled right away as preemption victims receive their graceful termination "
    "periods. This field does not guarantee that the pod will be scheduled on this node. "
    "Scheduler may decide to place the pod elsewhere if other nodes become available sooner. "
    "Scheduler may also decide to give the resources on this node to a higher priority pod "
    "that is created after preemption. As a result, this field may be different than "
    "PodSpec.nodeName when the pod is scheduled."
)
# printReplicaSet's descriptions are extensions/v1beta1's (typo included)
_RS_REPLICAS_DOC = (
    "Replicas is the number of desired replicas. This is a pointer to distinguish between "
    "explicit zero and unspecified. Defaults to 1. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
    "#what-is-a-replicationcontroller"
)
_RS_CURRENT_DOC = (
    "Replicas is the most recently oberved number of replicas. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
    "#what-is-a-replicationcontroller"
)
_RS_SELECTOR_DOC = (
    "Selector is a label query over pods that should match the replica count. If the selector "
    "is empty, it is defaulted to the labels present on the pod template. Label keys and values "
    "that must match in order to be controlled by this replica set. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
)


def _since(o: dict) -> str:
    return since((o.get("metadata") or {}).get("creationTimestamp"))


def _condition_true(status: dict, ctype: str) -> bool:
    return any(
        c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or []
    )


def _pod_reason(pod: dict) -> tuple[str, int, int]:
    """printPod's STATUS, ready containers and restarts."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = ready = 0
    inits = spec.get("initContainers") or []
    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += int(cs.get("restartCount") or 0)
        state = cs.get("state") or {}
        terminated = state.get("terminated")
        if terminated is not None and terminated.get("exitCode") == 0:
            continue
        initializing = True
        waiting = (state.get("waiting") or {}).get("reason")
        if terminated is not None:
            reason = "Init:" + (
                terminated.get("reason") or f"ExitCode:{terminated.get('exitCode')}"
            )
        elif waiting and waiting != "PodInitializing":
            reason = f"Init:{waiting}"
        else:
            reason = f"Init:{i}/{len(inits)}"
        break
    if not initializing or _condition_true(status, "Initialized"):
        restarts = 0
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            state = cs.get("state") or {}
            waiting = (state.get("waiting") or {}).get("reason")
            terminated = state.get("terminated")
            if waiting:
                reason = waiting
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                reason = f"ExitCode:{terminated.get('exitCode')}"
            elif cs.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return reason, ready, restarts


def _pod_row(pod: dict) -> list:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason, ready, restarts = _pod_reason(pod)
    ips = status.get("podIPs") or []
    gates = spec.get("readinessGates") or []
    if gates:
        true = sum(1 for g in gates if _condition_true(status, g.get("conditionType", "")))
        readiness = f"{true}/{len(gates)}"
    else:
        readiness = "<none>"
    return [
        (pod.get("metadata") or {}).get("name", ""),
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        str(restarts),
        _since(pod),
        (ips[0].get("ip") if ips else "") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        readiness,
    ]


def _replica_set_row(rs: dict) -> list:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    cs = [c for c in containers if isinstance(c, dict)]
    try:
        selector = str(selector_from_label_selector(spec.get("selector")))
    except SelectorParseError:
        selector = "<invalid>"
    replicas = spec.get("replicas")
    return [
        (rs.get("metadata") or {}).get("name", ""),
        1 if replicas is None else replicas,
        status.get("replicas") or 0,
        status.get("readyReplicas") or 0,
        _since(rs),
        ",".join(c.get("name", "") for c in cs),
        ",".join(c.get("image", "") for c in cs),
        selector,
    ]


WORKLOAD_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): Printer(
        (
            ("Name", "string", "", 0),
            (
                "Ready",
                "string",
                "The aggregate readiness state of this pod for accepting traffic.",
                0,
            ),
            ("Status", "string", "The aggregate status of the containers in this pod.", 0),
            (
                "Restarts",
                "string",
                "The number of times the containers in this pod have been restarted and when "
                "the last container in this pod has restarted.",
                0,
            ),
            ("Age", "string", _AGE_DOC, 0),
            ("IP", "string", _POD_IP_DOC, 1),
            ("Node", "string", (f"{_CORE}.PodSpec", "nodeName"), 1),
            ("Nominated Node", "string", _NOMINATED_DOC, 1),
            ("Readiness Gates", "string", (f"{_CORE}.PodSpec", "readinessGates"), 1),
        ),
        _pod_row,
    ),
    ("apps", "ReplicaSet"): Printer(
        (
            ("Name", "string", "", 0),
            ("Desired", "integer", _RS_REPLICAS_DOC, 0),
            ("Current", "integer", _RS_CURRENT_DOC, 0),
            ("Ready", "integer", "The number of ready replicas for this replica set.", 0),
            ("Age", "string", _AGE_DOC, 0),
            ("Containers", "string", "Names of each container in the template.", 1),
            ("Images", "string", "Images referenced by each container in the template.", 1),
            ("Selector", "string", _RS_SELECTOR_DOC, 1),
        ),
        _replica_set_row,
    ),
}
