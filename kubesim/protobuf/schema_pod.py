"""Schema tables of the core/v1 pod template tree (group ``core``).

PodTemplateSpec, PodSpec, Container and what they hold, from k8s.io/api's
``core/v1/generated.proto`` and ``types.go``; see :mod:`kubesim.protobuf.schema` for the
notation. This is what a Deployment's ``spec.template`` carries. Volume sources cover the
kinds in use today (hostPath, emptyDir, secret, nfs, persistentVolumeClaim, downwardAPI,
configMap, projected, csi, image); the retired in-tree cloud and storage plugins are left
out, so a field of theirs is skipped when read and dropped when written.
"""

# Container and EphemeralContainerCommon share their fields (the latter is a copy upstream).
_CONTAINER_FIELDS = """
    1 name string!
    2 image string
    3 command [string]
    4 args [string]
    5 workingDir string
    6 ports [ContainerPort]
    19 envFrom [EnvFromSource]
    7 env [EnvVar]
    8 resources ResourceRequirements
    23 resizePolicy [ContainerResizePolicy]
    24 restartPolicy string*
    25 restartPolicyRules [ContainerRestartRule]
    9 volumeMounts [VolumeMount]
    21 volumeDevices [VolumeDevice]
    10 livenessProbe Probe*
    11 readinessProbe Probe*
    22 startupProbe Probe*
    12 lifecycle Lifecycle*
    13 terminationMessagePath string
    20 terminationMessagePolicy string
    14 imagePullPolicy string
    15 securityContext SecurityContext*
    16 stdin bool
    17 stdinOnce bool
    18 tty bool
"""

POD: dict[str, str] = {
    "PodTemplateSpec": """
        1 metadata ObjectMeta
        2 spec PodSpec
    """,
    "PodSpec": """
        1 volumes [Volume]
        20 initContainers [Container]
        2 containers [Container]!
        34 ephemeralContainers [EphemeralContainer]
        3 restartPolicy string
        4 terminationGracePeriodSeconds int64*
        5 activeDeadlineSeconds int64*
        6 dnsPolicy string
        7 nodeSelector {string}
        8 serviceAccountName string
        9 serviceAccount string
        21 automountServiceAccountToken bool*
        10 nodeName string
        11 hostNetwork bool
        12 hostPID bool
        13 hostIPC bool
        27 shareProcessNamespace bool*
        14 securityContext PodSecurityContext*
        15 imagePullSecrets [LocalObjectReference]
        16 hostname string
        17 subdomain string
        18 affinity Affinity*
        19 schedulerName string
        22 tolerations [Toleration]
        23 hostAliases [HostAlias]
        24 priorityClassName string
        25 priority int32*
        26 dnsConfig PodDNSConfig*
        28 readinessGates [PodReadinessGate]
        29 runtimeClassName string*
        30 enableServiceLinks bool*
        31 preemptionPolicy string*
        32 overhead {quantity}
        33 topologySpreadConstraints [TopologySpreadConstraint]
        35 setHostnameAsFQDN bool*
        36 os PodOS*
        37 hostUsers bool*
        38 schedulingGates [PodSchedulingGate]
        39 resourceClaims [PodResourceClaim]
        40 resources ResourceRequirements*
        41 hostnameOverride string*
        42 workloadRef WorkloadReference*
    """,
    "Container": _CONTAINER_FIELDS,
    "EphemeralContainer": """
        1 ephemeralContainerCommon EphemeralContainerCommon^
        2 targetContainerName string
    """,
    "EphemeralContainerCommon": _CONTAINER_FIELDS,
    "ContainerPort": """
        1 name string
        2 hostPort int32
        3 containerPort int32!
        4 protocol string
        5 hostIP string
    """,
    "ContainerResizePolicy": """
        1 resourceName string!
        2 restartPolicy string!
    """,
    "ContainerRestartRule": """
        1 action string!
        2 exitCodes ContainerRestartRuleOnExitCodes*
    """,
    "ContainerRestartRuleOnExitCodes": """
        1 operator string!
        2 values [int32]
    """,
    "EnvFromSource": """
        1 prefix string
        2 configMapRef ConfigMapEnvSource*
        3 secretRef SecretEnvSource*
    """,
    "ConfigMapEnvSource": """
        1 localObjectReference LocalObjectReference^
        2 optional bool*
    """,
    "SecretEnvSource": """
        1 localObjectReference LocalObjectReference^
        2 optional bool*
    """,
    "EnvVar": """
        1 name string!
        2 value string
        3 valueFrom EnvVarSource*
    """,
    "EnvVarSource": """
        1 fieldRef ObjectFieldSelector*
        2 resourceFieldRef ResourceFieldSelector*
        3 configMapKeyRef ConfigMapKeySelector*
        4 secretKeyRef SecretKeySelector*
        5 fileKeyRef FileKeySelector*
    """,
    "ObjectFieldSelector": """
        1 apiVersion string
        2 fieldPath string!
    """,
    "ResourceFieldSelector": """
        1 containerName string
        2 resource string!
        3 divisor quantity
    """,
    "ConfigMapKeySelector": """
        1 localObjectReference LocalObjectReference^
        2 key string!
        3 optional bool*
    """,
    "SecretKeySelector": """
        1 localObjectReference LocalObjectReference^
        2 key string!
        3 optional bool*
    """,
    "FileKeySelector": """
        1 volumeName string!
        2 path string!
        3 key string!
        4 optional bool*
    """,
    "ResourceRequirements": """
        1 limits {quantity}
        2 requests {quantity}
        3 claims [ResourceClaim]
    """,
    "ResourceClaim": """
        1 name string!
        2 request string
    """,
    "VolumeMount": """
        1 name string!
        2 readOnly bool
        7 recursiveReadOnly string*
        3 mountPath string!
        4 subPath string
        5 mountPropagation string*
        6 subPathExpr string
    """,
    "VolumeDevice": """
        1 name string!
        2 devicePath string!
    """,
    "Probe": """
        1 handler ProbeHandler^
        2 initialDelaySeconds int32
        3 timeoutSeconds int32
        4 periodSeconds int32
        5 successThreshold int32
        6 failureThreshold int32
        7 terminationGracePeriodSeconds int64*
    """,
    "ProbeHandler": """
        1 exec ExecAction*
        2 httpGet HTTPGetAction*
        3 tcpSocket TCPSocketAction*
        4 grpc GRPCAction*
    """,
    "ExecAction": """
        1 command [string]
    """,
    "HTTPGetAction": """
        1 path string
        2 port intstr!
        3 host string
        4 scheme string
        5 httpHeaders [HTTPHeader]
    """,
    "HTTPHeader": """
        1 name string!
        2 value string!
    """,
    "TCPSocketAction": """
        1 port intstr!
        2 host string
    """,
    "GRPCAction": """
        1 port int32!
        2 service string*!
    """,
    "Lifecycle": """
        1 postStart LifecycleHandler*
        2 preStop LifecycleHandler*
        3 stopSignal string*
    """,
    "LifecycleHandler": """
        1 exec ExecAction*
        2 httpGet HTTPGetAction*
        3 tcpSocket TCPSocketAction*
        4 sleep SleepAction*
    """,
    "SleepAction": """
        1 seconds int64!
    """,
    "SecurityContext": """
        1 capabilities Capabilities*
        2 privileged bool*
        3 seLinuxOptions SELinuxOptions*
        10 windowsOptions WindowsSecurityContextOptions*
        4 runAsUser int64*
        8 runAsGroup int64*
        5 runAsNonRoot bool*
        6 readOnlyRootFilesystem bool*
        7 allowPrivilegeEscalation bool*
        9 procMount string*
        11 seccompProfile SeccompProfile*
        12 appArmorProfile AppArmorProfile*
        13 ulimits [Ulimit]
    """,
    "Ulimit": """
        1 name string!
        2 hard int64!
        3 soft int64!
    """,
    "Capabilities": """
        1 add [string]
        2 drop [string]
    """,
    "SELinuxOptions": """
        1 user string
        2 role string
        3 type string
        4 level string
    """,
    "WindowsSecurityContextOptions": """
        1 gmsaCredentialSpecName string*
        2 gmsaCredentialSpec string*
        3 runAsUserName string*
        4 hostProcess bool*
    """,
    "SeccompProfile": """
        1 type string!
        2 localhostProfile string*
    """,
    "AppArmorProfile": """
        1 type string!
        2 localhostProfile string*
    """,
    "PodSecurityContext": """
        1 seLinuxOptions SELinuxOptions*
        8 windowsOptions WindowsSecurityContextOptions*
        2 runAsUser int64*
        6 runAsGroup int64*
        3 runAsNonRoot bool*
        4 supplementalGroups [int64]
        12 supplementalGroupsPolicy string*
        5 fsGroup int64*
        7 sysctls [Sysctl]
        9 fsGroupChangePolicy string*
        10 seccompProfile SeccompProfile*
        11 appArmorProfile AppArmorProfile*
        13 seLinuxChangePolicy string*
    """,
    "Sysctl": """
        1 name string!
        2 value string!
    """,
    "Volume": """
        1 name string!
        2 volumeSource VolumeSource^
    """,
    "VolumeSource": """
        1 hostPath HostPathVolumeSource*
        2 emptyDir EmptyDirVolumeSource*
        6 secret SecretVolumeSource*
        7 nfs NFSVolumeSource*
        10 persistentVolumeClaim PersistentVolumeClaimVolumeSource*
        16 downwardAPI DownwardAPIVolumeSource*
        19 configMap ConfigMapVolumeSource*
        26 projected ProjectedVolumeSource*
        28 csi CSIVolumeSource*
        30 image ImageVolumeSource*
    """,
    "HostPathVolumeSource": """
        1 path string!
        2 type string*
    """,
    "EmptyDirVolumeSource": """
        1 medium string
        2 sizeLimit quantity*
    """,
    "SecretVolumeSource": """
        1 secretName string
        2 items [KeyToPath]
        3 defaultMode int32*
        4 optional bool*
    """,
    "KeyToPath": """
        1 key string!
        2 path string!
        3 mode int32*
    """,
    "NFSVolumeSource": """
        1 server string!
        2 path string!
        3 readOnly bool
    """,
    "PersistentVolumeClaimVolumeSource": """
        1 claimName string!
        2 readOnly bool
    """,
    "DownwardAPIVolumeSource": """
        1 items [DownwardAPIVolumeFile]
        2 defaultMode int32*
    """,
    "DownwardAPIVolumeFile": """
        1 path string!
        2 fieldRef ObjectFieldSelector*
        3 resourceFieldRef ResourceFieldSelector*
        4 mode int32*
    """,
    "ConfigMapVolumeSource": """
        1 localObjectReference LocalObjectReference^
        2 items [KeyToPath]
        3 defaultMode int32*
        4 optional bool*
    """,
    "ProjectedVolumeSource": """
        1 sources [VolumeProjection]!
        2 defaultMode int32*
    """,
    "VolumeProjection": """
        1 secret SecretProjection*
        2 downwardAPI DownwardAPIProjection*
        3 configMap ConfigMapProjection*
        4 serviceAccountToken ServiceAccountTokenProjection*
        5 clusterTrustBundle ClusterTrustBundleProjection*
    """,
    "SecretProjection": """
        1 localObjectReference LocalObjectReference^
        2 items [KeyToPath]
        4 optional bool*
    """,
    "ConfigMapProjection": """
        1 localObjectReference LocalObjectReference^
        2 items [KeyToPath]
        4 optional bool*
    """,
    "DownwardAPIProjection": """
        1 items [DownwardAPIVolumeFile]
    """,
    "ServiceAccountTokenProjection": """
        1 audience string
        2 expirationSeconds int64*
        3 path string!
    """,
    "ClusterTrustBundleProjection": """
        1 name string*
        2 signerName string*
        3 labelSelector LabelSelector*
        5 optional bool*
        4 path string!
    """,
    "CSIVolumeSource": """
        1 driver string!
        2 readOnly bool*
        3 fsType string*
        4 volumeAttributes {string}
        5 nodePublishSecretRef LocalObjectReference*
    """,
    "ImageVolumeSource": """
        1 reference string
        2 pullPolicy string
    """,
    "Toleration": """
        1 key string
        2 operator string
        3 value string
        4 effect string
        5 tolerationSeconds int64*
    """,
    "HostAlias": """
        1 ip string!
        2 hostnames [string]
    """,
    "PodDNSConfig": """
        1 nameservers [string]
        2 searches [string]
        3 options [PodDNSConfigOption]
    """,
    "PodDNSConfigOption": """
        1 name string
        2 value string*
    """,
    "PodReadinessGate": """
        1 conditionType string!
    """,
    "TopologySpreadConstraint": """
        1 maxSkew int32!
        2 topologyKey string!
        3 whenUnsatisfiable string!
        4 labelSelector LabelSelector*
        5 minDomains int32*
        6 nodeAffinityPolicy string*
        7 nodeTaintsPolicy string*
        8 matchLabelKeys [string]
    """,
    "PodOS": """
        1 name string!
    """,
    "PodSchedulingGate": """
        1 name string!
    """,
    "PodResourceClaim": """
        1 name string!
        3 resourceClaimName string*
        4 resourceClaimTemplateName string*
    """,
    "WorkloadReference": """
        1 name string!
        2 podGroup string!
        3 podGroupReplicaKey string
    """,
    "Affinity": """
        1 nodeAffinity NodeAffinity*
        2 podAffinity PodAffinity*
        3 podAntiAffinity PodAntiAffinity*
    """,
    "NodeAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector*
        2 preferredDuringSchedulingIgnoredDuringExecution [PreferredSchedulingTerm]
    """,
    "NodeSelector": """
        1 nodeSelectorTerms [NodeSelectorTerm]!
    """,
    "NodeSelectorTerm": """
        1 matchExpressions [NodeSelectorRequirement]
        2 matchFields [NodeSelectorRequirement]
    """,
    "NodeSelectorRequirement": """
        1 key string!
        2 operator string!
        3 values [string]
    """,
    "PreferredSchedulingTerm": """
        1 weight int32!
        2 preference NodeSelectorTerm
    """,
    "PodAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution [PodAffinityTerm]
        2 preferredDuringSchedulingIgnoredDuringExecution [WeightedPodAffinityTerm]
    """,
    "PodAntiAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution [PodAffinityTerm]
        2 preferredDuringSchedulingIgnoredDuringExecution [WeightedPodAffinityTerm]
    """,
    "PodAffinityTerm": """
        1 labelSelector LabelSelector*
        2 namespaces [string]
        3 topologyKey string!
        4 namespaceSelector LabelSelector*
        5 matchLabelKeys [string]
        6 mismatchLabelKeys [string]
    """,
    "WeightedPodAffinityTerm": """
        1 weight int32!
        2 podAffinityTerm PodAffinityTerm
    """,
}
