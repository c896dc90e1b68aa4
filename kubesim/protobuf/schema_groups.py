"""Schema tables of the API groups beside core: apps, autoscaling, coordination, events, rbac.

From k8s.io/api's ``apps/v1``, ``autoscaling/v1``, ``coordination/v1``, ``events/v1`` and
``rbac/v1`` ``generated.proto`` and ``types.go``; see :mod:`kubesim.protobuf.schema` for the
notation.
"""

APPS: dict[str, str] = {
    "Deployment": """
        1 metadata ObjectMeta
        2 spec DeploymentSpec
        3 status DeploymentStatus
    """,
    "DeploymentSpec": """
        1 replicas int32*
        2 selector LabelSelector*
        3 template PodTemplateSpec
        4 strategy DeploymentStrategy
        5 minReadySeconds int32
        6 revisionHistoryLimit int32*
        7 paused bool
        9 progressDeadlineSeconds int32*
        10 podReplacementPolicy string*
    """,
    "DeploymentStrategy": """
        1 type string
        2 rollingUpdate RollingUpdateDeployment*
    """,
    "RollingUpdateDeployment": """
        1 maxUnavailable intstr*
        2 maxSurge intstr*
    """,
    "DeploymentStatus": """
        1 observedGeneration int64
        2 replicas int32
        3 updatedReplicas int32
        7 readyReplicas int32
        4 availableReplicas int32
        5 unavailableReplicas int32
        9 terminatingReplicas int32*
        6 conditions [DeploymentCondition]
        8 collisionCount int32*
    """,
    "DeploymentCondition": """
        1 type string!
        2 status string!
        6 lastUpdateTime time
        7 lastTransitionTime time
        4 reason string
        5 message string
    """,
    "ReplicaSet": """
        1 metadata ObjectMeta
        2 spec ReplicaSetSpec
        3 status ReplicaSetStatus
    """,
    "ReplicaSetSpec": """
        1 replicas int32*
        4 minReadySeconds int32
        2 selector LabelSelector*
        3 template PodTemplateSpec
    """,
    "ReplicaSetStatus": """
        1 replicas int32!
        2 fullyLabeledReplicas int32
        4 readyReplicas int32
        5 availableReplicas int32
        7 terminatingReplicas int32*
        3 observedGeneration int64
        6 conditions [ReplicaSetCondition]
    """,
    "ReplicaSetCondition": """
        1 type string!
        2 status string!
        3 lastTransitionTime time
        4 reason string
        5 message string
    """,
}

AUTOSCALING: dict[str, str] = {
    "Scale": """
        1 metadata ObjectMeta
        2 spec ScaleSpec
        3 status ScaleStatus
    """,
    "ScaleSpec": """
        1 replicas int32
    """,
    "ScaleStatus": """
        1 replicas int32!
        2 selector string
    """,
}

COORDINATION: dict[str, str] = {
    "Lease": """
        1 metadata ObjectMeta
        2 spec LeaseSpec
    """,
    "LeaseSpec": """
        1 holderIdentity string*
        2 leaseDurationSeconds int32*
        3 acquireTime microtime*
        4 renewTime microtime*
        5 leaseTransitions int32*
        6 strategy string*
        7 preferredHolder string*
    """,
}

EVENTS: dict[str, str] = {
    "Event": """
        1 metadata ObjectMeta
        2 eventTime microtime!
        3 series EventSeries*
        4 reportingController string
        5 reportingInstance string
        6 action string
        7 reason string
        8 regarding ObjectReference
        9 related ObjectReference*
        10 note string
        11 type string
        12 deprecatedSource EventSource
        13 deprecatedFirstTimestamp time
        14 deprecatedLastTimestamp time
        15 deprecatedCount int32
    """,
    "EventSeries": """
        1 count int32!
        2 lastObservedTime microtime!
    """,
}

RBAC: dict[str, str] = {
    "Role": """
        1 metadata ObjectMeta
        2 rules [PolicyRule]!
    """,
    "ClusterRole": """
        1 metadata ObjectMeta
        2 rules [PolicyRule]!
        3 aggregationRule AggregationRule*
    """,
    "PolicyRule": """
        1 verbs [string]!
        2 apiGroups [string]
        3 resources [string]
        4 resourceNames [string]
        5 nonResourceURLs [string]
    """,
    "AggregationRule": """
        1 clusterRoleSelectors [LabelSelector]
    """,
    "RoleBinding": """
        1 metadata ObjectMeta
        2 subjects [Subject]
        3 roleRef RoleRef
    """,
    "ClusterRoleBinding": """
        1 metadata ObjectMeta
        2 subjects [Subject]
        3 roleRef RoleRef
    """,
    "Subject": """
        1 kind string!
        2 apiGroup string
        3 name string!
        4 namespace string
    """,
    "RoleRef": """
        1 apiGroup string!
        2 kind string!
        3 name string!
    """,
}


def _add_lists(tables: dict[str, str], kinds: tuple[str, ...]) -> None:
    for kind in kinds:
        tables[f"{kind}List"] = f"""
            1 metadata ListMeta
            2 items [{kind}]!
        """


_add_lists(APPS, ("Deployment", "ReplicaSet"))
_add_lists(COORDINATION, ("Lease",))
_add_lists(EVENTS, ("Event",))
_add_lists(RBAC, ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"))
