"""The create and update rules of the kinds served through the generic store alone.

Twin of the strategies in k8s.io/kubernetes ``pkg/registry/<group>/<kind>/strategy.go``
(PrepareForCreate: the status a create starts with) and of the defaulting functions in
``pkg/apis/<group>/v1/defaults.go`` (SetDefaults_Job, SetDefaults_DaemonSet, ...), for the
fields a client reads back first. Validation here is the part a test is likely to meet: the
required fields of each kind (``pkg/apis/<group>/validation``), with the real field paths
and messages.

Deliberate differences: defaults are the common ones, not every nested default (a Job's pod
failure policy, a PV source's own defaults); validation checks presence, a few enums and the
immutable fields, not every rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesim.api import errors
from kubesim.registry.podspec import default_pod_template

__all__ = [
    "default_on_create",
    "default_on_update",
    "validate_csr_conditions",
    "validate_kind",
    "with_uid",
]

# ---- defaults ----------------------------------------------------------------------------------


def _pod_template(template: Any) -> None:
    """A workload's pod template gets the pod spec's defaults (podspec.py, as Pods get them)."""
    if isinstance(template, dict):
        default_pod_template(template)


def _ports_tcp(ports: Any) -> None:
    for p in ports or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")


def _job_spec(spec: dict) -> None:
    """SetDefaults_Job: one completion, one pod at a time, six retries, NonIndexed."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        # a non-parallel Job: both unset become 1; a parallelism alone leaves a work queue
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)
    # the pod template's restartPolicy defaults to Always, which a Job's validation refuses:
    # a Job must say OnFailure or Never
    _pod_template(spec.get("template"))


def _job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    _job_spec(spec)
    # SetDefaults_Job: a Job without labels takes its pod template's (in Go the same map, so
    # the labels the strategy adds to the template later show on the Job too: with_uid)
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    meta = obj.setdefault("metadata", {})
    if not meta.get("labels") and template_labels:
        meta["labels"] = dict(template_labels)


def _cronjob(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.setdefault("jobTemplate", {})
    job_template.setdefault("metadata", {})
    job_spec = job_template.setdefault("spec", {})
    _pod_template(job_spec.get("template"))


def _labels_selector(spec: dict) -> None:
    """SetDefaults_ReplicationController: the selector is the template's labels; one replica."""
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels and not spec.get("selector"):
        spec["selector"] = dict(labels)
    spec.setdefault("replicas", 1)


def _replication_controller(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    _labels_selector(spec)
    spec.setdefault("minReadySeconds", 0)
    _pod_template(spec.get("template"))


def _daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _pod_template(spec.get("template"))


def _statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    _pod_template(spec.get("template"))


def _pvc(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")


def _pv(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")


def _storage_class(obj: dict) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _priority_class(obj: dict) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _network_policy(obj: dict) -> None:
    """SetDefaults_NetworkPolicy: policyTypes Ingress, plus Egress when egress rules exist;
    ports are TCP."""
    spec = obj.setdefault("spec", {})
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types
    for rule in (spec.get("ingress") or []) + (spec.get("egress") or []):
        if isinstance(rule, dict):
            _ports_tcp(rule.get("ports"))


def _endpoints(obj: dict) -> None:
    for subset in obj.get("subsets") or []:
        if isinstance(subset, dict):
            _ports_tcp(subset.get("ports"))


def _endpoint_slice(obj: dict) -> None:
    _ports_tcp(obj.get("ports"))
    for endpoint in obj.get("endpoints") or []:
        if isinstance(endpoint, dict):
            endpoint.setdefault("conditions", {})


def _pod_template_kind(obj: dict) -> None:
    _pod_template(obj.get("template"))


def _hpa(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]


_DEFAULTS: dict[tuple[str, str], Callable[[dict], None]] = {
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("", "ReplicationController"): _replication_controller,
    ("", "PodTemplate"): _pod_template_kind,
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "PersistentVolume"): _pv,
    ("", "Endpoints"): _endpoints,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "StatefulSet"): _statefulset,
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("storage.k8s.io", "StorageClass"): _storage_class,
}

# The status a create starts with (the strategies' PrepareForCreate), where not empty.
_CREATE_STATUS: dict[tuple[str, str], dict[str, Any]] = {
    ("", "PersistentVolumeClaim"): {"phase": "Pending"},
    ("", "PersistentVolume"): {"phase": "Pending"},
    ("", "ReplicationController"): {"replicas": 0},
    ("apps", "StatefulSet"): {"replicas": 0, "availableReplicas": 0},
    ("apps", "DaemonSet"): {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
    ("policy", "PodDisruptionBudget"): {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    },
}


def default_on_create(group: str, kind: str, obj: dict, status_subresource: bool) -> None:
    """Defaults, and the status a create starts with when the kind has a status subresource
    (whatever status the body carried is dropped, as PrepareForCreate does)."""
    fill = _DEFAULTS.get((group, kind))
    if fill is not None:
        fill(obj)
    if status_subresource:
        obj["status"] = dict(_CREATE_STATUS.get((group, kind), {}))


def default_on_update(group: str, kind: str, obj: dict) -> None:
    """Defaulting runs on every decoded body, so an update is defaulted as a create is."""
    fill = _DEFAULTS.get((group, kind))
    if fill is not None:
        fill(obj)


def with_uid(group: str, kind: str, obj: dict) -> None:
    """What a create derives from the new object's UID: a Job's selector and pod labels
    (the job strategy's generateSelector, which runs once the UID is set)."""
    if (group, kind) != ("batch", "Job"):
        return
    spec = obj.setdefault("spec", {})
    if spec.get("manualSelector"):
        return
    meta = obj["metadata"]
    uid, name = meta["uid"], meta.get("name", "")
    template_meta = (spec.get("template") or {}).setdefault("metadata", {})
    shared = bool(meta.get("labels")) and meta.get("labels") == template_meta.get("labels")
    template_meta["labels"] = {
        **(template_meta.get("labels") or {}),
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    }
    if shared:
        meta["labels"] = dict(template_meta["labels"])
    selector = spec.get("selector") or {}
    spec["selector"] = dict(
        selector,
        matchLabels={
            **(selector.get("matchLabels") or {}),
            "batch.kubernetes.io/controller-uid": uid,
        },
    )


# ---- validation --------------------------------------------------------------------------------


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _required(obj: dict, *paths: str) -> list[dict]:
    return [errors.field_required(p) for p in paths if _get(obj, p) in (None, "", [], {})]


def _one_of(obj: dict, path: str, allowed: list[str]) -> list[dict]:
    value = _get(obj, path)
    if value is None or value in allowed:
        return []
    return [errors.field_not_supported(path, value, allowed)]


def _containers(obj: dict, template_path: str) -> list[dict]:
    """A pod template needs containers, each with a name and an image."""
    spec = _get(obj, f"{template_path}.spec")
    containers = (spec or {}).get("containers") if isinstance(spec, dict) else None
    if not containers:
        return [errors.field_required(f"{template_path}.spec.containers")]
    causes = []
    for i, c in enumerate(containers):
        if not isinstance(c, dict):
            continue
        where = f"{template_path}.spec.containers[{i}]"
        if not c.get("name"):
            causes.append(errors.field_required(f"{where}.name"))
        if not c.get("image"):
            causes.append(errors.field_required(f"{where}.image"))
    return causes


def _job_template_causes(obj: dict, template: str) -> list[dict]:
    causes = _containers(obj, template)
    restart = _get(obj, f"{template}.spec.restartPolicy")
    if restart not in (None, "OnFailure", "Never"):
        causes.append(
            errors.field_not_supported(
                f"{template}.spec.restartPolicy", restart, ["OnFailure", "Never"]
            )
        )
    return causes


def _job_causes(obj: dict) -> list[dict]:
    return _job_template_causes(obj, "spec.template")


def _cronjob_causes(obj: dict) -> list[dict]:
    causes = _required(obj, "spec.schedule")
    causes += _job_template_causes(obj, "spec.jobTemplate.spec.template")
    causes += _one_of(obj, "spec.concurrencyPolicy", ["Allow", "Forbid", "Replace"])
    return causes


def _selector_causes(obj: dict) -> list[dict]:
    return _required(obj, "spec.selector") + _containers(obj, "spec.template")


def _pvc_causes(obj: dict) -> list[dict]:
    causes = _required(obj, "spec.accessModes")
    if _get(obj, "spec.resources.requests.storage") is None:
        causes.append(errors.field_required("spec.resources[storage]"))
    return causes


def _pv_causes(obj: dict) -> list[dict]:
    causes = _required(obj, "spec.accessModes")
    if _get(obj, "spec.capacity.storage") is None:
        causes.append(errors.field_required("spec.capacity"))
    return causes


def _ingress_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    causes = []
    if not spec.get("rules") and not spec.get("defaultBackend"):
        causes.append(
            errors.field_invalid("spec", "", "either `defaultBackend` or `rules` must be specified")
        )
    for i, rule in enumerate(spec.get("rules") or []):
        paths = ((rule or {}).get("http") or {}).get("paths") or []
        for j, path in enumerate(paths):
            where = f"spec.rules[{i}].http.paths[{j}]"
            if not isinstance(path, dict):
                continue
            if not path.get("pathType"):
                causes.append(
                    errors.field_required(f"{where}.pathType", "pathType must be specified")
                )
            else:
                causes += _one_of(
                    {"p": path}, "p.pathType", ["Exact", "ImplementationSpecific", "Prefix"]
                )
    return causes


def _pdb_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    if "minAvailable" in spec and "maxUnavailable" in spec:
        return [
            errors.field_invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set")
        ]
    return []


def _api_service_name(obj: dict) -> list[dict]:
    """An APIService is named ``<version>.<group>`` (kube-aggregator's ValidateAPIService)."""
    spec = obj.get("spec") or {}
    required = f"{spec.get('version', '')}.{spec.get('group', '')}"
    name = obj["metadata"].get("name", "")
    if name == required:
        return []
    return [
        errors.field_invalid(
            "metadata.name", name, f'must be `spec.version+"."+spec.group`: "{required}"'
        )
    ]


def _priority_class_causes(obj: dict) -> list[dict]:
    value = obj.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        return [errors.field_required("value")]
    return []


_VALIDATORS: dict[tuple[str, str], Callable[[dict], list[dict]]] = {
    ("batch", "Job"): _job_causes,
    ("batch", "CronJob"): _cronjob_causes,
    ("apps", "DaemonSet"): _selector_causes,
    ("apps", "StatefulSet"): _selector_causes,
    ("", "ReplicationController"): lambda o: _containers(o, "spec.template"),
    ("", "PodTemplate"): lambda o: _containers(o, "template"),
    ("", "PersistentVolumeClaim"): _pvc_causes,
    ("", "PersistentVolume"): _pv_causes,
    ("networking.k8s.io", "Ingress"): _ingress_causes,
    ("networking.k8s.io", "IngressClass"): lambda o: _required(o, "spec.controller"),
    ("networking.k8s.io", "ServiceCIDR"): lambda o: _required(o, "spec.cidrs"),
    ("networking.k8s.io", "IPAddress"): lambda o: _required(o, "spec.parentRef"),
    ("policy", "PodDisruptionBudget"): _pdb_causes,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class_causes,
    ("storage.k8s.io", "StorageClass"): lambda o: _required(o, "provisioner"),
    ("storage.k8s.io", "CSIDriver"): lambda o: _required(o, "spec"),
    ("storage.k8s.io", "VolumeAttachment"): lambda o: _required(
        o, "spec.attacher", "spec.nodeName"
    ),
    ("storage.k8s.io", "VolumeAttributesClass"): lambda o: _required(o, "driverName"),
    ("storage.k8s.io", "CSIStorageCapacity"): lambda o: _required(o, "storageClassName"),
    ("node.k8s.io", "RuntimeClass"): lambda o: _required(o, "handler"),
    ("certificates.k8s.io", "CertificateSigningRequest"): lambda o: _required(
        o, "spec.request", "spec.signerName"
    ),
    ("apiregistration.k8s.io", "APIService"): lambda o: (
        _api_service_name(o) + _required(o, "spec.groupPriorityMinimum", "spec.versionPriority")
    ),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): lambda o: _required(
        o, "spec.priorityLevelConfiguration.name"
    ),
    ("discovery.k8s.io", "EndpointSlice"): lambda o: (
        _one_of(o, "addressType", ["FQDN", "IPv4", "IPv6"]) + _required(o, "addressType")
    ),
}


def validate_csr_conditions(obj: dict) -> list[dict]:
    """A CSR's conditions: a known type, a True/False/Unknown status, not approved and denied
    both (validateConditions in pkg/apis/certificates/validation)."""
    causes: list[dict] = []
    conditions = (obj.get("status") or {}).get("conditions") or []
    for i, c in enumerate(conditions):
        if not isinstance(c, dict):
            continue
        where = f"status.conditions[{i}]"
        if not c.get("type"):
            causes.append(errors.field_required(f"{where}.type"))
        if c.get("status") not in ("True", "False", "Unknown"):
            causes.append(
                errors.field_not_supported(
                    f"{where}.status", c.get("status"), ["False", "True", "Unknown"]
                )
            )
    types = {c.get("type") for c in conditions if isinstance(c, dict) and c.get("status") == "True"}
    if {"Approved", "Denied"} <= types:
        causes.append(
            errors.field_invalid(
                "status.conditions",
                "Approved",
                "Approved and Denied conditions are mutually exclusive",
            )
        )
    return causes


# Fields a kind's ValidateUpdate refuses to change once set (field path, message).
_IMMUTABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("batch", "Job"): ("spec.selector", "spec.completionMode"),
    ("apps", "StatefulSet"): ("spec.selector", "spec.serviceName", "spec.podManagementPolicy"),
    ("apps", "DaemonSet"): ("spec.selector",),
    ("storage.k8s.io", "StorageClass"): ("provisioner", "parameters", "reclaimPolicy"),
    ("storage.k8s.io", "CSIDriver"): ("spec.attachRequired",),
    ("scheduling.k8s.io", "PriorityClass"): ("value",),
    ("node.k8s.io", "RuntimeClass"): ("handler",),
    ("", "PersistentVolumeClaim"): ("spec.storageClassName", "spec.volumeName"),
    ("networking.k8s.io", "IngressClass"): ("spec.controller",),
    ("networking.k8s.io", "IPAddress"): ("spec.parentRef",),
    ("discovery.k8s.io", "EndpointSlice"): ("addressType",),
}


def validate_kind(group: str, kind: str, obj: dict, old: dict | None) -> list[dict]:
    """The kind's own causes (ObjectMeta is checked by the caller)."""
    validator = _VALIDATORS.get((group, kind))
    causes = validator(obj) if validator is not None else []
    if old is not None:
        for path in _IMMUTABLE.get((group, kind), ()):
            before, after = _get(old, path), _get(obj, path)
            if before is not None and before != after:
                causes.append(errors.field_invalid(path, after, "field is immutable"))
    return causes
