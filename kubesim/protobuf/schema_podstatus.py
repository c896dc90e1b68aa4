"""Schema tables of the Pod object and its status (group ``core``): Pod, PodList, PodStatus,
the container statuses the kubelet writes, and Binding.

From k8s.io/api's ``core/v1/generated.proto`` and ``types.go`` (v1.36); see
:mod:`kubesim.protobuf.schema` for the notation. The pod spec is in
:mod:`kubesim.protobuf.schema_pod`, shared with the pod templates of Deployments and
ReplicaSets. A Pod is what client-go's protobuf clients (the e2e framework, the kubelet, the
scheduler) send and read, so without these tables they could not create one.
"""

POD_STATUS: dict[str, str] = {
    "Pod": """
        1 metadata ObjectMeta
        2 spec PodSpec
        3 status PodStatus
    """,
    "PodList": """
        1 metadata ListMeta
        2 items [Pod]!
    """,
    "Binding": """
        1 metadata ObjectMeta
        2 target ObjectReference
    """,
    "PodStatus": """
        17 observedGeneration int64
        1 phase string
        2 conditions [PodCondition]
        3 message string
        4 reason string
        11 nominatedNodeName string
        5 hostIP string
        16 hostIPs [HostIP]
        6 podIP string
        12 podIPs [PodIP]
        7 startTime time*
        10 initContainerStatuses [ContainerStatus]
        8 containerStatuses [ContainerStatus]
        9 qosClass string
        13 ephemeralContainerStatuses [ContainerStatus]
        14 resize string
        15 resourceClaimStatuses [PodResourceClaimStatus]
        18 extendedResourceClaimStatus PodExtendedResourceClaimStatus*
        19 allocatedResources {quantity}
        20 resources ResourceRequirements*
    """,
    "PodCondition": """
        1 type string!
        7 observedGeneration int64
        2 status string!
        3 lastProbeTime time
        4 lastTransitionTime time
        5 reason string
        6 message string
    """,
    "HostIP": """
        1 ip string!
    """,
    "PodIP": """
        1 ip string!
    """,
    "ContainerStatus": """
        1 name string!
        2 state ContainerState
        3 lastState ContainerState
        4 ready bool!
        5 restartCount int32!
        6 image string!
        7 imageID string!
        8 containerID string
        9 started bool*
        10 allocatedResources {quantity}
        11 resources ResourceRequirements*
        12 volumeMounts [VolumeMountStatus]
        13 user ContainerUser*
        14 allocatedResourcesStatus [ResourceStatus]
        15 stopSignal string*
    """,
    "ContainerState": """
        1 waiting ContainerStateWaiting*
        2 running ContainerStateRunning*
        3 terminated ContainerStateTerminated*
    """,
    "ContainerStateWaiting": """
        1 reason string
        2 message string
    """,
    "ContainerStateRunning": """
        1 startedAt time
    """,
    "ContainerStateTerminated": """
        1 exitCode int32!
        2 signal int32
        3 reason string
        4 message string
        5 startedAt time
        6 finishedAt time
        7 containerID string
    """,
    "VolumeMountStatus": """
        1 name string!
        2 mountPath string!
        3 readOnly bool
        4 recursiveReadOnly string*
    """,
    "ContainerUser": """
        1 linux LinuxContainerUser*
    """,
    "LinuxContainerUser": """
        1 uid int64!
        2 gid int64!
        3 supplementalGroups [int64]
    """,
    "ResourceStatus": """
        1 name string!
        2 resources [ResourceHealth]
    """,
    "ResourceHealth": """
        1 resourceID string!
        2 health string
    """,
    "PodResourceClaimStatus": """
        1 name string!
        2 resourceClaimName string*
    """,
    "PodExtendedResourceClaimStatus": """
        1 requestMappings [ContainerExtendedResourceRequest]!
        2 resourceClaimName string!
    """,
    "ContainerExtendedResourceRequest": """
        1 containerName string!
        2 resourceName string!
        3 requestName string!
    """,
}
