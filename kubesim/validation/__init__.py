"""What kube-apiserver rejects with 422: metadata, built-in kinds and custom resource schemas.

Twins of k8s.io/apimachinery/pkg/api/validation, k8s.io/kubernetes/pkg/apis/*/validation and
apiextensions-apiserver's schema pruning, defaulting and validation. Pure functions over
dicts: each returns the causes of a 422 in upstream's order; the registry decides when to call
them.
"""
