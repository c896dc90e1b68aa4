"""One well-filled object of each kind the generic store prints (kubesim/views/table_kinds.py).

Every field a column reads is set, to a value other than the column's default, so that a
column reading the wrong field, or losing its default, changes a cell. Times are relative to
now (``ago``), in whole minutes of ten or more, which HumanDuration prints without seconds: the
same ages and durations on every run, however long the test takes to reach the printer.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

_TEMPLATE = {
    "metadata": {"labels": {"app": "web", "tier": "front"}},
    "spec": {
        "nodeSelector": {"disk": "ssd"},
        "containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "redis:7"}],
    },
}
_SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]}],
}


def ago(seconds: int) -> str:
    """A metav1.Time ``seconds`` before now."""
    t = _dt.datetime.now(_dt.UTC) - _dt.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def samples() -> dict[tuple[str, str], dict[str, Any]]:
    """(group, kind) -> an object of that kind, created three hours ago."""
    objects: dict[tuple[str, str], dict[str, Any]] = {
        ("batch", "Job"): {
            "spec": {"completions": 3, "parallelism": 2, "template": _TEMPLATE},
            "status": {
                "succeeded": 2,
                "startTime": ago(600),
                "completionTime": ago(480),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
        },
        ("batch", "CronJob"): {
            "spec": {
                "schedule": "*/5 * * * *",
                "timeZone": "Asia/Tokyo",
                "suspend": True,
                "jobTemplate": {"spec": {"template": _TEMPLATE, "selector": _SELECTOR}},
            },
            "status": {
                "active": [{"name": "j1"}, {"name": "j2"}],
                "lastScheduleTime": ago(12 * 60),
            },
        },
        ("apps", "DaemonSet"): {
            "spec": {"template": _TEMPLATE, "selector": _SELECTOR},
            "status": {
                "desiredNumberScheduled": 5,
                "currentNumberScheduled": 4,
                "numberReady": 3,
                "updatedNumberScheduled": 2,
                "numberAvailable": 1,
            },
        },
        ("apps", "StatefulSet"): {
            "spec": {"replicas": 4, "template": _TEMPLATE},
            "status": {"readyReplicas": 2},
        },
        ("apps", "ControllerRevision"): {
            "metadata": {
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
                    {
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "name": "agent",
                        "controller": True,
                    },
                ]
            },
            "revision": 7,
        },
        ("", "ReplicationController"): {
            "spec": {"replicas": 3, "selector": {"app": "web"}, "template": _TEMPLATE},
            "status": {"replicas": 2, "readyReplicas": 1},
        },
        ("", "PodTemplate"): {"template": _TEMPLATE},
        ("autoscaling", "HorizontalPodAutoscaler"): {
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "minReplicas": 2,
                "maxReplicas": 9,
                "metrics": [
                    {"resource": {"name": "cpu", "target": {"averageUtilization": 60}}},
                    {"resource": {"name": "memory", "target": {"averageUtilization": 70}}},
                ],
            },
            "status": {"currentReplicas": 4},
        },
        ("", "PersistentVolumeClaim"): {
            "spec": {"volumeName": "pv-1", "storageClassName": "fast", "volumeMode": "Block"},
            "status": {
                "phase": "Bound",
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                "currentVolumeAttributesClassName": "gold",
            },
        },
        ("", "PersistentVolume"): {
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadOnlyMany", "ReadWriteOncePod"],
                "persistentVolumeReclaimPolicy": "Retain",
                "claimRef": {"namespace": "ns", "name": "claim"},
                "storageClassName": "slow",
                "volumeAttributesClassName": "silver",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Released", "reason": "Gone"},
        },
        ("storage.k8s.io", "StorageClass"): {
            "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "csi.example.com",
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        },
        ("storage.k8s.io", "VolumeAttachment"): {
            "spec": {
                "attacher": "csi.example.com",
                "source": {"persistentVolumeName": "pv-1"},
                "nodeName": "node-1",
            },
            "status": {"attached": True},
        },
        ("storage.k8s.io", "CSIDriver"): {
            "spec": {
                "attachRequired": False,
                "podInfoOnMount": True,
                "storageCapacity": True,
                "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
                "requiresRepublish": True,
                "volumeLifecycleModes": ["Persistent", "Ephemeral"],
            },
        },
        ("networking.k8s.io", "Ingress"): {
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{"host": f"h{i}.example.com"} for i in range(5)],
                "tls": [{"hosts": ["h0.example.com"]}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"hostname": "lb"}]}},
        },
        ("networking.k8s.io", "IngressClass"): {
            "spec": {
                "controller": "example.com/ingress",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"},
            },
        },
        ("networking.k8s.io", "NetworkPolicy"): {"spec": {"podSelector": _SELECTOR}},
        ("", "Endpoints"): {
            "subsets": [
                {
                    "addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}],
                    "ports": [{"port": 80}, {"port": 443}],
                }
            ]
        },
        ("discovery.k8s.io", "EndpointSlice"): {
            "addressType": "IPv6",
            "ports": [{"port": 80}, {"port": 8080}],
            "endpoints": [{"addresses": ["fd00::1", "fd00::2"]}, {"addresses": ["fd00::3"]}],
        },
        ("policy", "PodDisruptionBudget"): {
            "spec": {"minAvailable": "50%", "maxUnavailable": 1},
            "status": {"disruptionsAllowed": 2},
        },
        ("", "ResourceQuota"): {
            "status": {
                "hard": {"requests.cpu": "2", "limits.memory": "4Gi", "pods": "10"},
                "used": {"requests.cpu": "1", "pods": "3"},
            }
        },
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): {
            "spec": {
                "validations": [{"expression": "true"}, {"expression": "false"}],
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            }
        },
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): {
            "spec": {
                "mutations": [{"patchType": "ApplyConfiguration"}],
                "paramKind": {"apiVersion": "v1", "kind": "Secret"},
            }
        },
        ("apiregistration.k8s.io", "APIService"): {
            "spec": {"service": {"namespace": "kube-system", "name": "metrics"}},
            "status": {
                "conditions": [{"type": "Available", "status": "False", "reason": "Missing"}]
            },
        },
        ("certificates.k8s.io", "CertificateSigningRequest"): {
            "spec": {
                "signerName": "example.com/signer",
                "username": "alice",
                "expirationSeconds": 7200,
            },
            "status": {"certificate": "Y2VydA==", "conditions": [{"type": "Approved"}]},
        },
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"): {
            "spec": {
                "priorityLevelConfiguration": {"name": "workload-high"},
                "matchingPrecedence": 500,
                "distinguisherMethod": {"type": "ByUser"},
            },
            "status": {"conditions": [{"type": "Dangling", "status": "False"}]},
        },
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): {
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 30,
                    "limitResponse": {
                        "queuing": {"queues": 64, "handSize": 6, "queueLengthLimit": 50}
                    },
                },
            }
        },
        ("scheduling.k8s.io", "PriorityClass"): {"value": 1000, "globalDefault": True},
        ("node.k8s.io", "RuntimeClass"): {"handler": "runc"},
        ("storage.k8s.io", "CSINode"): {"spec": {"drivers": [{"name": "a"}, {"name": "b"}]}},
        ("storage.k8s.io", "VolumeAttributesClass"): {"driverName": "csi.example.com"},
        ("networking.k8s.io", "ServiceCIDR"): {"spec": {"cidrs": ["10.96.0.0/12", "fd00::/108"]}},
        ("networking.k8s.io", "IPAddress"): {
            "spec": {
                "parentRef": {
                    "group": "",
                    "resource": "services",
                    "namespace": "default",
                    "name": "kubernetes",
                }
            }
        },
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): {
            "spec": {"policyName": "p", "paramRef": {"namespace": "ns", "name": "params"}}
        },
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): {
            "spec": {"policyName": "m", "paramRef": {"selector": {}}}
        },
        ("resource.k8s.io", "ResourceSlice"): {
            "spec": {"nodeName": "node-1", "driver": "gpu.example.com", "pool": {"name": "pool"}}
        },
    }
    for obj in objects.values():
        meta = obj.setdefault("metadata", {})
        meta.update({"name": "sample", "creationTimestamp": ago(3 * 3600)})
    return objects


def other_branches() -> dict[tuple[str, str], dict[str, Any]]:
    """A second object of the kinds whose cells branch: the other side of each branch."""
    objects: dict[tuple[str, str], dict[str, Any]] = {
        ("batch", "Job"): {
            "metadata": {"deletionTimestamp": ago(5)},
            "spec": {"parallelism": 4, "template": _TEMPLATE},
            "status": {"succeeded": 1, "startTime": ago(20 * 60)},
        },
        ("networking.k8s.io", "Ingress"): {"spec": {"rules": [{"host": "a"}, {"http": {}}]}},
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): {
            "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0}}
        },
        ("apiregistration.k8s.io", "APIService"): {
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}
        },
        ("certificates.k8s.io", "CertificateSigningRequest"): {"spec": {"signerName": "s"}},
        ("", "PersistentVolumeClaim"): {
            "metadata": {"deletionTimestamp": ago(5)},
            "spec": {"storageClassName": "fast"},
            "status": {"phase": "Pending", "capacity": {"storage": "5Gi"}},
        },
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): {
            "spec": {"policyName": "p", "paramRef": {"name": "params"}}
        },
        ("networking.k8s.io", "IPAddress"): {
            "spec": {"parentRef": {"group": "gateway.networking.k8s.io", "resource": "gateways"}}
        },
    }
    for obj in objects.values():
        meta = obj.setdefault("metadata", {})
        meta.update({"name": "other", "creationTimestamp": ago(40 * 60)})
    return objects


def nulled(value: Any, key: str = "") -> Any:
    """``value`` with every scalar field outside ``metadata`` set to null, as a client may send
    it (lists are kept as they are: a null inside one is not a field left unset)."""
    if key == "metadata" or isinstance(value, list):
        return value
    if isinstance(value, dict):
        return {k: nulled(v, k) for k, v in value.items()}
    return None
