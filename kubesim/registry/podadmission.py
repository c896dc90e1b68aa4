"""The mutating admission a Pod create goes through: ServiceAccount, DefaultTolerationSeconds,
Priority.

Twin of the plugins kube-apiserver enables by default that change a Pod on create:
plugin/pkg/admission/serviceaccount/admission.go (the ``default`` ServiceAccount, the projected
``kube-api-access-*`` token volume and its mounts, the ServiceAccount's image pull secrets),
plugin/pkg/admission/defaulttolerationseconds (the not-ready and unreachable tolerations of
300 s) and plugin/pkg/admission/priority (``priority`` and ``preemptionPolicy`` from the
PriorityClass). They run, as upstream, after defaulting and before the strategy's
PrepareForCreate and validation; a refusal is the plugin's 403.

Deliberate differences: the ServiceAccount plugin's mountable-secrets enforcement and the
mirror-pod rules are not made (kubesim has no kubelet that makes static pods); a pod's update
is not admitted (upstream's plugins only validate it).
"""

from __future__ import annotations

import random
from typing import Any

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.storage.store import Storage

__all__ = ["admit_create"]

SERVICE_ACCOUNTS = ("", "serviceaccounts")
PRIORITY_CLASSES = ("scheduling.k8s.io", "priorityclasses")
DEFAULT_SERVICE_ACCOUNT = "default"
TOKEN_VOLUME_PREFIX = "kube-api-access-"  # ServiceAccountVolumeName + "-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"  # DefaultAPITokenMountPath
# DefaultTolerationSeconds' --default-not-ready-toleration-seconds and unreachable's, 300 each
DEFAULT_TOLERATION_SECONDS = 300
_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
# the PriorityClasses every cluster has (scheduling.SystemPriorityClasses)
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # SimpleNameGenerator's


def admit_create(storage: Storage, info: ResourceInfo, ns: str, obj: dict) -> None:
    """Run the mutating admission of a create on ``obj`` (in place); only Pods have any.

    It reads the ServiceAccount and PriorityClass as stored when it runs, with or without
    ``storage.lock`` held (upstream's plugins read them from informers, a moment old).
    """
    if (info.group, info.kind) != ("", "Pod") or info.custom:
        return
    spec = obj.setdefault("spec", {})
    name = (obj.get("metadata") or {}).get("name") or ""
    _admit_service_account(storage, ns, name, spec)
    _admit_default_tolerations(spec)
    _admit_priority(storage, name, spec)


def _forbidden(name: str, message: str) -> errors.ApiError:
    """admission.NewForbidden: ``pods "<name>" is forbidden: <message>``."""
    return errors.forbidden("", "pods", name, f'pods "{name}" is forbidden: {message}')


def _admit_service_account(storage: Storage, ns: str, name: str, spec: dict) -> None:
    """The ServiceAccount plugin: the default account, which must exist, its token mounted."""
    # (the deprecated serviceAccount is read as the name, as v1's conversion does first)
    account_name = (
        spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
    )
    spec["serviceAccountName"] = account_name
    account = storage.get(SERVICE_ACCOUNTS, ns, account_name)
    if account is None:
        raise _forbidden(
            name,
            f"error looking up service account {ns}/{account_name}: "
            f'serviceaccount "{account_name}" not found',
        )
    sa = account.obj
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = sa.get("automountServiceAccountToken")
    if automount is not False:
        _mount_token(spec)
    if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [dict(s) for s in sa["imagePullSecrets"]]


def _mount_token(spec: dict) -> None:
    """mountServiceAccountToken: a projected volume (token, the cluster's CA, the namespace),
    mounted read-only by every container not already mounting something at the path."""
    volumes = spec.get("volumes") or []
    existing = next(
        (
            v["name"]
            for v in volumes
            if isinstance(v, dict) and str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)
        ),
        None,
    )
    volume_name = existing or TOKEN_VOLUME_PREFIX + "".join(
        random.choice(_NAME_ALPHABET) for _ in range(5)
    )
    needs_volume = False
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            mounts = c.get("volumeMounts") or []
            if any((m or {}).get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            c["volumeMounts"] = [
                *mounts,
                {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH},
            ]
            needs_volume = True
    if existing is None and needs_volume:
        spec["volumes"] = [*volumes, {"name": volume_name, "projected": _token_volume_source()}]


def _token_volume_source() -> dict[str, Any]:
    """TokenVolumeSource: what the kube-api-access volume projects, with its 0644 mode."""
    return {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
        "defaultMode": 0o644,
    }


def _admit_default_tolerations(spec: dict) -> None:
    """DefaultTolerationSeconds: tolerate a not-ready or unreachable node for 300 s, unless the
    pod already tolerates that taint's NoExecute effect."""
    tolerations = list(spec.get("tolerations") or [])
    added = []
    for key in _TAINTS:
        if any(_tolerates_no_execute(t, key) for t in tolerations):
            continue
        added.append(
            {
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
        )
    if added:
        spec["tolerations"] = tolerations + added


def _tolerates_no_execute(t: Any, key: str) -> bool:
    if not isinstance(t, dict) or t.get("effect") not in (None, "", "NoExecute"):
        return False
    return t.get("key") == key or (not t.get("key") and t.get("operator") == "Exists")


def _admit_priority(storage: Storage, name: str, spec: dict) -> None:
    """The Priority plugin: priority (and preemptionPolicy) from the pod's PriorityClass, 0
    without one (kubesim has no globalDefault class); a priority of the pod's own is refused."""
    class_name = spec.get("priorityClassName") or ""
    policy = "PreemptLowerPriority"
    if not class_name:
        value = 0
    elif class_name in SYSTEM_PRIORITY_CLASSES:
        value = SYSTEM_PRIORITY_CLASSES[class_name]
    else:
        stored = storage.get(PRIORITY_CLASSES, "", class_name)
        if stored is None:
            raise _forbidden(name, f"no PriorityClass with name {class_name} was found")
        value = int(stored.obj.get("value") or 0)
        policy = stored.obj.get("preemptionPolicy") or policy
    given = spec.get("priority")
    if given is not None and given != value:
        raise _forbidden(
            name,
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {value} from the given PriorityClass name",
        )
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", policy)
