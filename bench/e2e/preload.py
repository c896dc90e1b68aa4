"""The memory trial's cluster: n converged Foos and Deployments as a real cluster stores them.

``managedFields`` are a large share of what an informer caches; the transform that strips them
is what the memory trial measures. kubesim keeps them as a real server does, but the entries
depend on how the objects were written; so that the trial measures the same objects however
they are made, they are stored with the two entries each that ``kubectl create`` + this
controller (for a Foo) and this controller + kube-controller-manager (for a Deployment) leave.
"""

from __future__ import annotations

import copy

from bench.e2e.harness import FOO_GVR, NAMESPACE, foo_body
from bench.e2e.measure import DEPLOY_KEY, FOO_KEY
from controller.builders import desired_status, new_deployment
from kubesim import KubeSim

# What a Foo made with `kubectl create` and reconciled by this controller carries in a real
# cluster (set on the stored objects by hand, in place of the ones kubesim wrote).
FOO_MANAGED_FIELDS = [
    {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {".": {}, "f:deploymentName": {}, "f:replicas": {}}},
    },
    {
        "manager": "sample-controller",
        "operation": "Update",
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "time": "2026-01-01T00:00:01Z",
        "fieldsType": "FieldsV1",
        "subresource": "status",
        "fieldsV1": {
            "f:status": {
                ".": {},
                "f:availableReplicas": {},
                "f:observedGeneration": {},
                "f:conditions": {
                    ".": {},
                    'k:{"type":"Ready"}': {
                        ".": {},
                        "f:lastTransitionTime": {},
                        "f:message": {},
                        "f:observedGeneration": {},
                        "f:reason": {},
                        "f:status": {},
                        "f:type": {},
                    },
                },
            }
        },
    },
]
# ... and what its Deployment carries: our spec, kube-controller-manager's status and revision.
DEPLOYMENT_MANAGED_FIELDS = [
    {
        "manager": "sample-controller",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {
                "f:ownerReferences": {
                    ".": {},
                    'k:{"uid":"00000000-0000-0000-0000-000000000000"}': {},
                }
            },
            "f:spec": {
                "f:progressDeadlineSeconds": {},
                "f:replicas": {},
                "f:revisionHistoryLimit": {},
                "f:selector": {},
                "f:strategy": {
                    "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                    "f:type": {},
                },
                "f:template": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:controller": {}}},
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"nginx"}': {
                                ".": {},
                                "f:image": {},
                                "f:imagePullPolicy": {},
                                "f:name": {},
                                "f:resources": {},
                                "f:terminationMessagePath": {},
                                "f:terminationMessagePolicy": {},
                            }
                        },
                        "f:dnsPolicy": {},
                        "f:restartPolicy": {},
                        "f:schedulerName": {},
                        "f:securityContext": {},
                        "f:terminationGracePeriodSeconds": {},
                    },
                },
            },
        },
    },
    {
        "manager": "kube-controller-manager",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-01-01T00:00:05Z",
        "fieldsType": "FieldsV1",
        "subresource": "status",
        "fieldsV1": {
            "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
            "f:status": {
                "f:availableReplicas": {},
                "f:conditions": {
                    ".": {},
                    'k:{"type":"Available"}': {
                        ".": {},
                        "f:lastTransitionTime": {},
                        "f:lastUpdateTime": {},
                        "f:message": {},
                        "f:reason": {},
                        "f:status": {},
                        "f:type": {},
                    },
                    'k:{"type":"Progressing"}': {
                        ".": {},
                        "f:lastTransitionTime": {},
                        "f:lastUpdateTime": {},
                        "f:message": {},
                        "f:reason": {},
                        "f:status": {},
                        "f:type": {},
                    },
                },
                "f:observedGeneration": {},
                "f:readyReplicas": {},
                "f:replicas": {},
                "f:updatedReplicas": {},
            },
        },
    },
]


def preload(sim: KubeSim, n: int) -> None:
    """n converged Foos and their Deployments, with realistic managedFields, straight into storage.

    One Foo and one Deployment go through kubesim's REST layer (validation, defaulting); the
    rest are copies of them with their own names, uids and replicas, written with
    ``storage.put`` because kubesim's REST layer would write its own managedFields over these.
    Each Foo's status is
    exactly what the controller would write, so the controller's first reconcile writes nothing.
    """
    foo_info = sim.registry.lookup(*FOO_GVR)
    dep_info = sim.registry.lookup("apps", "v1", "deployments")
    _, stored = sim.rest.create(foo_info, NAMESPACE, foo_body("template", 1), {})
    foo_tpl = stored.obj
    _, stored = sim.rest.create(dep_info, NAMESPACE, new_deployment(foo_tpl), {})
    dep_tpl = stored.obj
    sim.storage.remove(FOO_KEY, NAMESPACE, "template")
    sim.storage.remove(DEPLOY_KEY, NAMESPACE, "template")
    ts = "2026-01-01T00:00:05Z"
    for i in range(n):
        name, replicas = f"foo-{i:05d}", 1 + i % 3
        uid = f"{i:08d}-0000-4000-8000-{i:012d}"
        dep = copy.deepcopy(dep_tpl)
        meta = dep["metadata"]
        meta.update(
            name=name,
            uid=f"{i:08d}-1111-4000-8000-{i:012d}",
            annotations={"deployment.kubernetes.io/revision": "1"},
            managedFields=copy.deepcopy(DEPLOYMENT_MANAGED_FIELDS),
        )
        owners = meta["managedFields"][0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
        owners[f'k:{{"uid":"{uid}"}}'] = owners.pop(
            'k:{"uid":"00000000-0000-0000-0000-000000000000"}'
        )
        meta["ownerReferences"] = [dict(meta["ownerReferences"][0], name=name, uid=uid)]
        dep["spec"]["replicas"] = replicas
        labels = {"app": "nginx", "controller": name}
        dep["spec"]["selector"] = {"matchLabels": dict(labels)}
        dep["spec"]["template"]["metadata"]["labels"] = dict(labels)
        message = f'ReplicaSet "{name}-5d59d67564" has successfully progressed.'
        dep["status"] = {
            "observedGeneration": 1,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": ts,
                    "lastTransitionTime": ts,
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "lastUpdateTime": ts,
                    "lastTransitionTime": ts,
                    "reason": "NewReplicaSetAvailable",
                    "message": message,
                },
            ],
        }
        foo = copy.deepcopy(foo_tpl)
        foo["metadata"].update(name=name, uid=uid, managedFields=copy.deepcopy(FOO_MANAGED_FIELDS))
        foo["spec"] = {"deploymentName": name, "replicas": replicas}
        foo["status"] = desired_status(foo, dep)
        sim.storage.put(FOO_KEY, NAMESPACE, name, foo)
        sim.storage.put(DEPLOY_KEY, NAMESPACE, name, dep)
