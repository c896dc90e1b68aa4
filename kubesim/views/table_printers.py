"""The columns and cells kube-apiserver prints for the built-in kinds kubesim serves.

Twin of k8s.io/kubernetes pkg/printers/internalversion/printers.go (``AddHandlers``: one column
list per kind, and ``printDeployment``, ``printEvent``, ... for the cells), with the helpers
it uses: ``translateTimestampSince`` (apimachinery's ``duration.HumanDuration`` of the
object's age), ``layoutContainerCells``, ``labels.FormatLabels``, ``formatEventSource`` and
rbac's ``SubjectsStrings``. The server always prints the wide columns (priority 1), which
``kubectl get`` hides unless ``-o wide``.

Cells are computed from the versioned object as stored, with the defaults the real server
would have filled in where kubesim does not (a Service's type ClusterIP, a port's protocol
TCP, a Secret's type Opaque, a Deployment's replicas 1). Column descriptions are the API's
field documentation, as the Go code takes them from ``SwaggerDoc()``; most are read from
builtin_openapi.json, the ones of older API versions are written here.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kubesim.api.labels import SelectorParseError, selector_from_label_selector

__all__ = [
    "NAME_COLUMN",
    "PRINTERS",
    "Printer",
    "column",
    "created_at",
    "human_duration",
    "since",
]


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration: ~2-3 significant figures.

    Up to one second in the future still reads "0s" (clock skew between machines).
    """
    s = int(seconds)  # truncates toward zero, as Go's int(d.Seconds())
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 192:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        y = h // (24 * 365)
        d = (h // 24) % 365
        return f"{y}y{d}d" if d else f"{y}y"
    return f"{h // (24 * 365)}y"


def _parse_time(ts: Any) -> _dt.datetime | None:
    """A metav1.Time or MicroTime as JSON carries it; None for the zero time (absent/null)."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        t = _dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return None if t.year <= 1 else t


def since(ts: Any) -> str:
    """translateTimestampSince / translateMicroTimestampSince."""
    t = _parse_time(ts)
    if t is None:
        return "<unknown>"
    return human_duration((_dt.datetime.now(_dt.UTC) - t).total_seconds())


def created_at(ts: Any) -> str:
    """The default convertor's cell: CreationTimestamp.UTC().Format(time.RFC3339)."""
    t = _parse_time(ts)
    if t is None:
        return "0001-01-01T00:00:00Z"
    return t.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def column(
    name: str, type_: str, description: str, priority: int = 0, format_: str = ""
) -> dict[str, Any]:
    """A TableColumnDefinition (every field is always present in its JSON)."""
    return {
        "name": name,
        "type": type_,
        "format": format_,
        "description": description,
        "priority": priority,
    }


NAME_COLUMN = column(
    "Name",
    "string",
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    format_="name",
)
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."

# A column's description: literal text, or (schema, field) of builtin_openapi.json.
_Doc = str | tuple[str, str]
_CORE = "io.k8s.api.core.v1"


def _describe(doc: _Doc) -> str:
    if isinstance(doc, str):
        return doc
    from kubesim.views.openapi import builtin_schemas  # the generated docs, loaded on first use

    schema, field = doc
    return builtin_schemas()[schema]["properties"][field].get("description", "")


@dataclass(frozen=True)
class Printer:
    """One kind's columns (name, type, description, priority) and its row function."""

    spec: tuple[tuple[str, str, _Doc, int], ...]
    row: Callable[[dict], list]

    @cached_property
    def columns(self) -> list[dict[str, Any]]:
        out = []
        for name, type_, doc, priority in self.spec:
            if name == "Name":  # ObjectMeta's name, format "name" (Event prints it wide only)
                out.append(dict(NAME_COLUMN, priority=priority))
            else:
                out.append(column(name, type_, _describe(doc), priority))
        return out


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _age(o: dict) -> str:
    return since(_meta(o).get("creationTimestamp"))


def _format_labels(labels: dict | None) -> str:
    """labels.FormatLabels: k=v pairs sorted by key, "<none>" when there are none."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


def _container_cells(containers: list | None) -> tuple[str, str]:
    """layoutContainerCells: the names and the images, comma-joined."""
    cs = [c for c in containers or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


# ---- apps/v1 Deployment -------------------------------------------------------------------------


def _deployment_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    names, images = _container_cells(pod_spec.get("containers"))
    try:
        selector = str(selector_from_label_selector(spec.get("selector")))
    except SelectorParseError:
        selector = "<invalid>"
    return [
        _meta(o).get("name", ""),
        f"{status.get('readyReplicas') or 0}/{_replicas(spec)}",
        status.get("updatedReplicas") or 0,
        status.get("availableReplicas") or 0,
        _age(o),
        names,
        images,
        selector,
    ]


def _replicas(spec: dict) -> int:
    """spec.replicas, defaulted to 1 as the server's defaulting does."""
    replicas = spec.get("replicas")
    return 1 if replicas is None else replicas


# ---- core/v1 Node ------------------------------------------------------------------------------

_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"  # labelNodeRolePrefix
_NODE_ROLE_LABEL = "kubernetes.io/role"  # nodeLabelRole
# The column descriptions: the API's field docs (NodeSystemInfo, NodeStatus), as printers.go
# takes them from SwaggerDoc.
_KUBELET_VERSION_DOC = "Kubelet Version reported by the node."
_ADDRESSES_DOC = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "
    "info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is "
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "
    "https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change "
    "during the lifetime of a Node. However, there are some exceptions where this may not be "
    "possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP)."
)
_OS_IMAGE_DOC = (
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."
)
_KERNEL_DOC = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."
_RUNTIME_DOC = (
    "ContainerRuntime Version reported by the node through runtime remote API "
    "(e.g. containerd://1.4.2)."
)


def _node_roles(labels: dict | None) -> str:
    """findNodeRoles: node-role.kubernetes.io/<role> keys and kubernetes.io/role values, sorted
    and comma-joined; "<none>" when there are none."""
    roles = set()
    for k, v in (labels or {}).items():
        if k.startswith(_NODE_ROLE_PREFIX):
            if role := k[len(_NODE_ROLE_PREFIX) :]:
                roles.add(role)
        elif k == _NODE_ROLE_LABEL and v:
            roles.add(v)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(status: dict, kind: str) -> str:
    """getNodeInternalIP / getNodeExternalIP: the first address of that type, or "<none>"."""
    for a in status.get("addresses") or []:
        if isinstance(a, dict) and a.get("type") == kind:
            return a.get("address") or ""
    return "<none>"


def _node_row(o: dict) -> list:
    """printNode, wide (the server always prints the wide cells)."""
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ready = next(
        (
            c
            for c in reversed(status.get("conditions") or [])
            if isinstance(c, dict) and c.get("type") == "Ready"
        ),
        None,
    )
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [
        _meta(o).get("name", ""),
        ",".join(states),
        _node_roles(_meta(o).get("labels")),
        _age(o),
        info.get("kubeletVersion") or "",
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# ---- core/v1 Event (and events.k8s.io/v1 Event, the same stored object) -------------------------


def _event_source(source: dict, controller: str, instance: str) -> str:
    """formatEventSource: component (or reportingController), then ", host" if any."""
    component = source.get("component") or controller or ""
    host = source.get("host") or instance or ""
    return f"{component}, {host}" if host else component


def _event_row(o: dict) -> list:
    first = since(o.get("firstTimestamp"))
    if _parse_time(o.get("firstTimestamp")) is None:
        first = since(o.get("eventTime"))
    last = since(o.get("lastTimestamp"))
    if _parse_time(o.get("lastTimestamp")) is None:
        last = first
    count = o.get("count") or 0
    series = o.get("series")
    if series is not None:
        last = since(series.get("lastObservedTime"))
        count = series.get("count") or 0
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = o.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = _event_source(
        o.get("source") or {}, o.get("reportingComponent", ""), o.get("reportingInstance", "")
    )
    return [
        last,
        o.get("type", ""),
        o.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        source,
        (o.get("message") or "").strip(),
        first,
        count,
        _meta(o).get("name", ""),
    ]


def _events_v1_row(o: dict) -> list:
    """events.k8s.io/v1 is served from the core Event's storage: convert, then print."""
    return _event_row(
        {
            "metadata": o.get("metadata"),
            "firstTimestamp": o.get("deprecatedFirstTimestamp"),
            "lastTimestamp": o.get("deprecatedLastTimestamp"),
            "eventTime": o.get("eventTime"),
            "count": o.get("deprecatedCount"),
            "series": o.get("series"),
            "involvedObject": o.get("regarding"),
            "source": o.get("deprecatedSource"),
            "reportingComponent": o.get("reportingController", ""),
            "reportingInstance": o.get("reportingInstance", ""),
            "type": o.get("type", ""),
            "reason": o.get("reason", ""),
            "message": o.get("note", ""),
        }
    )


# ---- core/v1 Service ----------------------------------------------------------------------------


def _external_ip(spec: dict, status: dict) -> str:
    """getServiceExternalIP (wide: the load balancer's addresses are not clipped)."""
    svc_type = spec.get("type") or "ClusterIP"
    external = spec.get("externalIPs") or []
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        ingress = ((status.get("loadBalancer") or {}).get("ingress")) or []
        ips = sorted({i.get("ip") or i.get("hostname") for i in ingress} - {None, ""})
        if external:
            return ",".join([*ips, *external])
        return ",".join(ips) if ips else "<pending>"
    if svc_type == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def _ports(ports: list | None) -> str:
    """makePortString: port/protocol, or port:nodePort/protocol."""
    pieces = []
    for p in ports or []:
        proto = p.get("protocol") or "TCP"
        if p.get("nodePort"):
            pieces.append(f"{p.get('port')}:{p['nodePort']}/{proto}")
        else:
            pieces.append(f"{p.get('port')}/{proto}")
    return ",".join(pieces) or "<none>"


def _service_row(o: dict) -> list:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [
        _meta(o).get("name", ""),
        spec.get("type") or "ClusterIP",
        cluster_ips[0] if cluster_ips else "<none>",
        _external_ip(spec, status),
        _ports(spec.get("ports")),
        _age(o),
        _format_labels(spec.get("selector")),
    ]


# ---- rbac.authorization.k8s.io/v1 bindings ------------------------------------------------------


def _binding_row(o: dict) -> list:
    """printRoleBinding / printClusterRoleBinding, with rbac.SubjectsStrings."""
    ref = o.get("roleRef") or {}
    users, groups, sas = [], [], []
    for s in o.get("subjects") or []:
        kind = s.get("kind")
        if kind == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
        elif kind == "User":
            users.append(s.get("name", ""))
        elif kind == "Group":
            groups.append(s.get("name", ""))
    return [
        _meta(o).get("name", ""),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _age(o),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _binding_printer(kind: str, role_ref_doc: str) -> Printer:
    lower = kind[0].lower() + kind[1:]
    return Printer(
        (
            ("Name", "string", "", 0),
            ("Role", "string", role_ref_doc, 0),
            ("Age", "string", _AGE_DOC, 0),
            ("Users", "string", f"Users in the {lower}", 1),
            ("Groups", "string", f"Groups in the {lower}", 1),
            ("ServiceAccounts", "string", f"ServiceAccounts in the {lower}", 1),
        ),
        _binding_row,
    )


# ---- the printers, by (group, kind) -------------------------------------------------------------

_EVENT = f"{_CORE}.Event"
_EVENT_COLUMNS: tuple[tuple[str, str, _Doc, int], ...] = (
    ("Last Seen", "string", (_EVENT, "lastTimestamp"), 0),
    ("Type", "string", (_EVENT, "type"), 0),
    ("Reason", "string", (_EVENT, "reason"), 0),
    ("Object", "string", (_EVENT, "involvedObject"), 0),
    ("Subobject", "string", (f"{_CORE}.ObjectReference", "fieldPath"), 1),
    ("Source", "string", (_EVENT, "source"), 1),
    ("Message", "string", (_EVENT, "message"), 0),
    ("First Seen", "string", (_EVENT, "firstTimestamp"), 1),
    ("Count", "string", (_EVENT, "count"), 1),
    ("Name", "string", "", 1),
)

PRINTERS: dict[tuple[str, str], Printer] = {
    ("apps", "Deployment"): Printer(
        (
            ("Name", "string", "", 0),
            ("Ready", "string", "Number of the pod with ready state", 0),
            (
                "Up-to-date",
                "string",
                "Total number of non-terminated pods targeted by this deployment that have the "
                "desired template spec.",
                0,
            ),
            (
                "Available",
                "string",
                "Total number of available pods (ready for at least minReadySeconds) targeted "
                "by this deployment.",
                0,
            ),
            ("Age", "string", _AGE_DOC, 0),
            ("Containers", "string", _CONTAINERS_DOC, 1),
            ("Images", "string", _IMAGES_DOC, 1),
            (
                "Selector",
                "string",
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
                "will be the ones affected by this deployment.",
                1,
            ),
        ),
        _deployment_row,
    ),
    ("", "Event"): Printer(_EVENT_COLUMNS, _event_row),
    ("events.k8s.io", "Event"): Printer(_EVENT_COLUMNS, _events_v1_row),
    ("", "Namespace"): Printer(
        (
            ("Name", "string", "", 0),
            ("Status", "string", "The status of the namespace", 0),
            ("Age", "string", _AGE_DOC, 0),
        ),
        lambda o: [_meta(o).get("name", ""), (o.get("status") or {}).get("phase", ""), _age(o)],
    ),
    ("", "ServiceAccount"): Printer(
        (
            ("Name", "string", "", 0),
            ("Secrets", "string", (f"{_CORE}.ServiceAccount", "secrets"), 0),
            ("Age", "string", _AGE_DOC, 0),
        ),
        lambda o: [_meta(o).get("name", ""), len(o.get("secrets") or []), _age(o)],
    ),
    ("", "Service"): Printer(
        (
            ("Name", "string", "", 0),
            ("Type", "string", (f"{_CORE}.ServiceSpec", "type"), 0),
            ("Cluster-IP", "string", (f"{_CORE}.ServiceSpec", "clusterIP"), 0),
            ("External-IP", "string", (f"{_CORE}.ServiceSpec", "externalIPs"), 0),
            ("Port(s)", "string", (f"{_CORE}.ServiceSpec", "ports"), 0),
            ("Age", "string", _AGE_DOC, 0),
            ("Selector", "string", (f"{_CORE}.ServiceSpec", "selector"), 1),
        ),
        _service_row,
    ),
    ("", "Node"): Printer(
        (
            ("Name", "string", "", 0),
            ("Status", "string", "The status of the node", 0),
            ("Roles", "string", "The roles of the node", 0),
            ("Age", "string", _AGE_DOC, 0),
            ("Version", "string", _KUBELET_VERSION_DOC, 0),
            ("Internal-IP", "string", _ADDRESSES_DOC, 1),
            ("External-IP", "string", _ADDRESSES_DOC, 1),
            ("OS-Image", "string", _OS_IMAGE_DOC, 1),
            ("Kernel-Version", "string", _KERNEL_DOC, 1),
            ("Container-Runtime", "string", _RUNTIME_DOC, 1),
        ),
        _node_row,
    ),
    ("", "ConfigMap"): Printer(
        (
            ("Name", "string", "", 0),
            ("Data", "string", (f"{_CORE}.ConfigMap", "data"), 0),
            ("Age", "string", _AGE_DOC, 0),
        ),
        lambda o: [
            _meta(o).get("name", ""),
            len(o.get("data") or {}) + len(o.get("binaryData") or {}),
            _age(o),
        ],
    ),
    ("", "Secret"): Printer(
        (
            ("Name", "string", "", 0),
            ("Type", "string", (f"{_CORE}.Secret", "type"), 0),
            ("Data", "string", (f"{_CORE}.Secret", "data"), 0),
            ("Age", "string", _AGE_DOC, 0),
        ),
        lambda o: [
            _meta(o).get("name", ""),
            o.get("type") or "Opaque",
            # stringData is write-only: the server folds it into data before storing
            len(set(o.get("data") or {}) | set(o.get("stringData") or {})),
            _age(o),
        ],
    ),
    ("coordination.k8s.io", "Lease"): Printer(
        (
            ("Name", "string", "", 0),
            ("Holder", "string", ("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity"), 0),
            ("Age", "string", _AGE_DOC, 0),
        ),
        lambda o: [
            _meta(o).get("name", ""),
            (o.get("spec") or {}).get("holderIdentity") or "",
            _age(o),
        ],
    ),
    **{
        # printMutatingWebhook / printValidatingWebhook
        ("admissionregistration.k8s.io", kind): Printer(
            (
                ("Name", "string", "", 0),
                (
                    "Webhooks",
                    "integer",
                    "Webhooks indicates the number of webhooks present in this configuration.",
                    0,
                ),
                ("Age", "string", _AGE_DOC, 0),
            ),
            lambda o: [_meta(o).get("name", ""), len(o.get("webhooks") or []), _age(o)],
        )
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    },
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding_printer(
        "RoleBinding",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
        "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding_printer(
        "ClusterRoleBinding",
        "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef "
        "cannot be resolved, the Authorizer must return an error.",
    ),
}
