"""The built-in kinds kubesim stores through the generic path alone, as one table.

Twin of the ``RESTStorageProvider``s of k8s.io/kubernetes ``pkg/registry/*/rest`` (which
resources each group version serves) and of the discovery facts their stores declare:
``ShortNames()``, ``Categories()``, the status subresource, and the field labels each kind's
``GetAttrs`` / ``AddFieldLabelConversionFunc`` selects on (``pkg/apis/*/v1/conversion.go``).

kube-apiserver serves these through one generic store (``registry/generic/registry.Store``)
with a strategy per kind. kubesim does the same: a row here makes a resource served, stored,
listed, watched, patched and deleted by registry/rest.py; what differs per kind (defaults,
allocation, validation) lives in registry/kindstrategy.py, and the printed columns in
views/table_kinds.py. Deliberate differences: no controller acts on these objects (a Job
never runs, a StatefulSet creates no Pods), and only the GA version of each group is served.
"""

from __future__ import annotations

from kubesim.api.resources import ResourceInfo

__all__ = ["GENERIC_KINDS", "GROUP_PRIORITY"]

_NAME_NS = ("metadata.name", "metadata.namespace")


def _kind(
    group: str,
    plural: str,
    kind: str,
    namespaced: bool,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    fields: tuple[str, ...] = (),
    generation: bool = False,
    version: str = "v1",
    scale: bool = False,
    subresources: tuple[str, ...] = (),
    deprecation: tuple[int, str] = (0, ""),
    since: int = 0,
) -> ResourceInfo:
    """One served resource. ``fields``: field labels beyond the ObjectMeta ones; ``generation``:
    the strategy bumps metadata.generation on spec changes; ``scale``: /scale on .spec.replicas;
    ``since``: the minor release whose kube-apiserver first served it at this version (an
    older ``server_version`` does not); ``deprecation``: (since which minor, the warning)."""
    return ResourceInfo(
        group,
        version,
        plural,
        kind,
        namespaced,
        singular=kind.lower(),
        short_names=list(short),
        categories=list(categories),
        status_subresource=status,
        scale=(
            {"spec": ".spec.replicas", "status": ".status.replicas", "selector": ".status.selector"}
            if scale
            else None
        ),
        has_generation=generation,
        require_rv_on_update=False,
        field_selectors=_NAME_NS + fields,
        extra_subresources=subresources,
        deprecated_since=deprecation[0],
        deprecation=deprecation[1],
        served_since=since,
    )


_ADMISSION = "admissionregistration.k8s.io"
_EXT = ("api-extensions",)

GENERIC_KINDS: list[ResourceInfo] = [
    # core/v1
    _kind(
        "",
        "endpoints",
        "Endpoints",
        True,
        ("ep",),
        # KEP-4974: Endpoints stay served, with a warning
        deprecation=(
            33,
            "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
        ),
    ),
    _kind("", "limitranges", "LimitRange", True, ("limits",)),
    _kind("", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), status=True),
    _kind("", "persistentvolumes", "PersistentVolume", False, ("pv",), status=True),
    _kind("", "podtemplates", "PodTemplate", True),
    _kind(
        "",
        "replicationcontrollers",
        "ReplicationController",
        True,
        ("rc",),
        ("all",),
        status=True,
        fields=("status.replicas",),
        generation=True,
        scale=True,
    ),
    _kind("", "resourcequotas", "ResourceQuota", True, ("quota",), status=True),
    # admissionregistration.k8s.io/v1 admission policies: stored, never evaluated (the webhook
    # configurations are served apart: resources.py, validation/webhookconfig.py)
    _kind(
        _ADMISSION,
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        False,
        categories=_EXT,
        status=True,
        generation=True,
        since=30,
    ),
    _kind(
        _ADMISSION,
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        False,
        categories=_EXT,
        generation=True,
        since=30,
    ),
    _kind(
        _ADMISSION,
        "mutatingadmissionpolicies",
        "MutatingAdmissionPolicy",
        False,
        categories=_EXT,
        generation=True,
        since=36,
    ),
    _kind(
        _ADMISSION,
        "mutatingadmissionpolicybindings",
        "MutatingAdmissionPolicyBinding",
        False,
        categories=_EXT,
        generation=True,
        since=36,
    ),
    # apiregistration.k8s.io/v1: stored; no aggregated server is proxied to
    _kind(
        "apiregistration.k8s.io", "apiservices", "APIService", False, categories=_EXT, status=True
    ),
    # apps/v1
    _kind("apps", "controllerrevisions", "ControllerRevision", True),
    _kind("apps", "daemonsets", "DaemonSet", True, ("ds",), ("all",), status=True, generation=True),
    _kind(
        "apps",
        "statefulsets",
        "StatefulSet",
        True,
        ("sts",),
        ("all",),
        status=True,
        generation=True,
        scale=True,
    ),
    # autoscaling/v2 (v1's HorizontalPodAutoscaler, a conversion of it, is not served)
    _kind(
        "autoscaling",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        ("hpa",),
        ("all",),
        status=True,
        generation=True,
        version="v2",
    ),
    # batch/v1
    _kind("batch", "cronjobs", "CronJob", True, ("cj",), ("all",), status=True, generation=True),
    _kind(
        "batch",
        "jobs",
        "Job",
        True,
        categories=("all",),
        status=True,
        fields=("status.successful",),
        generation=True,
    ),
    # certificates.k8s.io/v1
    _kind(
        "certificates.k8s.io",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        False,
        ("csr",),
        status=True,
        fields=("spec.signerName",),
        subresources=("approval",),
    ),
    # discovery.k8s.io/v1
    _kind("discovery.k8s.io", "endpointslices", "EndpointSlice", True, generation=True),
    # flowcontrol.apiserver.k8s.io/v1
    _kind(
        "flowcontrol.apiserver.k8s.io",
        "flowschemas",
        "FlowSchema",
        False,
        status=True,
        generation=True,
        since=29,
    ),
    _kind(
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        False,
        status=True,
        generation=True,
        since=29,
    ),
    # networking.k8s.io/v1
    _kind("networking.k8s.io", "ingressclasses", "IngressClass", False, generation=True),
    _kind(
        "networking.k8s.io", "ingresses", "Ingress", True, ("ing",), status=True, generation=True
    ),
    _kind("networking.k8s.io", "ipaddresses", "IPAddress", False, ("ip",), since=33),
    _kind(
        "networking.k8s.io", "networkpolicies", "NetworkPolicy", True, ("netpol",), generation=True
    ),
    _kind("networking.k8s.io", "servicecidrs", "ServiceCIDR", False, status=True, since=33),
    # node.k8s.io/v1
    _kind("node.k8s.io", "runtimeclasses", "RuntimeClass", False),
    # policy/v1
    _kind(
        "policy",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        True,
        ("pdb",),
        status=True,
        generation=True,
    ),
    # resource.k8s.io/v1 (dynamic resource allocation: stored, never allocated)
    _kind("resource.k8s.io", "deviceclasses", "DeviceClass", False, generation=True, since=34),
    _kind("resource.k8s.io", "resourceclaims", "ResourceClaim", True, status=True, since=34),
    _kind("resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate", True, since=34),
    _kind(
        "resource.k8s.io",
        "resourceslices",
        "ResourceSlice",
        False,
        fields=("spec.nodeName", "spec.driver"),
        generation=True,
        since=34,
    ),
    # scheduling.k8s.io/v1
    _kind("scheduling.k8s.io", "priorityclasses", "PriorityClass", False, ("pc",)),
    # storage.k8s.io/v1
    _kind("storage.k8s.io", "csidrivers", "CSIDriver", False),
    _kind("storage.k8s.io", "csinodes", "CSINode", False),
    _kind("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", True),
    _kind("storage.k8s.io", "storageclasses", "StorageClass", False, ("sc",)),
    _kind("storage.k8s.io", "volumeattachments", "VolumeAttachment", False, status=True),
    _kind(
        "storage.k8s.io",
        "volumeattributesclasses",
        "VolumeAttributesClass",
        False,
        ("vac",),
        since=34,
    ),
]

# Every built-in group kubesim serves. /apis lists them by the aggregator's priority
# (kube-aggregator's apiVersionPriorities, pkg/controlplane/apiserver/aggregator.go), highest
# first, ties by name; CRD groups follow.
GROUP_PRIORITY: dict[str, int] = {
    "apiregistration.k8s.io": 17800,
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
    "resource.k8s.io": 15900,
}
