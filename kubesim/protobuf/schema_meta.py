"""Schema tables of k8s.io/apimachinery/pkg/apis/meta/v1 (group ``meta``).

From apimachinery's ``pkg/apis/meta/v1/generated.proto`` and ``types.go``; see
:mod:`kubesim.protobuf.schema` for the notation. Table (and its rows and columns) is marked
``+protobuf=false`` upstream and has no protobuf form, so it is not here.
"""

META: dict[str, str] = {
    "ListMeta": """
        1 selfLink string
        2 resourceVersion string
        3 continue string
        4 remainingItemCount int64*
        5 shardInfo ShardInfo*
    """,
    "ShardInfo": """
        1 selector string!
    """,
    "ObjectMeta": """
        1 name string
        2 generateName string
        3 namespace string
        4 selfLink string
        5 uid string
        6 resourceVersion string
        7 generation int64
        8 creationTimestamp time
        9 deletionTimestamp time*
        10 deletionGracePeriodSeconds int64*
        11 labels {string}
        12 annotations {string}
        13 ownerReferences [OwnerReference]
        14 finalizers [string]
        17 managedFields [ManagedFieldsEntry]
    """,
    "OwnerReference": """
        5 apiVersion string!
        1 kind string!
        3 name string!
        4 uid string!
        6 controller bool*
        7 blockOwnerDeletion bool*
    """,
    "ManagedFieldsEntry": """
        1 manager string
        2 operation string
        3 apiVersion string
        4 time time*
        6 fieldsType string
        7 fieldsV1 fieldsv1*
        8 subresource string
    """,
    "LabelSelector": """
        1 matchLabels {string}
        2 matchExpressions [LabelSelectorRequirement]
    """,
    "LabelSelectorRequirement": """
        1 key string!
        2 operator string!
        3 values [string]
    """,
    "Condition": """
        1 type string!
        2 status string!
        3 observedGeneration int64
        4 lastTransitionTime time!
        5 reason string!
        6 message string!
    """,
    "Status": """
        1 metadata ListMeta
        2 status string
        3 message string
        4 reason string
        5 details StatusDetails*
        6 code int32
    """,
    "StatusDetails": """
        1 name string
        2 group string
        3 kind string
        6 uid string
        4 causes [StatusCause]
        5 retryAfterSeconds int32
    """,
    "StatusCause": """
        1 reason string
        2 message string
        3 field string
    """,
    "DeleteOptions": """
        1 gracePeriodSeconds int64*
        2 preconditions Preconditions*
        3 orphanDependents bool*
        4 propagationPolicy string*
        5 dryRun [string]
        6 ignoreStoreReadErrorWithClusterBreakingPotential bool*
    """,
    "Preconditions": """
        1 uid string*
        2 resourceVersion string*
    """,
    "CreateOptions": """
        1 dryRun [string]
        3 fieldManager string
        4 fieldValidation string
    """,
    "WatchEvent": """
        1 type string!
        2 object rawext!
    """,
    "PartialObjectMetadata": """
        1 metadata ObjectMeta
    """,
    "PartialObjectMetadataList": """
        1 metadata ListMeta
        2 items [PartialObjectMetadata]!
    """,
    # meta.k8s.io/v1beta1's PartialObjectMetadataList (apis/meta/v1beta1): the same fields
    # with the numbers the other way round; its items are v1's PartialObjectMetadata.
    "PartialObjectMetadataListV1beta1": """
        2 metadata ListMeta
        1 items [PartialObjectMetadata]!
    """,
    "List": """
        1 metadata ListMeta
        2 items [rawext]!
    """,
}
