"""Schema tables of k8s.io/api/core/v1 objects (group ``core``), the pod template aside.

From k8s.io/api's ``core/v1/generated.proto`` and ``types.go``; see
:mod:`kubesim.protobuf.schema` for the notation. The pod template tree (PodSpec, Container,
volumes, probes, ...) is in :mod:`kubesim.protobuf.schema_pod`.
"""

CORE: dict[str, str] = {
    "Namespace": """
        1 metadata ObjectMeta
        2 spec NamespaceSpec
        3 status NamespaceStatus
    """,
    "NamespaceSpec": """
        1 finalizers [string]
    """,
    "NamespaceStatus": """
        1 phase string
        2 conditions [NamespaceCondition]
    """,
    "NamespaceCondition": """
        1 type string!
        2 status string!
        4 lastTransitionTime time
        5 reason string
        6 message string
    """,
    "ConfigMap": """
        1 metadata ObjectMeta
        4 immutable bool*
        2 data {string}
        3 binaryData {bytes}
    """,
    "Secret": """
        1 metadata ObjectMeta
        5 immutable bool*
        2 data {bytes}
        4 stringData {string}
        3 type string
    """,
    "ServiceAccount": """
        1 metadata ObjectMeta
        2 secrets [ObjectReference]
        3 imagePullSecrets [LocalObjectReference]
        4 automountServiceAccountToken bool*
    """,
    "ObjectReference": """
        1 kind string
        2 namespace string
        3 name string
        4 uid string
        5 apiVersion string
        6 resourceVersion string
        7 fieldPath string
    """,
    "LocalObjectReference": """
        1 name string
    """,
    "Service": """
        1 metadata ObjectMeta
        2 spec ServiceSpec
        3 status ServiceStatus
    """,
    "ServiceSpec": """
        1 ports [ServicePort]
        2 selector {string}
        3 clusterIP string
        18 clusterIPs [string]
        4 type string
        5 externalIPs [string]
        7 sessionAffinity string
        8 loadBalancerIP string
        9 loadBalancerSourceRanges [string]
        10 externalName string
        11 externalTrafficPolicy string
        12 healthCheckNodePort int32
        13 publishNotReadyAddresses bool
        14 sessionAffinityConfig SessionAffinityConfig*
        19 ipFamilies [string]
        17 ipFamilyPolicy string*
        20 allocateLoadBalancerNodePorts bool*
        21 loadBalancerClass string*
        22 internalTrafficPolicy string*
        23 trafficDistribution string*
    """,
    "ServicePort": """
        1 name string
        2 protocol string
        6 appProtocol string*
        3 port int32!
        4 targetPort intstr
        5 nodePort int32
    """,
    "SessionAffinityConfig": """
        1 clientIP ClientIPConfig*
    """,
    "ClientIPConfig": """
        1 timeoutSeconds int32*
    """,
    "ServiceStatus": """
        1 loadBalancer LoadBalancerStatus
        2 conditions [Condition]
    """,
    "LoadBalancerStatus": """
        1 ingress [LoadBalancerIngress]
    """,
    "LoadBalancerIngress": """
        1 ip string
        2 hostname string
        3 ipMode string*
        4 ports [PortStatus]
    """,
    "PortStatus": """
        1 port int32!
        2 protocol string!
        3 error string*
    """,
    "Event": """
        1 metadata ObjectMeta
        2 involvedObject ObjectReference
        3 reason string
        4 message string
        5 source EventSource
        6 firstTimestamp time
        7 lastTimestamp time
        8 count int32
        9 type string
        10 eventTime microtime
        11 series EventSeries*
        12 action string
        13 related ObjectReference*
        14 reportingComponent string!
        15 reportingInstance string!
    """,
    "EventSource": """
        1 component string
        2 host string
    """,
    "EventSeries": """
        1 count int32
        2 lastObservedTime microtime
    """,
}

# Every served kind has a list kind: standard list metadata and the items.
for _kind in ("Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "Event"):
    CORE[f"{_kind}List"] = f"""
        1 metadata ListMeta
        2 items [{_kind}]!
    """
