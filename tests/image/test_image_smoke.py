"""hack/image_smoke.py without docker: the one-line answer where no engine is reachable, and the
translation of manifests/base/deployment.yaml into docker run flags (the part that decides whether
the smoke test runs the image "as the manifest runs it")."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack" / "image_smoke.py"


def _load():
    spec = importlib.util.spec_from_file_location("image_smoke", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["image_smoke"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


smoke = _load()


def run_script(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def assert_one_line_no_engine(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    lines = (proc.stdout + proc.stderr).splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("image-smoke: no docker engine reachable ("), lines[0]
    return lines[0]


def test_no_docker_cli_is_one_line_and_non_zero(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # a PATH with no docker on it
    line = assert_one_line_no_engine(run_script(env))
    assert "'docker' is not on PATH" in line


def test_a_cli_whose_engine_does_not_answer_is_one_line_and_non_zero(tmp_path):
    # Stands in for a docker CLI with no engine behind it, as `docker version` reports that.
    fake = tmp_path / "docker"
    fake.write_text(
        "#!/bin/sh\necho 'Client:' \necho 'Cannot connect to the Docker daemon at "
        "unix:///var/run/docker.sock. Is the docker daemon running?' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)}
    line = assert_one_line_no_engine(run_script(env, "--docker", str(fake)))
    assert "Cannot connect to the Docker daemon" in line


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker CLI on this machine")
def test_the_real_cli_with_no_engine_at_docker_host_is_one_line(tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
    }
    assert_one_line_no_engine(run_script(env))


def manifest_pod() -> tuple[dict, dict, dict]:
    text = (ROOT / "manifests/base/deployment.yaml").read_text()
    docs = [d for d in yaml.safe_load_all(text) if d]
    [dep] = [d for d in docs if d["kind"] == "Deployment"]
    pod = dep["spec"]["template"]["spec"]
    return dep, pod, pod["containers"][0]


def test_docker_run_flags_carry_the_manifests_security_context_env_and_mounts():
    dep, pod, container = manifest_pod()
    spec = smoke.read_pod_spec()
    flags = smoke.docker_run_flags(spec, "/host/sa", 6443)
    pairs = list(zip(flags, flags[1:], strict=False))

    psc, csc = pod["securityContext"], container["securityContext"]
    assert ("--user", f"{psc['runAsUser']}:{psc['runAsGroup']}") in pairs
    assert csc["readOnlyRootFilesystem"] and "--read-only" in flags
    assert csc["capabilities"]["drop"] == ["ALL"] and ("--cap-drop", "ALL") in pairs
    assert csc["allowPrivilegeEscalation"] is False
    assert ("--security-opt", "no-new-privileges") in pairs
    assert ("--network", "host") in pairs
    assert ("--stop-timeout", str(pod["terminationGracePeriodSeconds"])) in pairs
    assert ("--tmpfs", "/tmp:rw,size=16m") in pairs  # the emptyDir, with its sizeLimit
    assert ("--memory", "256m") in pairs and ("--cpus", "0.5") in pairs
    env = {v for k, v in pairs if k == "--env"}
    assert {
        "KUBERNETES_SERVICE_HOST=127.0.0.1",
        "KUBERNETES_SERVICE_PORT=6443",
        f"POD_NAMESPACE={dep['metadata']['namespace']}",
    } <= env
    assert ("--volume", "/host/sa:/var/run/secrets/kubernetes.io/serviceaccount:ro") in pairs
    assert spec.args == container["args"]
    assert spec.probes == {"liveness": "/healthz", "readiness": "/readyz"}


def test_move_ports_rewrites_bind_addresses_in_both_forms_and_nothing_else():
    args = [
        "--leader-elect",
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address",
        "127.0.0.1:8081",
        "--other=:8080",
        "--log-format=json",
    ]
    assert smoke.move_ports(args, {8080: 1, 8081: 2}) == [
        "--leader-elect",
        "--metrics-bind-address=:1",
        "--health-probe-bind-address",
        "127.0.0.1:2",
        "--other=:8080",
        "--log-format=json",
    ]
    assert smoke.move_ports(["--metrics-bind-address=0"], {8080: 1}) == ["--metrics-bind-address=0"]
