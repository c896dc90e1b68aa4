"""Per-kind write rules: defaulting, status handling, generation, kind-specific validation.

Twin of the ``rest.RESTCreateStrategy`` / ``RESTUpdateStrategy`` implementations in
k8s.io/kubernetes/pkg/registry/* (deployment/strategy.go, namespace/strategy.go, ...) and of
apiextensions-apiserver's customresource strategy. rest.py drives the generic flow; this module
answers the kind-specific questions. Every function works on fresh dicts owned by the caller.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from . import errors
from .resources import ResourceInfo

__all__ = [
    "now_rfc3339",
    "prepare_create",
    "prepare_update",
    "prepare_status_update",
    "spec_changed",
    "validate",
]

CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def now_rfc3339() -> str:
    """metav1.Time's wire form: RFC 3339 in UTC with second precision."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- create ------------------------------------------------------------------------------------


def prepare_create(info: ResourceInfo, obj: dict) -> None:
    """PrepareForCreate + defaulting: the server-side changes a create makes before validation."""
    if info.custom:
        if info.status_subresource:
            obj.pop("status", None)
        return
    kind = info.kind
    if kind == "Deployment":
        default_deployment(obj)
        obj["status"] = {}
    elif kind == "Namespace":
        meta = obj["metadata"]
        meta["labels"] = dict(
            meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]}
        )
        spec = obj.get("spec") or {}
        spec["finalizers"] = ["kubernetes"]
        obj["spec"] = spec
        obj["status"] = {"phase": "Active"}
    elif kind == "CustomResourceDefinition":
        default_crd(obj, on_create=True)


def default_deployment(obj: dict) -> None:
    """SetDefaults_Deployment and the pod-template defaults the real server fills in."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    template = spec.setdefault("template", {})
    tmeta = template.setdefault("metadata", {})
    tmeta.setdefault("creationTimestamp", None)
    pod = template.setdefault("spec", {})
    pod.setdefault("restartPolicy", "Always")
    pod.setdefault("terminationGracePeriodSeconds", 30)
    pod.setdefault("dnsPolicy", "ClusterFirst")
    pod.setdefault("securityContext", {})
    pod.setdefault("schedulerName", "default-scheduler")
    for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
        if isinstance(c, dict):
            _default_container(c)


def _default_container(c: dict) -> None:
    c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("imagePullPolicy", _pull_policy(c.get("image") or ""))
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")


def _pull_policy(image: str) -> str:
    """Always for an untagged or :latest image, IfNotPresent otherwise (SetDefaults_Container)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.rsplit(":", 1)[1] == "latest":
        return "Always"
    return "IfNotPresent"


def default_crd(obj: dict, on_create: bool) -> None:
    """CRD defaults; on create also the cleanup finalizer and the status the CRD controllers
    would set once names are accepted (kubesim establishes a CRD at once)."""
    spec = obj.setdefault("spec", {})
    names = spec.setdefault("names", {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})
    if not on_create:
        return
    meta = obj["metadata"]
    fins = list(meta.get("finalizers") or [])
    if CRD_CLEANUP_FINALIZER not in fins:
        fins.append(CRD_CLEANUP_FINALIZER)
    meta["finalizers"] = fins
    obj["status"] = crd_status(obj)


def crd_status(obj: dict) -> dict:
    spec = obj.get("spec") or {}
    now = now_rfc3339()
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    return {
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
        "acceptedNames": dict(spec.get("names") or {}),
        "storedVersions": stored,
    }


# ---- update ------------------------------------------------------------------------------------


def prepare_update(info: ResourceInfo, new: dict, old: dict) -> None:
    """PrepareForUpdate of the main resource: with a status subresource, .status is kept."""
    if info.status_subresource:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if info.kind == "Namespace" and not info.custom:
        meta = new["metadata"]
        meta["labels"] = dict(
            meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]}
        )
    if info.kind == "Deployment" and not info.custom:
        default_deployment(new)
    if info.kind == "CustomResourceDefinition" and not info.custom:
        default_crd(new, on_create=False)
        if new.get("spec") != old.get("spec"):
            new["status"] = crd_status(new)


def prepare_status_update(info: ResourceInfo, new: dict, old: dict) -> dict:
    """PrepareForUpdate of /status: everything but .status comes from the stored object."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    if "status" in new:
        out["status"] = new["status"]
    else:
        out.pop("status", None)
    return out


def spec_changed(info: ResourceInfo, new: dict, old: dict) -> bool:
    """Does this update bump metadata.generation? (spec changes only, per kind)."""
    if not info.has_generation:
        return False
    if info.custom:
        # Every top-level field but metadata (and status when it is a subresource).
        skip = {"metadata", "kind", "apiVersion"} | (
            {"status"} if info.status_subresource else set()
        )
        keys = (set(new) | set(old)) - skip
        return any(new.get(k) != old.get(k) for k in keys)
    if new.get("spec") != old.get("spec"):
        return True
    if info.generation_on_annotations:
        return (new["metadata"].get("annotations") or {}) != (
            old["metadata"].get("annotations") or {}
        )
    return False


# ---- validation --------------------------------------------------------------------------------

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$")


def name_causes(info: ResourceInfo, name: str) -> list[dict]:
    """ValidateObjectMeta's name check: DNS-1123 label for namespaces, subdomain otherwise."""
    if info.kind == "Namespace" and not info.custom:
        if len(name) > 63 or not _DNS1123_LABEL.match(name):
            return [
                errors.field_invalid(
                    "metadata.name",
                    name,
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                    "characters or '-', and must start and end with an alphanumeric character "
                    "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                )
            ]
        return []
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        return [
            errors.field_invalid(
                "metadata.name",
                name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. "
                "'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ]
    return []


def validate(info: ResourceInfo, obj: dict) -> list[dict]:
    """Kind-specific validation (beyond the CR schema, which validation.py checks)."""
    causes = name_causes(info, obj["metadata"].get("name", ""))
    if info.custom:
        return causes
    kind = info.kind
    if kind == "Deployment":
        causes += _validate_deployment(obj)
    elif kind == "Event":
        inv_ns = (obj.get("involvedObject") or {}).get("namespace")
        ns = obj["metadata"].get("namespace")
        if inv_ns and inv_ns != ns:
            causes.append(
                errors.field_invalid(
                    "involvedObject.namespace", inv_ns, "does not match event.namespace"
                )
            )
    elif kind == "Lease":
        spec = obj.get("spec") or {}
        for f in ("acquireTime", "renewTime"):
            v = spec.get(f)
            if v is not None and not (isinstance(v, str) and _MICROTIME.match(v)):
                raise errors.bad_request(
                    f'Lease in version "v1" cannot be handled as a Lease: parsing time "{v}" as '
                    f'"2006-01-02T15:04:05.000000Z07:00": cannot parse'
                )
    elif kind == "CustomResourceDefinition":
        causes += _validate_crd(obj)
    return causes


def _validate_deployment(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    causes: list[dict] = []
    selector = spec.get("selector")
    tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector:
        causes.append(errors.field_required("spec.selector"))
    else:
        from client.labels import SelectorParseError, selector_from_label_selector

        try:
            sel = selector_from_label_selector(selector)
        except SelectorParseError as e:
            causes.append(errors.field_invalid("spec.selector", selector, str(e)))
        else:
            if sel.empty():
                causes.append(
                    errors.field_invalid(
                        "spec.selector", selector, "empty selector is invalid for deployment"
                    )
                )
            elif not sel.matches(tlabels):
                causes.append(
                    errors.field_invalid(
                        "spec.template.metadata.labels",
                        tlabels,
                        "`selector` does not match template `labels`",
                    )
                )
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        causes.append(
            errors.field_invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        )
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers")
    if not containers:
        causes.append(errors.field_required("spec.template.spec.containers"))
    return causes


def _validate_crd(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    causes: list[dict] = []
    for f in ("plural", "kind"):
        if not names.get(f):
            causes.append(errors.field_required(f"spec.names.{f}"))
    if not spec.get("group"):
        causes.append(errors.field_required("spec.group"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(
            errors.field_not_supported("spec.scope", spec.get("scope"), ["Cluster", "Namespaced"])
        )
    versions = spec.get("versions") or []
    if not versions:
        causes.append(
            errors.field_required(
                "spec.versions", "must have exactly one version marked as storage version"
            )
        )
    elif sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            errors.field_invalid(
                "spec.versions",
                [v.get("name") for v in versions],
                "must have exactly one version marked as storage version",
            )
        )
    if names.get("plural") and spec.get("group"):
        want = f"{names['plural']}.{spec['group']}"
        if obj["metadata"].get("name") != want:
            causes.append(
                errors.field_invalid(
                    "metadata.name",
                    obj["metadata"].get("name"),
                    'must be spec.names.plural+"."+spec.group',
                )
            )
    return causes


def get_path(obj: Any, dotted: str) -> Any:
    """Value at a dotted field path, or None (field selectors, scale paths)."""
    cur = obj
    for part in dotted.lstrip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur
