"""Validation of the built-in kinds kubesim stores: Deployments, Events, Leases, Namespaces.

Twin of k8s.io/kubernetes/pkg/apis/apps/validation (ValidateDeployment, ValidateDeploymentSpec,
ValidateDeploymentStatus), pkg/apis/core/validation (ValidatePodTemplateSpec and the container
checks of ValidatePodSpec, the legacy ValidateEvent, ValidateNamespace) and
pkg/apis/coordination/validation (ValidateLease). Objects arrive defaulted (strategy.py fills in
what SetDefaults_* would) and as JSON dicts; each function returns 422 causes in upstream's
order. Checks kubesim does not make are listed in kubesim/README.md's limits.
"""

from __future__ import annotations

from typing import Any

from kubesim.api import errors
from kubesim.validation import content
from kubesim.validation.metavalidation import (
    IS_NEGATIVE_ERROR,
    kube_finalizer_name,
    label_selector_value,
    name_is_dns_label,
    name_is_dns_subdomain,
    parse_label_selector,
    validate_annotations,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)

__all__ = [
    "nonnegative",
    "validate_selector_and_template",
    "validate_deployment",
    "validate_deployment_status",
    "validate_event",
    "validate_lease",
    "validate_namespace",
    "validate_namespace_finalizers",
    "validate_pod_spec",
    "validate_template_for_replica_set",
]

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]
TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
LEASE_STRATEGIES = ["OldestEmulationVersion"]
EVENT_REASON_LIMIT = 128  # ReasonLengthLimit (and Action, ReportingInstance)
EVENT_NOTE_LIMIT = 1024  # NoteLengthLimit


def nonnegative(value: Any, field: str) -> list[dict]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [errors.field_invalid(field, value, IS_NEGATIVE_ERROR)]
    return []


# ---- Deployments -----------------------------------------------------------------------------


def validate_deployment(obj: dict, old: dict | None = None) -> list[dict]:
    """ValidateDeployment on create; ValidateDeploymentUpdate plus the apps/v1 selector
    immutability check (deployment strategy's ValidateUpdate) when ``old`` is given."""
    if old is None:
        causes = validate_object_meta(obj["metadata"], True, name_is_dns_subdomain, True)
    else:
        causes = validate_object_meta_update(obj["metadata"], True)
    spec = obj.get("spec") or {}
    causes += _validate_deployment_spec(spec)
    if old is not None:
        selector = spec.get("selector")
        if selector != (old.get("spec") or {}).get("selector"):
            causes.append(
                errors.field_invalid(
                    "spec.selector", label_selector_value(selector), "field is immutable"
                )
            )
    return causes


def validate_selector_and_template(spec: dict) -> list[dict]:
    """The selector and template checks ValidateDeploymentSpec and ValidateReplicaSetSpec
    share: a selector that is there, valid and not empty (upstream's wording, "for
    deployment", in both), and a template that it selects."""
    causes: list[dict] = []
    selector = spec.get("selector")
    if selector is None:
        causes.append(errors.field_required("spec.selector"))
    else:
        causes += validate_label_selector(selector, "spec.selector")
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            causes.append(
                errors.field_invalid(
                    "spec.selector",
                    label_selector_value(selector),
                    "empty selector is invalid for deployment",
                )
            )
    matcher = parse_label_selector(selector)
    if matcher is None:
        causes.append(
            errors.field_invalid(
                "spec.selector", label_selector_value(selector), "invalid label selector"
            )
        )
    else:
        causes += validate_template_for_replica_set(spec.get("template") or {}, matcher)
    return causes


def _validate_deployment_spec(spec: dict) -> list[dict]:
    causes = nonnegative(spec.get("replicas"), "spec.replicas")
    causes += validate_selector_and_template(spec)
    causes += _validate_deployment_strategy(spec.get("strategy") or {})
    causes += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    causes += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    pds = spec.get("progressDeadlineSeconds")
    if isinstance(pds, int):
        causes += nonnegative(pds, "spec.progressDeadlineSeconds")
        if pds <= (spec.get("minReadySeconds") or 0):
            causes.append(
                errors.field_invalid(
                    "spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds"
                )
            )
    return causes


def validate_template_for_replica_set(template: dict, matcher: Any) -> list[dict]:
    """ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets)."""
    causes: list[dict] = []
    tmeta = template.get("metadata") or {}
    labels = tmeta.get("labels") or {}
    if not matcher.empty and not matcher(labels):
        causes.append(
            errors.field_invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    causes += validate_labels(tmeta.get("labels"), "spec.template.labels")
    causes += validate_annotations(tmeta.get("annotations"), "spec.template.annotations")
    pod = template.get("spec") or {}
    causes += validate_pod_spec(pod, "spec.template.spec")
    restart = pod.get("restartPolicy")
    if restart != "Always":
        causes.append(
            errors.field_not_supported("spec.template.spec.restartPolicy", restart, ["Always"])
        )
    if pod.get("activeDeadlineSeconds") is not None:
        causes.append(
            errors.field_forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        )
    return causes


def validate_pod_spec(pod: dict, path: str) -> list[dict]:
    """The parts of ValidatePodSpec kubesim checks: containers, restartPolicy, dnsPolicy."""
    causes: list[dict] = []
    names: set[str] = set()
    containers = pod.get("containers") or []
    if not containers:
        causes.append(errors.field_required(f"{path}.containers"))
    for i, c in enumerate(containers):
        causes += _validate_container(c, f"{path}.containers[{i}]", names)
    for i, c in enumerate(pod.get("initContainers") or []):
        causes += _validate_container(c, f"{path}.initContainers[{i}]", names)
    restart = pod.get("restartPolicy") or ""
    if not restart:
        causes.append(errors.field_required(f"{path}.restartPolicy"))
    elif restart not in RESTART_POLICIES:
        causes.append(
            errors.field_not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES)
        )
    dns = pod.get("dnsPolicy")
    if dns not in DNS_POLICIES:
        causes.append(errors.field_not_supported(f"{path}.dnsPolicy", dns or "", DNS_POLICIES))
    return causes


def _validate_container(c: dict, path: str, names: set[str]) -> list[dict]:
    """validateContainerCommon, and names unique across the pod's containers."""
    causes: list[dict] = []
    name = c.get("name") or ""
    if not name:
        causes.append(errors.field_required(f"{path}.name"))
    else:
        causes += [
            errors.field_invalid(f"{path}.name", name, m) for m in content.is_dns1123_label(name)
        ]
    if not c.get("image"):
        causes.append(errors.field_required(f"{path}.image"))
    policy = c.get("terminationMessagePolicy") or ""
    if not policy:
        causes.append(errors.field_required(f"{path}.terminationMessagePolicy"))
    elif policy not in TERMINATION_MESSAGE_POLICIES:
        causes.append(
            errors.field_not_supported(
                f"{path}.terminationMessagePolicy", policy, TERMINATION_MESSAGE_POLICIES
            )
        )
    causes += _validate_ports(c.get("ports") or [], f"{path}.ports")
    pull = c.get("imagePullPolicy") or ""
    if not pull:
        causes.append(errors.field_required(f"{path}.imagePullPolicy"))
    elif pull not in PULL_POLICIES:
        causes.append(errors.field_not_supported(f"{path}.imagePullPolicy", pull, PULL_POLICIES))
    if name:
        if name in names:
            causes.append(errors.field_duplicate(f"{path}.name", name))
        names.add(name)
    return causes


def _validate_ports(ports: list, path: str) -> list[dict]:
    """validateContainerPorts."""
    causes: list[dict] = []
    seen: set[str] = set()
    for i, p in enumerate(ports):
        at = f"{path}[{i}]"
        name = p.get("name") or ""
        if name:
            msgs = content.is_valid_port_name(name)
            if msgs:
                causes += [errors.field_invalid(f"{at}.name", name, m) for m in msgs]
            elif name in seen:
                causes.append(errors.field_duplicate(f"{at}.name", name))
            else:
                seen.add(name)
        port = p.get("containerPort") or 0
        if not port:
            causes.append(errors.field_required(f"{at}.containerPort"))
        else:
            causes += [
                errors.field_invalid(f"{at}.containerPort", port, m)
                for m in content.is_valid_port_num(port)
            ]
        host = p.get("hostPort") or 0
        if host:
            causes += [
                errors.field_invalid(f"{at}.hostPort", host, m)
                for m in content.is_valid_port_num(host)
            ]
        protocol = p.get("protocol") or ""
        if not protocol:
            causes.append(errors.field_required(f"{at}.protocol"))
        elif protocol not in PORT_PROTOCOLS:
            causes.append(errors.field_not_supported(f"{at}.protocol", protocol, PORT_PROTOCOLS))
    return causes


def _int_or_percent_value(v: Any) -> tuple[int, bool]:
    """getIntOrPercentValue: (value, is a valid percent string)."""
    if isinstance(v, str):
        if not content.is_valid_percent(v):
            return int(v[:-1]), True
        return (int(v) if v.lstrip("-").isdigit() else 0), False
    return (v if isinstance(v, int) else 0), False


def _int_or_string(v: Any) -> Any:
    """An IntOrString as a field error shows it: String() for a string, the int for an int."""
    return errors.GoStringer(v) if isinstance(v, str) else v


def _validate_positive_int_or_percent(v: Any, field: str) -> list[dict]:
    if isinstance(v, str):
        return [
            errors.field_invalid(field, _int_or_string(v), m) for m in content.is_valid_percent(v)
        ]
    return nonnegative(v, field)


def _validate_deployment_strategy(strategy: dict) -> list[dict]:
    """ValidateDeploymentStrategy (and ValidateRollingUpdateDeployment)."""
    kind = strategy.get("type")
    ru = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if ru is not None:
            return [
                errors.field_forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if ru is None:
            return [
                errors.field_required(
                    "spec.strategy.rollingUpdate", "this should be defaulted and never be nil"
                )
            ]
        path = "spec.strategy.rollingUpdate"
        unavailable, surge = ru.get("maxUnavailable"), ru.get("maxSurge")
        causes = _validate_positive_int_or_percent(unavailable, f"{path}.maxUnavailable")
        causes += _validate_positive_int_or_percent(surge, f"{path}.maxSurge")
        if _int_or_percent_value(unavailable)[0] == 0 and _int_or_percent_value(surge)[0] == 0:
            causes.append(
                errors.field_invalid(
                    f"{path}.maxUnavailable",
                    _int_or_string(unavailable),
                    "may not be 0 when `maxSurge` is 0",
                )
            )
        value, is_percent = _int_or_percent_value(unavailable)
        if is_percent and value > 100:
            causes.append(
                errors.field_invalid(
                    f"{path}.maxUnavailable",
                    _int_or_string(unavailable),
                    "must not be greater than 100%",
                )
            )
        return causes
    shown = errors.GoStringer(
        "apps.DeploymentStrategy{Type:"
        + errors.go_quote(str(kind or ""))
        + ", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}"
    )
    return [errors.field_not_supported("spec.strategy", shown, ["Recreate", "RollingUpdate"])]


def validate_deployment_status(obj: dict) -> list[dict]:
    """ValidateDeploymentStatus (on /status writes)."""
    return replica_status_causes(
        obj,
        (
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "collisionCount",
        ),
        ("updatedReplicas", "readyReplicas", "availableReplicas"),
    )


def replica_status_causes(
    obj: dict, counts: tuple[str, ...], within_replicas: tuple[str, ...]
) -> list[dict]:
    """The rules a workload's replica counts share (ValidateDeploymentStatus and
    ValidateReplicaSetStatus): ``counts`` not negative, ``within_replicas`` at most
    ``status.replicas``, and availableReplicas at most readyReplicas."""
    st = obj.get("status") or {}
    causes: list[dict] = []
    for f in counts:
        causes += nonnegative(st.get(f), f"status.{f}")
    replicas = st.get("replicas") or 0
    msg = "cannot be greater than status.replicas"
    for f in within_replicas:
        if (st.get(f) or 0) > replicas:
            causes.append(errors.field_invalid(f"status.{f}", st[f], msg))
    if (st.get("availableReplicas") or 0) > (st.get("readyReplicas") or 0):
        causes.append(
            errors.field_invalid(
                "status.availableReplicas",
                st["availableReplicas"],
                "cannot be greater than readyReplicas",
            )
        )
    return causes


# ---- Events (core/v1) ------------------------------------------------------------------------


def validate_event(obj: dict) -> list[dict]:
    """legacyValidateEvent: all core/v1 Event writes get (no ObjectMeta checks of its own)."""
    causes: list[dict] = []
    meta = obj["metadata"]
    ns = meta.get("namespace") or ""
    involved = obj.get("involvedObject") or {}
    inv_ns = involved.get("namespace") or ""
    mismatch = "does not match event.namespace"
    if not obj.get("eventTime"):
        if not inv_ns:
            if ns not in ("", "default"):
                causes.append(errors.field_invalid("involvedObject.namespace", inv_ns, mismatch))
        elif ns != inv_ns:
            causes.append(errors.field_invalid("involvedObject.namespace", inv_ns, mismatch))
    else:
        if not inv_ns and ns not in ("default", "kube-system"):
            causes.append(errors.field_invalid("involvedObject.namespace", inv_ns, mismatch))
        controller = obj.get("reportingComponent") or ""
        if not controller:
            causes.append(errors.field_required("reportingController"))
        causes += [
            errors.field_invalid("reportingController", controller, m)
            for m in content.is_label_key(controller)
        ]
        for field, limit in (
            ("reportingInstance", EVENT_REASON_LIMIT),
            ("action", EVENT_REASON_LIMIT),
            ("reason", EVENT_REASON_LIMIT),
        ):
            value = obj.get(field) or ""
            if not value:
                causes.append(errors.field_required(field))
            if len(value.encode()) > limit:
                causes.append(
                    errors.field_invalid(field, "", f"can have at most {limit} characters")
                )
        if len((obj.get("message") or "").encode()) > EVENT_NOTE_LIMIT:
            causes.append(
                errors.field_invalid(
                    "message", "", f"can have at most {EVENT_NOTE_LIMIT} characters"
                )
            )
    causes += [errors.field_invalid("namespace", ns, m) for m in content.is_dns1123_subdomain(ns)]
    return causes


# ---- Leases ------------------------------------------------------------------------------------


def validate_lease(obj: dict, old: dict | None = None) -> list[dict]:
    """ValidateLease / ValidateLeaseUpdate (apimachinery ObjectMeta, then the spec)."""
    if old is None:
        causes = validate_object_meta(obj["metadata"], True, name_is_dns_subdomain)
    else:
        causes = validate_object_meta_update(obj["metadata"])
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        causes.append(
            errors.field_invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
        )
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        causes.append(errors.field_invalid("spec.leaseTransitions", transitions, IS_NEGATIVE_ERROR))
    strategy = spec.get("strategy")
    if strategy is not None:
        # (upstream names the field spec.strategy.strategy)
        field = "spec.strategy.strategy"
        if "/" not in strategy:
            if strategy not in LEASE_STRATEGIES:
                causes.append(errors.field_not_supported(field, strategy, LEASE_STRATEGIES))
        else:
            causes += [
                errors.field_invalid(field, strategy, m) for m in content.is_label_key(strategy)
            ]
    if spec.get("preferredHolder") and not strategy:
        causes.append(
            errors.field_forbidden(
                "spec.preferredHolder", "may only be specified if `strategy` is defined"
            )
        )
    return causes


# ---- Namespaces --------------------------------------------------------------------------------


def validate_namespace(obj: dict, old: dict | None = None) -> list[dict]:
    """ValidateNamespace (name a DNS label, spec.finalizers) / ValidateNamespaceUpdate."""
    if old is not None:
        return validate_object_meta_update(obj["metadata"], True)
    causes = validate_object_meta(obj["metadata"], False, name_is_dns_label, True)
    for f in (obj.get("spec") or {}).get("finalizers") or []:
        causes += _finalizer_name(f, "spec.finalizers")
    return causes


def validate_namespace_finalizers(obj: dict) -> list[dict]:
    """ValidateNamespaceFinalizeUpdate: the /finalize subresource's spec.finalizers."""
    causes = validate_object_meta_update(obj["metadata"], True)
    for i, f in enumerate((obj.get("spec") or {}).get("finalizers") or []):
        causes += _finalizer_name(f, f"spec.finalizers[{i}]")
    return causes


def _finalizer_name(name: str, field: str) -> list[dict]:
    """core validation's validateFinalizerName: a qualified name, standard unless prefixed."""
    causes = [errors.field_invalid(field, name, m) for m in content.is_label_key(name)]
    return causes + kube_finalizer_name(name, field)
