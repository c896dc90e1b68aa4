"""The ReplicaSet controller of the "pods" mode: Pods from the template, replaced when deleted.

Twin of kube-controller-manager's pkg/controller/replicaset (replica_set.go: manageReplicas,
syncReplicaSet; replica_set_utils.go: calculateStatus, the ReplicaFailure condition) and of
pkg/controller/controller_utils.go (GetPodFromTemplate: ``generateName: <rs>-``, the template's
labels, annotations and finalizers, a controller owner reference that blocks its owner's
deletion). Each create and delete records upstream's Event (SuccessfulCreate "Created pod: X",
SuccessfulDelete "Deleted pod: X", FailedCreate "Error creating: ...").

Deliberate differences: pods are created one at a time rather than in slow-start batches;
orphaned pods that match the selector are not adopted; which pods a scale-down deletes follows a
simplified ranking of getPodsToDelete (unscheduled, then pending, then not ready, then the
newest first), without upstream's co-location and restart-count terms.
"""

from __future__ import annotations

import calendar
import json
import time
from typing import Any

from kubesim.api import errors
from kubesim.api.labels import selector_from_label_selector
from kubesim.controllers.manager import ControllerManager
from kubesim.controllers.recorder import record_event
from kubesim.registry.strategy import now_rfc3339
from kubesim.storage.store import DELETED, Event, Storage

__all__ = ["ReplicaSetController", "pod_ready", "pods_of"]

REPLICA_SETS = ("apps", "replicasets")
PODS = ("", "pods")
COMPONENT = "replicaset-controller"
# how long after a failed create the controller tries again (the workqueue's backoff, flattened)
RETRY_AFTER = 1.0
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def pod_ready(pod: dict) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _ready_since(pod: dict) -> float:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("lastTransitionTime"):
            return float(
                calendar.timegm(time.strptime(c["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ"))
            )
    return 0.0


def _active(pod: dict) -> bool:
    """controller.IsPodActive: not finished, not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def pods_of(storage: Storage, owner: dict) -> list[dict]:
    """The Pods in ``owner``'s namespace whose controller reference is ``owner``."""
    uid = owner["metadata"]["uid"]
    ns = owner["metadata"].get("namespace", "")
    return [
        stored.obj
        for stored in storage.items(PODS)
        if stored.obj["metadata"].get("namespace") == ns
        and any(
            r.get("controller") and r.get("uid") == uid
            for r in stored.obj["metadata"].get("ownerReferences") or []
        )
    ]


class ReplicaSetController:
    """Keeps each ReplicaSet's pod count at spec.replicas and reports them in its status."""

    def __init__(self, storage: Storage, rest, controllers: ControllerManager):
        self.storage = storage  # read under its lock; every task runs under it
        self.rest = rest  # pods are created and deleted through the REST rules (admission too)
        self.controllers = controllers  # runs the tasks
        self.replica_sets = rest.registry.lookup("apps", "v1", "replicasets")
        self.pods = rest.registry.lookup("", "v1", "pods")
        controllers.register("replicaset", self._sync, self._on_event)

    def _on_event(self, ev: Event) -> None:
        if ev.key == REPLICA_SETS and ev.type != DELETED:
            self.controllers.schedule(("replicaset", ev.ns, ev.name))
        elif ev.key == PODS:
            # a pod's change (or its deletion) wakes the ReplicaSet that controls it
            obj = ev.prev.obj if ev.type == DELETED and ev.prev else ev.obj.obj
            for ref in obj["metadata"].get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "ReplicaSet":
                    self.controllers.schedule(("replicaset", ev.ns, ref.get("name", "")))

    def _sync(self, key: tuple) -> float | None:
        """syncReplicaSet: manage the replicas (unless being deleted), then write the status."""
        _, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(REPLICA_SETS, ns, name)
            if stored is None:
                return None
            rs = json.loads(stored.full())
            failure = None
            if not rs["metadata"].get("deletionTimestamp"):
                failure = self._manage(rs)
            recheck = self._write_status(rs, failure)
        return RETRY_AFTER if failure else recheck

    def _manage(self, rs: dict) -> str | None:
        """manageReplicas: create or delete the difference; the first create error, if any."""
        active = [p for p in pods_of(self.storage, rs) if _active(p)]
        want = int((rs.get("spec") or {}).get("replicas") or 0)
        diff = len(active) - want
        for _ in range(-diff):
            try:
                _, created = self.rest.create(
                    self.pods, rs["metadata"]["namespace"], self._pod(rs), {}
                )
            except errors.ApiError as err:
                message = str(err)  # the Status message
                self._event(rs, "Warning", "FailedCreate", f"Error creating: {message}")
                return message
            self._event(
                rs, "Normal", "SuccessfulCreate", f"Created pod: {created.obj['metadata']['name']}"
            )
        if diff > 0:
            for pod in sorted(active, key=_deletion_rank)[:diff]:
                meta = pod["metadata"]
                current = self.storage.get(PODS, meta["namespace"], meta["name"])
                if current is None:
                    continue
                self.rest.delete_locked(self.pods, current, {})
                self._event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")
        return None

    def _pod(self, rs: dict) -> dict:
        """GetPodFromTemplate: the template's metadata and spec, named after the ReplicaSet."""
        template = (rs.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        meta: dict[str, Any] = {
            "generateName": rs["metadata"]["name"] + "-",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs["metadata"]["name"],
                    "uid": rs["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        for field in ("labels", "annotations", "finalizers"):
            if tmeta.get(field):
                meta[field] = json.loads(json.dumps(tmeta[field]))
        spec = json.loads(json.dumps(template.get("spec") or {}))
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _write_status(self, rs: dict, failure: str | None) -> float | None:
        """calculateStatus and updateReplicaSetStatus; returns when a pod becomes available
        (minReadySeconds after it became ready), to look again then."""
        spec = rs.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        template_selector = selector_from_label_selector({"matchLabels": template_labels})
        min_ready = int(spec.get("minReadySeconds") or 0)
        pods = pods_of(self.storage, rs)
        active = [p for p in pods if _active(p)]
        ready = [p for p in active if pod_ready(p)]
        now = time.time()
        available = [p for p in ready if min_ready == 0 or _ready_since(p) + min_ready <= now]
        waits = [_ready_since(p) + min_ready - now for p in ready if p not in available]
        status: dict[str, Any] = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(
                1 for p in active if template_selector.matches(p["metadata"].get("labels") or {})
            ),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": rs["metadata"].get("generation", 0),
        }
        if self.rest.version.counts_terminating_replicas:
            status["terminatingReplicas"] = sum(
                1 for p in pods if p["metadata"].get("deletionTimestamp")
            )
        # omitempty int32s are left out at zero; replicas and terminatingReplicas are not
        status = {k: v for k, v in status.items() if v or k in ("replicas", "terminatingReplicas")}
        conditions = [
            c
            for c in (rs.get("status") or {}).get("conditions") or []
            if c.get("type") != "ReplicaFailure"
        ]
        if failure:
            previous = next(
                (
                    c
                    for c in (rs.get("status") or {}).get("conditions") or []
                    if c.get("type") == "ReplicaFailure"
                ),
                None,
            )
            conditions.append(
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": previous["lastTransitionTime"]
                    if previous
                    else now_rfc3339(),
                    "reason": "FailedCreate",
                    "message": failure,
                }
            )
        if conditions:
            status["conditions"] = conditions
        if status != (rs.get("status") or {}):
            meta = rs["metadata"]
            body = dict(rs, status=status)
            self.rest.update(self.replica_sets, meta["namespace"], meta["name"], body, {}, "status")
        return max(min(waits), 0.0) if waits else None

    def _event(self, rs: dict, etype: str, reason: str, message: str) -> None:
        record_event(self.rest, rs, "apps/v1", COMPONENT, etype, reason, message)


def _deletion_rank(pod: dict) -> tuple:
    """Pods to delete first: unscheduled, then pending/unknown before running, not ready before
    ready, and the newest first."""
    status = pod.get("status") or {}
    created = pod["metadata"].get("creationTimestamp") or ""
    newest_first = tuple(-ord(ch) for ch in created)
    return (
        bool((pod.get("spec") or {}).get("nodeName")),
        _PHASE_RANK.get(status.get("phase", "Pending"), 0),
        pod_ready(pod),
        newest_first,
    )
