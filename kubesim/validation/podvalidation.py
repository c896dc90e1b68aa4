"""Validation of Pods and ReplicaSets.

Twin of k8s.io/kubernetes pkg/apis/core/validation (ValidatePodCreate, ValidatePodUpdate's rule
on which spec fields may change) and pkg/apis/apps/validation (ValidateReplicaSet,
ValidateReplicaSetUpdate, ValidateReplicaSetStatus). The pod spec's checks are the pod
template's (kindvalidation.py): one set of rules for a Pod and for the template it is made from.

Deliberate differences: ValidatePodUpdate's 422 lists the fields that may change but not the
``cmp.Diff`` of the two specs upstream appends; a pod's status writes are checked for their
metadata only (ValidatePodStatusUpdate's rules on conditions and container statuses are not made).
"""

from __future__ import annotations

import copy

from kubesim.api import errors
from kubesim.validation.kindvalidation import (
    nonnegative,
    replica_status_causes,
    validate_pod_spec,
    validate_selector_and_template,
)
from kubesim.validation.metavalidation import (
    label_selector_value,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)

__all__ = ["validate_pod", "validate_replica_set", "validate_replica_set_status"]

# ValidatePodUpdate's message when a field other than these changes (then upstream's diff)
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)"
)


# ---- Pods ----------------------------------------------------------------------------------------


def validate_pod(obj: dict, old: dict | None = None) -> list[dict]:
    """ValidatePodCreate, or ValidatePodUpdate when ``old`` is given."""
    spec = obj.get("spec") or {}
    if old is not None:
        causes = validate_object_meta_update(obj["metadata"], True)
        if _mutable_view(spec, old.get("spec") or {}) != (old.get("spec") or {}):
            causes.append(errors.field_forbidden("spec", POD_UPDATE_FORBIDDEN))
        return causes
    causes = validate_object_meta(obj["metadata"], True, name_is_dns_subdomain, True)
    causes += validate_pod_spec(spec, "spec")
    if spec.get("ephemeralContainers"):
        causes.append(errors.field_forbidden("spec.ephemeralContainers", "cannot be set on create"))
    return causes


def _mutable_view(new: dict, old: dict) -> dict:
    """``new`` with the fields a pod update may change put back to ``old``'s values, so that
    what is left differs from ``old`` only where an update is refused (ValidatePodUpdate)."""
    view = copy.deepcopy(new)
    for key in ("containers", "initContainers"):
        olds = old.get(key) or []
        news = view.get(key) or []
        if len(olds) == len(news):
            for n, o in zip(news, olds, strict=True):
                if isinstance(n, dict) and isinstance(o, dict) and "image" in o:
                    n["image"] = o["image"]
    for key in ("activeDeadlineSeconds",):
        if key in old:
            view[key] = old[key]
        else:
            view.pop(key, None)
    old_tolerations = old.get("tolerations") or []
    new_tolerations = view.get("tolerations") or []
    if all(t in new_tolerations for t in old_tolerations):
        # only additions to the existing tolerations
        if old_tolerations:
            view["tolerations"] = old_tolerations
        else:
            view.pop("tolerations", None)
    grace = old.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and view.get("terminationGracePeriodSeconds") == 1:
        view["terminationGracePeriodSeconds"] = grace
    return view


# ---- ReplicaSets ---------------------------------------------------------------------------------


def validate_replica_set(obj: dict, old: dict | None = None) -> list[dict]:
    """ValidateReplicaSet on create; ValidateReplicaSetUpdate plus the apps/v1 selector
    immutability check (the ReplicaSet strategy's ValidateUpdate) when ``old`` is given."""
    if old is None:
        causes = validate_object_meta(obj["metadata"], True, name_is_dns_subdomain, True)
    else:
        causes = validate_object_meta_update(obj["metadata"], True)
    spec = obj.get("spec") or {}
    causes += nonnegative(spec.get("replicas"), "spec.replicas")
    causes += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    causes += validate_selector_and_template(spec)
    selector = spec.get("selector")
    if old is not None and selector != (old.get("spec") or {}).get("selector"):
        causes.append(
            errors.field_invalid(
                "spec.selector", label_selector_value(selector), "field is immutable"
            )
        )
    return causes


def validate_replica_set_status(obj: dict) -> list[dict]:
    """ValidateReplicaSetStatus (on /status writes)."""
    return replica_status_causes(
        obj,
        (
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ),
        ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
    )
