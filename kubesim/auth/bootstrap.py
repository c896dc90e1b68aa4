"""The default ClusterRoles and ClusterRoleBindings every cluster starts with (a subset).

Twin of plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, which the real server
reconciles into storage at start-up. kubesim creates these when authorization is RBAC: the
roles that let any user discover the API and ask about itself, cluster-admin for
system:masters, and system:auth-delegator, which a delegating server's ServiceAccount is bound
to. The aggregated roles (admin, edit, view) and the controllers' and nodes'
roles are left out.

``kubeadm_cluster_admins`` is kubeadm's, not the API server's (cmd/kubeadm/app/phases/kubeconfig,
``EnsureAdminClusterRoleBinding``, since v1.29): the binding that makes the group of kubeadm's
and kind's admin certificate a cluster-admin, which kubesim creates when it mints that
certificate.
"""

from __future__ import annotations

from kubesim.auth.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, SYSTEM_PRIVILEGED_GROUP

__all__ = [
    "CLUSTER_ADMINS_GROUP",
    "KUBEADM_ADMIN_USER",
    "cluster_role_bindings",
    "cluster_roles",
    "kubeadm_cluster_admins",
]

_RBAC = "rbac.authorization.k8s.io"
# What the real bootstrap policy labels its objects with.
_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTO_UPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

# kubeadm's admin.conf certificate: its Subject's CN and O (kubeadmconstants
# ClusterAdminsGroupAndClusterRoleBinding names both the group and its binding)
KUBEADM_ADMIN_USER = "kubernetes-admin"
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"


def _role(name: str, rules: list[dict]) -> dict:
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": dict(_LABELS), "annotations": dict(_AUTO_UPDATE)},
        "rules": rules,
    }


def _binding(name: str, groups: list[str]) -> dict:
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(_LABELS), "annotations": dict(_AUTO_UPDATE)},
        "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": g} for g in groups],
    }


def cluster_roles() -> list[dict]:
    return [
        # a "root" role which can do absolutely anything
        _role(
            "cluster-admin",
            [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
            ],
        ),
        # just enough to find out whether the server is ready and which APIs it serves
        _role(
            "system:discovery",
            [
                {
                    "verbs": ["get"],
                    "nonResourceURLs": [
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/",
                    ],
                }
            ],
        ),
        # a "normal" user may learn about itself
        _role(
            "system:basic-user",
            [
                {
                    "verbs": ["create"],
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                },
                {
                    "verbs": ["create"],
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                },
            ],
        ),
        # for a server that delegates authentication and authorization to this one (a
        # metrics endpoint, an aggregated API server); bound to no one by default
        _role(
            "system:auth-delegator",
            [
                {
                    "verbs": ["create"],
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["tokenreviews"],
                },
                {
                    "verbs": ["create"],
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["subjectaccessreviews"],
                },
            ],
        ),
        # insensitive cluster information, for everyone
        _role(
            "system:public-info-viewer",
            [
                {
                    "verbs": ["get"],
                    "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                }
            ],
        ),
    ]


def cluster_role_bindings() -> list[dict]:
    return [
        _binding("cluster-admin", [SYSTEM_PRIVILEGED_GROUP]),
        _binding("system:discovery", [ALL_AUTHENTICATED]),
        _binding("system:basic-user", [ALL_AUTHENTICATED]),
        _binding("system:public-info-viewer", [ALL_AUTHENTICATED, ALL_UNAUTHENTICATED]),
    ]


def kubeadm_cluster_admins() -> dict:
    """kubeadm's ClusterRoleBinding ``kubeadm:cluster-admins``: that group is cluster-admin.
    kubeadm writes it through the API with no labels or annotations (it is not the bootstrap
    policy's, and the server does not reconcile it)."""
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": CLUSTER_ADMINS_GROUP},
        "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": CLUSTER_ADMINS_GROUP}],
    }
