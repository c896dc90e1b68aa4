"""The RBAC authorizer's rules, on the cases of the real one's tests.

The cases follow plugin/pkg/auth/authorizer/rbac/rbac_test.go (TestAuthorizer, TestRuleMatches)
and pkg/registry/rbac/validation/rule_test.go: bindings to users, groups and ServiceAccounts,
wildcards, subresources, resourceNames, non-resource URLs with a trailing "*", and the
reasons and 403 messages the real server writes.
"""

from __future__ import annotations

import pytest

from kubesim.auth.authorizer import ALWAYS_ALLOW, RBAC, forbidden, new_authorizer
from kubesim.auth.rbac import RBACAuthorizer, aggregate, rule_allows
from kubesim.auth.requestinfo import Attributes
from kubesim.auth.user import UserInfo

RBAC_GROUP = "rbac.authorization.k8s.io"


class Policy:
    """A PolicySource over plain lists (the real tests' StaticRoles)."""

    def __init__(self, roles=(), role_bindings=(), cluster_roles=(), cluster_role_bindings=()):
        self.roles = list(roles)
        self.bindings = list(role_bindings)
        self.croles = list(cluster_roles)
        self.cbindings = list(cluster_role_bindings)

    def cluster_role_bindings(self):
        return self.cbindings

    def role_bindings(self, namespace):
        return [b for b in self.bindings if b["metadata"]["namespace"] == namespace]

    def cluster_role(self, name):
        return next((r for r in self.croles if r["metadata"]["name"] == name), None)

    def role(self, namespace, name):
        return next(
            (
                r
                for r in self.roles
                if r["metadata"]["name"] == name and r["metadata"]["namespace"] == namespace
            ),
            None,
        )


def rule(verbs="*", groups="*", resources="*", urls="", names=""):
    out = {"verbs": verbs.split(",")}
    if groups:
        out["apiGroups"] = groups.split(",") if groups != "-" else [""]
    if resources:
        out["resources"] = resources.split(",")
    if urls:
        out["nonResourceURLs"] = urls.split(",")
    if names:
        out["resourceNames"] = names.split(",")
    return out


def role(name, *rules, namespace=None):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"kind": "Role" if namespace else "ClusterRole", "metadata": meta, "rules": list(rules)}


def subjects(*specs):
    """ "User:alice", "Group:devs", "ServiceAccount:ns/name" or "ServiceAccount:name"."""
    out = []
    for spec in specs:
        kind, _, name = spec.partition(":")
        subject = {"kind": kind, "name": name}
        if kind == "ServiceAccount":
            ns, _, sa = name.rpartition("/")
            subject = {"kind": kind, "name": sa, **({"namespace": ns} if ns else {})}
        else:
            subject["apiGroup"] = RBAC_GROUP
        out.append(subject)
    return out


def cluster_binding(name, role_name, *specs):
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role_name},
        "subjects": subjects(*specs),
    }


def binding(namespace, name, role_kind, role_name, *specs):
    return {
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role_name},
        "subjects": subjects(*specs),
    }


def resource(user, verb, res, ns="", group="", sub="", name="", groups=()):
    return Attributes(
        UserInfo(user, "", tuple(groups)),
        verb,
        True,
        namespace=ns,
        api_group=group,
        resource=res,
        subresource=sub,
        name=name,
    )


def path(user, verb, url, groups=()):
    return Attributes(UserInfo(user, "", tuple(groups)), verb, False, path=url)


def allowed(policy, attrs):
    return RBACAuthorizer(policy).authorize(attrs).allowed


# ---- rbac_test.go TestAuthorizer ---------------------------------------------------------------


def test_a_rolebinding_to_a_clusterrole_grants_only_in_its_namespace():
    policy = Policy(
        cluster_roles=[role("admin", rule())],
        role_bindings=[binding("ns1", "b", "ClusterRole", "admin", "User:admin", "Group:admins")],
    )
    for attrs in (
        resource("admin", "get", "Pods", "ns1"),
        resource("admin", "watch", "Pods", "ns1"),
        resource("admin", "watch", "Foobar", "ns1", groups=["group1"]),
        resource("joe", "watch", "Foobar", "ns1", groups=["admins"]),
        resource("joe", "watch", "Foobar", "ns1", groups=["group1", "admins"]),
    ):
        assert allowed(policy, attrs), attrs
    for attrs in (
        resource("admin", "GET", "Pods", "ns2"),
        resource("admin", "GET", "Nodes"),
        resource("admin", "GET", "Pods", "ns2", groups=["admins"]),
        resource("admin", "GET", "Nodes", groups=["admins"]),
    ):
        assert not allowed(policy, attrs), attrs


def test_non_resource_urls_exact_and_prefixed():
    policy = Policy(
        cluster_roles=[
            role("getter", rule("get", "", "", "/apis")),
            role("any-verb", rule("*", "", "", "/apis")),
            role("prefix", rule("get", "", "", "/apis/*")),
        ],
        cluster_role_bindings=[
            cluster_binding("1", "getter", "User:foo", "Group:bar"),
            cluster_binding("2", "any-verb", "User:admin", "Group:admin"),
            cluster_binding("3", "prefix", "User:prefixed", "Group:prefixed"),
        ],
    )
    for attrs in (
        path("foo", "get", "/apis"),
        path("", "get", "/apis", groups=["bar"]),
        path("admin", "watch", "/apis"),
        path("", "watch", "/apis", groups=["admin"]),
        path("prefixed", "get", "/apis/v1"),
        path("prefixed", "get", "/apis/v1/foobar"),
        path("", "get", "/apis/v1/foobar", groups=["prefixed"]),
    ):
        assert allowed(policy, attrs), attrs
    for attrs in (
        path("foo", "watch", "/apis"),  # wrong verb
        path("foo", "get", "/api/v1"),  # wrong path
        path("admin", "get", "/api/v1"),
        path("prefixed", "get", "/api/v1"),  # not under the prefix
        path("prefixed", "get", "/apis"),  # "/apis/*" is not "/apis"
    ):
        assert not allowed(policy, attrs), attrs


def test_subresources_are_named_on_their_own():
    pods = Policy(
        cluster_roles=[role("r", rule("*", "*", "pods"))],
        role_bindings=[binding("ns1", "b", "ClusterRole", "r", "User:admin")],
    )
    assert allowed(pods, resource("admin", "get", "pods", "ns1"))
    assert not allowed(pods, resource("admin", "get", "pods", "ns1", sub="status"))
    status = Policy(
        cluster_roles=[role("r", rule("*", "*", "pods/status"))],
        role_bindings=[binding("ns1", "b", "ClusterRole", "r", "User:admin")],
    )
    assert allowed(status, resource("admin", "get", "pods", "ns1", sub="status"))
    assert not allowed(status, resource("admin", "get", "pods", "ns1"))


# ---- rbac_test.go TestRuleMatches --------------------------------------------------------------


@pytest.mark.parametrize(
    ("the_rule", "attrs", "expected"),
    [
        # star verb, exact match of the rest
        (rule("*", "group1", "resource1"), ("verb1", "group1", "resource1", ""), True),
        (rule("*", "group1", "resource1"), ("verb2", "group1", "resource1", ""), True),
        (rule("*", "group1", "resource1"), ("verb1", "group2", "resource1", ""), False),
        (rule("*", "group1", "resource1"), ("verb1", "group1", "resource2", ""), False),
        # star group
        (rule("verb1", "*", "resource1"), ("verb1", "group2", "resource1", ""), True),
        (rule("verb1", "*", "resource1"), ("verb2", "group2", "resource1", ""), False),
        # star resource
        (rule("verb1", "group1", "*"), ("verb1", "group1", "resource2", ""), True),
        (rule("verb1", "group1", "*"), ("verb1", "group2", "resource2", ""), False),
        # tuple expansion
        (
            rule("verb1,verb2", "group1,group2", "resource1,resource2"),
            ("verb2", "group2", "resource2", ""),
            True,
        ),
        # a subresource: only exactly, or "*/sub"
        (rule("*", "*", "resource1/subresource1"), ("v", "g", "resource1", "subresource1"), True),
        (rule("*", "*", "resource1/subresource1"), ("v", "g", "resource1", "subresource2"), False),
        (rule("*", "*", "resource1/subresource1"), ("v", "g", "resource2", "subresource1"), False),
        (rule("*", "*", "*/subresource1"), ("v", "g", "anything", "subresource1"), True),
        (rule("*", "*", "*/subresource1"), ("v", "g", "anything", ""), False),
        (rule("*", "*", "*/subresource1"), ("v", "g", "anything", "subresource2"), False),
        # "*" resources cover subresources too
        (rule("*", "*", "*"), ("v", "g", "foos", "status"), True),
        # the core group is "", not "*"
        (rule("get", "-", "pods"), ("get", "", "pods", ""), True),
        (rule("get", "-", "pods"), ("get", "apps", "pods", ""), False),
    ],
)
def test_rule_matches(the_rule, attrs, expected):
    verb, group, res, sub = attrs
    assert rule_allows(resource("u", verb, res, "ns", group, sub), the_rule) is expected


@pytest.mark.parametrize(
    ("urls", "url", "expected"),
    [
        ("*", "/foo", True),
        ("*", "/foo/bar/one", True),
        ("/foo/*", "/foo", False),
        ("/foo/*", "/foo/bar", True),
        ("/foo/*", "/foo/bar/one", True),
        ("/foo/*", "/foobar", False),
        ("/foo*", "/foobar", True),
        ("/foo", "/foo/", False),
        ("/metrics", "/metrics", True),
        ("/metrics", "/metrics/extra", False),
    ],
)
def test_non_resource_url_rule(urls, url, expected):
    assert rule_allows(path("u", "get", url), rule("get", "", "", urls)) is expected
    # the verb matters for non-resource requests too
    assert not rule_allows(path("u", "post", url), rule("get", "", "", urls))


def test_resource_names_narrow_a_rule_and_requests_without_a_name_do_not_match_them():
    the_rule = rule("get,update", "coordination.k8s.io", "leases", names="sample-controller")
    lease = resource("u", "get", "leases", "ns", "coordination.k8s.io", name="sample-controller")
    assert rule_allows(lease, the_rule)
    other = resource("u", "get", "leases", "ns", "coordination.k8s.io", name="other")
    assert not rule_allows(other, the_rule)
    # create (and list) carry no name in the URL: a rule with resourceNames never allows them
    create = resource("u", "create", "leases", "ns", "coordination.k8s.io")
    assert not rule_allows(create, rule("create", "coordination.k8s.io", "leases", names="x"))


# ---- rule.go: subjects, scopes, errors, reasons ------------------------------------------------


def test_service_account_subjects_match_the_username_and_default_to_the_binding_namespace():
    sa_user = "system:serviceaccount:ns1:robot"
    policy = Policy(
        roles=[role("r", rule("get", "-", "pods"), namespace="ns1")],
        role_bindings=[binding("ns1", "b", "Role", "r", "ServiceAccount:robot")],
    )
    assert allowed(policy, resource(sa_user, "get", "pods", "ns1"))
    assert not allowed(policy, resource("system:serviceaccount:ns2:robot", "get", "pods", "ns1"))
    assert not allowed(policy, resource("robot", "get", "pods", "ns1"))
    # a ClusterRoleBinding's ServiceAccount subject without a namespace matches nobody
    cluster = Policy(
        cluster_roles=[role("r", rule())],
        cluster_role_bindings=[cluster_binding("b", "r", "ServiceAccount:robot")],
    )
    assert not allowed(cluster, resource(sa_user, "get", "pods", "ns1"))


def test_a_role_binding_never_grants_cluster_scoped_requests():
    policy = Policy(
        cluster_roles=[role("r", rule())],
        role_bindings=[binding("ns1", "b", "ClusterRole", "r", "User:u")],
    )
    assert not allowed(policy, resource("u", "list", "namespaces"))
    assert not allowed(policy, resource("u", "list", "pods"))  # every namespace: cluster scope
    assert not allowed(policy, path("u", "get", "/metrics"))


def test_reason_names_the_binding_role_and_subject_as_the_real_authorizer():
    policy = Policy(
        cluster_roles=[role("reader", rule("get", "", "", "/metrics"))],
        roles=[role("leases", rule("get", "coordination.k8s.io", "leases"), namespace="ns1")],
        cluster_role_bindings=[cluster_binding("read", "reader", "User:alice")],
        role_bindings=[binding("ns1", "lb", "Role", "leases", "ServiceAccount:robot")],
    )
    decision = RBACAuthorizer(policy).authorize(path("alice", "get", "/metrics"))
    assert decision.allowed
    assert decision.reason == (
        'RBAC: allowed by ClusterRoleBinding "read" of ClusterRole "reader" to User "alice"'
    )
    decision = RBACAuthorizer(policy).authorize(
        resource("system:serviceaccount:ns1:robot", "get", "leases", "ns1", "coordination.k8s.io")
    )
    assert decision.reason == (
        'RBAC: allowed by RoleBinding "lb/ns1" of Role "leases" to ServiceAccount "robot/ns1"'
    )
    denied = RBACAuthorizer(policy).authorize(path("bob", "get", "/metrics"))
    assert (denied.allowed, denied.reason) == (False, "")


def test_a_binding_to_a_missing_role_is_an_error_in_the_reason_not_a_grant():
    policy = Policy(
        cluster_role_bindings=[cluster_binding("b1", "gone", "User:u")],
        role_bindings=[binding("ns1", "b2", "Role", "missing", "User:u")],
    )
    decision = RBACAuthorizer(policy).authorize(resource("u", "get", "pods", "ns1"))
    assert not decision.allowed
    assert decision.reason == (
        'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, '
        'role.rbac.authorization.k8s.io "missing" not found]'
    )
    assert aggregate(["a", "a"]) == "a" and aggregate([]) == ""


def test_system_masters_may_do_anything_and_always_allow_allows_everyone():
    authorizer = new_authorizer(RBAC, Policy())
    master = resource("admin", "delete", "namespaces", groups=["system:masters"])
    assert authorizer.authorize(master).allowed
    assert authorizer.authorize(master).reason == ""
    assert not authorizer.authorize(resource("u", "get", "pods", "ns")).allowed
    assert new_authorizer(ALWAYS_ALLOW, Policy()).authorize(resource("u", "get", "pods")).allowed
    with pytest.raises(ValueError):
        new_authorizer("Node", Policy())


# ---- responsewriters.forbiddenMessage ----------------------------------------------------------


@pytest.mark.parametrize(
    ("attrs", "message", "details"),
    [
        (
            resource(
                "system:serviceaccount:ns:sa",
                "get",
                "foos",
                "default",
                "samplecontroller.k8s.io",
                name="x",
            ),
            'foos.samplecontroller.k8s.io "x" is forbidden: User "system:serviceaccount:ns:sa" '
            'cannot get resource "foos" in API group "samplecontroller.k8s.io" in the namespace '
            '"default"',
            {"name": "x", "group": "samplecontroller.k8s.io", "kind": "foos"},
        ),
        (
            resource("u", "list", "foos", "", "samplecontroller.k8s.io"),
            'foos.samplecontroller.k8s.io is forbidden: User "u" cannot list resource "foos" in '
            'API group "samplecontroller.k8s.io" at the cluster scope',
            {"group": "samplecontroller.k8s.io", "kind": "foos"},
        ),
        (
            resource("u", "update", "deployments", "ns", "apps", sub="scale", name="d"),
            'deployments.apps "d" is forbidden: User "u" cannot update resource '
            '"deployments/scale" in API group "apps" in the namespace "ns"',
            {"name": "d", "group": "apps", "kind": "deployments"},
        ),
        (
            resource("u", "list", "secrets", "ns"),
            'secrets is forbidden: User "u" cannot list resource "secrets" in API group "" in '
            'the namespace "ns"',
            {"kind": "secrets"},
        ),
        (
            path("u", "get", "/metrics"),
            'forbidden: User "u" cannot get path "/metrics"',
            {},
        ),
        (
            path("u", "get", "/<script>"),
            'forbidden: User "u" cannot get path "/&lt;script&gt;"',
            {},
        ),
    ],
)
def test_forbidden_messages(attrs, message, details):
    err = forbidden(attrs, "")
    assert err.code == 403
    assert err.body is not None
    assert err.body["message"] == message
    assert err.body["reason"] == "Forbidden"
    assert err.body["details"] == details
    # Go's Status field order
    assert list(err.body) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "details",
        "code",
    ]


def test_a_forbidden_reason_follows_the_message():
    err = forbidden(
        path("u", "get", "/x"), 'RBAC: clusterrole.rbac.authorization.k8s.io "r" not found'
    )
    assert err.body is not None
    assert err.body["message"] == (
        'forbidden: User "u" cannot get path "/x": '
        'RBAC: clusterrole.rbac.authorization.k8s.io "r" not found'
    )
