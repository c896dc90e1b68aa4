"""In-process stand-ins for kube-controller-manager and apiextensions' finalizer controllers.

A real cluster moves objects forward after the API write: the deployment controller and
kubelets fill in Deployment status, the namespace controller empties a terminating namespace,
the CRD finalizer removes a deleted CRD's objects, and the garbage collector (gc.py) deletes
dependents. kubesim runs these as tasks on one named thread, fed by a storage listener, so the
request path never does their work.

The deployment controller has four modes (``DEPLOYMENT_CONTROLLER_MODES``): three that make
Deployment status up, the three kinds of cluster a controller's e2e suite meets, and the real
chain:

- ``"full"``: a cluster whose pods run. One Ready, schedulable Node is registered, and a
  Deployment's status reports every replica updated, ready and available;
- ``"no-nodes"``: a control plane with kube-controller-manager but no schedulable node. The
  status reports the replicas created and updated, none ready or available, all unavailable,
  and stays so; no Node exists;
- ``"none"``: a bare API server (envtest). Nothing writes Deployment status; no Node exists;
- ``"pods"``: the workload chain. Deployments own real ReplicaSets (deployments.py), which own
  real Pods (replicasets.py); status follows from the Pods. Without a node the Pods stay
  Pending; ``KubeSim(simulated_node=True)`` adds one that runs them (kwok.py).

Tasks are keyed (kind, namespace, name) and de-duplicated: scheduling a key that is already due
earlier keeps the earlier time, as the delaying workqueue does.
"""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import time
from collections.abc import Callable

from kubesim.registry.strategy import CRD_CLEANUP_FINALIZER
from kubesim.storage.store import DELETED, Event, Storage

__all__ = [
    "DEPLOYMENT_CONTROLLER",
    "DEPLOYMENT_CONTROLLER_MODES",
    "NODE_NAME",
    "ControllerManager",
    "deployment_status",
]

DEPLOYMENTS = ("apps", "deployments")
NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")

DEPLOYMENT_CONTROLLER_MODES = ("none", "no-nodes", "full", "pods")
# The namespace deleter's condition types, in the order it writes them, with the reason and
# message of each when nothing is wrong (pkg/controller/namespace/deletion).
NAMESPACE_CONDITIONS = {
    "NamespaceDeletionDiscoveryFailure": (
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    "NamespaceDeletionGroupVersionParsingFailure": (
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    "NamespaceDeletionContentFailure": (
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": (
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
}
# the component the deployment controller's Events name (source and reportingComponent)
DEPLOYMENT_CONTROLLER = "deployment-controller"
# utilrand.SafeEncodeString's alphabet: no vowels, no confusable characters
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NODE_NAME = "kubesim-node"  # the one Node of the "full" mode, as a kubelet registers it


class ControllerManager:
    """One thread running delayed, de-duplicated tasks triggered by storage events."""

    def __init__(
        self,
        storage: Storage,
        rest,
        deployment_status_delay: float | None,
        deployment_controller: str | None = None,
    ):
        """``deployment_controller`` is one of DEPLOYMENT_CONTROLLER_MODES; None picks "full"
        when a ``deployment_status_delay`` is given and "none" otherwise (the meaning the delay
        alone has always had). A loop mode without a delay writes status at once."""
        if deployment_controller is None:
            deployment_controller = "none" if deployment_status_delay is None else "full"
        if deployment_controller not in DEPLOYMENT_CONTROLLER_MODES:
            raise ValueError(
                f"deployment_controller must be one of {DEPLOYMENT_CONTROLLER_MODES}, "
                f"not {deployment_controller!r}"
            )
        if deployment_controller == "none":
            if deployment_status_delay is not None:
                raise ValueError(
                    'deployment_status_delay needs a deployment controller ("no-nodes" or "full")'
                )
        elif deployment_status_delay is None:
            deployment_status_delay = 0.0
        self.storage = storage  # the objects the tasks read and write
        self.rest = rest  # writes go through the REST rules (generation, events, finalizers)
        self.deployment_controller = deployment_controller  # one of DEPLOYMENT_CONTROLLER_MODES
        self.deployment_status_delay = deployment_status_delay  # None: no deployment status loop
        self._cond = threading.Condition()  # guards _heap/_due; signals "a task was scheduled"
        self._heap: list[tuple[float, int, tuple]] = []  # (due, seq, key) min-heap
        self._due: dict[tuple, float] = {}  # key -> earliest due time among queued entries
        self._handlers: dict[str, Callable[[tuple], float | None]] = {
            "deployment-status": self._sync_deployment_status,
            "namespace": self._sync_namespace,
            "crd-cleanup": self._sync_crd,
        }  # task kind -> handler; a handler returns a delay to run again, or None
        self._listeners: list[Callable[[Event], None]] = []  # extra event hooks (gc.py)
        # (namespace, name) -> (replica set name, replicas) a real deployment controller would
        # have scaled for each Deployment, for its ScalingReplicaSet Events
        self._replica_sets: dict[tuple[str, str], tuple[str, int]] = {}
        self._seq = itertools.count()  # tie-breaker for equal due times
        self._stop = threading.Event()  # set by stop(); the thread exits promptly
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # set while no task is due (tests wait on it)
        storage.add_listener(self._on_event)

    def bootstrap(self) -> None:
        """Objects a cluster of this kind has from the start: its Node, in the "full" mode."""
        if self.deployment_controller == "full":
            _register_node(self.rest, NODE_NAME)

    @property
    def fakes_deployment_status(self) -> bool:
        """Whether Deployment status is made up from spec.replicas ("no-nodes", "full"); the
        "pods" mode computes it from real ReplicaSets (deployments.py) instead."""
        return self.deployment_controller in ("no-nodes", "full")

    @property
    def pods_available(self) -> bool:
        """Whether replicas ever become available (a schedulable node runs them)."""
        return self.deployment_controller == "full"

    def register(self, kind: str, handler: Callable[[tuple], float | None], listener=None) -> None:
        """Add a task kind (gc.py registers "gc"), and optionally an event hook feeding it."""
        self._handlers[kind] = handler
        if listener is not None:
            self._listeners.append(listener)

    # ---- scheduling (called under the storage lock: must stay cheap) -------------------------

    def schedule(self, key: tuple, delay: float = 0.0) -> None:
        due = time.monotonic() + delay
        with self._cond:
            if key in self._due and self._due[key] <= due:
                return
            self._due[key] = due
            heapq.heappush(self._heap, (due, next(self._seq), key))
            self._idle.clear()
            self._cond.notify()

    def _on_event(self, ev: Event) -> None:
        if ev.key == DEPLOYMENTS and ev.type == DELETED:
            # its replica sets go with it: a new Deployment of that name starts from 0
            self._replica_sets.pop((ev.ns, ev.name), None)
        if ev.key == DEPLOYMENTS and ev.type != DELETED and self.fakes_deployment_status:
            obj = ev.obj.obj
            if deployment_status(obj, self.pods_available) != (obj.get("status") or {}):
                self.schedule(
                    ("deployment-status", ev.ns, ev.name), self.deployment_status_delay or 0.0
                )
        elif (
            ev.key == NAMESPACES
            and ev.type != DELETED
            and ev.obj.obj["metadata"].get("deletionTimestamp")
        ):
            self.schedule(("namespace", "", ev.name))
        elif (
            ev.key == CRDS
            and ev.type != DELETED
            and ev.obj.obj["metadata"].get("deletionTimestamp")
        ):
            self.schedule(("crd-cleanup", "", ev.name))
        for listener in self._listeners:
            listener(ev)

    # ---- the loop ------------------------------------------------------------------------------

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="kubesim-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def wait_idle(self, timeout: float) -> bool:
        """Block until no task is due now (all pending work done or only delayed work left)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if not self._heap or self._heap[0][0] > time.monotonic():
                    return True
            self._idle.wait(0.01)
        return False

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                now = time.monotonic()
                if not self._heap:
                    self._idle.set()
                    self._cond.wait(0.5)
                    continue
                due, _, key = self._heap[0]
                if due > now:
                    self._idle.set()
                    self._cond.wait(min(due - now, 0.5))
                    continue
                heapq.heappop(self._heap)
                if self._due.get(key) != due:
                    continue  # superseded by an earlier entry that already ran
                del self._due[key]
            try:
                again = self._handlers[key[0]](key)
            # any exception: a failing task is retried, it never kills the loop
            except Exception:
                import traceback

                traceback.print_exc()
                again = 1.0
            if again is not None:
                self.schedule(key, again)

    # ---- deployment status (deployment controller + kubelets) --------------------------------

    def _sync_deployment_status(self, key: tuple) -> float | None:
        _, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(DEPLOYMENTS, ns, name)
            if stored is None:
                return None
            obj = stored.obj
            want = deployment_status(obj, self.pods_available)
            if (obj.get("status") or {}) == want:
                return None
            info = self.rest.registry.lookup("apps", "v1", "deployments")
            new = json.loads(stored.full())  # Rest takes ownership of what it is given
            new["status"] = want
            self.rest.update(info, ns, name, new, {}, "status")
            self._record_scaling(obj)
        return None

    def _record_scaling(self, deployment: dict) -> None:
        """The ScalingReplicaSet Events the deployment controller records on a Deployment.

        kubesim has no ReplicaSets, so it keeps, per Deployment, the one a real controller
        would have made for the current template (named NAME-<pod-template-hash>) and its size.
        A new Deployment scales its replica set up from 0 (getNewReplicaSet in sync.go); a
        replicas change scales it up or down (scaleReplicaSet); a template change scales the
        new one up and the old one down (rolling.go, here in one step each).
        """
        meta, spec = deployment["metadata"], deployment.get("spec") or {}
        key = (meta.get("namespace", ""), meta["name"])
        rs_name = f"{meta['name']}-{pod_template_hash(spec.get('template') or {})}"
        replicas = spec.get("replicas", 1)
        old = self._replica_sets.get(key)
        self._replica_sets[key] = (rs_name, replicas)
        if old is None:
            if replicas > 0:
                self._scaling_event(deployment, "up", rs_name, 0, replicas)
        elif old[0] != rs_name:
            if replicas > 0:
                self._scaling_event(deployment, "up", rs_name, 0, replicas)
            if old[1] > 0:
                self._scaling_event(deployment, "down", old[0], old[1], 0)
        elif old[1] != replicas:
            self._scaling_event(
                deployment, "up" if replicas > old[1] else "down", rs_name, old[1], replicas
            )

    def _scaling_event(self, d: dict, direction: str, rs: str, old: int, new: int) -> None:
        """One Normal ScalingReplicaSet Event on the Deployment, as client-go's recorder writes
        it (core/v1, source and reportingComponent deployment-controller)."""
        if self.rest.version.scaling_event_says_from:
            message = f"Scaled {direction} replica set {rs} from {old} to {new}"
        else:
            message = f"Scaled {direction} replica set {rs} to {new}"
        meta = d["metadata"]
        ns = meta.get("namespace", "")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            # the recorder's name: the object's name and the time in nanoseconds, in hex
            "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": ns},
            "involvedObject": {
                "kind": "Deployment",
                "namespace": ns,
                "name": meta["name"],
                "uid": meta.get("uid", ""),
                "apiVersion": "apps/v1",
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": "ScalingReplicaSet",
            "message": message,
            "source": {"component": DEPLOYMENT_CONTROLLER},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": "Normal",
            "reportingComponent": DEPLOYMENT_CONTROLLER,
            "reportingInstance": "",
        }
        info = self.rest.registry.lookup("", "v1", "events")
        self.rest.create(info, ns, event, {})

    # ---- namespace controller ------------------------------------------------------------------

    def _sync_namespace(self, key: tuple) -> float | None:
        """Delete everything in a terminating namespace, then the namespace itself."""
        name = key[2]
        with self.storage.lock:
            ns_obj = self.storage.get(NAMESPACES, "", name)
            if ns_obj is None or not ns_obj.obj["metadata"].get("deletionTimestamp"):
                return None
            remaining = 0
            for skey in self.storage.all_keys():
                infos = self.rest.registry.by_storage_key(skey)
                if not infos or not infos[0].namespaced:
                    continue
                for stored in self.storage.items(skey):
                    if stored.obj["metadata"].get("namespace") != name:
                        continue
                    remaining += 1
                    if not stored.obj["metadata"].get("deletionTimestamp"):
                        self.rest.delete_locked(
                            infos[0], stored, {"propagationPolicy": "Background"}
                        )
            left = self._namespace_contents(name) if remaining else {}
            if left:
                self._set_namespace_conditions(ns_obj, left)
                return 0.2  # objects with finalizers remain: check again soon
            if ns_obj.obj["metadata"].get("finalizers"):
                self._set_namespace_conditions(ns_obj, {})
                return None  # metadata finalizers: whoever owns them removes them
            self.storage.remove(NAMESPACES, "", name)
        return None

    def _namespace_contents(self, name: str) -> dict[str, list[dict]]:
        """What is left in a namespace: its objects by "resource.group", as the namespace
        deleter's estimate counts them (core resources read "configmaps.")."""
        left: dict[str, list[dict]] = {}
        for skey in self.storage.all_keys():
            infos = self.rest.registry.by_storage_key(skey)
            if not infos or not infos[0].namespaced:
                continue
            for stored in self.storage.items(skey):
                if stored.obj["metadata"].get("namespace") == name:
                    left.setdefault(f"{skey[1]}.{skey[0]}", []).append(stored.obj)
        return left

    def _set_namespace_conditions(self, ns_obj, left: dict[str, list[dict]]) -> None:
        """Write the namespace deleter's conditions (deletion/status_condition_utils.go): the
        five types in their order, True with the reason while content or its finalizers
        remain, else the "ok" variant False; a condition keeps its lastTransitionTime while
        its status stays."""
        failing: dict[str, tuple[str, str]] = {}
        if left:
            counts = sorted(f"{gr} has {len(objs)} resource instances" for gr, objs in left.items())
            failing["NamespaceContentRemaining"] = (
                "SomeResourcesRemain",
                "Some resources are remaining: " + ", ".join(counts),
            )
            finalizers: dict[str, int] = {}
            for objs in left.values():
                for obj in objs:
                    for f in obj["metadata"].get("finalizers") or []:
                        finalizers[f] = finalizers.get(f, 0) + 1
            if finalizers:
                failing["NamespaceFinalizersRemaining"] = (
                    "SomeFinalizersRemain",
                    "Some content in the namespace has finalizers remaining: "
                    + ", ".join(
                        sorted(f"{f} in {n} resource instances" for f, n in finalizers.items())
                    ),
                )
        old = {c.get("type"): c for c in (ns_obj.obj.get("status") or {}).get("conditions") or []}
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conditions = []
        for ctype, (ok_reason, ok_message) in NAMESPACE_CONDITIONS.items():
            status, (reason, message) = (
                ("True", failing[ctype]) if ctype in failing else ("False", (ok_reason, ok_message))
            )
            before = old.get(ctype)
            since = before["lastTransitionTime"] if before and before["status"] == status else now
            conditions.append(
                {
                    "type": ctype,
                    "status": status,
                    "lastTransitionTime": since,
                    "reason": reason,
                    "message": message,
                }
            )
        status_now = ns_obj.obj.get("status") or {}
        if status_now.get("conditions") == conditions:
            return
        info = self.rest.registry.lookup("", "v1", "namespaces")
        new = json.loads(ns_obj.full())
        new["status"] = dict(status_now, conditions=conditions)
        self.rest.update(info, "", ns_obj.obj["metadata"]["name"], new, {}, "status")

    # ---- CRD finalizer (apiextensions-apiserver's finalizer controller) ------------------------

    def _sync_crd(self, key: tuple) -> float | None:
        name = key[2]
        with self.storage.lock:
            stored = self.storage.get(CRDS, "", name)
            if stored is None or not stored.obj["metadata"].get("deletionTimestamp"):
                return None
            fins = stored.obj["metadata"].get("finalizers") or []
            if CRD_CLEANUP_FINALIZER not in fins:
                return None
            spec = stored.obj.get("spec") or {}
            skey = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
            self.rest.registry.remove_crd(name)
            self.storage.drop_resource(skey)
            info = self.rest.registry.lookup(
                "apiextensions.k8s.io", "v1", "customresourcedefinitions"
            )
            new = json.loads(stored.full())
            new["metadata"]["finalizers"] = [f for f in fins if f != CRD_CLEANUP_FINALIZER]
            self.rest.commit_update(info, stored, new, None, False)
        return None


def pod_template_hash(template: dict) -> str:
    """A pod-template-hash: controller.ComputeHash's FNV-32a of the template, its decimal digits
    spelt in rand.SafeEncodeString's alphabet (kubesim hashes the template's JSON, not Go's
    deep-hash of the struct, so the value differs from a real cluster's; its shape does not)."""
    h = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in str(h))


def deployment_status(obj: dict, pods_available: bool = True) -> dict:
    """The status the deployment controller converges a Deployment to.

    With ``pods_available`` (a node runs the pods): every replica updated, ready and available.
    Without (no schedulable node: the pods are created and stay Pending): the replicas created
    and updated, and all of them unavailable, as kube-controller-manager reports them then.
    Conditions are not written. Zero counts are omitted, as Go's omitempty int32 fields are.
    The e2e suite writes this same status itself on an API server with no deployment controller.
    """
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    status = {"observedGeneration": obj["metadata"].get("generation", 1)}
    if replicas:
        status.update(replicas=replicas, updatedReplicas=replicas)
        if pods_available:
            status.update(readyReplicas=replicas, availableReplicas=replicas)
        else:
            status.update(unavailableReplicas=replicas)
    return status


def _register_node(rest, name: str) -> None:
    """Create a Ready, schedulable Node (no taints, not cordoned), as a kubelet registers one."""
    info = rest.registry.lookup("", "v1", "nodes")
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    rest.create(info, "", {"metadata": {"name": name, "labels": labels}, "spec": {}}, {})
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
        "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
        "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
    }
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}
    rest.update(info, "", name, body, {}, "status")
