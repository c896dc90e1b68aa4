"""A simulated node, as KWOK simulates one: a Node, a scheduler that binds to it, a kubelet that
"runs" what is bound.

No container runs. Like KWOK (sigs.k8s.io/kwok), kubesim only writes what a node's components
would write to the API, so that Pods, ReplicaSets and Deployments move through their real
states:

- the Node, registered as a kubelet registers itself (pkg/kubelet/kubelet_node_status.go):
  labels, addresses, capacity and allocatable, ``status.nodeInfo``, the four conditions of a
  healthy node;
- the scheduler stand-in binds each pending Pod that names the default scheduler and has no
  scheduling gates, as the Binding subresource does (pkg/registry/core/pod/storage/storage.go,
  BindingREST: ``spec.nodeName`` and the PodScheduled condition, written without the pod
  strategy), with the scheduler's Scheduled Event (events.k8s.io/v1, action Binding);
- the kubelet stand-in admits a bound Pod (still Pending, its containers waiting in
  ContainerCreating, not ready, with hostIP and startTime) and, ``start_delay`` seconds later
  (at once when it is 0, without the first write), writes the status a kubelet writes once its
  containers run (pkg/kubelet/kubelet_pods.go, generateAPIPodStatus):
  phase Running, the conditions PodReadyToStartContainers, Initialized, Ready,
  ContainersReady (PodScheduled kept), host and pod IPs, startTime, and per container
  ``ready``, ``started``, ``state.running.startedAt``, image, imageID and containerID; init
  containers are reported as completed.

Deliberate differences: one node; nothing is checked against the node's capacity, its taints or
the pod's affinity; pods/binding is not served over HTTP (the scheduler binds in-process);
containers never fail or finish, and restart only when a pod update changes their image (no
probes are run, so a pod is Ready as soon as it runs, and stays Ready through a restart); the
kubelet records no Pulled/Created/Started Events; deletion is immediate, as everywhere in
kubesim, so no kubelet ever sees a terminating pod.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json

from kubesim.controllers.manager import ControllerManager
from kubesim.controllers.recorder import record_events_v1
from kubesim.registry.strategy import now_rfc3339
from kubesim.storage.store import DELETED, Event, Storage

__all__ = ["NODE_IP", "SIMULATED_NODE", "SimulatedNode", "normalize_image"]

PODS = ("", "pods")
SIMULATED_NODE = "kubesim-node"  # the node's name, as its kubelet would register it
NODE_IP = "10.0.0.2"  # its InternalIP, every pod's hostIP
POD_CIDR = "10.244.0.0/24"  # the node IPAM controller's range for it
DEFAULT_SCHEDULER = "default-scheduler"
# a healthy node's conditions: type -> (status, reason, message), in the kubelet's order
NODE_CONDITIONS = {
    "MemoryPressure": (
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
    ),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}
CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def normalize_image(image: str) -> str:
    """The image as the container runtime reports it: a registry, a repository and a tag
    (``nginx`` -> ``docker.io/library/nginx:latest``), as docker's reference normalisation."""
    name, digest = (image.split("@", 1) + [""])[:2]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    if ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return name


def _image_id(image: str) -> str:
    repo = normalize_image(image).split("@", 1)[0]
    repo = repo.rsplit(":", 1)[0] if ":" in repo.rsplit("/", 1)[-1] else repo
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


class SimulatedNode:
    """The node, its scheduler and its kubelet, as tasks on the controllers' thread."""

    def __init__(
        self, storage: Storage, rest, controllers: ControllerManager, start_delay: float = 0.0
    ):
        self.storage = storage  # read under its lock; every task runs under it
        self.rest = rest  # the Node and pod status are written through the REST rules
        self.controllers = controllers  # runs the tasks
        self.start_delay = start_delay  # seconds from binding to Running and Ready
        self.pods = rest.registry.lookup("", "v1", "pods")
        self._addresses = ipaddress.ip_network(POD_CIDR).hosts()  # never handed out yet
        self._released: list[str] = []  # handed out to pods since deleted: used first
        self._ips: dict[str, str] = {}  # pod uid -> its IP (kept while the pod lives)
        controllers.register("kwok-scheduler", self._bind, self._on_event)
        controllers.register("kwok-kubelet", self._run)

    # ---- the node ---------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Register the Node, then post its status, as a kubelet does on start-up."""
        info = self.rest.registry.lookup("", "v1", "nodes")
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": SIMULATED_NODE,
            "kubernetes.io/os": "linux",
        }
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": SIMULATED_NODE, "labels": labels},
            "spec": {"podCIDR": POD_CIDR, "podCIDRs": [POD_CIDR]},
        }
        self.rest.create(info, "", node, {}, "kubelet")
        now = now_rfc3339()
        version = self.rest.version.version_info()["gitVersion"]
        status = {
            "capacity": dict(CAPACITY),
            "allocatable": dict(CAPACITY),
            "conditions": [
                {
                    "type": ctype,
                    "status": cstatus,
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                    "reason": reason,
                    "message": message,
                }
                for ctype, (cstatus, reason, message) in NODE_CONDITIONS.items()
            ],
            "addresses": [
                {"type": "InternalIP", "address": NODE_IP},
                {"type": "Hostname", "address": SIMULATED_NODE},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            # every field of NodeSystemInfo is written (none is omitempty)
            "nodeInfo": {
                "machineID": hashlib.md5(SIMULATED_NODE.encode()).hexdigest(),
                "systemUUID": "00000000-0000-0000-0000-000000000000",
                "bootID": "00000000-0000-0000-0000-000000000001",
                "kernelVersion": "6.8.0-kubesim",
                "osImage": "kubesim simulated node",
                "containerRuntimeVersion": "kubesim://" + version,
                "kubeletVersion": version,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": SIMULATED_NODE}}
        body["status"] = status
        self.rest.update(info, "", SIMULATED_NODE, body, {}, "status", "kubelet")

    # ---- the informers' handler (runs under the storage lock: cheap) ------------------------

    def _on_event(self, ev: Event) -> None:
        if ev.key != PODS:
            return
        if ev.type == DELETED:
            if ev.prev is not None:
                ip = self._ips.pop(ev.prev.obj["metadata"].get("uid", ""), None)
                if ip is not None:
                    self._released.append(ip)
            return
        pod = ev.obj.obj
        if pod["metadata"].get("deletionTimestamp"):
            return
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if status.get("phase") == "Running" and spec.get("nodeName") == SIMULATED_NODE:
            if _changed_images(pod):
                self.controllers.schedule(("kwok-kubelet", ev.ns, ev.name))
            return
        if status.get("phase") != "Pending":
            return
        node = spec.get("nodeName")
        if not node:
            if spec.get("schedulerName") == DEFAULT_SCHEDULER and not spec.get("schedulingGates"):
                self.controllers.schedule(("kwok-scheduler", ev.ns, ev.name))
        elif node == SIMULATED_NODE:
            # a pod just bound is admitted at once; one already creating runs after the delay
            delay = self.start_delay if status.get("startTime") else 0.0
            self.controllers.schedule(("kwok-kubelet", ev.ns, ev.name), delay)

    # ---- the scheduler -----------------------------------------------------------------------

    def _bind(self, key: tuple) -> float | None:
        """BindingREST's assignPod: the node's name and PodScheduled, stored directly."""
        _, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(PODS, ns, name)
            if stored is None:
                return None
            pod = json.loads(stored.full())
            spec = pod.get("spec") or {}
            if spec.get("nodeName") or pod["metadata"].get("deletionTimestamp"):
                return None
            spec["nodeName"] = SIMULATED_NODE
            status = pod.setdefault("status", {})
            condition = {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now_rfc3339(),
            }
            if self.rest.version.tracks_pod_generation:
                condition["observedGeneration"] = pod["metadata"].get("generation", 1)
            conditions = [
                c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"
            ]
            status["conditions"] = [*conditions, condition]
            self.storage.put(PODS, ns, name, pod)
            record_events_v1(
                self.rest,
                pod,
                "v1",
                DEFAULT_SCHEDULER,
                "Scheduled",
                "Binding",
                f"Successfully assigned {ns}/{name} to {SIMULATED_NODE}",
            )
        return None

    # ---- the kubelet ---------------------------------------------------------------------------

    def _run(self, key: tuple) -> float | None:
        """The status a kubelet posts for a pod bound to it: with a start delay, first the
        admitted pod whose containers are being created, then, the delay later, the pod whose
        containers run."""
        _, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(PODS, ns, name)
            if stored is None:
                return None
            pod = json.loads(stored.full())
            meta, spec = pod["metadata"], pod.get("spec") or {}
            status = pod.get("status") or {}
            if spec.get("nodeName") != SIMULATED_NODE or meta.get("deletionTimestamp"):
                return None
            now = now_rfc3339()
            if status.get("phase") == "Running" and _changed_images(pod):
                pod["status"] = self._restarted_status(pod, now)
                self.rest.update(self.pods, ns, name, pod, {}, "status", "kubelet")
                return None
            if status.get("phase") != "Pending":
                return None
            if self.start_delay > 0 and not status.get("startTime"):
                pod["status"] = self._creating_status(pod, now)
                self.rest.update(self.pods, ns, name, pod, {}, "status", "kubelet")
                return self.start_delay
            ip = self._ips.get(meta["uid"])
            if ip is None:
                ip = self._ips[meta["uid"]] = self._next_ip()
            generation = meta.get("generation", 1)
            tracks_generation = self.rest.version.tracks_pod_generation
            before = {c.get("type"): c for c in status.get("conditions") or []}
            conditions = []
            for ctype in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"):
                condition = {
                    "type": ctype,
                    "status": "True",
                    "lastProbeTime": None,
                    # a condition already True (Initialized, while creating) keeps its time
                    "lastTransitionTime": before[ctype]["lastTransitionTime"]
                    if (before.get(ctype) or {}).get("status") == "True"
                    else now,
                }
                if tracks_generation:
                    condition["observedGeneration"] = generation
                conditions.append(condition)
            conditions += [c for c in before.values() if c.get("type") == "PodScheduled"]
            new_status = dict(
                status,
                phase="Running",
                conditions=conditions,
                hostIP=NODE_IP,
                hostIPs=[{"ip": NODE_IP}],
                podIP=ip,
                podIPs=[{"ip": ip}],
                startTime=status.get("startTime") or now,
                containerStatuses=[
                    self._container_status(meta["uid"], c, now, running=True)
                    for c in spec.get("containers") or []
                ],
            )
            if spec.get("initContainers"):
                new_status["initContainerStatuses"] = [
                    self._container_status(meta["uid"], c, now, running=False)
                    for c in spec["initContainers"]
                ]
            if tracks_generation:
                new_status["observedGeneration"] = generation
            pod["status"] = new_status
            self.rest.update(self.pods, ns, name, pod, {}, "status", "kubelet")
        return None

    def _creating_status(self, pod: dict, now: str) -> dict:
        """An admitted pod whose sandbox and containers are being created: Pending, its
        containers waiting in ContainerCreating (init containers in PodInitializing), not ready,
        with the node's address and its start time."""
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        inits = [c.get("name", "") for c in spec.get("initContainers") or []]
        names = [c.get("name", "") for c in spec.get("containers") or []]
        unready = f"containers with unready status: [{' '.join(names)}]"
        initialized: tuple[str, str | None, str | None] = (
            (
                "False",
                "ContainersNotInitialized",
                f"containers with incomplete status: [{' '.join(inits)}]",
            )
            if inits
            else ("True", None, None)
        )
        conditions = []
        for ctype, (cstatus, reason, message) in (
            ("PodReadyToStartContainers", ("False", None, None)),
            ("Initialized", initialized),
            ("Ready", ("False", "ContainersNotReady", unready)),
            ("ContainersReady", ("False", "ContainersNotReady", unready)),
        ):
            condition: dict = {
                "type": ctype,
                "status": cstatus,
                "lastProbeTime": None,
                "lastTransitionTime": now,
            }
            if reason:
                condition.update(reason=reason, message=message)
            if self.rest.version.tracks_pod_generation:
                condition["observedGeneration"] = pod["metadata"].get("generation", 1)
            conditions.append(condition)
        conditions += [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]

        def waiting(c: dict, reason: str) -> dict:
            return {
                "name": c.get("name", ""),
                "state": {"waiting": {"reason": reason}},
                "lastState": {},
                "ready": False,
                "restartCount": 0,
                "image": c.get("image") or "",
                "imageID": "",
                "started": False,
            }

        out = dict(
            status,
            conditions=conditions,
            hostIP=NODE_IP,
            hostIPs=[{"ip": NODE_IP}],
            startTime=now,
            containerStatuses=[
                waiting(c, "ContainerCreating" if not inits else "PodInitializing")
                for c in spec.get("containers") or []
            ],
        )
        if inits:
            out["initContainerStatuses"] = [
                waiting(c, "PodInitializing") for c in spec["initContainers"]
            ]
        if self.rest.version.tracks_pod_generation:
            out["observedGeneration"] = pod["metadata"].get("generation", 1)
        return out

    def _restarted_status(self, pod: dict, now: str) -> dict:
        """A container whose image a pod update changed is killed and started again from the
        new image (the kubelet's container hash changed): its restart count grows, the old
        run becomes its lastState, and the pod's observedGeneration catches up."""
        spec, status = pod.get("spec") or {}, dict(pod.get("status") or {})
        uid, generation = pod["metadata"]["uid"], pod["metadata"].get("generation", 1)
        images = {c.get("name"): c.get("image") or "" for c in spec.get("containers") or []}
        statuses = []
        for cs in status.get("containerStatuses") or []:
            image = images.get(cs.get("name"), "")
            if normalize_image(image) == cs.get("image"):
                statuses.append(cs)
                continue
            restarts = int(cs.get("restartCount") or 0) + 1
            started = ((cs.get("state") or {}).get("running") or {}).get("startedAt") or now
            restarted = self._container_status(
                uid, {"name": cs.get("name"), "image": image}, now, True
            )
            restarted["containerID"] = (
                "containerd://"
                + hashlib.sha256(f"{uid}/{cs.get('name')}/{restarts}".encode()).hexdigest()
            )
            restarted["restartCount"] = restarts
            restarted["lastState"] = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started,
                    "finishedAt": now,
                    "containerID": cs.get("containerID", ""),
                }
            }
            statuses.append(restarted)
        status["containerStatuses"] = statuses
        if self.rest.version.tracks_pod_generation:
            status["observedGeneration"] = generation
            status["conditions"] = [
                dict(c, observedGeneration=generation) if "observedGeneration" in c else c
                for c in status.get("conditions") or []
            ]
        return status

    def _next_ip(self) -> str:
        """An address of the node's pod CIDR no living pod has (the last one over again once
        all 254 are taken: kubesim does not refuse a pod for want of an address)."""
        if self._released:
            return self._released.pop(0)
        return str(next(self._addresses, "10.244.0.254"))

    def _container_status(self, uid: str, c: dict, now: str, running: bool) -> dict:
        """A container's status: running and ready, or (an init container) completed."""
        image = c.get("image") or ""
        container_id = (
            "containerd://" + hashlib.sha256(f"{uid}/{c.get('name')}".encode()).hexdigest()
        )
        state: dict[str, dict]
        if running:
            state = {"running": {"startedAt": now}}
        else:
            state = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": now,
                    "finishedAt": now,
                    "containerID": container_id,
                }
            }
        return {
            "name": c.get("name", ""),
            "state": state,
            "lastState": {},
            # a completed init container counts as ready, as the kubelet reports it
            "ready": True,
            "restartCount": 0,
            "image": normalize_image(image),
            "imageID": _image_id(image),
            "containerID": container_id,
            "started": running,
        }


def _changed_images(pod: dict) -> bool:
    """Whether a running container's image is no longer its spec's (a pod update changed it)."""
    images = {
        c.get("name"): normalize_image(c.get("image") or "")
        for c in (pod.get("spec") or {}).get("containers") or []
    }
    return any(
        cs.get("name") in images and images[cs["name"]] != cs.get("image")
        for cs in (pod.get("status") or {}).get("containerStatuses") or []
    )
