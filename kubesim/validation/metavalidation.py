"""ObjectMeta validation: names, labels, annotations, owner references, finalizers, selectors.

Twin of k8s.io/apimachinery/pkg/api/validation (objectmeta.go, generic.go) and
k8s.io/apimachinery/pkg/apis/meta/v1/validation (labels, label selectors), plus the finalizer
rule kube-apiserver's core validation adds (pkg/apis/core/validation: validateKubeFinalizerName).
Every function returns 422 causes (errors.field_* dicts) in the order upstream appends them;
label maps are walked in key order (upstream walks a Go map, in no fixed order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesim.api import errors
from kubesim.validation import content

__all__ = [
    "IS_NEGATIVE_ERROR",
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "NameFunc",
    "kube_finalizer_name",
    "label_selector_value",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "parse_label_selector",
    "path_segment_name",
    "validate_annotations",
    "validate_finalizers",
    "validate_label_selector",
    "validate_labels",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
]

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)  # TotalAnnotationSizeLimitB: 256 KiB, keys + values
IS_NEGATIVE_ERROR = "must be greater than or equal to 0"  # IsNegativeErrorMsg
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")  # IsStandardFinalizerName
ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"

# ValidateNameFunc: (name, prefix) -> messages; prefix is True for metadata.generateName.
NameFunc = Callable[[str, bool], list[str]]


def _mask_trailing_dash(name: str) -> str:
    """maskTrailingDash, as upstream writes it (it drops the character before the dash too)."""
    if name.endswith("-"):
        return name[: max(len(name) - 2, 0)] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """NameIsDNSSubdomain: most kinds (Deployments, Leases, custom resources, ...)."""
    return content.is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """NameIsDNSLabel: Namespaces (ValidateNamespaceName)."""
    return content.is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """NameIsDNS1035Label: Services (ValidateServiceName)."""
    return content.is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """The generic rule every object meets after its kind's own (rest.BeforeCreate); also the
    name rule of RBAC objects (ValidateRBACName)."""
    return content.is_path_segment_prefix(name) if prefix else content.is_path_segment_name(name)


# ---- labels and annotations --------------------------------------------------------------------


def validate_label_name(key: str, field: str) -> list[dict]:
    return [errors.field_invalid(field, key, m) for m in content.is_label_key(key)]


def validate_labels(labels: dict | None, field: str) -> list[dict]:
    """ValidateLabels: every key a qualified name, every value a label value (<= 63 chars)."""
    causes: list[dict] = []
    for k, v in sorted((labels or {}).items()):
        causes += validate_label_name(k, field)
        causes += [errors.field_invalid(field, v, m) for m in content.is_label_value(v)]
    return causes


def validate_annotations(annotations: dict | None, field: str) -> list[dict]:
    """ValidateAnnotations: keys are qualified names (any case); 256 KiB for all of them."""
    causes: list[dict] = []
    total = 0
    for k, v in sorted((annotations or {}).items()):
        causes += [errors.field_invalid(field, k, m) for m in content.is_label_key(k.lower())]
        total += len(k.encode()) + len(v.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(errors.field_too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


# ---- label selectors -----------------------------------------------------------------------------


def label_selector_value(selector: Any) -> errors.GoStringer | None:
    """A LabelSelector as a field error shows it: its (protobuf-generated) String()."""
    if not isinstance(selector, dict):
        return None
    labels = selector.get("matchLabels") or {}
    ml = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    me = "".join(
        "LabelSelectorRequirement{"
        f"Key:{r.get('key', '')},Operator:{r.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in r.get('values') or [])}],}},"
        for r in selector.get("matchExpressions") or []
        if isinstance(r, dict)
    )
    return errors.GoStringer(
        "&LabelSelector{MatchLabels:map[string]string{"
        + ml
        + "},MatchExpressions:[]LabelSelectorRequirement{"
        + me
        + "},}"
    )


def validate_label_selector(
    selector: dict | None, field: str, allow_invalid_values: bool = False
) -> list[dict]:
    """ValidateLabelSelector: matchLabels as labels, each matchExpressions requirement."""
    if selector is None:
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{field}.matchLabels")
    for i, req in enumerate(selector.get("matchExpressions") or []):
        path = f"{field}.matchExpressions[{i}]"
        op, values = req.get("operator"), req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                causes.append(
                    errors.field_required(
                        f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    errors.field_forbidden(
                        f"{path}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            causes.append(
                errors.field_invalid(f"{path}.operator", op or "", "not a valid selector operator")
            )
        causes += validate_label_name(req.get("key") or "", f"{path}.key")
        if not allow_invalid_values:
            for j, v in enumerate(values):
                causes += [
                    errors.field_invalid(f"{path}.values[{j}]", v, m)
                    for m in content.is_label_value(v)
                ]
    return causes


def parse_label_selector(selector: dict | None) -> Callable[[dict], bool] | None:
    """LabelSelectorAsSelector: a matcher on a label map, or None when the selector is invalid.

    A missing selector matches nothing, an empty one everything (``matcher.empty`` is True).
    """
    if selector is None:

        def nothing(labels: dict) -> bool:
            return False

        nothing.empty = False  # type: ignore[attr-defined]
        return nothing
    reqs: list[tuple[str, str, list[str]]] = []
    for k, v in sorted((selector.get("matchLabels") or {}).items()):
        if content.is_label_key(k) or content.is_label_value(v):
            return None
        reqs.append((k, "In", [v]))
    for r in selector.get("matchExpressions") or []:
        key, op, values = r.get("key") or "", r.get("operator"), list(r.get("values") or [])
        if content.is_label_key(key):
            return None
        if op in ("In", "NotIn"):
            if not values or any(content.is_label_value(v) for v in values):
                return None
        elif op in ("Exists", "DoesNotExist"):
            if values:
                return None
        else:
            return None
        reqs.append((key, op, values))

    def matches(labels: dict) -> bool:
        for key, op, values in reqs:
            present = key in labels
            if op == "In" and not (present and labels[key] in values):
                return False
            if op == "NotIn" and present and labels[key] in values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
        return True

    matches.empty = not reqs  # type: ignore[attr-defined]
    return matches


# ---- owner references and finalizers ------------------------------------------------------------


def _version_of(api_version: str) -> str:
    """schema.ParseGroupVersion's version ("" when unparsable)."""
    parts = api_version.split("/")
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return parts[1]
    return ""


def validate_owner_references(refs: list | None, field: str) -> list[dict]:
    causes: list[dict] = []
    first_controller = ""
    for ref in refs or []:
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        if not _version_of(api_version):
            causes.append(
                errors.field_invalid(
                    f"{field}.apiVersion", api_version, "version must not be empty"
                )
            )
        if not kind:
            causes.append(errors.field_invalid(f"{field}.kind", kind, "must not be empty"))
        if not ref.get("name"):
            causes.append(errors.field_invalid(f"{field}.name", "", "must not be empty"))
        if not ref.get("uid"):
            causes.append(errors.field_invalid(f"{field}.uid", "", "must not be empty"))
        if api_version == "v1" and kind == "Event":
            causes.append(
                errors.field_invalid(
                    field, ref, "/v1, Kind=Event is disallowed from being an owner"
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                causes.append(
                    errors.field_invalid(
                        field,
                        refs,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {current}",
                    )
                )
            else:
                first_controller = current
    return causes


def validate_finalizers(finalizers: list | None, field: str, kube: bool = False) -> list[dict]:
    """ValidateFinalizers (qualified names, not both orphan and foregroundDeletion); with
    ``kube``, also core validation's rule that a name without '/' must be a standard one."""
    causes: list[dict] = []
    fins = list(finalizers or [])
    for f in fins:
        causes += [errors.field_invalid(field, f, m) for m in content.is_label_key(f)]
    if ORPHAN in fins and FOREGROUND in fins:
        causes.append(
            errors.field_invalid(
                field, fins, f"finalizer {ORPHAN} and {FOREGROUND} cannot be both set"
            )
        )
    if kube:
        for i, f in enumerate(fins):
            causes += kube_finalizer_name(f, f"{field}[{i}]")
    return causes


def kube_finalizer_name(name: str, field: str) -> list[dict]:
    """validateKubeFinalizerName: a name without a '/' prefix must be a standard finalizer."""
    if "/" not in name and name not in STANDARD_FINALIZERS:
        return [
            errors.field_invalid(
                field, name, "name is neither a standard finalizer name nor is it fully qualified"
            )
        ]
    return []


# ---- ObjectMeta ------------------------------------------------------------------------------


def validate_object_meta(
    meta: dict, namespaced: bool, name_fn: NameFunc, kube_finalizers: bool = False
) -> list[dict]:
    """ValidateObjectMeta on create (the name has been generated already)."""
    causes: list[dict] = []
    gen = meta.get("generateName") or ""
    if gen:
        causes += [
            errors.field_invalid("metadata.generateName", gen, m) for m in name_fn(gen, True)
        ]
    name = meta.get("name") or ""
    if not name:
        causes.append(errors.field_required("metadata.name", "name or generateName is required"))
    else:
        causes += [errors.field_invalid("metadata.name", name, m) for m in name_fn(name, False)]
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            causes.append(errors.field_required("metadata.namespace"))
        else:
            causes += [
                errors.field_invalid("metadata.namespace", ns, m)
                for m in name_is_dns_label(ns, False)
            ]
    elif ns:
        causes.append(errors.field_forbidden("metadata.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(errors.field_invalid("metadata.generation", generation, IS_NEGATIVE_ERROR))
    causes += _validate_meta_common(meta, kube_finalizers)
    return causes


def validate_object_meta_update(meta: dict, kube_finalizers: bool = False) -> list[dict]:
    """ValidateObjectMetaUpdate's checks that kubesim's update path leaves to validation.

    The immutable fields (name, namespace, uid, creationTimestamp, deletion fields) and the
    generation are restored from the stored object before this runs, as rest.BeforeUpdate
    does; resourceVersion and new finalizers on a deleting object are checked by rest.py.
    """
    return _validate_meta_common(meta, kube_finalizers)


def _validate_meta_common(meta: dict, kube_finalizers: bool) -> list[dict]:
    causes = validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"), "metadata.annotations")
    causes += validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences")
    causes += validate_finalizers(meta.get("finalizers"), "metadata.finalizers", kube_finalizers)
    return causes
