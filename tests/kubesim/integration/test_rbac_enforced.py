"""kubesim with ``authorization_mode="RBAC"`` over HTTP: tokens, reviews, 401s and 403s.

What a cluster does and a test of a controller's RBAC (or of a metrics endpoint that delegates
authentication and authorization to the API server) relies on: TokenRequest minting tokens
the server then accepts for the ServiceAccount, TokenReview and the access reviews answering
from the same authenticator and authorizer that guard every request, and the real wording of
the 401 and 403 Status bodies.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from kubesim import KubeSim
from kubesim.protobuf import codec as protobuf

pytestmark = pytest.mark.kubesim(authorization_mode="RBAC")

NS = "default"
SA_USER = f"system:serviceaccount:{NS}:robot"
SA_GROUPS = ["system:serviceaccounts", f"system:serviceaccounts:{NS}", "system:authenticated"]
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1"
TOKEN_PATH = f"/api/v1/namespaces/{NS}/serviceaccounts/robot/token"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def call(
    sim: KubeSim,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request; the decoded JSON answer (or raw bytes when it is not JSON)."""
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(sim.url + path, method=method, data=data)
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            code, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        code, raw = err.code, err.read()
    try:
        return code, json.loads(raw)
    except ValueError:
        return code, raw


def create(sim: KubeSim, path: str, body: dict) -> dict:
    code, out = call(sim, "POST", path, body=body)
    assert code == 201, out
    return out


def service_account(sim: KubeSim, name: str = "robot") -> dict:
    return create(sim, f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": name}})


def grant(sim: KubeSim, name: str, rules: list[dict], namespace: str | None = NS) -> None:
    """A Role (or ClusterRole) with these rules, bound to the robot ServiceAccount."""
    subject = {"kind": "ServiceAccount", "name": "robot", "namespace": NS}
    ref = {"apiGroup": "rbac.authorization.k8s.io", "name": name}
    if namespace:
        create(
            sim,
            f"{RBAC}/namespaces/{namespace}/roles",
            {"metadata": {"name": name}, "rules": rules},
        )
        create(
            sim,
            f"{RBAC}/namespaces/{namespace}/rolebindings",
            {"metadata": {"name": name}, "roleRef": {**ref, "kind": "Role"}, "subjects": [subject]},
        )
    else:
        create(sim, f"{RBAC}/clusterroles", {"metadata": {"name": name}, "rules": rules})
        create(
            sim,
            f"{RBAC}/clusterrolebindings",
            {
                "metadata": {"name": name},
                "roleRef": {**ref, "kind": "ClusterRole"},
                "subjects": [subject],
            },
        )


def token_request(spec: dict | None = None) -> dict:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {}}


def self_review(sim: KubeSim, token: str, attributes: dict, kind: str = "resource") -> dict:
    key = "resourceAttributes" if kind == "resource" else "nonResourceAttributes"
    code, out = call(
        sim,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        token,
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {key: attributes},
        },
    )
    assert code == 201, out
    return out["status"]


def forbidden_message(sim: KubeSim, method: str, path: str, token: str, body: Any = None) -> str:
    code, out = call(sim, method, path, token, body)
    assert code == 403, out
    assert out["kind"] == "Status" and out["reason"] == "Forbidden" and out["code"] == 403
    return out["message"]


@pytest.fixture
def robot(sim: KubeSim) -> str:
    """The robot ServiceAccount's token, minted over HTTP."""
    service_account(sim)
    return sim.token_for(NS, "robot")


# ---- TokenRequest ------------------------------------------------------------------------------


def test_token_request_answers_201_with_a_token_and_its_expiry(sim):
    service_account(sim)
    before = time.time()
    code, out = call(sim, "POST", TOKEN_PATH, body=token_request())
    assert code == 201, out
    assert (out["kind"], out["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    assert out["metadata"]["namespace"] == NS
    assert out["spec"]["expirationSeconds"] == 3600  # the default
    assert out["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    token, expiry = out["status"]["token"], out["status"]["expirationTimestamp"]
    assert isinstance(token, str) and len(token) > 100
    expires = time.mktime(time.strptime(expiry, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert before + 3600 - 2 <= expires <= time.time() + 3600 + 1

    code, out = call(sim, "POST", TOKEN_PATH, body=token_request({"expirationSeconds": 1200}))
    assert code == 201 and out["spec"]["expirationSeconds"] == 1200
    expires = (
        time.mktime(time.strptime(out["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
        - time.timezone
    )
    assert before + 1200 - 2 <= expires <= time.time() + 1200 + 1


def test_token_request_for_a_missing_service_account_is_404(sim):
    code, out = call(sim, "POST", TOKEN_PATH, body=token_request())
    assert code == 404
    assert out["reason"] == "NotFound"
    assert out["message"] == 'serviceaccounts "robot" not found'
    assert out["details"] == {"name": "robot", "kind": "serviceaccounts"}


def test_token_request_shorter_than_ten_minutes_is_422(sim):
    service_account(sim)
    code, out = call(sim, "POST", TOKEN_PATH, body=token_request({"expirationSeconds": 599}))
    assert code == 422
    assert out["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
        "value: 599: may not specify a duration less than 10 minutes"
    )


def test_a_service_account_without_rbac_may_not_mint_tokens(sim, robot):
    message = forbidden_message(sim, "POST", TOKEN_PATH, robot, token_request())
    assert message == (
        f'serviceaccounts "robot" is forbidden: User "{SA_USER}" cannot create resource '
        f'"serviceaccounts/token" in API group "" in the namespace "{NS}"'
    )


# ---- authentication ----------------------------------------------------------------------------


def test_the_token_authenticates_as_the_service_account(sim, robot):
    code, out = call(
        sim,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        robot,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert code == 201, out
    user = out["status"]["userInfo"]
    assert user["username"] == SA_USER
    assert user["groups"] == SA_GROUPS
    assert sim.request_log[-1].user == SA_USER
    sa = call(sim, "GET", f"/api/v1/namespaces/{NS}/serviceaccounts/robot")[1]
    assert user["uid"] == sa["metadata"]["uid"]
    [credential] = user["extra"]["authentication.kubernetes.io/credential-id"]
    assert credential.startswith("JTI=")


def test_token_review_of_a_minted_token(sim, robot):
    code, out = call(
        sim,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": robot},
        },
    )
    assert code == 201, out
    status = out["status"]
    assert status["authenticated"] is True
    assert status["user"]["username"] == SA_USER
    assert status["user"]["groups"] == SA_GROUPS
    assert status["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    assert "error" not in status


def test_system_auth_delegator_lets_a_bound_service_account_review_tokens_and_access(sim, robot):
    """The bootstrap role a delegating server's ServiceAccount is bound to: the two reviews,
    nothing else, and only once bound."""
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    review["spec"] = {"token": robot}
    access = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": SA_USER, "nonResourceAttributes": {"path": "/metrics", "verb": "get"}},
    }
    token_reviews = "/apis/authentication.k8s.io/v1/tokenreviews"
    access_reviews = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    assert call(sim, "POST", token_reviews, robot, review)[0] == 403
    create(
        sim,
        f"{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": "robot-auth-delegator"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "system:auth-delegator",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": NS}],
        },
    )
    code, out = call(sim, "POST", token_reviews, robot, review)
    assert code == 201, out
    assert out["status"]["user"]["username"] == SA_USER
    code, out = call(sim, "POST", access_reviews, robot, access)
    assert code == 201, out
    # the role grants the reviews only
    assert call(sim, "GET", f"/api/v1/namespaces/{NS}/secrets", robot)[0] == 403


def test_token_review_of_an_unknown_token_is_not_authenticated(sim):
    code, out = call(
        sim, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body={"spec": {"token": "nope"}}
    )
    assert code == 201, out
    # authenticated false is omitted (omitempty), the user is an empty struct
    assert out["status"] == {"user": {}, "error": "invalid bearer token"}
    code, out = call(sim, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body={"spec": {}})
    assert code == 400
    assert out["message"] == "token is required for TokenReview in authentication"


def test_token_review_for_another_audience(sim, robot):
    code, out = call(
        sim,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        body={"spec": {"token": robot, "audiences": ["https://metrics.example"]}},
    )
    assert code == 201
    assert "authenticated" not in out["status"]
    assert out["status"]["error"] == (
        'token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the '
        'target audiences ["https://metrics.example"]'
    )


def test_a_bad_token_is_401_with_the_real_status_everywhere(sim):
    for path in ("/healthz", "/version", "/api", f"{FOOS}/foos"):
        code, out = call(sim, "GET", path, "not-a-token")
        assert code == 401, path
        assert out == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        }


def test_an_expired_token_is_rejected(sim, robot):
    assert call(sim, "GET", "/api", robot)[0] == 200
    real = sim.auth.issuer.clock
    sim.auth.issuer.clock = lambda: real() + 3600 + 61  # past expiry and the minute of leeway
    try:
        assert call(sim, "GET", "/api", robot)[0] == 401
        code, out = call(
            sim,
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            body={"spec": {"token": robot}},
        )
        assert out["status"] == {"user": {}, "error": "service account token has expired"}
    finally:
        sim.auth.issuer.clock = real
    assert call(sim, "GET", "/api", robot)[0] == 200


def test_the_token_of_a_deleted_service_account_is_rejected_even_if_it_is_recreated(sim, robot):
    assert call(sim, "GET", "/api", robot)[0] == 200
    old_uid = call(sim, "GET", f"/api/v1/namespaces/{NS}/serviceaccounts/robot")[1]["metadata"][
        "uid"
    ]
    assert call(sim, "DELETE", f"/api/v1/namespaces/{NS}/serviceaccounts/robot")[0] == 200
    assert call(sim, "GET", "/api", robot)[0] == 401
    review = {"spec": {"token": robot}}
    out = call(sim, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=review)[1]
    assert out["status"]["error"] == 'serviceaccounts "robot" not found'
    new_uid = service_account(sim)["metadata"]["uid"]
    assert call(sim, "GET", "/api", robot)[0] == 401
    out = call(sim, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=review)[1]
    assert out["status"]["error"] == (
        f"service account UID ({new_uid}) does not match claim ({old_uid})"
    )


def test_a_token_signed_by_another_kubesim_is_rejected(sim, robot, kubesim_factory):
    other = kubesim_factory(authorization_mode="RBAC", crds=[])
    service_account(other)
    assert call(other, "GET", "/api", robot)[0] == 401
    out = call(
        other,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        body={"spec": {"token": robot}},
    )[1]
    assert out["status"]["error"] == "go-jose/go-jose: error in cryptographic primitive"


# ---- authorization -----------------------------------------------------------------------------


def test_403_messages_for_each_kind_of_request(sim, robot):
    assert forbidden_message(sim, "GET", f"{FOOS}/namespaces/{NS}/foos/x", robot) == (
        f'foos.samplecontroller.k8s.io "x" is forbidden: User "{SA_USER}" cannot get resource '
        f'"foos" in API group "samplecontroller.k8s.io" in the namespace "{NS}"'
    )
    assert forbidden_message(sim, "GET", f"{FOOS}/foos", robot) == (
        f'foos.samplecontroller.k8s.io is forbidden: User "{SA_USER}" cannot list resource '
        '"foos" in API group "samplecontroller.k8s.io" at the cluster scope'
    )
    assert forbidden_message(sim, "GET", f"{FOOS}/namespaces/{NS}/foos?watch=true", robot) == (
        f'foos.samplecontroller.k8s.io is forbidden: User "{SA_USER}" cannot watch resource '
        f'"foos" in API group "samplecontroller.k8s.io" in the namespace "{NS}"'
    )
    assert forbidden_message(
        sim, "PUT", f"{FOOS}/namespaces/{NS}/foos/x/status", robot, {"metadata": {"name": "x"}}
    ) == (
        f'foos.samplecontroller.k8s.io "x" is forbidden: User "{SA_USER}" cannot update resource '
        f'"foos/status" in API group "samplecontroller.k8s.io" in the namespace "{NS}"'
    )
    assert forbidden_message(sim, "DELETE", f"/api/v1/namespaces/{NS}/secrets", robot) == (
        f'secrets is forbidden: User "{SA_USER}" cannot deletecollection resource "secrets" in '
        f'API group "" in the namespace "{NS}"'
    )
    assert forbidden_message(sim, "GET", "/api/v1/namespaces/kube-system", robot) == (
        f'namespaces "kube-system" is forbidden: User "{SA_USER}" cannot get resource '
        '"namespaces" in API group "" in the namespace "kube-system"'
    )
    assert forbidden_message(sim, "GET", "/metrics", robot) == (
        f'forbidden: User "{SA_USER}" cannot get path "/metrics"'
    )
    code, out = call(sim, "GET", "/metrics", robot)
    assert out["details"] == {}
    # authorization runs before routing: an unknown resource is 403 too, not 404
    assert forbidden_message(sim, "GET", f"/api/v1/namespaces/{NS}/bogus", robot).startswith(
        f'bogus is forbidden: User "{SA_USER}" cannot list resource "bogus"'
    )
    # the request log names what was refused
    denied = [r for r in sim.request_log if r.code == 403 and r.resource == "foos/status"]
    assert [(r.verb, r.namespace, r.name, r.user) for r in denied] == [("update", NS, "x", SA_USER)]


def test_discovery_and_self_reviews_are_allowed_to_every_authenticated_user(sim, robot):
    for path in ("/api", "/api/v1", "/apis", f"{FOOS}", "/version", "/healthz", "/openapi/v3"):
        assert call(sim, "GET", path, robot)[0] == 200, path
    status = self_review(
        sim,
        robot,
        {"verb": "create", "group": "authorization.k8s.io", "resource": "selfsubjectaccessreviews"},
    )
    assert status == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole '
        '"system:basic-user" to Group "system:authenticated"',
    }


def test_a_role_grants_what_it_says_and_no_more_and_takes_effect_at_once(sim, robot):
    path = f"{FOOS}/namespaces/{NS}/foos"
    assert call(sim, "GET", path, robot)[0] == 403
    grant(
        sim,
        "foo-reader",
        [
            {
                "apiGroups": ["samplecontroller.k8s.io"],
                "resources": ["foos"],
                "verbs": ["list", "watch"],
            }
        ],
    )
    code, out = call(sim, "GET", path, robot)
    assert code == 200 and out["kind"] == "FooList"
    # the same resource in another namespace, another verb, a subresource: still refused
    assert call(sim, "GET", f"{FOOS}/namespaces/kube-system/foos", robot)[0] == 403
    assert call(sim, "POST", path, robot, {"metadata": {"name": "a"}})[0] == 403
    assert call(sim, "PUT", f"{path}/a/status", robot, {"metadata": {"name": "a"}})[0] == 403
    status = self_review(
        sim,
        robot,
        {"verb": "list", "group": "samplecontroller.k8s.io", "resource": "foos", "namespace": NS},
    )
    assert status == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "foo-reader/{NS}" of Role "foo-reader" to '
        f'ServiceAccount "robot/{NS}"',
    }
    assert call(sim, "DELETE", f"{RBAC}/namespaces/{NS}/rolebindings/foo-reader")[0] == 200
    assert call(sim, "GET", path, robot)[0] == 403


def test_resource_names_and_subresources(sim, robot):
    grant(
        sim,
        "one-lease",
        [
            {
                "apiGroups": ["coordination.k8s.io"],
                "resources": ["leases"],
                "verbs": ["get", "list"],
                "resourceNames": ["mine"],
            },
            {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["get"]},
        ],
    )
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
    assert call(sim, "GET", f"{leases}/mine", robot)[0] == 404  # allowed, and then not found
    assert call(sim, "GET", f"{leases}/theirs", robot)[0] == 403
    assert call(sim, "GET", leases, robot)[0] == 403  # a list names no object
    # ... unless it names one by field selector, as the resolver reads it
    assert call(sim, "GET", f"{leases}?fieldSelector=metadata.name%3Dmine", robot)[0] == 200
    deployments = f"/apis/apps/v1/namespaces/{NS}/deployments"
    assert call(sim, "GET", f"{deployments}/d/scale", robot)[0] == 404
    assert call(sim, "GET", f"{deployments}/d", robot)[0] == 403


def test_non_resource_urls_are_granted_by_cluster_roles(sim, robot):
    grant(
        sim, "metrics-reader", [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}], namespace=None
    )
    # kubesim serves no /metrics: allowed, then 404
    assert call(sim, "GET", "/metrics", robot)[0] == 404
    status = self_review(sim, robot, {"verb": "get", "path": "/metrics"}, kind="non-resource")
    assert status["allowed"] is True
    assert status["reason"] == (
        'RBAC: allowed by ClusterRoleBinding "metrics-reader" of ClusterRole "metrics-reader" '
        f'to ServiceAccount "robot/{NS}"'
    )
    assert self_review(sim, robot, {"verb": "get", "path": "/debug"}, kind="non-resource") == {
        "allowed": False
    }


def test_subject_access_review_as_a_delegating_server_asks_it(sim, robot):
    """What a metrics endpoint's authorizer sends: the TokenReview's user, verb get on the
    non-resource URL /metrics."""
    grant(
        sim, "metrics-reader", [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}], namespace=None
    )
    sar = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
            "user": SA_USER,
            "groups": SA_GROUPS,
        },
    }
    code, out = call(sim, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=sar)
    assert code == 201, out
    assert out["spec"] == sar["spec"]
    assert out["status"]["allowed"] is True
    assert out["status"]["reason"].startswith(
        'RBAC: allowed by ClusterRoleBinding "metrics-reader"'
    )
    denied = {
        **sar,
        "spec": {
            **sar["spec"],
            "user": "system:serviceaccount:default:other",
            "groups": ["system:authenticated"],
        },
    }
    code, out = call(sim, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=denied)
    assert (code, out["status"]) == (201, {"allowed": False})
    # the ServiceAccount itself may not ask: subjectaccessreviews need their own grant
    assert forbidden_message(
        sim, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", robot, sar
    ) == (
        f'subjectaccessreviews.authorization.k8s.io is forbidden: User "{SA_USER}" cannot create '
        'resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
    )
    grant(
        sim,
        "metrics-auth-role",
        [
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["tokenreviews"],
                "verbs": ["create"],
            },
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["subjectaccessreviews"],
                "verbs": ["create"],
            },
        ],
        namespace=None,
    )
    assert (
        call(sim, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", robot, sar)[0]
        == 201
    )
    review = {"spec": {"token": robot}}
    assert call(sim, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", robot, review)[0] == 201


def test_access_review_validation(sim):
    code, out = call(
        sim, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body={"spec": {}}
    )
    assert code == 422
    assert out["message"] == (
        'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: '
        "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be "
        'specified, spec.user: Invalid value: "": at least one of user or group must be specified]'
    )
    code, out = call(sim, "GET", "/apis/authorization.k8s.io/v1/subjectaccessreviews")
    assert code == 405
    local = {
        "spec": {
            "user": "u",
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "other"},
        }
    }
    code, out = call(
        sim,
        "POST",
        f"/apis/authorization.k8s.io/v1/namespaces/{NS}/localsubjectaccessreviews",
        body=local,
    )
    assert code == 422
    assert (
        'spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'
        in out["message"]
    )
    local["spec"]["resourceAttributes"]["namespace"] = NS
    code, out = call(
        sim,
        "POST",
        f"/apis/authorization.k8s.io/v1/namespaces/{NS}/localsubjectaccessreviews",
        body=local,
    )
    assert (code, out["status"], out["metadata"]["namespace"]) == (201, {"allowed": False}, NS)


def test_anonymous_requests_are_authorized_by_rbac_too(kubesim_factory):
    sim = kubesim_factory(authorization_mode="RBAC", token="admin-secret", crds=[])
    assert call(sim, "GET", "/healthz") == (200, b"ok")
    assert call(sim, "GET", "/version")[0] == 200
    assert forbidden_message(sim, "GET", "/api", None) == (
        'forbidden: User "system:anonymous" cannot get path "/api"'
    )
    assert forbidden_message(sim, "GET", "/api/v1/namespaces", None) == (
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in '
        'API group "" at the cluster scope'
    )
    # the admin token is in system:masters
    assert call(sim, "GET", "/api/v1/namespaces", "admin-secret")[0] == 200
    status = self_review(sim, "admin-secret", {"verb": "delete", "resource": "nodes"})
    assert status == {"allowed": True}


def test_the_self_subject_access_review_in_protobuf(sim, robot):
    body = protobuf.encode(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "metadata": {},
            "spec": {"resourceAttributes": {"verb": "get", "resource": "secrets", "namespace": NS}},
        }
    )
    pb = "application/vnd.kubernetes.protobuf"
    code, raw = call(
        sim,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        robot,
        body,
        {"Content-Type": pb, "Accept": pb},
    )
    assert code == 201
    out = protobuf.decode(raw)
    assert out["kind"] == "SelfSubjectAccessReview"
    assert out["spec"]["resourceAttributes"]["resource"] == "secrets"
    assert out["status"] == {"allowed": False}


# ---- AlwaysAllow, kubesim's default ------------------------------------------------------------


@pytest.mark.kubesim(crds=[])
def test_always_allow_still_authenticates_service_accounts(sim):
    service_account(sim)
    token = sim.token_for(NS, "robot")
    assert call(sim, "GET", "/api/v1/namespaces/kube-system/secrets", token)[0] == 200
    who = call(sim, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token, {})[1]
    assert who["status"]["userInfo"]["username"] == SA_USER
    status = self_review(sim, token, {"verb": "delete", "resource": "nodes"})
    assert status == {"allowed": True}
    # an unknown token to a kubesim without one of its own is its admin, as it always was
    assert call(sim, "GET", "/api/v1/namespaces", "whatever")[0] == 200
    assert sim.request_log[-1].user == "system:admin"
    # no default RBAC objects are created
    assert call(sim, "GET", f"{RBAC}/clusterroles")[1]["items"] == []


def test_an_unknown_authorization_mode_is_refused():
    with pytest.raises(ValueError, match="authorization_mode must be one of AlwaysAllow, RBAC"):
        KubeSim(authorization_mode="Node")


def test_self_subject_rules_review_lists_the_bound_rules(sim, robot):
    grant(
        sim,
        "lease-getter",
        [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}],
    )
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": NS},
    }
    code, out = call(
        sim, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", robot, body
    )
    assert code == 201, out
    status = out["status"]
    assert {
        "verbs": ["get"],
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
    } in status["resourceRules"]
    # the default roles every authenticated user holds are listed too
    assert {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    } in status["resourceRules"]
    assert any("/apis/*" in r["nonResourceURLs"] for r in status["nonResourceRules"])
    assert not any(r["verbs"] == ["*"] for r in status["resourceRules"])
    assert status["incomplete"] is False
    # elsewhere the Role does not apply
    other = call(
        sim,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        robot,
        {**body, "spec": {"namespace": "kube-system"}},
    )[1]
    assert {
        "verbs": ["get"],
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
    } not in other["status"]["resourceRules"]
    # the admin (system:masters) holds everything
    admin = call(sim, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body=body)[1]
    assert admin["status"]["resourceRules"][0] == {
        "verbs": ["*"],
        "apiGroups": ["*"],
        "resources": ["*"],
    }
