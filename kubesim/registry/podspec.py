"""The pod spec's defaults, for pod templates and Pods, and the Pod-only changes a create makes.

Twin of k8s.io/kubernetes pkg/apis/core/v1/defaults.go (SetDefaults_PodSpec, SetDefaults_Pod,
SetDefaults_Container, SetDefaults_Probe, SetDefaults_Volume and the volume sources' modes),
pkg/apis/core/helper/qos (ComputePodQOS) and the pod strategy's PrepareForCreate
(pkg/registry/core/pod/strategy.go). A Deployment's or ReplicaSet's ``spec.template`` gets the
pod spec's defaults here exactly as a Pod does, so the two can never drift apart; a Pod then gets
what only a Pod has (enableServiceLinks, requests copied from limits, its status).

Deliberate differences: the defaults of fields kubesim keeps as opaque objects (ephemeral
containers, the rarer volume sources, pod-level resources) are not filled in; ComputePodQOS
compares quantities after parsing them exactly, but ignores pod-level resources.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

__all__ = [
    "default_pod",
    "default_pod_spec",
    "default_pod_template",
    "pod_qos_class",
    "prepare_pod_create",
]

# v1.DefaultTerminationGracePeriodSeconds, v1.DefaultSchedulerName
TERMINATION_GRACE_PERIOD = 30
DEFAULT_SCHEDULER = "default-scheduler"
# a volume source's defaultMode when none is given: 0644 (v1.SecretVolumeSourceDefaultMode, ...)
DEFAULT_MODE = 0o644
# the resources ComputePodQOS looks at (supportedQoSComputeResources)
_QOS_RESOURCES = ("cpu", "memory")


def default_pod_template(template: dict, omit_zero_timestamp: bool = True) -> None:
    """A PodTemplateSpec's defaults (Deployments, ReplicaSets): those of its pod spec.

    omit_zero_timestamp: the template's metadata has no creationTimestamp (v1.36's omitzero),
    rather than v1.24's ``creationTimestamp: null``.
    """
    tmeta = template.setdefault("metadata", {})
    if omit_zero_timestamp:
        if tmeta.get("creationTimestamp", "") is None:
            del tmeta["creationTimestamp"]
    else:
        tmeta.setdefault("creationTimestamp", None)
    default_pod_spec(template.setdefault("spec", {}))


def default_pod_spec(pod: dict) -> None:
    """SetDefaults_PodSpec and the defaults of the types under it kubesim types."""
    pod.setdefault("restartPolicy", "Always")
    pod.setdefault("terminationGracePeriodSeconds", TERMINATION_GRACE_PERIOD)
    pod.setdefault("dnsPolicy", "ClusterFirst")
    pod.setdefault("securityContext", {})
    pod.setdefault("schedulerName", DEFAULT_SCHEDULER)
    # v1's deprecated serviceAccount mirrors serviceAccountName (Convert_v1_PodSpec_To_core and
    # back): read from it when the name is missing, always written beside the name
    account = pod.get("serviceAccountName") or pod.get("serviceAccount")
    if account:
        pod["serviceAccountName"] = pod["serviceAccount"] = account
    else:
        pod.pop("serviceAccount", None)
    for c in _containers(pod):
        _default_container(c)
    for v in pod.get("volumes") or []:
        if isinstance(v, dict):
            _default_volume(v)


def default_pod(obj: dict) -> None:
    """SetDefaults_Pod, then the pod spec's: what a Pod has and a pod template has not."""
    spec = obj.setdefault("spec", {})
    for c in _containers(spec):
        # requests default to limits, on a Pod only (a template's resources stay as written)
        resources = c.get("resources")
        if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
            requests = resources.setdefault("requests", {})
            if isinstance(requests, dict):
                for name, value in resources["limits"].items():
                    requests.setdefault(name, value)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        # defaultHostNetworkPorts: on the host's network a container port is a host port
        for c in _containers(spec):
            for p in c.get("ports") or []:
                if isinstance(p, dict) and not p.get("hostPort"):
                    p["hostPort"] = p.get("containerPort")
    default_pod_spec(spec)


def prepare_pod_create(obj: dict) -> None:
    """The pod strategy's PrepareForCreate: a fresh status, Pending, with its QoS class; a
    Pod held by scheduling gates says so in its PodScheduled condition."""
    spec = obj.get("spec") or {}
    status: dict[str, Any] = {"phase": "Pending", "qosClass": pod_qos_class(spec)}
    if spec.get("schedulingGates"):
        # applySchedulingGatedCondition
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": None,
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }
        ]
    obj["status"] = status


def pod_qos_class(spec: dict) -> str:
    """ComputePodQOS: BestEffort without requests or limits; Guaranteed when every container
    limits cpu and memory and the summed requests equal the summed limits; else Burstable."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for c in _containers(spec):
        resources: dict = c["resources"] if isinstance(c.get("resources"), dict) else {}
        found: set[str] = set()
        for into, key in ((requests, "requests"), (limits, "limits")):
            for name, value in (resources.get(key) or {}).items():
                q = parse_quantity(value)
                if name in _QOS_RESOURCES and q:
                    into[name] = into.get(name, Fraction(0)) + q
                    if key == "limits":
                        found.add(name)
        if not set(_QOS_RESOURCES) <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(n) == q for n, q in requests.items()):
        if len(requests) == len(limits):
            return "Guaranteed"
    return "Burstable"


_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[a-zA-Z]*)$")
_SUFFIXES = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}


def parse_quantity(value: Any) -> Fraction:
    """A resource.Quantity's exact value (0 for what does not parse: validation reports it)."""
    if isinstance(value, bool):
        return Fraction(0)
    if isinstance(value, int | float):
        return Fraction(value)
    m = _QUANTITY.match(str(value).strip())
    if m is None:
        return Fraction(0)
    number, suffix = m.groups()
    try:
        base = Fraction(number)
    except ValueError:
        return Fraction(0)
    if suffix[:1] in ("e", "E"):
        return base * Fraction(10) ** int(suffix[1:])
    return base * _SUFFIXES.get(suffix, Fraction(0))


def _containers(pod: dict) -> list[dict]:
    """The init containers and the containers, in that order (dicts only)."""
    out = []
    for key in ("initContainers", "containers"):
        out += [c for c in pod.get(key) or [] if isinstance(c, dict)]
    return out


def _default_container(c: dict) -> None:
    """SetDefaults_Container, and those of its ports, probes and env sources."""
    c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("imagePullPolicy", _pull_policy(c.get("image") or ""))
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(c.get(probe), dict):
            _default_probe(c[probe])
    for env in c.get("env") or []:
        ref = ((env or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")  # SetDefaults_ObjectFieldSelector


def _default_probe(probe: dict) -> None:
    """SetDefaults_Probe, SetDefaults_HTTPGetAction."""
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def _default_volume(v: dict) -> None:
    """SetDefaults_Volume (no source: an emptyDir) and the sources' default modes."""
    sources = [k for k in v if k != "name"]
    if not sources:
        v["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(v.get(key), dict):
            v[key].setdefault("defaultMode", DEFAULT_MODE)
    for source in (v.get("projected") or {}).get("sources") or []:
        token = (source or {}).get("serviceAccountToken")
        if isinstance(token, dict):
            token.setdefault("expirationSeconds", 3600)  # SetDefaults_ServiceAccountTokenProjection


def _pull_policy(image: str) -> str:
    """Always for an untagged or :latest image, IfNotPresent otherwise (SetDefaults_Container)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.rsplit(":", 1)[1] == "latest":
        return "Always"
    return "IfNotPresent"
