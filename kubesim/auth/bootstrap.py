"""The default ClusterRoles and ClusterRoleBindings every cluster starts with (a subset).

Twin of plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, which the real server
reconciles into storage at start-up. kubesim creates these when authorization is RBAC: the
roles that let any user discover the API and ask about itself, cluster-admin for
system:masters, and system:auth-delegator, which a delegating server's ServiceAccount is bound
to. The aggregated roles (admin, edit, view) and the controllers' and nodes'
roles are left out.
"""

from __future__ import annotations

from kubesim.auth.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, SYSTEM_PRIVILEGED_GROUP

__all__ = ["cluster_role_bindings", "cluster_roles"]

_RBAC = "rbac.authorization.k8s.io"
# What the real bootstrap policy labels its objects with.
_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTO_UPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


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
