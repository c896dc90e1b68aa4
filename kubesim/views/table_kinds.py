"""The columns and cells kube-apiserver prints for the kinds served by the generic store.

Twin of the handlers in k8s.io/kubernetes ``pkg/printers/internalversion/printers.go``
(``AddHandlers``' column definitions, and ``printJob``, ``printCronJob``, ``printDaemonSet``,
``printStatefulSet``, ``printIngress``, ``printPersistentVolumeClaim``, ... for the cells), and
of kube-aggregator's APIService table, for the kinds of api/builtin_kinds.py; table_printers.py
has the kinds kubesim served before, and the helpers both use. The server prints the wide
columns too (priority 1).

Upstream writes a column list and, apart from it, a print function whose cells must stay in
the same order. Here each kind is one table of columns (:data:`KIND_PRINTERS`, under the name
of its upstream print function), and each column carries its own cell: a dotted path into the
object (:func:`_get`, or :func:`_or` where an empty value prints as a default), or a function
where the cell is computed (ages, joined lists, status summaries), so a cell cannot drift
away from its column.

Deliberate differences: column descriptions are short summaries, not the API's field
documentation; an HPA's Targets cell shows the spec's targets without current values (no
metrics exist here).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

from kubesim.api.labels import SelectorParseError, selector_from_label_selector
from kubesim.views.table_printers import Printer, human_duration, since

__all__ = ["KIND_PRINTERS"]

Cell = Callable[[dict], Any]
# (name, type, cell, description[, priority]); a cell given as a string is _get(path)
Column = tuple[str, str, Cell | str, str] | tuple[str, str, Cell | str, str, int]

_W = 1  # priority of the wide columns (-o wide)


def _get(path: str, default: Any = "") -> Cell:
    """The value at a dotted path (a JSONPath without brackets), ``default`` where the last key
    is absent (a stored null stays null); a missing or null object on the way reads as empty."""
    *parents, last = path.split(".")

    def cell(o: dict) -> Any:
        for key in parents:
            o = o.get(key) or {}
        return o.get(last, default)

    return cell


def _or(path: str, default: Any) -> Cell:
    """The value at a dotted path, or ``default`` where it is absent, null or empty (a zero
    count, an unset class name: what printers.go prints in their place)."""
    value = _get(path, None)
    return lambda o: value(o) or default


def _table(*columns: Column) -> Printer:
    """A kind's Printer: its columns, and a row of each column's cell."""
    cells = [_get(c[2]) if isinstance(c[2], str) else c[2] for c in columns]
    spec = tuple((c[0], c[1], c[3], c[4] if len(c) == 5 else 0) for c in columns)
    return Printer(spec, lambda o: [cell(o) for cell in cells])


# ---- cells many kinds share --------------------------------------------------------------------


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _name(o: dict) -> str:
    return str(_meta(o).get("name", ""))


def _age(o: dict) -> str:
    return since(_meta(o).get("creationTimestamp"))


def _format_labels(labels: Any) -> str:
    """labels.FormatLabels."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


def _format_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: "<none>" for none or an empty one."""
    if not selector:
        return "<none>"
    try:
        return str(selector_from_label_selector(selector)) or "<none>"
    except SelectorParseError:
        return "<error>"


def _labels(path: str) -> Cell:
    """The label map at a path, as labels.FormatLabels prints it."""
    labels = _get(path, None)
    return lambda o: _format_labels(labels(o))


def _selector(path: str) -> Cell:
    """The LabelSelector at a path, as metav1.FormatLabelSelector prints it."""
    selector = _get(path, None)
    return lambda o: _format_selector(selector(o))


def _count(path: str) -> Cell:
    """The length of a list."""
    items = _get(path, None)
    return lambda o: len(items(o) or [])


def _joined(path: str) -> Cell:
    """A list of strings, comma-joined."""
    items = _get(path, None)
    return lambda o: ",".join(items(o) or [])


def _bool(path: str) -> Cell:
    """A bool field, false when unset."""
    value = _get(path, None)
    return lambda o: bool(value(o))


def _containers(template: Any) -> tuple[str, str]:
    """layoutContainerCells: the template's container names and images, comma-joined."""
    spec = (template or {}).get("spec") or {}
    cs = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _container_columns(template_path: str, priority: int = _W) -> tuple[Column, Column]:
    """The Containers and Images columns of the pod template at ``template_path``."""
    template = _get(template_path, None)
    return (
        ("Containers", "string", lambda o: _containers(template(o))[0],
         "Names of each container in the template.", priority),
        ("Images", "string", lambda o: _containers(template(o))[1],
         "Images referenced by each container in the template.", priority),
    )  # fmt: skip


_NAME: Column = ("Name", "string", _name, "")
_AGE: Column = (
    "Age",
    "string",
    _age,
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)


def _has_condition(status: dict, kind: str) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _time(text: Any) -> _dt.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _access_modes(path: str) -> Cell:
    """GetAccessModesAsString: the short forms, in the API's order."""
    short = {
        "ReadWriteOnce": "RWO",
        "ReadOnlyMany": "ROX",
        "ReadWriteMany": "RWX",
        "ReadWriteOncePod": "RWOP",
    }
    modes = _get(path, None)
    return lambda o: ",".join(short[m] for m in short if m in (modes(o) or []))


def _int_or_string(path: str) -> Cell:
    """An IntOrString, "N/A" when unset."""
    value = _get(path, None)
    return lambda o: "N/A" if value(o) is None else str(value(o))


def _replicas(o: dict) -> Any:
    """spec.replicas, whose nil the defaults make 1."""
    replicas = (o.get("spec") or {}).get("replicas")
    return 1 if replicas is None else replicas


def _phase(o: dict) -> Any:
    """A volume's or claim's phase, Terminating once it is being deleted."""
    if _meta(o).get("deletionTimestamp"):
        return "Terminating"
    return (o.get("status") or {}).get("phase", "")


def _first_three(items: list) -> str:
    """The first three, then how many more."""
    return ",".join(items[:3]) + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


# ---- workloads ---------------------------------------------------------------------------------


def _job_status(o: dict) -> str:
    status = o.get("status") or {}
    if _has_condition(status, "Complete"):
        return "Complete"
    if _has_condition(status, "Failed"):
        return "Failed"
    if _meta(o).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(status, condition):
            return condition
    return "Running"


def _job_completions(o: dict) -> str:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    if (spec.get("parallelism") or 1) > 1:
        return f"{succeeded}/1 of {spec['parallelism']}"
    return f"{succeeded}/1"


def _job_duration(o: dict) -> str:
    status = o.get("status") or {}
    start, end = _time(status.get("startTime")), _time(status.get("completionTime"))
    if start is None:
        return ""
    if end is None:
        return since(status.get("startTime"))
    return human_duration((end - start).total_seconds())


def _last_schedule(o: dict) -> str:
    last = (o.get("status") or {}).get("lastScheduleTime")
    return since(last) if last else "<none>"


def _statefulset_ready(o: dict) -> str:
    return f"{(o.get('status') or {}).get('readyReplicas') or 0}/{_replicas(o)}"


def _controller(o: dict) -> str:
    """The kind.group/name of the revision's controller."""
    owners = _meta(o).get("ownerReferences") or []
    owner = next((r for r in owners if isinstance(r, dict) and r.get("controller")), None)
    if owner is None:
        return "<none>"
    group = (owner.get("apiVersion") or "").rpartition("/")[0]
    kind = owner.get("kind", "").lower() + (f".{group}" if group else "")
    return f"{kind}/{owner.get('name', '')}"


def _hpa_reference(o: dict) -> str:
    ref = (o.get("spec") or {}).get("scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _hpa_targets(o: dict) -> str:
    targets = []
    for metric in (o.get("spec") or {}).get("metrics") or []:
        resource = (metric or {}).get("resource") or {}
        target = resource.get("target") or {}
        if target.get("averageUtilization") is not None:
            targets.append(f"{resource.get('name')}: <unknown>/{target['averageUtilization']}%")
    return ", ".join(targets) or "<none>"


# ---- storage -----------------------------------------------------------------------------------


def _bound(cell: Cell) -> Cell:
    """A claim's cell that is blank until the claim is bound to a volume."""
    return lambda o: cell(o) if (o.get("spec") or {}).get("volumeName") else ""


def _claim(o: dict) -> str:
    ref = (o.get("spec") or {}).get("claimRef") or {}
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""


def _storage_class_name(o: dict) -> str:
    annotations = _meta(o).get("annotations") or {}
    default = annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
    return _name(o) + (" (default)" if default else "")


def _token_audiences(o: dict) -> str:
    requests = (o.get("spec") or {}).get("tokenRequests") or []
    return ",".join(t.get("audience", "") for t in requests) or "<unset>"


def _lifecycle_modes(o: dict) -> str:
    return ",".join((o.get("spec") or {}).get("volumeLifecycleModes") or ["Persistent"])


# ---- networking --------------------------------------------------------------------------------


def _ingress_hosts(o: dict) -> str:
    rules = (o.get("spec") or {}).get("rules") or []
    hosts = [str(r["host"]) for r in rules if isinstance(r, dict) and r.get("host")]
    if not hosts:
        return "*"
    if len(hosts) > 3:
        return ",".join(hosts[:3]) + f" + {len(hosts) - 3} more..."
    return ",".join(hosts)


def _load_balancer_address(o: dict) -> str:
    lb = (((o.get("status") or {}).get("loadBalancer")) or {}).get("ingress") or []
    return ",".join(i.get("ip") or i.get("hostname") or "" for i in lb if isinstance(i, dict))


def _ingress_ports(o: dict) -> str:
    return "80, 443" if (o.get("spec") or {}).get("tls") else "80"


def _ingress_class_parameters(o: dict) -> Any:
    params = (o.get("spec") or {}).get("parameters")
    if not isinstance(params, dict):
        return "<none>"
    text = params.get("kind", "")
    if params.get("apiGroup"):
        text += "." + params["apiGroup"]
    text += "/" + params.get("name", "")
    return text


def _endpoints(o: dict) -> str:
    pairs = []
    for subset in o.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for address in subset.get("addresses") or []:
            for port in ports:
                ip = address.get("ip", "")
                pairs.append(f"{ip}:{port}" if port is not None else ip)
    return _first_three(pairs) or "<none>"


def _slice_ports(o: dict) -> str:
    return ",".join(str(p.get("port", "")) for p in o.get("ports") or []) or "<unset>"


def _slice_endpoints(o: dict) -> str:
    addresses = [a for e in o.get("endpoints") or [] for a in (e or {}).get("addresses") or []]
    return _first_three(addresses) or "<unset>"


def _parent_ref(o: dict) -> str:
    ref = (o.get("spec") or {}).get("parentRef")
    if not isinstance(ref, dict):
        return "<none>"
    group = f".{ref['group']}" if ref.get("group") else ""
    namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
    return f"{ref.get('resource', '')}{group}/{namespace}{ref.get('name', '')}"


# ---- admission, API services, certificates, flow control, quotas -------------------------------


def _param_kind(o: dict) -> str:
    kind = (o.get("spec") or {}).get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def _param_ref(o: dict) -> Any:
    ref = (o.get("spec") or {}).get("paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if ref.get("namespace"):
        return f"{ref.get('namespace')}/{ref.get('name')}"
    return ref.get("name") or "*"


def _api_service(o: dict) -> str:
    svc = (o.get("spec") or {}).get("service")
    return f"{svc.get('namespace', '')}/{svc.get('name', '')}" if svc else "Local"


def _api_service_available(o: dict) -> str:
    available = "Unknown"
    for c in (o.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Available":
            available = str(c.get("status", ""))
            if available != "True" and c.get("reason"):
                available += f" ({c['reason']})"
    return available


def _csr_duration(o: dict) -> str:
    seconds = (o.get("spec") or {}).get("expirationSeconds")
    return human_duration(seconds) if seconds else "<none>"


def _csr_condition(o: dict) -> str:
    status = o.get("status") or {}
    conditions = [c.get("type", "") for c in status.get("conditions") or [] if isinstance(c, dict)]
    if status.get("certificate") and "Approved" in conditions:
        conditions.append("Issued")
    return ",".join(conditions) or "Pending"


def _missing_priority_level(o: dict) -> str:
    missing = "?"
    for c in (o.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Dangling":
            missing = str(c.get("status"))
    return missing


def _concurrency_shares(o: dict) -> Any:
    spec = o.get("spec") or {}
    if spec.get("type") != "Limited":
        return (spec.get("exempt") or {}).get("nominalConcurrencyShares", "<none>")
    return (spec.get("limited") or {}).get("nominalConcurrencyShares", "<none>")


def _quota(limits: bool) -> Cell:
    """printResourceQuota: "name: used/hard" pairs of the requests, or of the limits."""

    def cell(o: dict) -> str:
        status = o.get("status") or {}
        hard, used = status.get("hard") or {}, status.get("used") or {}
        names = [name for name in sorted(hard) if name.startswith("limits.") == limits]
        return ", ".join(f"{name}: {used.get(name, '0')}/{hard[name]}" for name in names)

    return cell


_QUEUING = "spec.limited.limitResponse.queuing"

# Each kind's columns, in order, under the name of its upstream print function. One column a
# line or two, so the table is laid out by hand.
# fmt: off
KIND_PRINTERS: dict[tuple[str, str], Printer] = {
    # printJob
    ("batch", "Job"): _table(
        _NAME,
        ("Status", "string", _job_status, "Status of the job."),
        ("Completions", "string", _job_completions, "The completion status of the job."),
        ("Duration", "string", _job_duration, "Time required to complete the job."),
        _AGE,
        *_container_columns("spec.template"),
        ("Selector", "string", _selector("spec.selector"),
         "Query over pods that should match the pod count.", _W),
    ),
    # printCronJob
    ("batch", "CronJob"): _table(
        _NAME,
        ("Schedule", "string", "spec.schedule", "The schedule in Cron format."),
        ("Timezone", "string", _or("spec.timeZone", "<none>"),
         "The time zone name for the given schedule."),
        ("Suspend", "boolean", lambda o: str(bool(_get("spec.suspend", None)(o))),
         "Whether subsequent executions are suspended."),
        ("Active", "integer", _count("status.active"), "Number of currently running jobs."),
        ("Last Schedule", "string", _last_schedule,
         "When the job was last successfully scheduled."),
        _AGE,
        *_container_columns("spec.jobTemplate.spec.template"),
        ("Selector", "string", _selector("spec.jobTemplate.spec.selector"),
         "Query over pods that should match the pod count.", _W),
    ),
    # printDaemonSet
    ("apps", "DaemonSet"): _table(
        _NAME,
        ("Desired", "integer", _or("status.desiredNumberScheduled", 0),
         "The number of nodes that should run the daemon pod."),
        ("Current", "integer", _or("status.currentNumberScheduled", 0),
         "The number of nodes running at least one daemon pod."),
        ("Ready", "integer", _or("status.numberReady", 0),
         "The number of nodes with a ready daemon pod."),
        ("Up-to-date", "integer", _or("status.updatedNumberScheduled", 0),
         "The number of nodes running the updated pod."),
        ("Available", "integer", _or("status.numberAvailable", 0),
         "The number of nodes with an available daemon pod."),
        ("Node Selector", "string", _labels("spec.template.spec.nodeSelector"),
         "NodeSelector of the pod template."),
        _AGE,
        *_container_columns("spec.template"),
        ("Selector", "string", _selector("spec.selector"),
         "A label query over pods that are managed.", _W),
    ),
    # printStatefulSet
    ("apps", "StatefulSet"): _table(
        _NAME,
        ("Ready", "string", _statefulset_ready, "Number of the pod with ready state."),
        _AGE,
        *_container_columns("spec.template"),
    ),
    # printControllerRevision
    ("apps", "ControllerRevision"): _table(
        _NAME,
        ("Controller", "string", _controller, "The controller of the revision."),
        ("Revision", "integer", _or("revision", 0), "The revision number."),
        _AGE,
    ),
    # printReplicationController
    ("", "ReplicationController"): _table(
        _NAME,
        ("Desired", "integer", _replicas, "The number of desired replicas."),
        ("Current", "integer", _or("status.replicas", 0), "The number of actual replicas."),
        ("Ready", "integer", _or("status.readyReplicas", 0), "The number of ready replicas."),
        _AGE,
        *_container_columns("spec.template"),
        ("Selector", "string", _labels("spec.selector"),
         "Label keys and values that must match.", _W),
    ),
    # printPodTemplate
    ("", "PodTemplate"): _table(
        _NAME,
        *_container_columns("template", priority=0),
        ("Pod Labels", "string", _labels("template.metadata.labels"),
         "The labels for the pod template."),
    ),
    # printHorizontalPodAutoscaler
    ("autoscaling", "HorizontalPodAutoscaler"): _table(
        _NAME,
        ("Reference", "string", _hpa_reference, "The target of the autoscaler."),
        ("Targets", "string", _hpa_targets, "The metrics and their targets."),
        ("MinPods", "string", _or("spec.minReplicas", 1),
         "The lower limit for the number of replicas."),
        ("MaxPods", "integer", _or("spec.maxReplicas", 0),
         "The upper limit for the number of replicas."),
        ("Replicas", "integer", _or("status.currentReplicas", 0),
         "The current number of replicas."),
        _AGE,
    ),
    # printPersistentVolumeClaim
    ("", "PersistentVolumeClaim"): _table(
        _NAME,
        ("Status", "string", _phase, "The phase of the claim."),
        ("Volume", "string", "spec.volumeName",
         "The binding reference to the PersistentVolume."),
        ("Capacity", "string", _bound(_or("status.capacity.storage", "")),
         "The actual resources of the underlying volume."),
        ("Access Modes", "string", _bound(_access_modes("status.accessModes")),
         "The actual access modes of the volume."),
        ("StorageClass", "string", _or("spec.storageClassName", ""),
         "The name of the StorageClass the claim requires."),
        ("VolumeAttributesClass", "string",
         _or("status.currentVolumeAttributesClassName", "<unset>"),
         "The current VolumeAttributesClass."),
        _AGE,
        ("VolumeMode", "string", _or("spec.volumeMode", "<unset>"),
         "What type of volume the claim requires.", _W),
    ),
    # printPersistentVolume
    ("", "PersistentVolume"): _table(
        _NAME,
        ("Capacity", "string", "spec.capacity.storage", "The capacity of the volume."),
        ("Access Modes", "string", _access_modes("spec.accessModes"),
         "All ways the volume can be mounted."),
        ("Reclaim Policy", "string", "spec.persistentVolumeReclaimPolicy",
         "What happens to the volume when released."),
        ("Status", "string", _phase, "The phase of the volume."),
        ("Claim", "string", _claim, "The claim bound to the volume."),
        ("StorageClass", "string", _or("spec.storageClassName", ""),
         "The name of the StorageClass of the volume."),
        ("VolumeAttributesClass", "string", _or("spec.volumeAttributesClassName", "<unset>"),
         "The VolumeAttributesClass of the volume."),
        ("Reason", "string", _or("status.reason", ""), "Why the volume is in this phase."),
        _AGE,
        ("VolumeMode", "string", _or("spec.volumeMode", "<unset>"),
         "The volume mode of the volume.", _W),
    ),
    # printStorageClass
    ("storage.k8s.io", "StorageClass"): _table(
        ("Name", "string", _storage_class_name, ""),
        ("Provisioner", "string", "provisioner", "The driver that provisions volumes."),
        ("ReclaimPolicy", "string", _or("reclaimPolicy", "Delete"),
         "The reclaim policy of provisioned volumes."),
        ("VolumeBindingMode", "string", _or("volumeBindingMode", "Immediate"),
         "When volumes are bound and provisioned."),
        ("AllowVolumeExpansion", "string", _bool("allowVolumeExpansion"),
         "Whether volumes can be expanded."),
        _AGE,
    ),
    # printVolumeAttachment
    ("storage.k8s.io", "VolumeAttachment"): _table(
        _NAME,
        ("Attacher", "string", "spec.attacher",
         "The volume driver that handles the attachment."),
        ("PV", "string", _or("spec.source.persistentVolumeName", ""),
         "The name of the persistent volume to attach."),
        ("Node", "string", "spec.nodeName", "The node the volume is attached to."),
        ("Attached", "boolean", _bool("status.attached"),
         "Whether the attach operation succeeded."),
        _AGE,
    ),
    # printCSIDriver
    ("storage.k8s.io", "CSIDriver"): _table(
        _NAME,
        ("AttachRequired", "boolean", _get("spec.attachRequired", True),
         "Whether the driver needs an attach operation."),
        ("PodInfoOnMount", "boolean", _get("spec.podInfoOnMount", False),
         "Whether the driver gets pod information."),
        ("StorageCapacity", "boolean", _get("spec.storageCapacity", False),
         "Whether the driver reports capacity."),
        ("TokenRequests", "string", _token_audiences,
         "Audiences of the tokens the driver gets."),
        ("RequiresRepublish", "boolean", _get("spec.requiresRepublish", False),
         "Whether NodePublishVolume repeats."),
        ("Modes", "string", _lifecycle_modes, "The volume lifecycle modes supported."),
        _AGE,
    ),
    # printCSINode
    ("storage.k8s.io", "CSINode"): _table(
        _NAME,
        ("Drivers", "integer", _count("spec.drivers"), "The number of drivers."),
        _AGE,
    ),
    # printVolumeAttributesClass
    ("storage.k8s.io", "VolumeAttributesClass"): _table(
        _NAME,
        ("DriverName", "string", "driverName", "The CSI driver of the class."),
        _AGE,
    ),
    # printIngress
    ("networking.k8s.io", "Ingress"): _table(
        _NAME,
        ("Class", "string", _or("spec.ingressClassName", "<none>"),
         "The name of the IngressClass."),
        ("Hosts", "string", _ingress_hosts,
         "Hosts that incoming requests are matched against."),
        ("Address", "string", _load_balancer_address,
         "Address is a list containing ingress points."),
        ("Ports", "string", _ingress_ports, "Ports of TLS configurations that open."),
        _AGE,
    ),
    # printIngressClass
    ("networking.k8s.io", "IngressClass"): _table(
        _NAME,
        ("Controller", "string", "spec.controller",
         "The controller that implements the class."),
        ("Parameters", "string", _ingress_class_parameters,
         "A link to the controller's configuration."),
        _AGE,
    ),
    # printNetworkPolicy
    ("networking.k8s.io", "NetworkPolicy"): _table(
        _NAME,
        ("Pod-Selector", "string", _selector("spec.podSelector"),
         "The pods the policy applies to."),
        _AGE,
    ),
    # printServiceCIDR
    ("networking.k8s.io", "ServiceCIDR"): _table(
        _NAME,
        ("CIDRs", "string", _joined("spec.cidrs"), "The service CIDRs."),
        _AGE,
    ),
    # printIPAddress
    ("networking.k8s.io", "IPAddress"): _table(
        _NAME,
        ("ParentRef", "string", _parent_ref, "The object the address belongs to."),
        _AGE,
    ),
    # printEndpoints
    ("", "Endpoints"): _table(
        _NAME,
        ("Endpoints", "string", _endpoints, "Endpoints of the service."),
        _AGE,
    ),
    # printEndpointSlice
    ("discovery.k8s.io", "EndpointSlice"): _table(
        _NAME,
        ("AddressType", "string", "addressType",
         "The type of address carried by the slice."),
        ("Ports", "string", _slice_ports, "The network ports exposed by each endpoint."),
        ("Endpoints", "string", _slice_endpoints, "The addresses of the endpoints."),
        _AGE,
    ),
    # printPodDisruptionBudget
    ("policy", "PodDisruptionBudget"): _table(
        _NAME,
        ("Min Available", "string", _int_or_string("spec.minAvailable"),
         "The minimum number of pods that must be available."),
        ("Max Unavailable", "string", _int_or_string("spec.maxUnavailable"),
         "The maximum number of unavailable pods."),
        ("Allowed Disruptions", "integer", _or("status.disruptionsAllowed", 0),
         "Number of pod disruptions allowed."),
        _AGE,
    ),
    # printResourceQuota
    ("", "ResourceQuota"): _table(
        _NAME,
        _AGE,
        ("Request", "string", _quota(limits=False),
         "Request represents a minimum amount of cpu/memory."),
        ("Limit", "string", _quota(limits=True),
         "Limits control the maximum amount of cpu/memory."),
    ),
    # printValidatingAdmissionPolicy
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _table(
        _NAME,
        ("Validations", "integer", _count("spec.validations"), "The number of validations."),
        ("ParamKind", "string", _param_kind, "The kind of the parameter resource."),
        _AGE,
    ),
    # printValidatingAdmissionPolicyBinding
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _table(
        _NAME,
        ("PolicyName", "string", "spec.policyName", "The bound policy."),
        ("ParamRef", "string", _param_ref, "The parameter resource."),
        _AGE,
    ),
    # printMutatingAdmissionPolicy
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): _table(
        _NAME,
        ("Mutations", "integer", _count("spec.mutations"), "The number of mutations."),
        ("ParamKind", "string", _param_kind, "The kind of the parameter resource."),
        _AGE,
    ),
    # printMutatingAdmissionPolicyBinding
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): _table(
        _NAME,
        ("PolicyName", "string", "spec.policyName", "The bound policy."),
        ("ParamRef", "string", _param_ref, "The parameter resource."),
        _AGE,
    ),
    # kube-aggregator's APIService table (pkg/registry/apiservice/etcd: the printer there)
    ("apiregistration.k8s.io", "APIService"): _table(
        _NAME,
        ("Service", "string", _api_service, "The reference to the service hosting the API."),
        ("Available", "string", _api_service_available, "Whether the API is available."),
        _AGE,
    ),
    # printCertificateSigningRequest
    ("certificates.k8s.io", "CertificateSigningRequest"): _table(
        _NAME,
        _AGE,
        ("SignerName", "string", "spec.signerName", "The requested signer."),
        ("Requestor", "string", "spec.username", "The user who created the request."),
        ("RequestedDuration", "string", _csr_duration,
         "The requested validity of the certificate."),
        ("Condition", "string", _csr_condition, "The state of the request."),
    ),
    # printFlowSchema
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): _table(
        _NAME,
        ("PriorityLevel", "string", "spec.priorityLevelConfiguration.name",
         "The priority level of the flows."),
        ("MatchingPrecedence", "string", _or("spec.matchingPrecedence", 0),
         "Lower precedence matches first."),
        ("DistinguisherMethod", "string", _or("spec.distinguisherMethod.type", "<none>"),
         "How flows are told apart."),
        _AGE,
        ("MissingPL", "string", _missing_priority_level,
         "Whether the priority level is missing."),
    ),
    # printPriorityLevelConfiguration
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): _table(
        _NAME,
        ("Type", "string", "spec.type", "Whether the level is Limited or Exempt."),
        ("NominalConcurrencyShares", "string", _concurrency_shares,
         "The share of the concurrency limit."),
        ("Queues", "string", _get(f"{_QUEUING}.queues", "<none>"), "The number of queues."),
        ("HandSize", "string", _get(f"{_QUEUING}.handSize", "<none>"),
         "The number of queues a flow is dealt."),
        ("QueueLengthLimit", "string", _get(f"{_QUEUING}.queueLengthLimit", "<none>"),
         "The longest a queue may be."),
        _AGE,
    ),
    # printPriorityClass
    ("scheduling.k8s.io", "PriorityClass"): _table(
        _NAME,
        ("Value", "integer", _get("value", 0), "The priority value."),
        ("Global-Default", "boolean", _bool("globalDefault"),
         "Whether this is the default priority class."),
        _AGE,
    ),
    # printRuntimeClass
    ("node.k8s.io", "RuntimeClass"): _table(
        _NAME,
        ("Handler", "string", "handler", "The CRI handler."),
        _AGE,
    ),
    # printResourceSlice
    ("resource.k8s.io", "ResourceSlice"): _table(
        _NAME,
        ("Node", "string", _or("spec.nodeName", "<none>"), "The node the slice belongs to."),
        ("Driver", "string", "spec.driver", "The driver that publishes the slice."),
        ("Pool", "string", "spec.pool.name", "The pool of the devices."),
        _AGE,
    ),
}
# fmt: on
