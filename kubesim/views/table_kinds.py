"""The columns and cells kube-apiserver prints for the kinds served by the generic store.

Twin of the handlers in k8s.io/kubernetes ``pkg/printers/internalversion/printers.go``
(``printJob``, ``printCronJob``, ``printDaemonSet``, ``printStatefulSet``, ``printIngress``,
``printPersistentVolumeClaim``, ...) and of kube-aggregator's APIService table, for the
kinds of api/builtin_kinds.py; table_printers.py has the kinds kubesim served before, and
the helpers both use. The server prints the wide columns too (priority 1).

Deliberate differences: column descriptions are short summaries, not the API's field
documentation; an HPA's Targets cell shows the spec's targets without current values (no
metrics exist here).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from kubesim.api.labels import SelectorParseError, selector_from_label_selector
from kubesim.views.table_printers import Printer, human_duration, since

__all__ = ["KIND_PRINTERS"]

_AGE = (
    "Age",
    "string",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
    0,
)
_NAME = ("Name", "string", "", 0)


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _name(o: dict) -> str:
    return str(_meta(o).get("name", ""))


def _age(o: dict) -> str:
    return since(_meta(o).get("creationTimestamp"))


def _labels(labels: Any) -> str:
    """labels.FormatLabels."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


def _selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: "<none>" for none or an empty one."""
    if not selector:
        return "<none>"
    try:
        return str(selector_from_label_selector(selector)) or "<none>"
    except SelectorParseError:
        return "<error>"


def _containers(template: Any) -> tuple[str, str]:
    spec = (template or {}).get("spec") or {}
    cs = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _has_condition(status: dict, kind: str) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _time(text: Any) -> _dt.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _access_modes(modes: Any) -> str:
    """GetAccessModesAsString: the short forms, in the API's order."""
    short = {
        "ReadWriteOnce": "RWO",
        "ReadOnlyMany": "ROX",
        "ReadWriteMany": "RWX",
        "ReadWriteOncePod": "RWOP",
    }
    return ",".join(short[m] for m in short if m in (modes or []))


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


# ---- workloads -------------------------------------------------------------------------------


def _job_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 1) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    if _has_condition(status, "Complete"):
        state = "Complete"
    elif _has_condition(status, "Failed"):
        state = "Failed"
    elif _meta(o).get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(status, "Suspended"):
        state = "Suspended"
    elif _has_condition(status, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(status, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    start, end = _time(status.get("startTime")), _time(status.get("completionTime"))
    if start is None:
        duration = ""
    elif end is None:
        duration = since(status.get("startTime"))
    else:
        duration = human_duration((end - start).total_seconds())
    names, images = _containers(spec.get("template"))
    return [
        _name(o),
        state,
        completions,
        duration,
        _age(o),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _cronjob_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = _containers(job.get("template"))
    last = status.get("lastScheduleTime")
    return [
        _name(o),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "True" if spec.get("suspend") else "False",
        len(status.get("active") or []),
        since(last) if last else "<none>",
        _age(o),
        names,
        images,
        _selector(job.get("selector")),
    ]


def _daemonset_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    template = spec.get("template") or {}
    names, images = _containers(template)
    return [
        _name(o),
        status.get("desiredNumberScheduled") or 0,
        status.get("currentNumberScheduled") or 0,
        status.get("numberReady") or 0,
        status.get("updatedNumberScheduled") or 0,
        status.get("numberAvailable") or 0,
        _labels((template.get("spec") or {}).get("nodeSelector")),
        _age(o),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _statefulset_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers(spec.get("template"))
    replicas = 1 if spec.get("replicas") is None else spec["replicas"]
    return [_name(o), f"{status.get('readyReplicas') or 0}/{replicas}", _age(o), names, images]


def _replication_controller_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers(spec.get("template"))
    return [
        _name(o),
        1 if spec.get("replicas") is None else spec["replicas"],
        status.get("replicas") or 0,
        status.get("readyReplicas") or 0,
        _age(o),
        names,
        images,
        _labels(spec.get("selector")),
    ]


def _hpa_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    targets = []
    for metric in spec.get("metrics") or []:
        resource = (metric or {}).get("resource") or {}
        target = resource.get("target") or {}
        if target.get("averageUtilization") is not None:
            targets.append(f"{resource.get('name')}: <unknown>/{target['averageUtilization']}%")
    return [
        _name(o),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        ", ".join(targets) or "<none>",
        spec.get("minReplicas") or 1,
        spec.get("maxReplicas") or 0,
        status.get("currentReplicas") or 0,
        _age(o),
    ]


def _pod_template_row(o: dict) -> list:
    template = o.get("template") or {}
    names, images = _containers(template)
    return [_name(o), names, images, _labels((template.get("metadata") or {}).get("labels"))]


# ---- storage ---------------------------------------------------------------------------------


def _pvc_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if _meta(o).get("deletionTimestamp") else status.get("phase", "")
    bound = bool(spec.get("volumeName"))
    return [
        _name(o),
        phase,
        spec.get("volumeName", ""),
        ((status.get("capacity") or {}).get("storage") or "") if bound else "",
        _access_modes(status.get("accessModes")) if bound else "",
        spec.get("storageClassName") or "",
        status.get("currentVolumeAttributesClassName") or "<unset>",
        _age(o),
        spec.get("volumeMode") or "<unset>",
    ]


def _pv_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    phase = "Terminating" if _meta(o).get("deletionTimestamp") else status.get("phase", "")
    return [
        _name(o),
        (spec.get("capacity") or {}).get("storage", ""),
        _access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        phase,
        claim,
        spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason") or "",
        _age(o),
        spec.get("volumeMode") or "<unset>",
    ]


def _storage_class_row(o: dict) -> list:
    name = _name(o)
    annotations = _meta(o).get("annotations") or {}
    if annotations.get("storageclass.kubernetes.io/is-default-class") == "true":
        name += " (default)"
    return [
        name,
        o.get("provisioner", ""),
        o.get("reclaimPolicy") or "Delete",
        o.get("volumeBindingMode") or "Immediate",
        bool(o.get("allowVolumeExpansion")),
        _age(o),
    ]


def _volume_attachment_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    return [
        _name(o),
        spec.get("attacher", ""),
        (spec.get("source") or {}).get("persistentVolumeName") or "",
        spec.get("nodeName", ""),
        bool(status.get("attached")),
        _age(o),
    ]


def _csi_driver_row(o: dict) -> list:
    spec = o.get("spec") or {}
    modes = ",".join(spec.get("volumeLifecycleModes") or ["Persistent"])
    tokens = ",".join(t.get("audience", "") for t in spec.get("tokenRequests") or []) or "<unset>"
    return [
        _name(o),
        spec.get("attachRequired", True),
        spec.get("podInfoOnMount", False),
        spec.get("storageCapacity", False),
        tokens,
        spec.get("requiresRepublish", False),
        modes,
        _age(o),
    ]


# ---- networking ------------------------------------------------------------------------------


def _ingress_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    hosts = [
        str(r["host"]) for r in spec.get("rules") or [] if isinstance(r, dict) and r.get("host")
    ]
    if not hosts:
        host_text = "*"
    elif len(hosts) > 3:
        host_text = ",".join(hosts[:3]) + f" + {len(hosts) - 3} more..."
    else:
        host_text = ",".join(hosts)
    lb = (status.get("loadBalancer") or {}).get("ingress") or []
    address = ",".join(i.get("ip") or i.get("hostname") or "" for i in lb if isinstance(i, dict))
    return [
        _name(o),
        spec.get("ingressClassName") or "<none>",
        host_text,
        address,
        "80, 443" if spec.get("tls") else "80",
        _age(o),
    ]


def _ingress_class_row(o: dict) -> list:
    spec = o.get("spec") or {}
    params = spec.get("parameters")
    text = "<none>"
    if isinstance(params, dict):
        text = params.get("kind", "")
        if params.get("apiGroup"):
            text += "." + params["apiGroup"]
        text += "/" + params.get("name", "")
    return [_name(o), spec.get("controller", ""), text, _age(o)]


def _endpoints_row(o: dict) -> list:
    pairs = []
    for subset in o.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for address in subset.get("addresses") or []:
            for port in ports:
                ip = address.get("ip", "")
                pairs.append(f"{ip}:{port}" if port is not None else ip)
    text = ",".join(pairs[:3]) + (f" + {len(pairs) - 3} more..." if len(pairs) > 3 else "")
    return [_name(o), text or "<none>", _age(o)]


def _endpoint_slice_row(o: dict) -> list:
    ports = ",".join(str(p.get("port", "")) for p in o.get("ports") or []) or "<unset>"
    addresses = [a for e in o.get("endpoints") or [] for a in (e or {}).get("addresses") or []]
    text = ",".join(addresses[:3]) + (
        f" + {len(addresses) - 3} more..." if len(addresses) > 3 else ""
    )
    return [_name(o), o.get("addressType", ""), ports, text or "<unset>", _age(o)]


def _pdb_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    return [
        _name(o),
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        status.get("disruptionsAllowed") or 0,
        _age(o),
    ]


# ---- admission, API services, certificates --------------------------------------------------


def _param_kind(spec: dict) -> str:
    kind = spec.get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def _policy_binding_row(o: dict) -> list:
    spec = o.get("spec") or {}
    ref = spec.get("paramRef")
    param = "<unset>"
    if isinstance(ref, dict):
        param = (
            f"{ref.get('namespace')}/{ref.get('name')}"
            if ref.get("namespace")
            else (ref.get("name") or "*")
        )
    return [_name(o), spec.get("policyName", ""), param, _age(o)]


def _api_service_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    svc = spec.get("service")
    service = f"{svc.get('namespace', '')}/{svc.get('name', '')}" if svc else "Local"
    available = "Unknown"
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Available":
            available = str(c.get("status", ""))
            if available != "True" and c.get("reason"):
                available += f" ({c['reason']})"
    return [_name(o), service, available, _age(o)]


def _csr_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    conditions = [c.get("type", "") for c in status.get("conditions") or [] if isinstance(c, dict)]
    if status.get("certificate") and "Approved" in conditions:
        conditions.append("Issued")
    seconds = spec.get("expirationSeconds")
    return [
        _name(o),
        _age(o),
        spec.get("signerName", ""),
        spec.get("username", ""),
        human_duration(seconds) if seconds else "<none>",
        ",".join(conditions) or "Pending",
    ]


def _flow_schema_row(o: dict) -> list:
    spec = o.get("spec") or {}
    method = (spec.get("distinguisherMethod") or {}).get("type") or "<none>"
    missing = "?"
    for c in (o.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Dangling":
            missing = str(c.get("status"))
    return [
        _name(o),
        (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
        spec.get("matchingPrecedence") or 0,
        method,
        _age(o),
        missing,
    ]


def _priority_level_row(o: dict) -> list:
    spec = o.get("spec") or {}
    limited = spec.get("limited") or {}
    queuing = ((limited.get("limitResponse") or {}).get("queuing")) or {}
    shares: Any = limited.get("nominalConcurrencyShares", "<none>")
    if spec.get("type") != "Limited":
        shares = (spec.get("exempt") or {}).get("nominalConcurrencyShares", "<none>")
    return [
        _name(o),
        spec.get("type", ""),
        shares,
        queuing.get("queues", "<none>"),
        queuing.get("handSize", "<none>"),
        queuing.get("queueLengthLimit", "<none>"),
        _age(o),
    ]


def _controller_revision_row(o: dict) -> list:
    owner = next(
        (
            r
            for r in _meta(o).get("ownerReferences") or []
            if isinstance(r, dict) and r.get("controller")
        ),
        None,
    )
    controller = "<none>"
    if owner is not None:
        group = (owner.get("apiVersion") or "").rpartition("/")[0]
        kind = owner.get("kind", "").lower() + (f".{group}" if group else "")
        controller = f"{kind}/{owner.get('name', '')}"
    return [_name(o), controller, o.get("revision") or 0, _age(o)]


def _p(columns: list[tuple[str, str, str, int]], row: Any) -> Printer:
    return Printer((_NAME, *columns), row)


def _simple(columns: list[tuple[str, str, str, int]], cells: Any) -> Printer:
    """A printer of Name, a few cells, then Age."""
    return Printer((_NAME, *columns, _AGE), lambda o: [_name(o), *cells(o), _age(o)])


def _quota_cells(o: dict) -> list[str]:
    """printResourceQuota: "name: used/hard" pairs of the requests and of the limits."""
    status = o.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        pair = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if name.startswith("limits.") else requests).append(pair)
    return [", ".join(requests), ", ".join(limits)]


def _parent_ref(ref: Any) -> str:
    if not isinstance(ref, dict):
        return "<none>"
    group = f".{ref['group']}" if ref.get("group") else ""
    namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
    return f"{ref.get('resource', '')}{group}/{namespace}{ref.get('name', '')}"


_W = 1  # priority of the wide columns (-o wide)

KIND_PRINTERS: dict[tuple[str, str], Printer] = {
    ("batch", "Job"): _p(
        [
            ("Status", "string", "Status of the job.", 0),
            ("Completions", "string", "The completion status of the job.", 0),
            ("Duration", "string", "Time required to complete the job.", 0),
            _AGE,
            ("Containers", "string", "Names of each container in the template.", _W),
            ("Images", "string", "Images referenced by each container in the template.", _W),
            ("Selector", "string", "Query over pods that should match the pod count.", _W),
        ],
        _job_row,
    ),
    ("batch", "CronJob"): _p(
        [
            ("Schedule", "string", "The schedule in Cron format.", 0),
            ("Timezone", "string", "The time zone name for the given schedule.", 0),
            ("Suspend", "boolean", "Whether subsequent executions are suspended.", 0),
            ("Active", "integer", "Number of currently running jobs.", 0),
            ("Last Schedule", "string", "When the job was last successfully scheduled.", 0),
            _AGE,
            ("Containers", "string", "Names of each container in the template.", _W),
            ("Images", "string", "Images referenced by each container in the template.", _W),
            ("Selector", "string", "Query over pods that should match the pod count.", _W),
        ],
        _cronjob_row,
    ),
    ("apps", "DaemonSet"): _p(
        [
            ("Desired", "integer", "The number of nodes that should run the daemon pod.", 0),
            ("Current", "integer", "The number of nodes running at least one daemon pod.", 0),
            ("Ready", "integer", "The number of nodes with a ready daemon pod.", 0),
            ("Up-to-date", "integer", "The number of nodes running the updated pod.", 0),
            ("Available", "integer", "The number of nodes with an available daemon pod.", 0),
            ("Node Selector", "string", "NodeSelector of the pod template.", 0),
            _AGE,
            ("Containers", "string", "Names of each container in the template.", _W),
            ("Images", "string", "Images referenced by each container in the template.", _W),
            ("Selector", "string", "A label query over pods that are managed.", _W),
        ],
        _daemonset_row,
    ),
    ("apps", "StatefulSet"): _p(
        [
            ("Ready", "string", "Number of the pod with ready state.", 0),
            _AGE,
            ("Containers", "string", "Names of each container in the template.", _W),
            ("Images", "string", "Images referenced by each container in the template.", _W),
        ],
        _statefulset_row,
    ),
    ("apps", "ControllerRevision"): _p(
        [
            ("Controller", "string", "The controller of the revision.", 0),
            ("Revision", "integer", "The revision number.", 0),
            _AGE,
        ],
        _controller_revision_row,
    ),
    ("", "ReplicationController"): _p(
        [
            ("Desired", "integer", "The number of desired replicas.", 0),
            ("Current", "integer", "The number of actual replicas.", 0),
            ("Ready", "integer", "The number of ready replicas.", 0),
            _AGE,
            ("Containers", "string", "Names of each container in the template.", _W),
            ("Images", "string", "Images referenced by each container in the template.", _W),
            ("Selector", "string", "Label keys and values that must match.", _W),
        ],
        _replication_controller_row,
    ),
    ("", "PodTemplate"): _p(
        [
            ("Containers", "string", "Names of each container in the template.", 0),
            ("Images", "string", "Images referenced by each container in the template.", 0),
            ("Pod Labels", "string", "The labels for the pod template.", 0),
        ],
        _pod_template_row,
    ),
    ("autoscaling", "HorizontalPodAutoscaler"): _p(
        [
            ("Reference", "string", "The target of the autoscaler.", 0),
            ("Targets", "string", "The metrics and their targets.", 0),
            ("MinPods", "string", "The lower limit for the number of replicas.", 0),
            ("MaxPods", "integer", "The upper limit for the number of replicas.", 0),
            ("Replicas", "integer", "The current number of replicas.", 0),
            _AGE,
        ],
        _hpa_row,
    ),
    ("", "PersistentVolumeClaim"): _p(
        [
            ("Status", "string", "The phase of the claim.", 0),
            ("Volume", "string", "The binding reference to the PersistentVolume.", 0),
            ("Capacity", "string", "The actual resources of the underlying volume.", 0),
            ("Access Modes", "string", "The actual access modes of the volume.", 0),
            ("StorageClass", "string", "The name of the StorageClass the claim requires.", 0),
            ("VolumeAttributesClass", "string", "The current VolumeAttributesClass.", 0),
            _AGE,
            ("VolumeMode", "string", "What type of volume the claim requires.", _W),
        ],
        _pvc_row,
    ),
    ("", "PersistentVolume"): _p(
        [
            ("Capacity", "string", "The capacity of the volume.", 0),
            ("Access Modes", "string", "All ways the volume can be mounted.", 0),
            ("Reclaim Policy", "string", "What happens to the volume when released.", 0),
            ("Status", "string", "The phase of the volume.", 0),
            ("Claim", "string", "The claim bound to the volume.", 0),
            ("StorageClass", "string", "The name of the StorageClass of the volume.", 0),
            ("VolumeAttributesClass", "string", "The VolumeAttributesClass of the volume.", 0),
            ("Reason", "string", "Why the volume is in this phase.", 0),
            _AGE,
            ("VolumeMode", "string", "The volume mode of the volume.", _W),
        ],
        _pv_row,
    ),
    ("storage.k8s.io", "StorageClass"): _p(
        [
            ("Provisioner", "string", "The driver that provisions volumes.", 0),
            ("ReclaimPolicy", "string", "The reclaim policy of provisioned volumes.", 0),
            ("VolumeBindingMode", "string", "When volumes are bound and provisioned.", 0),
            ("AllowVolumeExpansion", "string", "Whether volumes can be expanded.", 0),
            _AGE,
        ],
        _storage_class_row,
    ),
    ("storage.k8s.io", "VolumeAttachment"): _p(
        [
            ("Attacher", "string", "The volume driver that handles the attachment.", 0),
            ("PV", "string", "The name of the persistent volume to attach.", 0),
            ("Node", "string", "The node the volume is attached to.", 0),
            ("Attached", "boolean", "Whether the attach operation succeeded.", 0),
            _AGE,
        ],
        _volume_attachment_row,
    ),
    ("storage.k8s.io", "CSIDriver"): _p(
        [
            ("AttachRequired", "boolean", "Whether the driver needs an attach operation.", 0),
            ("PodInfoOnMount", "boolean", "Whether the driver gets pod information.", 0),
            ("StorageCapacity", "boolean", "Whether the driver reports capacity.", 0),
            ("TokenRequests", "string", "Audiences of the tokens the driver gets.", 0),
            ("RequiresRepublish", "boolean", "Whether NodePublishVolume repeats.", 0),
            ("Modes", "string", "The volume lifecycle modes supported.", 0),
            _AGE,
        ],
        _csi_driver_row,
    ),
    ("networking.k8s.io", "Ingress"): _p(
        [
            ("Class", "string", "The name of the IngressClass.", 0),
            ("Hosts", "string", "Hosts that incoming requests are matched against.", 0),
            ("Address", "string", "Address is a list containing ingress points.", 0),
            ("Ports", "string", "Ports of TLS configurations that open.", 0),
            _AGE,
        ],
        _ingress_row,
    ),
    ("networking.k8s.io", "IngressClass"): _p(
        [
            ("Controller", "string", "The controller that implements the class.", 0),
            ("Parameters", "string", "A link to the controller's configuration.", 0),
            _AGE,
        ],
        _ingress_class_row,
    ),
    ("networking.k8s.io", "NetworkPolicy"): _p(
        [("Pod-Selector", "string", "The pods the policy applies to.", 0), _AGE],
        lambda o: [_name(o), _selector((o.get("spec") or {}).get("podSelector")), _age(o)],
    ),
    ("", "Endpoints"): _p(
        [("Endpoints", "string", "Endpoints of the service.", 0), _AGE], _endpoints_row
    ),
    ("discovery.k8s.io", "EndpointSlice"): _p(
        [
            ("AddressType", "string", "The type of address carried by the slice.", 0),
            ("Ports", "string", "The network ports exposed by each endpoint.", 0),
            ("Endpoints", "string", "The addresses of the endpoints.", 0),
            _AGE,
        ],
        _endpoint_slice_row,
    ),
    ("policy", "PodDisruptionBudget"): _p(
        [
            ("Min Available", "string", "The minimum number of pods that must be available.", 0),
            ("Max Unavailable", "string", "The maximum number of unavailable pods.", 0),
            ("Allowed Disruptions", "integer", "Number of pod disruptions allowed.", 0),
            _AGE,
        ],
        _pdb_row,
    ),
    ("", "ResourceQuota"): _p(
        [
            _AGE,
            ("Request", "string", "Request represents a minimum amount of cpu/memory.", 0),
            ("Limit", "string", "Limits control the maximum amount of cpu/memory.", 0),
        ],
        lambda o: [_name(o), _age(o), *_quota_cells(o)],
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _p(
        [
            ("Validations", "integer", "The number of validations.", 0),
            ("ParamKind", "string", "The kind of the parameter resource.", 0),
            _AGE,
        ],
        lambda o: [
            _name(o),
            len((o.get("spec") or {}).get("validations") or []),
            _param_kind(o.get("spec") or {}),
            _age(o),
        ],
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): _p(
        [
            ("Mutations", "integer", "The number of mutations.", 0),
            ("ParamKind", "string", "The kind of the parameter resource.", 0),
            _AGE,
        ],
        lambda o: [
            _name(o),
            len((o.get("spec") or {}).get("mutations") or []),
            _param_kind(o.get("spec") or {}),
            _age(o),
        ],
    ),
    ("apiregistration.k8s.io", "APIService"): _p(
        [
            ("Service", "string", "The reference to the service hosting the API.", 0),
            ("Available", "string", "Whether the API is available.", 0),
            _AGE,
        ],
        _api_service_row,
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): _p(
        [
            _AGE,
            ("SignerName", "string", "The requested signer.", 0),
            ("Requestor", "string", "The user who created the request.", 0),
            ("RequestedDuration", "string", "The requested validity of the certificate.", 0),
            ("Condition", "string", "The state of the request.", 0),
        ],
        _csr_row,
    ),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): _p(
        [
            ("PriorityLevel", "string", "The priority level of the flows.", 0),
            ("MatchingPrecedence", "string", "Lower precedence matches first.", 0),
            ("DistinguisherMethod", "string", "How flows are told apart.", 0),
            _AGE,
            ("MissingPL", "string", "Whether the priority level is missing.", 0),
        ],
        _flow_schema_row,
    ),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): _p(
        [
            ("Type", "string", "Whether the level is Limited or Exempt.", 0),
            ("NominalConcurrencyShares", "string", "The share of the concurrency limit.", 0),
            ("Queues", "string", "The number of queues.", 0),
            ("HandSize", "string", "The number of queues a flow is dealt.", 0),
            ("QueueLengthLimit", "string", "The longest a queue may be.", 0),
            _AGE,
        ],
        _priority_level_row,
    ),
    # kinds whose columns are a path or two, then Age
    ("scheduling.k8s.io", "PriorityClass"): _simple(
        [
            ("Value", "integer", "The priority value.", 0),
            ("Global-Default", "boolean", "Whether this is the default priority class.", 0),
        ],
        lambda o: [o.get("value", 0), bool(o.get("globalDefault"))],
    ),
    ("node.k8s.io", "RuntimeClass"): _simple(
        [("Handler", "string", "The CRI handler.", 0)],
        lambda o: [o.get("handler", "")],
    ),
    ("storage.k8s.io", "CSINode"): _simple(
        [("Drivers", "integer", "The number of drivers.", 0)],
        lambda o: [len((o.get("spec") or {}).get("drivers") or [])],
    ),
    ("storage.k8s.io", "VolumeAttributesClass"): _simple(
        [("DriverName", "string", "The CSI driver of the class.", 0)],
        lambda o: [o.get("driverName", "")],
    ),
    ("networking.k8s.io", "ServiceCIDR"): _simple(
        [("CIDRs", "string", "The service CIDRs.", 0)],
        lambda o: [",".join((o.get("spec") or {}).get("cidrs") or [])],
    ),
    ("networking.k8s.io", "IPAddress"): _simple(
        [("ParentRef", "string", "The object the address belongs to.", 0)],
        lambda o: [_parent_ref((o.get("spec") or {}).get("parentRef"))],
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _simple(
        [
            ("PolicyName", "string", "The bound policy.", 0),
            ("ParamRef", "string", "The parameter resource.", 0),
        ],
        lambda o: _policy_binding_row(o)[1:3],
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): _simple(
        [
            ("PolicyName", "string", "The bound policy.", 0),
            ("ParamRef", "string", "The parameter resource.", 0),
        ],
        lambda o: _policy_binding_row(o)[1:3],
    ),
    ("resource.k8s.io", "ResourceSlice"): _simple(
        [
            ("Node", "string", "The node the slice belongs to.", 0),
            ("Driver", "string", "The driver that publishes the slice.", 0),
            ("Pool", "string", "The pool of the devices.", 0),
        ],
        lambda o: [
            (o.get("spec") or {}).get("nodeName") or "<none>",
            (o.get("spec") or {}).get("driver", ""),
            ((o.get("spec") or {}).get("pool") or {}).get("name", ""),
        ],
    ),
}
