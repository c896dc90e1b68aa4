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

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.registry.podspec import default_pod, default_pod_template, prepare_pod_create
from kubesim.validation import (
    apiapproval,
    cel,
    kindvalidation,
    metavalidation,
    podvalidation,
    webhookconfig,
)

__all__ = [
    "NAME_RULES",
    "canonical_times",
    "check_types",
    "now_rfc3339",
    "prepare_create",
    "prepare_update",
    "prepare_status_update",
    "spec_changed",
    "validate",
    "validate_generic",
]

CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def now_rfc3339() -> str:
    """metav1.Time's wire form: RFC 3339 in UTC with second precision."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- create ------------------------------------------------------------------------------------


def prepare_create(
    info: ResourceInfo, obj: dict, omit_zero_timestamp: bool = True, validation_rules: bool = True
) -> None:
    """PrepareForCreate + defaulting: the server-side changes a create makes before validation.

    Time fields are canonicalised first: that happens while decoding on a real server.
    validation_rules: False drops a CRD's x-kubernetes-validations (a server without CEL).
    """
    canonical_times(info, obj)
    if info.custom:
        if info.status_subresource:
            obj.pop("status", None)
        return
    kind = info.kind
    if kind == "Deployment":
        default_deployment(obj, omit_zero_timestamp)
        obj["status"] = {}
    elif kind == "ReplicaSet":
        default_replica_set(obj, omit_zero_timestamp)
        # ReplicaSetStatus.replicas has no omitempty: an empty status reads {"replicas": 0}
        obj["status"] = {"replicas": 0}
    elif kind == "Pod":
        default_pod(obj)
        prepare_pod_create(obj)
    elif kind == "Event" and info.stored_api_version == "v1":
        # core/v1 Event's eventTime (a MicroTime struct) and reporting fields carry no
        # omitempty: Go writes them as null and "" when the client left them out
        obj.setdefault("eventTime", None)
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")
    elif kind == "Namespace":
        meta = obj["metadata"]
        meta["labels"] = dict(
            meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]}
        )
        spec = obj.get("spec") or {}
        # namespace strategy: the kubernetes finalizer is added to whatever the client sent
        fins = list(spec.get("finalizers") or [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        spec["finalizers"] = fins
        obj["spec"] = spec
        obj["status"] = {"phase": "Active"}
    elif kind == "CustomResourceDefinition":
        default_crd(obj, on_create=True)
        if not validation_rules:
            drop_validation_rules(obj)
    elif info.group == webhookconfig.GROUP:
        webhookconfig.default_configuration(obj, mutating=kind.startswith("Mutating"))


def default_deployment(obj: dict, omit_zero_timestamp: bool = True) -> None:
    """SetDefaults_Deployment and the pod-template defaults the real server fills in.

    omit_zero_timestamp: the template's metadata has no creationTimestamp (v1.36's omitzero),
    rather than v1.24's ``creationTimestamp: null``.
    """
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
    default_pod_template(spec.setdefault("template", {}), omit_zero_timestamp)


def default_replica_set(obj: dict, omit_zero_timestamp: bool = True) -> None:
    """SetDefaults_ReplicaSet (one replica) and the pod template's defaults."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    default_pod_template(spec.setdefault("template", {}), omit_zero_timestamp)


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


def drop_validation_rules(crd: dict) -> None:
    """dropDisabledFields with CustomResourceValidationExpressions off: every version's schema
    loses its x-kubernetes-validations, at every level (in place)."""

    def drop(schema: Any) -> None:
        if not isinstance(schema, dict):
            return
        schema.pop("x-kubernetes-validations", None)
        for sub in (schema.get("properties") or {}).values():
            drop(sub)
        drop(schema.get("additionalProperties"))
        drop(schema.get("items"))

    for version in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(version, dict):
            drop((version.get("schema") or {}).get("openAPIV3Schema"))


def crd_status(obj: dict) -> dict:
    """The status the naming, establishing and API approval controllers give a CRD. The
    approval condition comes first: that controller needs nothing but the CRD, so its
    update lands before the naming controller's."""
    spec = obj.get("spec") or {}
    now = now_rfc3339()
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    approval = apiapproval.approval_condition(obj, now)
    return {
        "conditions": ([approval] if approval else [])
        + [
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


def with_approval_condition(crd: dict) -> None:
    """Bring the approval condition in line with the CRD's annotation, as the apiapproval
    controller's UpdateStatus does (SetCRDCondition: a new status moves lastTransitionTime,
    the same status keeps it; reason and message are replaced)."""
    want = apiapproval.approval_condition(crd, now_rfc3339())
    status = crd.get("status")
    if want is None or not isinstance(status, dict) or status.get("conditions") is None:
        return
    conditions = list(status["conditions"])
    for i, cond in enumerate(conditions):
        if cond.get("type") == want["type"]:
            if all(cond.get(k) == want[k] for k in ("status", "reason", "message")):
                return
            if cond.get("status") == want["status"]:
                want["lastTransitionTime"] = cond.get("lastTransitionTime")
            conditions[i] = want
            break
    else:
        conditions.append(want)
    crd["status"] = dict(status, conditions=conditions)


def unestablished_crd_status(obj: dict) -> dict:
    """A CRD's status as its create stores it (the strategy's PrepareForCreate), before the
    naming and establishing controllers act: what a dry-run create answers. Conditions null,
    accepted names empty, the storage version recorded."""
    spec = obj.get("spec") or {}
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    return {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": stored,
    }


# ---- update ------------------------------------------------------------------------------------


def prepare_update(
    info: ResourceInfo,
    new: dict,
    old: dict,
    sub: str | None = None,
    omit_zero_timestamp: bool = True,
    validation_rules: bool = True,
) -> None:
    """PrepareForUpdate of the main resource: with a status subresource, .status is kept.

    validation_rules as for prepare_create.

    sub "finalize" is a Namespace's /finalize, the one way to change its spec.finalizers: a main
    Namespace update keeps them (namespace strategy's PrepareForUpdate).
    """
    canonical_times(info, new)
    if info.kind == "Namespace" and not info.custom:
        spec = dict(new.get("spec") or {})
        fins = (
            spec.get("finalizers")
            if sub == "finalize"
            else (old.get("spec") or {}).get("finalizers")
        )
        if fins:
            spec["finalizers"] = fins
        else:
            spec.pop("finalizers", None)  # an empty list is omitted (omitempty)
        new["spec"] = spec
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
        default_deployment(new, omit_zero_timestamp)
    if info.group == webhookconfig.GROUP and not info.custom:
        webhookconfig.default_configuration(new, mutating=info.kind.startswith("Mutating"))
    if info.kind == "ReplicaSet" and not info.custom:
        default_replica_set(new, omit_zero_timestamp)
    if info.kind == "Pod" and not info.custom:
        default_pod(new)
    if info.kind == "CustomResourceDefinition" and not info.custom:
        default_crd(new, on_create=False)
        if not validation_rules:
            drop_validation_rules(new)
        if new.get("spec") != old.get("spec"):
            new["status"] = crd_status(new)
        else:
            with_approval_condition(new)


# The metadata a kind's status strategy lets a /status write change: the deployment controller
# writes a Deployment's revision annotation with its status, the ReplicaSet and pod status
# strategies reset only the spec (deploymentStatusStrategy also keeps the labels), and so do
# the Namespace and Service status strategies (``newNamespace.Spec = oldNamespace.Spec``).
_STATUS_WRITES_METADATA: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("annotations",),
    ("apps", "ReplicaSet"): ("labels", "annotations"),
    ("", "Pod"): ("labels", "annotations"),
    ("", "Namespace"): ("labels", "annotations"),
    ("", "Service"): ("labels", "annotations"),
}


def prepare_status_update(info: ResourceInfo, new: dict, old: dict) -> dict:
    """PrepareForUpdate of /status: everything but .status comes from the stored object (and
    the metadata the kind's status strategy lets through, above)."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    if "status" in new:
        out["status"] = new["status"]
    else:
        out.pop("status", None)
    if info.custom:
        return out
    for field in _STATUS_WRITES_METADATA.get((info.group, info.kind), ()):
        value = (new.get("metadata") or {}).get(field)
        if value:
            out["metadata"][field] = value
        else:
            out["metadata"].pop(field, None)
    if (info.group, info.kind) == ("", "Pod") and isinstance(out.get("status"), dict):
        # the QoS class is computed at creation and immutable (podStatusStrategy)
        qos = (old.get("status") or {}).get("qosClass")
        out["status"] = dict(out["status"], qosClass=qos) if qos else out["status"]
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
    if info.group == webhookconfig.GROUP:
        # the admissionregistration strategies bump generation when the webhooks change
        return new.get("webhooks") != old.get("webhooks")
    if info.generation_on_annotations:
        return (new["metadata"].get("annotations") or {}) != (
            old["metadata"].get("annotations") or {}
        )
    return False


# ---- validation --------------------------------------------------------------------------------

# The name rule of kinds whose strategy validates ObjectMeta with something other than a DNS
# subdomain (NameIsDNSSubdomain, the rule of every other kind kubesim stores).
NAME_RULES: dict[tuple[str, str], metavalidation.NameFunc] = {
    ("", "Service"): metavalidation.name_is_dns1035_label,  # ValidateServiceName
    **{
        ("rbac.authorization.k8s.io", kind): metavalidation.path_segment_name  # ValidateRBACName
        for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
    },
}
# Groups whose validation uses core's ValidateObjectMeta, which also checks that finalizers
# without a '/' are standard ones (validateKubeFinalizerName).
_CORE_META_GROUPS = ("", "apps")


def validate(
    info: ResourceInfo, obj: dict, old: dict | None = None, sub: str | None = None
) -> list[dict]:
    """The kind's strategy validation (Validate on create, ValidateUpdate with ``old``).

    Raises 400 for values the real server cannot even decode into its Go types. The CR schema
    (validation/schema.py) is checked by the caller after this.
    """
    check_types(info, obj)
    meta = obj["metadata"]
    kind, group = info.kind, info.group
    if info.custom:
        if old is None:
            return metavalidation.validate_object_meta(
                meta, info.namespaced, metavalidation.name_is_dns_subdomain
            )
        return metavalidation.validate_object_meta_update(meta)
    core_meta = group in _CORE_META_GROUPS
    if sub == "status":
        causes = metavalidation.validate_object_meta_update(meta, core_meta)
        if (group, kind) == ("apps", "Deployment"):
            causes += kindvalidation.validate_deployment_status(obj)
        elif (group, kind) == ("apps", "ReplicaSet"):
            causes += podvalidation.validate_replica_set_status(obj)
        return causes
    if (group, kind) == ("", "Namespace"):
        if sub == "finalize":
            return kindvalidation.validate_namespace_finalizers(obj)
        return kindvalidation.validate_namespace(obj, old)
    if (group, kind) == ("apps", "Deployment"):
        return kindvalidation.validate_deployment(obj, old)
    if (group, kind) == ("apps", "ReplicaSet"):
        return podvalidation.validate_replica_set(obj, old)
    if (group, kind) == ("", "Pod"):
        return podvalidation.validate_pod(obj, old)
    if (group, kind) == ("", "Event"):
        return kindvalidation.validate_event(obj)  # core/v1: the legacy checks only
    if (group, kind) == ("coordination.k8s.io", "Lease"):
        return kindvalidation.validate_lease(obj, old)
    if old is not None:
        causes = metavalidation.validate_object_meta_update(meta, core_meta)
    else:
        name_fn = NAME_RULES.get((group, kind), metavalidation.name_is_dns_subdomain)
        causes = metavalidation.validate_object_meta(meta, info.namespaced, name_fn, core_meta)
    if (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        causes += _validate_crd(obj)
        causes += apiapproval.validate_api_approval(obj, old)
    if group == webhookconfig.GROUP:
        causes += webhookconfig.validate_configuration(obj, mutating=kind.startswith("Mutating"))
    return causes


# Kinds whose own validation does not look at ObjectMeta at all (core/v1 Events: the legacy
# checks only); for every other kind the generic pass below could not find anything new, since
# their name rules are stricter than a path segment and the rest is the same.
_NO_OWN_META_VALIDATION = (("", "Event"),)


def validate_generic(info: ResourceInfo, obj: dict) -> list[dict]:
    """rest.BeforeCreate's second pass, once the kind's own validation passed: ObjectMeta with
    path-segment names, the only metadata check some kinds (core/v1 Events) get."""
    if info.custom or (info.group, info.kind) not in _NO_OWN_META_VALIDATION:
        return []
    return metavalidation.validate_object_meta(
        obj["metadata"], info.namespaced, metavalidation.path_segment_name
    )


_JSON_TYPES = {str: "string", bool: "bool", int: "number", float: "number", dict: "object"}


def _json_type(v: Any) -> str:
    return "array" if isinstance(v, list) else _JSON_TYPES.get(type(v), "object")


def _decode_error(info: ResourceInfo, value: Any, where: str, go_type: str) -> errors.ApiError:
    """What the real server answers when the JSON does not fit the Go type (a 400 from decoding,
    before any validation)."""
    return errors.bad_request(
        f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: json: '
        f"cannot unmarshal {_json_type(value)} into Go struct field {where} of type {go_type}"
    )


def check_types(info: ResourceInfo, obj: dict) -> None:
    """400 for metadata (and the few spec fields validation relies on) of the wrong JSON type."""
    meta = obj["metadata"]
    for f in ("name", "generateName", "namespace"):
        v = meta.get(f)
        if v is not None and not isinstance(v, str):
            raise _decode_error(info, v, f"ObjectMeta.metadata.{f}", "string")
    for f in ("labels", "annotations"):
        v = meta.get(f)
        if v is None:
            continue
        if not isinstance(v, dict):
            raise _decode_error(info, v, f"ObjectMeta.metadata.{f}", "map[string]string")
        for item in v.values():
            if not isinstance(item, str):
                raise _decode_error(info, item, f"ObjectMeta.metadata.{f}", "string")
    fins = meta.get("finalizers")
    if fins is not None:
        if not isinstance(fins, list):
            raise _decode_error(info, fins, "ObjectMeta.metadata.finalizers", "[]string")
        for item in fins:
            if not isinstance(item, str):
                raise _decode_error(info, item, "ObjectMeta.metadata.finalizers", "string")
    refs = meta.get("ownerReferences")
    if refs is not None and not (isinstance(refs, list) and all(isinstance(r, dict) for r in refs)):
        bad = (
            refs if not isinstance(refs, list) else next(r for r in refs if not isinstance(r, dict))
        )
        raise _decode_error(info, bad, "ObjectMeta.metadata.ownerReferences", "v1.OwnerReference")
    if info.custom:
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    ints = {
        ("apps", "Deployment"): ("DeploymentSpec", ("replicas", "minReadySeconds")),
        ("apps", "ReplicaSet"): ("ReplicaSetSpec", ("replicas", "minReadySeconds")),
        ("coordination.k8s.io", "Lease"): (
            "LeaseSpec",
            ("leaseDurationSeconds", "leaseTransitions"),
        ),
    }.get((info.group, info.kind))
    if ints is not None:
        struct, fields = ints
        for f in fields:
            v = spec.get(f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise _decode_error(info, v, f"{struct}.spec.{f}", "int32")


# ---- time values ---------------------------------------------------------------------------------

_RFC3339 = "2006-01-02T15:04:05Z07:00"  # metav1.Time's layout
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"  # metav1.MicroTime's layout
_TIME_HEAD = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)")
_ZONE = re.compile(r"^(Z|[+-]\d\d:\d\d)\Z")
_MICRO_FRACTION = re.compile(r"^\.\d{6}")
_ANY_FRACTION = re.compile(r"^\.\d+")

# The time fields of the built-in kinds: (field path, True for MicroTime, False for Time).
TIME_FIELDS: dict[tuple[str, str], tuple[tuple[tuple[str, ...], bool], ...]] = {
    ("coordination.k8s.io", "Lease"): (
        (("spec", "acquireTime"), True),
        (("spec", "renewTime"), True),
    ),
    ("", "Event"): (
        (("eventTime",), True),
        (("series", "lastObservedTime"), True),
        (("firstTimestamp",), False),
        (("lastTimestamp",), False),
    ),
}


def canonical_times(info: ResourceInfo, obj: dict) -> None:
    """Rewrite the kind's time fields as the real server stores them, or 400.

    A metav1.Time is parsed as RFC 3339 (any fraction) and written back in UTC to the second; a
    metav1.MicroTime must carry exactly six fractional digits and is written back in UTC. A
    numeric zone offset becomes Z in both.
    """
    if info.custom:
        return
    for path, micro in TIME_FIELDS.get((info.group, info.kind), ()):
        parent: Any = obj
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        value = parent.get(path[-1])
        if value is None or value == "":
            continue
        parent[path[-1]] = _parse_time(info, value, micro)


# Go's zero time.Time, January 1 of year 1 UTC: what IsZero reports
_GO_ZERO_TIME = _dt.datetime(1, 1, 1, tzinfo=_dt.UTC)


def _parse_time(info: ResourceInfo, value: Any, micro: bool) -> str | None:
    layout = _RFC3339_MICRO if micro else _RFC3339

    def fail(detail: str) -> errors.ApiError:
        return errors.bad_request(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f'parsing time "{value}" as "{layout}": {detail}'
        )

    if not isinstance(value, str):
        raise fail("cannot parse value of this type")
    head = _TIME_HEAD.match(value)
    if head is None:
        raise fail(f'cannot parse "{value}" as "2006"')
    rest = value[head.end() :]
    frac = (_MICRO_FRACTION if micro else _ANY_FRACTION).match(rest)
    if micro and frac is None:
        raise fail(f'cannot parse "{rest}" as ".000000"')
    micros = 0
    if frac is not None:
        digits = frac.group(0)[1:]
        micros = int((digits + "000000")[:6])
        rest = rest[frac.end() :]
    if not _ZONE.match(rest):
        raise fail(f'cannot parse "{rest}" as "Z07:00"')
    try:
        year, month, day, hour, minute, second = (int(g) for g in head.groups())
        if rest == "Z":
            tz = _dt.UTC
        else:
            sign = 1 if rest[0] == "+" else -1
            offset = _dt.timedelta(hours=int(rest[1:3]), minutes=int(rest[4:6]))
            tz = _dt.timezone(sign * offset)
        t = _dt.datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)
    except ValueError:
        raise fail("parsing time: value out of range") from None
    t = t.astimezone(_dt.UTC)
    if t == _GO_ZERO_TIME:
        # Time and MicroTime marshal their zero value (time.Time{}) as null
        return None
    # (formatted by hand: strftime's %Y does not pad years below 1000 to four digits)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if micro:
        return f"{text}.{t.microsecond:06d}Z"
    return text + "Z"


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
    for i, version in enumerate(versions):
        # apiextensions.k8s.io/v1 requires a structural schema for every version
        schema = (version.get("schema") or {}) if isinstance(version, dict) else {}
        if not schema.get("openAPIV3Schema"):
            causes.append(
                errors.field_required(
                    f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"
                )
            )
        else:
            # x-kubernetes-validations must compile (CEL), wherever they are in the schema
            causes += cel.check_schema(
                schema["openAPIV3Schema"], f"spec.versions[{i}].schema.openAPIV3Schema"
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
