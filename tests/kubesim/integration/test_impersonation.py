"""Impersonation headers, as kube-apiserver's WithImpersonation filter honours them.

Every part of an impersonation (the user or ServiceAccount, each group, each extra value, the
uid) is authorized for the requestor with the verb ``impersonate``; the first refused is a
403, and the request then runs as the impersonated user: its own permissions, not the
requestor's.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_rbac_enforced import call, grant, service_account

pytestmark = pytest.mark.kubesim(authorization_mode="RBAC")

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _request(
    sim: KubeSim, method: str, path: str, headers: list[tuple[str, str]], token: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request whose headers may repeat (one Impersonate-Group line per group)."""
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    body = json.dumps(REVIEW).encode() if method == "POST" else None
    conn.putrequest(method, path)
    lines = [("Content-Type", "application/json"), *headers]
    if token:
        lines.append(("Authorization", f"Bearer {token}"))
    if body is not None:
        lines.append(("Content-Length", str(len(body))))
    for key, value in lines:
        conn.putheader(key, value)
    conn.endheaders(body)
    resp = conn.getresponse()
    out = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), out


def _whoami(sim: KubeSim, headers: list[tuple[str, str]], token: str | None = None) -> dict:
    code, _, body = _request(sim, "POST", WHOAMI, headers, token)
    assert code == 201, body
    return json.loads(body)["status"]["userInfo"]


def test_the_admin_impersonates_a_user_with_groups_and_extras(sim):
    info = _whoami(
        sim,
        [
            ("Impersonate-User", "alice"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Scopes", "edit"),
            ("Impersonate-Uid", "1234"),
        ],
    )
    assert info == {
        "username": "alice",
        "uid": "1234",
        "groups": ["devs", "ops", "system:authenticated"],
        "extra": {"scopes": ["view", "edit"]},
    }


def test_a_service_account_gets_its_groups_unless_groups_are_given(sim):
    user = "system:serviceaccount:default:robot"
    info = _whoami(sim, [("Impersonate-User", user)])
    assert info["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]
    info = _whoami(sim, [("Impersonate-User", user), ("Impersonate-Group", "devs")])
    assert info["groups"] == ["devs", "system:authenticated"]
    # system:unauthenticated asked for: no system:authenticated, so not even a whoami
    headers = [("Impersonate-User", user), ("Impersonate-Group", "system:unauthenticated")]
    code, _, body = _request(sim, "POST", WHOAMI, headers)
    assert code == 403 and f'User \\"{user}\\" cannot create'.encode() in body


def test_the_impersonated_user_has_its_own_permissions(sim):
    # alice may do nothing: listing namespaces as her is refused, with her name in the 403
    code, _, body = _request(sim, "GET", "/api/v1/namespaces", [("Impersonate-User", "alice")])
    assert code == 403
    assert json.loads(body)["message"] == (
        'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group '
        '"" at the cluster scope'
    )
    assert sim.request_log[-1].user == "alice"


def test_impersonation_needs_the_impersonate_verb(sim):
    service_account(sim)
    token = sim.token_for("default", "robot")
    headers = [("Impersonate-User", "alice")]
    code, _, body = _request(sim, "GET", "/api/v1/namespaces", headers, token)
    status = json.loads(body)
    assert code == 403
    assert status["message"] == (
        'users "alice" is forbidden: User "system:serviceaccount:default:robot" cannot '
        'impersonate resource "users" in API group "" at the cluster scope'
    )
    assert status["details"] == {"name": "alice", "kind": "users"}
    # a ClusterRole allowing to impersonate alice (and only her)
    rule = {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"]}
    grant(sim, "impersonator", [dict(rule, resourceNames=["alice"])], namespace=None)
    assert _whoami(sim, headers, token)["username"] == "alice"
    code, _, body = _request(sim, "POST", WHOAMI, [("Impersonate-User", "bob")], token)
    assert code == 403 and b'users \\"bob\\" is forbidden' in body
    # each group is a request of its own
    code, _, body = _request(
        sim, "POST", WHOAMI, [*headers, ("Impersonate-Group", "system:masters")], token
    )
    assert code == 403 and json.loads(body)["message"].startswith(
        'groups "system:masters" is forbidden: User "system:serviceaccount:default:robot" '
        'cannot impersonate resource "groups"'
    )


def test_a_service_account_is_impersonated_in_its_namespace(sim):
    service_account(sim)
    service_account(sim, "target")
    token = sim.token_for("default", "robot")
    user = "system:serviceaccount:default:target"
    code, _, body = _request(sim, "POST", WHOAMI, [("Impersonate-User", user)], token)
    assert code == 403 and json.loads(body)["message"] == (
        'serviceaccounts "target" is forbidden: User "system:serviceaccount:default:robot" '
        'cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"'
    )
    rule = {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}
    grant(sim, "sa-impersonator", [rule])
    assert _whoami(sim, [("Impersonate-User", user)], token)["username"] == user


def test_groups_without_a_user_are_a_plain_500(sim):
    code, headers, body = _request(
        sim, "GET", "/api/v1/namespaces", [("Impersonate-Group", "devs")]
    )
    assert (code, headers["Content-Type"]) == (500, "text/plain; charset=utf-8")
    assert body == (
        b'Internal Server Error: "/api/v1/namespaces": requested [{Group  devs    }] '
        b"without impersonating a user\n"
    )


def test_without_headers_the_requestor_is_the_user(sim):
    assert "system:masters" in _whoami(sim, [])["groups"]
    assert call(sim, "GET", "/api/v1/namespaces")[0] == 200


@pytest.mark.kubesim(authorization_mode="AlwaysAllow")
def test_under_always_allow_anyone_may_impersonate(sim):
    assert _whoami(sim, [("Impersonate-User", "alice")])["username"] == "alice"
