"""Schema tables of the groups kubectl does not link: apiregistration.k8s.io/v1 (APIService).

From kube-aggregator's ``pkg/apis/apiregistration/v1/generated.proto`` and ``types.go``,
written by hand because hack/gen_protobuf_tables.py reads kubectl's types, and kubectl does not
import kube-aggregator; see :mod:`kubesim.protobuf.schema` for the notation.
"""

EXTENSIONS: dict[str, dict[str, str]] = {
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
