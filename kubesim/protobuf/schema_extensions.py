"""Schema tables of the groups kubectl does not link: apiextensions.k8s.io/v1 (CRDs) and
apiregistration.k8s.io/v1 (APIServices).

From apiextensions-apiserver's and kube-aggregator's ``pkg/apis/*/v1/generated.proto`` and
``types.go``, written by hand because hack/gen_protobuf_tables.py reads kubectl's types and
kubectl imports neither; see :mod:`kubesim.protobuf.schema` for the notation. A CRD version's
openAPIV3Schema is the ``jsonschema`` value type (:mod:`kubesim.protobuf.jsonschema`).
"""

EXTENSIONS: dict[str, dict[str, str]] = {
    "apiextensions": {
        "CustomResourceDefinition": """
            1 metadata ObjectMeta
            2 spec CustomResourceDefinitionSpec
            3 status CustomResourceDefinitionStatus
        """,
        "CustomResourceDefinitionList": """
            1 metadata ListMeta
            2 items [CustomResourceDefinition]!
        """,
        "CustomResourceDefinitionSpec": """
            1 group string!
            3 names CustomResourceDefinitionNames
            4 scope string!
            7 versions [CustomResourceDefinitionVersion]!
            9 conversion CustomResourceConversion*
            10 preserveUnknownFields bool
        """,
        "CustomResourceDefinitionNames": """
            1 plural string!
            2 singular string
            3 shortNames [string]
            4 kind string!
            5 listKind string
            6 categories [string]
        """,
        "CustomResourceDefinitionVersion": """
            1 name string!
            2 served bool!
            3 storage bool!
            7 deprecated bool
            8 deprecationWarning string*
            4 schema CustomResourceValidation*
            5 subresources CustomResourceSubresources*
            6 additionalPrinterColumns [CustomResourceColumnDefinition]
            9 selectableFields [SelectableField]
        """,
        "SelectableField": """
            1 jsonPath string!
        """,
        "CustomResourceValidation": """
            1 openAPIV3Schema jsonschema*
        """,
        "CustomResourceSubresources": """
            1 status CustomResourceSubresourceStatus*
            2 scale CustomResourceSubresourceScale*
        """,
        "CustomResourceSubresourceStatus": "",
        "CustomResourceSubresourceScale": """
            1 specReplicasPath string!
            2 statusReplicasPath string!
            3 labelSelectorPath string*
        """,
        "CustomResourceColumnDefinition": """
            1 name string!
            2 type string!
            3 format string
            4 description string
            5 priority int32
            6 jsonPath string!
        """,
        "CustomResourceConversion": """
            1 strategy string!
            2 webhook WebhookConversion*
        """,
        "WebhookConversion": """
            2 clientConfig WebhookClientConfig*
            3 conversionReviewVersions [string]!
        """,
        "WebhookClientConfig": """
            3 url string*
            1 service ServiceReference*
            2 caBundle bytes
        """,
        "ServiceReference": """
            1 namespace string!
            2 name string!
            3 path string*
            4 port int32*
        """,
        "CustomResourceDefinitionStatus": """
            1 conditions [CustomResourceDefinitionCondition]! ~type
            2 acceptedNames CustomResourceDefinitionNames
            3 storedVersions [string]!
        """,
        "CustomResourceDefinitionCondition": """
            1 type string!
            2 status string!
            3 lastTransitionTime time
            4 reason string
            5 message string
        """,
    },
    "apiregistration": {
        "APIService": """
            1 metadata ObjectMeta
            2 spec APIServiceSpec
            3 status APIServiceStatus
        """,
        "APIServiceList": """
            1 metadata ListMeta
            2 items [APIService]!
        """,
        "APIServiceSpec": """
            1 service ServiceReference*
            2 group string
            3 version string
            4 insecureSkipTLSVerify bool
            5 caBundle bytes
            7 groupPriorityMinimum int32!
            8 versionPriority int32!
        """,
        "ServiceReference": """
            1 namespace string
            2 name string
            3 port int32*
        """,
        "APIServiceStatus": """
            1 conditions [APIServiceCondition] ~type
        """,
        "APIServiceCondition": """
            1 type string!
            2 status string!
            3 lastTransitionTime time
            4 reason string
            5 message string
        """,
    },
}
