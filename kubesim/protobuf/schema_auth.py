"""Schema tables of authentication.k8s.io/v1 and authorization.k8s.io/v1: the review kinds.

From k8s.io/api's ``authentication/v1`` and ``authorization/v1`` ``generated.proto`` and
``types.go``; see :mod:`kubesim.protobuf.schema` for the notation. kubectl sends these as
protobuf (``kubectl create token``, ``auth can-i``, ``auth whoami``). The ``extra`` maps of
UserInfo and SubjectAccessReviewSpec (``map<string, ExtraValue>``, a message whose JSON is a
bare list) are not in the tables: the notation has no list-wrapper type, so they are dropped
from protobuf bodies both ways (JSON keeps them).
"""

AUTHENTICATION: dict[str, str] = {
    "TokenRequest": """
        1 metadata ObjectMeta
        2 spec TokenRequestSpec!
        3 status TokenRequestStatus
    """,
    "TokenRequestSpec": """
        1 audiences [string]!
        4 expirationSeconds int64*
        3 boundObjectRef BoundObjectReference*!
    """,
    "BoundObjectReference": """
        1 kind string
        2 apiVersion string
        3 name string
        4 uid string
    """,
    "TokenRequestStatus": """
        1 token string!
        2 expirationTimestamp time!
    """,
    "TokenReview": """
        1 metadata ObjectMeta
        2 spec TokenReviewSpec!
        3 status TokenReviewStatus
    """,
    "TokenReviewSpec": """
        1 token string
        2 audiences [string]
    """,
    "TokenReviewStatus": """
        1 authenticated bool
        2 user UserInfo
        4 audiences [string]
        3 error string
    """,
    "UserInfo": """
        1 username string
        2 uid string
        3 groups [string]
    """,
    "SelfSubjectReview": """
        1 metadata ObjectMeta
        2 status SelfSubjectReviewStatus
    """,
    "SelfSubjectReviewStatus": """
        1 userInfo UserInfo
    """,
}

AUTHORIZATION: dict[str, str] = {
    "SubjectAccessReview": """
        1 metadata ObjectMeta
        2 spec SubjectAccessReviewSpec!
        3 status SubjectAccessReviewStatus
    """,
    "LocalSubjectAccessReview": """
        1 metadata ObjectMeta
        2 spec SubjectAccessReviewSpec!
        3 status SubjectAccessReviewStatus
    """,
    "SelfSubjectAccessReview": """
        1 metadata ObjectMeta
        2 spec SelfSubjectAccessReviewSpec!
        3 status SubjectAccessReviewStatus
    """,
    "SubjectAccessReviewSpec": """
        1 resourceAttributes ResourceAttributes*
        2 nonResourceAttributes NonResourceAttributes*
        3 user string
        4 groups [string]
        6 uid string
    """,
    "SelfSubjectAccessReviewSpec": """
        1 resourceAttributes ResourceAttributes*
        2 nonResourceAttributes NonResourceAttributes*
    """,
    "ResourceAttributes": """
        1 namespace string
        2 verb string
        3 group string
        4 version string
        5 resource string
        6 subresource string
        7 name string
    """,
    "NonResourceAttributes": """
        1 path string
        2 verb string
    """,
    "SubjectAccessReviewStatus": """
        1 allowed bool!
        4 denied bool
        2 reason string
        3 evaluationError string
    """,
    "SelfSubjectRulesReview": """
        1 metadata ObjectMeta
        2 spec SelfSubjectRulesReviewSpec!
        3 status SubjectRulesReviewStatus
    """,
    "SelfSubjectRulesReviewSpec": """
        1 namespace string
    """,
    "SubjectRulesReviewStatus": """
        1 resourceRules [ResourceRule]!
        2 nonResourceRules [NonResourceRule]!
        3 incomplete bool!
        4 evaluationError string
    """,
    "ResourceRule": """
        1 verbs [string]!
        2 apiGroups [string]
        3 resources [string]
        4 resourceNames [string]
    """,
    "NonResourceRule": """
        1 verbs [string]!
        2 nonResourceURLs [string]
    """,
}
