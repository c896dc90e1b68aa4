"""The registry of served resources and the discovery documents built from it.

Twin of the apiserver's RESTMapper plus the discovery handlers (/api, /apis, /apis/<g>/<v>) and
of apiextensions-apiserver's CRD handler, which makes a CRD's resource servable once the CRD is
created. Each served (group, version, plural) is one ``ResourceInfo``; all versions of a
resource share one storage key ``(group, plural)`` because a CRD with conversion strategy None
stores one object and serves it at every version (only apiVersion differs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from kubesim.api.conversion import CONFIGMAP_V1, EVENTS_V1, SECRET_V1, Converter
from kubesim.storage.store import Stored, encode

__all__ = ["ResourceInfo", "Registry", "crd_resource_infos", "BUILTIN_RESOURCES"]

# Verbs every ordinary resource supports, as discovery lists them.
_ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """discovery.StorageVersionHash (apiserver/pkg/endpoints/discovery/storageversionhash.go):
    the first 8 bytes of sha256("group/version/kind") of the storage version, base64."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


@dataclass
class ResourceInfo:
    """One served resource at one version, with the strategy knobs kube-apiserver varies by kind."""

    group: str  # API group; "" for core
    version: str  # served version, e.g. "v1"
    plural: str  # resource name in URLs, e.g. "deployments"
    kind: str  # e.g. "Deployment"
    namespaced: bool  # True: objects live under /namespaces/<ns>/
    singular: str = ""  # discovery singularName
    short_names: list[str] = field(default_factory=list)  # discovery shortNames
    categories: list[str] = field(default_factory=list)  # discovery categories, e.g. ["all"]
    verbs: list[str] = field(default_factory=lambda: list(_ALL_VERBS))  # discovery verbs
    status_subresource: bool = False  # /status exists; main writes ignore .status
    scale: dict | None = None  # {"spec": path, "status": path, "selector": path} when /scale exists
    custom: bool = False  # a CRD-defined resource (CR lists carry kind/apiVersion per item)
    has_generation: bool = True  # metadata.generation is maintained (Leases have none)
    allow_create_on_update: bool = False  # PUT to a missing object creates it (Leases, Events)
    require_rv_on_update: bool = True  # PUT without resourceVersion -> 422 (False: unconditional)
    generation_on_annotations: bool = False  # Deployments bump generation on annotation changes
    field_selectors: tuple[str, ...] = ("metadata.name", "metadata.namespace")  # supported fields
    schema: dict | None = None  # openAPIV3Schema for CRs (validation and pruning)
    printer_columns: list[dict] = field(default_factory=list)  # CRD additionalPrinterColumns
    crd_name: str = ""  # the owning CRD's metadata.name, for CR resources
    # Converts bodies to the stored form and stored objects back (conversion.py); None when
    # they are the same. storage_group: the group whose storage holds the objects, when not
    # the resource's own (events.k8s.io Events live in core's).
    converter: Converter | None = None
    storage_group: str | None = None
    # serves the serviceaccounts/token subresource (TokenRequest): ServiceAccounts only
    token_request: bool = False
    # other subresources written like /status, each with its own strategy (a CSR's approval)
    extra_subresources: tuple[str, ...] = ()
    # the Warning every request to a deprecated resource gets ("" when it is not deprecated),
    # from the release deprecated_since on
    deprecation: str = ""
    deprecated_since: int = 0
    # the first minor release that serves the resource at this version (0: every release
    # kubesim answers as); an older emulated release does not serve it
    served_since: int = 0
    # DELETE answers the deleted object rather than a Status (the registry's
    # ReturnDeletedObject: Pods, Services, ServiceAccounts)
    return_deleted_object: bool = False

    @property
    def group_version(self) -> str:
        """The apiVersion string: "v1" for core, "apps/v1" otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def stored_api_version(self) -> str:
        """The apiVersion of stored objects: the request's, unless a converter stores another."""
        if self.converter is not None and self.converter.storage_api_version:
            return self.converter.storage_api_version
        return self.group_version

    @property
    def storage_key(self) -> tuple[str, str]:
        """Where the objects live in storage; shared by every version of the resource."""
        group = self.group if self.storage_group is None else self.storage_group
        return (group, self.plural)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    # ---- objects between the stored form and this version: the REST and HTTP layers' view --

    def to_storage(self, obj: dict) -> None:
        """Convert a decoded body (or patched object) to the stored form, in place."""
        conv = self.converter
        if conv is None:
            return
        out = conv.to_storage(obj)
        if out is not obj:
            obj.clear()
            obj.update(out)

    def object_json(self, stored: Stored) -> bytes:
        """The JSON clients read for one stored object at this version (with kind/apiVersion)."""
        conv = self.converter
        if conv is None or not conv.converts_output:
            return stored.at_version(self.group_version)
        return encode(conv.from_storage(stored.obj))

    def item_json(self, stored: Stored) -> bytes:
        """One item of a list response: built-in typed lists carry no kind/apiVersion per item."""
        conv = self.converter
        if conv is None or not conv.converts_output:
            if self.custom:
                return stored.at_version(self.group_version)
            return stored.bare()
        obj = conv.from_storage(stored.obj)
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        return encode(obj)

    def patch_base(self, stored: Stored) -> dict:
        """What a patch applies to: the stored object at this version (a fresh copy)."""
        conv = self.converter
        if conv is not None and conv.converts_output:
            return json.loads(encode(conv.from_storage(stored.obj)))
        return json.loads(stored.full())

    def object_dict(self, stored: Stored) -> dict:
        """The object clients read at this version, as a (fresh, top-level) dict."""
        conv = self.converter
        if conv is not None and conv.converts_output:
            return conv.from_storage(stored.obj)
        obj = dict(stored.obj)
        obj["apiVersion"] = self.group_version
        return obj

    # ---- discovery ------------------------------------------------------------------------

    def discovery_entries(self) -> list[dict]:
        """APIResource entries for this resource and its subresources (APIResourceList)."""
        main: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular or self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            main["shortNames"] = list(self.short_names)
        if self.categories:
            main["categories"] = list(self.categories)
        group, _, version = self.stored_api_version.rpartition("/")
        main["storageVersionHash"] = storage_version_hash(group, version, self.kind)
        out = [main]
        if self.status_subresource:
            out.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        for sub in self.extra_subresources:
            out.append(
                {
                    "name": f"{self.plural}/{sub}",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        if self.scale is not None:
            out.append(
                {
                    "name": f"{self.plural}/scale",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
            )
        if self.token_request:
            out.append(
                {
                    "name": f"{self.plural}/token",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "group": "authentication.k8s.io",
                    "version": "v1",
                    "kind": "TokenRequest",
                    "verbs": ["create"],
                }
            )
        return out


def _review(group: str, plural: str, kind: str, namespaced: bool = False) -> ResourceInfo:
    """A review API (kubesim/auth/reviews.py): created, answered, never stored."""
    return ResourceInfo(
        group, "v1", plural, kind, namespaced, singular=kind.lower(), verbs=["create"]
    )


def _builtin() -> list[ResourceInfo]:
    """The kinds with rules of their own; api/builtin_kinds.py's generic kinds join them in
    the Registry (that table builds ResourceInfos, so this module cannot import it)."""
    return [
        ResourceInfo(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            singular="namespace",
            short_names=["ns"],
            verbs=["create", "delete", "get", "list", "patch", "update", "watch"],
            status_subresource=True,
            has_generation=False,
            require_rv_on_update=False,
            field_selectors=("metadata.name", "status.phase"),
        ),
        # Nodes: served by every API server, even one with no node registered (envtest). kubesim
        # registers one Ready node only when its deployment controller makes pods available
        # (KubeSim(deployment_controller="full"), controllers/manager.py).
        ResourceInfo(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            singular="node",
            short_names=["no"],
            status_subresource=True,
            has_generation=False,
            require_rv_on_update=False,
            # the node conversion's field labels (the framework lists schedulable nodes so)
            field_selectors=("metadata.name", "spec.unschedulable"),
        ),
        ResourceInfo(
            "",
            "v1",
            "events",
            "Event",
            True,
            singular="event",
            short_names=["ev"],
            has_generation=False,
            allow_create_on_update=True,
            require_rv_on_update=False,
            field_selectors=(
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ),
        ),
        ResourceInfo(
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            True,
            singular="configmap",
            short_names=["cm"],
            has_generation=False,
            require_rv_on_update=False,
            converter=CONFIGMAP_V1,
        ),
        ResourceInfo(
            "",
            "v1",
            "secrets",
            "Secret",
            True,
            singular="secret",
            has_generation=False,
            require_rv_on_update=False,
            field_selectors=("metadata.name", "metadata.namespace", "type"),
            converter=SECRET_V1,
        ),
        ResourceInfo(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            True,
            singular="deployment",
            short_names=["deploy"],
            categories=["all"],
            status_subresource=True,
            scale={
                "spec": ".spec.replicas",
                "status": ".status.replicas",
                "selector": ".status.selector",
            },
            require_rv_on_update=False,
            generation_on_annotations=True,
        ),
        # The workload chain below a Deployment (controllers/workloads.py runs it when asked):
        # ReplicaSets with /status and /scale, Pods with /status. Their field selectors are the
        # registries' own (ReplicaSetToSelectableFields, PodToSelectableFields).
        ResourceInfo(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            True,
            singular="replicaset",
            short_names=["rs"],
            categories=["all"],
            status_subresource=True,
            scale={
                "spec": ".spec.replicas",
                "status": ".status.replicas",
                "selector": ".status.selector",
            },
            require_rv_on_update=False,
            field_selectors=("metadata.name", "metadata.namespace", "status.replicas"),
        ),
        ResourceInfo(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            singular="pod",
            short_names=["po"],
            categories=["all"],
            status_subresource=True,
            require_rv_on_update=False,
            return_deleted_object=True,
            field_selectors=(
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ),
        ),
        # The same Events, read and written as events.k8s.io/v1 (one storage, converted).
        ResourceInfo(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            True,
            singular="event",
            short_names=["ev"],
            has_generation=False,
            allow_create_on_update=True,
            require_rv_on_update=False,
            field_selectors=tuple(EVENTS_V1.field_labels),
            converter=EVENTS_V1,
            storage_group="",
        ),
        ResourceInfo(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            True,
            singular="lease",
            has_generation=False,
            allow_create_on_update=True,
        ),
        # The other kinds manifests/ deploys, so that `kubectl apply -k manifests/` works against
        # kubesim: stored and served generically (no clusterIP allocation). ServiceAccounts mint
        # tokens (serviceaccounts/token) and RBAC objects are enforced when authorization is
        # RBAC (kubesim/auth/).
        ResourceInfo(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            True,
            singular="serviceaccount",
            short_names=["sa"],
            has_generation=False,
            require_rv_on_update=False,
            token_request=True,
            return_deleted_object=True,
        ),
        ResourceInfo(
            "",
            "v1",
            "services",
            "Service",
            True,
            singular="service",
            short_names=["svc"],
            categories=["all"],
            status_subresource=True,
            has_generation=False,
            require_rv_on_update=False,
            field_selectors=("metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"),
            return_deleted_object=True,
        ),
        *(
            ResourceInfo(
                "rbac.authorization.k8s.io",
                "v1",
                plural,
                kind,
                namespaced,
                singular=kind.lower(),
                has_generation=False,
                require_rv_on_update=False,
            )
            for plural, kind, namespaced in (
                ("clusterroles", "ClusterRole", False),
                ("clusterrolebindings", "ClusterRoleBinding", False),
                ("roles", "Role", True),
                ("rolebindings", "RoleBinding", True),
            )
        ),
        # The review APIs (kubesim/auth/reviews.py).
        _review("authentication.k8s.io", "tokenreviews", "TokenReview"),
        _review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview"),
        _review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview"),
        _review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
        _review(
            "authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", True
        ),
        _review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
        # Admission webhooks' configurations (kubesim/admission/ calls what they name).
        *(
            ResourceInfo(
                "admissionregistration.k8s.io",
                "v1",
                plural,
                kind,
                False,
                singular=kind.lower(),
                categories=["api-extensions"],
                require_rv_on_update=False,
            )
            for plural, kind in (
                ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"),
                ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
            )
        ),
        ResourceInfo(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            singular="customresourcedefinition",
            short_names=["crd", "crds"],
            categories=["api-extensions"],
            status_subresource=True,
            field_selectors=("metadata.name",),
        ),
    ]


BUILTIN_RESOURCES = _builtin()


def crd_resource_infos(crd: dict) -> list[ResourceInfo]:
    """The ResourceInfos a CustomResourceDefinition serves: one per version with served=true."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        sub = ver.get("subresources") or {}
        schema = (ver.get("schema") or {}).get("openAPIV3Schema")
        scale = sub.get("scale")
        out.append(
            ResourceInfo(
                spec.get("group", ""),
                ver["name"],
                names["plural"],
                names["kind"],
                spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular") or names["kind"].lower(),
                short_names=list(names.get("shortNames") or []),
                categories=list(names.get("categories") or []),
                status_subresource="status" in sub,
                scale=(
                    {
                        "spec": scale.get("specReplicasPath"),
                        "status": scale.get("statusReplicasPath"),
                        "selector": scale.get("labelSelectorPath"),
                    }
                    if scale is not None
                    else None
                ),
                custom=True,
                field_selectors=(
                    ("metadata.name", "metadata.namespace")
                    + tuple(s["jsonPath"].lstrip(".") for s in ver.get("selectableFields") or [])
                ),
                schema=schema,
                printer_columns=list(ver.get("additionalPrinterColumns") or []),
                crd_name=(crd.get("metadata") or {}).get("name", ""),
            )
        )
    return out


class Registry:
    """Thread-safe map of (group, version, plural) -> ResourceInfo, plus discovery documents.

    The CRD handler adds and removes entries while requests are being served, so lookups and
    changes happen under one small lock; ResourceInfo objects are replaced, never mutated.
    """

    def __init__(self, minor: int = 36) -> None:
        """``minor``: the Kubernetes 1.x release answered as; it decides which built-in
        resources are served and which carry a deprecation warning."""
        self._lock = threading.Lock()  # guards every field below
        self._by_gvr: dict[tuple[str, str, str], ResourceInfo] = {}  # every served resource
        self._by_gv: dict[tuple[str, str], dict[str, ResourceInfo]] = {}  # (g, v) -> plural -> info
        self._crd_gvrs: dict[str, list[tuple[str, str, str]]] = {}  # CRD name -> keys it serves
        self._version_order: dict[str, list[str]] = {}  # group -> versions, preferred first
        # read here, not at import: builtin_kinds.py imports this module for ResourceInfo
        from kubesim.api.builtin_kinds import GENERIC_KINDS

        for info in [*BUILTIN_RESOURCES, *GENERIC_KINDS]:
            if info.served_since > minor:
                continue
            if info.deprecation and info.deprecated_since > minor:
                info = replace(info, deprecation="")
            self._add(info)
            versions = self._version_order.setdefault(info.group, [])
            if info.version not in versions:  # one entry per version, however many resources
                versions.append(info.version)

    def _add(self, info: ResourceInfo) -> None:
        key = (info.group, info.version, info.plural)
        self._by_gvr[key] = info
        self._by_gv.setdefault((info.group, info.version), {})[info.plural] = info

    def lookup(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        return self._by_gvr.get((group, version, plural))

    def has_group_version(self, group: str, version: str) -> bool:
        return bool(self._by_gv.get((group, version)))

    def group_versions(self) -> list[tuple[str, str]]:
        """Every served (group, version), sorted (the /openapi/v3 root lists one per pair)."""
        with self._lock:
            return sorted(self._by_gv)

    def resources_of(self, group: str, version: str) -> list[ResourceInfo]:
        with self._lock:
            return list((self._by_gv.get((group, version)) or {}).values())

    def by_storage_key(self, key: tuple[str, str]) -> list[ResourceInfo]:
        with self._lock:
            return [i for i in self._by_gvr.values() if i.storage_key == key]

    def preferred(self, group: str, plural: str) -> ResourceInfo | None:
        """The preferred-version info of a resource (the GC looks owners up by kind with it)."""
        with self._lock:
            for v in self._version_order.get(group, []):
                info = self._by_gvr.get((group, v, plural))
                if info:
                    return info
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceInfo | None:
        """Map an ownerReference's apiVersion/kind to its resource (RESTMapper.RESTMapping)."""
        group, _, version = api_version.rpartition("/")
        with self._lock:
            for info in (self._by_gv.get((group, version)) or {}).values():
                if info.kind == kind:
                    return info
            # another served version of the same group may still map the kind
            for info in self._by_gvr.values():
                if info.group == group and info.kind == kind:
                    return info
        return None

    def set_crd(self, crd: dict) -> list[ResourceInfo]:
        """(Re)register the resources of an established CRD; returns the new infos."""
        name = crd["metadata"]["name"]
        infos = crd_resource_infos(crd)
        versions = [v["name"] for v in (crd.get("spec") or {}).get("versions") or []]
        with self._lock:
            self._remove_locked(name)
            for info in infos:
                self._add(info)
            self._crd_gvrs[name] = [(i.group, i.version, i.plural) for i in infos]
            if infos:
                self._version_order[infos[0].group] = _sort_versions(versions)
        return infos

    def remove_crd(self, name: str) -> None:
        with self._lock:
            self._remove_locked(name)

    def _remove_locked(self, name: str) -> None:
        for key in self._crd_gvrs.pop(name, []):
            info = self._by_gvr.pop(key, None)
            if info:
                gv = self._by_gv.get((info.group, info.version), {})
                gv.pop(info.plural, None)
                if not gv:
                    self._by_gv.pop((info.group, info.version), None)
        groups = {g for g, _ in self._by_gv}
        for g in list(self._version_order):
            if g not in groups:
                del self._version_order[g]

    # ---- discovery documents -------------------------------------------------------------

    def api_versions(self, server_address: str) -> dict:
        """GET /api: the core group's versions (APIVersions)."""
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
            ],
        }

    def _group_doc(self, group: str, versions: list[str]) -> dict:
        vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": vs, "preferredVersion": vs[0]}

    def api_group_list(self) -> dict:
        """GET /apis (APIGroupList), built-in groups first, then CRD groups by name."""
        with self._lock:
            order = [g for g in self._version_order if g]
            served = {
                g: [v for v in self._version_order[g] if (g, v) in self._by_gv] for g in order
            }
        from kubesim.api.builtin_kinds import GROUP_PRIORITY

        # built-in groups by the aggregator's priority, ties by name; then CRD groups by name
        builtin = sorted((g for g in served if g in GROUP_PRIORITY), key=_priority_key)
        rest = sorted(g for g in served if g not in GROUP_PRIORITY)
        groups = [self._group_doc(g, served[g]) for g in builtin + rest if served[g]]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict | None:
        """GET /apis/<group> (APIGroup) or None when the group is not served."""
        with self._lock:
            versions = [v for v in self._version_order.get(group, []) if (group, v) in self._by_gv]
        if not versions:
            return None
        doc = self._group_doc(group, versions)
        doc.update(kind="APIGroup", apiVersion="v1")
        return doc

    def api_resource_list(self, group: str, version: str) -> dict | None:
        """GET /api/v1 or /apis/<g>/<v> (APIResourceList), or None when not served."""
        infos = self.resources_of(group, version)
        if not infos:
            return None
        entries = []
        for info in sorted(infos, key=lambda i: i.plural):
            entries.extend(info.discovery_entries())
        gv = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": entries,
        }


def _priority_key(group: str) -> tuple[int, str]:
    from kubesim.api.builtin_kinds import GROUP_PRIORITY

    return (-GROUP_PRIORITY[group], group)


def _sort_versions(versions: list[str]) -> list[str]:
    """Kubernetes version priority (GA > beta > alpha, higher numbers first; others last)."""
    import re

    def key(v: str):
        m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
        if not m:
            return (3, 0, 0, v)
        major = int(m.group(1))
        stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
        minor = int(m.group(3) or 0)
        return (stage, -major, -minor, v)

    return sorted(versions, key=key)
