"""Smoke-test the controller's image the way manifests/base/deployment.yaml runs it.

It is what `make image-smoke` runs:

    python hack/image_smoke.py [--image sample-controller-py:0.1.0] [--docker docker]

The container gets what the kubelet would give the pod, read from the manifest rather than
copied: the pod's uid/gid, a read-only root filesystem, all capabilities dropped, no privilege
escalation, the emptyDir volumes as tmpfs, the resource limits, the downward-API env, the
container's args, and the termination grace period as docker stop's timeout. The in-cluster
environment is the one a ServiceAccount gives: KUBERNETES_SERVICE_HOST/PORT and a token, ca.crt
and namespace file mounted at /var/run/secrets/kubernetes.io/serviceaccount. The cluster is
kubesim, started here over TLS and requiring that token, reached over the host network.

It checks, one line each: the probes answer 200, the example Foo is reconciled (its Deployment
created and scaled with the Foo's replicas, its status written), every request was made with
the mounted token, SIGTERM ends the container with exit code 0 within the grace period and the
Lease is released, and the log is JSON with no token in it. Exit status 0 when all pass, 1 at
the first failure (with the container's log), and 1 with a single line when no docker engine is
reachable, so a machine without docker fails fast and says why.

The metrics and probe ports of the manifest's args are moved to free ports: on the host network
the container shares the host's ports, and the manifest's 8080/8081 may be taken there. The
engine must be local (the container mounts a directory of this machine and reaches kubesim on
its loopback address).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "manifests" / "base" / "deployment.yaml"
EXAMPLE_FOO = ROOT / "manifests" / "example-foo.yaml"
CRD = ROOT / "crds" / "foo-crd.yaml"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"  # where the kubelet mounts the token
FOOS = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENTS = ("apps", "v1", "deployments")
LEASES = ("coordination.k8s.io", "v1", "leases")
USER_AGENT = "image-smoke"  # our own requests, told apart from the controller's in the log
WAIT = 30.0  # seconds any one condition may take to become true


class SmokeFailure(Exception):
    """A check failed; the message says what was expected and what was seen, and ``log`` holds
    the container's last log lines when there was a container."""

    log = ""


# ---- the pod, as the manifest describes it ----------------------------------------------------


@dataclass
class PodSpec:
    """What docker needs to run the container as the kubelet runs the Deployment's pod."""

    namespace: str  # the Deployment's namespace: the pod's, and the downward API's value
    user: int
    group: int
    read_only_root: bool
    cap_drop: list[str]
    no_new_privileges: bool
    args: list[str]
    env: dict[str, str]
    tmpfs: dict[str, str]  # mount path -> size limit ("16Mi"; "" for none)
    limits: dict[str, str]  # "cpu" / "memory" -> quantity
    grace_seconds: int
    probes: dict[str, str]  # "liveness" / "readiness" -> path
    probe_port: int  # the container port the probes use
    ports: list[int]  # every containerPort


def _quantity_to_docker(kind: str, value: str) -> str:
    """A Kubernetes quantity as docker's --memory / --cpus / tmpfs size want it."""
    if kind == "cpu":
        return str(int(value[:-1]) / 1000) if value.endswith("m") else value
    units = {"Ki": "k", "Mi": "m", "Gi": "g"}
    for suffix, unit in units.items():
        if value.endswith(suffix):
            return value[: -len(suffix)] + unit
    return value


def read_pod_spec(manifest: Path = MANIFEST) -> PodSpec:
    """The controller's pod from the Deployment manifest (one container expected)."""
    docs = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    [dep] = [d for d in docs if d.get("kind") == "Deployment"]
    namespace = dep["metadata"]["namespace"]
    pod = dep["spec"]["template"]["spec"]
    [container] = pod["containers"]
    psc, csc = pod.get("securityContext") or {}, container.get("securityContext") or {}
    env: dict[str, str] = {}
    for e in container.get("env") or []:
        if "value" in e:
            env[e["name"]] = e["value"]
            continue
        path = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if path != "metadata.namespace":
            raise SmokeFailure(f"env {e['name']}: only metadata.namespace fieldRefs are known")
        env[e["name"]] = namespace
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    tmpfs = {}
    for m in container.get("volumeMounts") or []:
        vol = volumes[m["name"]]
        if "emptyDir" not in vol:
            raise SmokeFailure(f"volume {m['name']}: only emptyDir volumes are known")
        tmpfs[m["mountPath"]] = (vol["emptyDir"] or {}).get("sizeLimit", "")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports") or []}
    probes, probe_ports = {}, set()
    for kind in ("liveness", "readiness"):
        get = container[f"{kind}Probe"]["httpGet"]
        probes[kind] = get["path"]
        probe_ports.add(ports.get(get["port"], get["port"]))
    [probe_port] = probe_ports
    return PodSpec(
        namespace=namespace,
        user=csc.get("runAsUser", psc.get("runAsUser")),
        group=csc.get("runAsGroup", psc.get("runAsGroup")),
        read_only_root=bool(csc.get("readOnlyRootFilesystem")),
        cap_drop=list((csc.get("capabilities") or {}).get("drop") or []),
        no_new_privileges=csc.get("allowPrivilegeEscalation") is False,
        args=list(container.get("args") or []),
        env=env,
        tmpfs=tmpfs,
        limits=dict((container.get("resources") or {}).get("limits") or {}),
        grace_seconds=int(pod.get("terminationGracePeriodSeconds", 30)),
        probes=probes,
        probe_port=int(probe_port),
        ports=sorted(ports.values()),
    )


def move_ports(args: list[str], moves: dict[int, int]) -> list[str]:
    """The args with each ``--*-bind-address`` on a moved port rewritten to the new port (the
    host part kept), in either form (``--x=ADDR`` or ``--x ADDR``); every other arg as it is."""

    def moved(address: str) -> str:
        host, sep, port = address.rpartition(":")
        if sep and port.isdigit() and int(port) in moves:
            return f"{host}:{moves[int(port)]}"
        return address

    out: list[str] = []
    value_next = False
    for arg in args:
        if value_next:
            arg, value_next = moved(arg), False
        elif m := re.fullmatch(r"(--[\w-]+-bind-address=)(.*)", arg):
            arg = m.group(1) + moved(m.group(2))
        elif re.fullmatch(r"--[\w-]+-bind-address", arg):
            value_next = True
        out.append(arg)
    return out


def docker_run_flags(spec: PodSpec, sa_dir: str, api_port: int) -> list[str]:
    """docker run flags giving the container the pod's security context, volumes, limits, env
    and ServiceAccount mount, on the host network (the API server is on the host's loopback)."""
    flags = ["--network", "host", "--user", f"{spec.user}:{spec.group}"]
    if spec.read_only_root:
        flags.append("--read-only")
    for cap in spec.cap_drop:
        flags += ["--cap-drop", cap]
    if spec.no_new_privileges:
        flags += ["--security-opt", "no-new-privileges"]
    for path, size in spec.tmpfs.items():
        opts = "rw" + (f",size={_quantity_to_docker('memory', size)}" if size else "")
        flags += ["--tmpfs", f"{path}:{opts}"]
    if "memory" in spec.limits:
        flags += ["--memory", _quantity_to_docker("memory", spec.limits["memory"])]
    if "cpu" in spec.limits:
        flags += ["--cpus", _quantity_to_docker("cpu", spec.limits["cpu"])]
    flags += ["--stop-timeout", str(spec.grace_seconds)]
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(api_port)}
    for name, value in {**env, **spec.env}.items():
        flags += ["--env", f"{name}={value}"]
    flags += ["--volume", f"{sa_dir}:{SA_DIR}:ro"]
    return flags


# ---- docker -------------------------------------------------------------------------------------


def engine_unreachable(docker: str) -> str | None:
    """Why no docker engine can be used (one line), or None when one answers."""
    if shutil.which(docker) is None:
        return f"{docker!r} is not on PATH"
    try:
        proc = subprocess.run(
            [docker, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        return f"'{docker} version' got no answer from the engine within 20 s"
    if proc.returncode != 0 or not proc.stdout.strip():
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else f"'{docker} version' exited {proc.returncode}"
    return None


@dataclass
class Docker:
    """The docker CLI, run with a timeout; a non-zero exit is a SmokeFailure."""

    cli: str
    timeout: float = 120.0

    def __call__(self, *args: str, check: bool = True, timeout: float | None = None) -> str:
        proc = subprocess.run(
            [self.cli, *args], capture_output=True, text=True, timeout=timeout or self.timeout
        )
        if check and proc.returncode != 0:
            said = " ".join(line.strip() for line in proc.stderr.splitlines() if line.strip())
            raise SmokeFailure(f"docker {args[0]} failed: {said}")
        return proc.stdout.strip()

    def logs(self, container: str, *args: str) -> str:
        """The container's stdout and stderr, interleaved as written."""
        proc = subprocess.run(
            [self.cli, "logs", *args, container],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=30,
        )
        return proc.stdout


# ---- the run ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, probe: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Poll probe until it returns something truthy; SmokeFailure after timeout."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except SmokeFailure:
            raise  # the probe knows it will never pass (the container has exited)
        except Exception as err:  # any other error is just "not yet"
            last = err
        else:
            if last:
                return last
        time.sleep(0.2)
    raise SmokeFailure(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def http_status(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


@dataclass
class Report:
    """Prints one line per check."""

    lines: list[str] = field(default_factory=list)

    def ok(self, text: str) -> None:
        self.lines.append(text)
        print(f"ok    {text}", flush=True)


def smoke(image: str, docker: Docker, report: Report) -> None:
    """Start kubesim and the container as the pod, run the checks, and clean up after both."""
    from client.rest import RESTClient
    from kubesim import KubeSim

    image_id = docker("image", "inspect", "--format", "{{.Id}}", image, check=False)
    if not image_id:
        raise SmokeFailure(f"image {image} not found: build it first (make image)")
    report.ok(f"image {image} present ({image_id[:19]})")

    spec = read_pod_spec()
    token = secrets.token_urlsafe(24)
    container = f"image-smoke-{secrets.token_hex(4)}"
    sa_dir = Path(tempfile.mkdtemp(prefix="image-smoke-sa-"))
    sim = KubeSim(crds=[CRD], tls=True, token=token, deployment_status_delay=0.2).start()
    try:
        api = RESTClient(sim.new_api_client(), user_agent=USER_AGENT)
        api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": spec.namespace}})
        report.ok(f"kubesim at {sim.url}: TLS, bearer token required, CRD {CRD.name} installed")

        # The ServiceAccount volume: world-readable, as the kubelet's projected volume is to
        # the pod's user (the files are ours, the container runs as another uid).
        (sa_dir / "token").write_text(token)
        assert sim.ca_file is not None  # tls=True: the server's self-signed certificate
        shutil.copy(sim.ca_file, sa_dir / "ca.crt")
        (sa_dir / "namespace").write_text(spec.namespace)
        sa_dir.chmod(0o755)
        for f in sa_dir.iterdir():
            f.chmod(0o644)

        ports = {p: free_port() for p in spec.ports}
        args = move_ports(spec.args, ports)
        probe_port = ports[spec.probe_port]
        if not any(arg.endswith(f":{probe_port}") for arg in args):
            raise SmokeFailure(f"no --*-bind-address arg of {spec.args} serves the probe port")
        flags = docker_run_flags(spec, str(sa_dir), sim.port)
        report.ok(
            f"pod of {MANIFEST.relative_to(ROOT)}: uid:gid {spec.user}:{spec.group}, read-only "
            f"root {spec.read_only_root}, drop {','.join(spec.cap_drop)}, no-new-privileges "
            f"{spec.no_new_privileges}, tmpfs {spec.tmpfs}, limits {spec.limits}, grace "
            f"{spec.grace_seconds}s"
        )
        report.ok(f"args {' '.join(args)} (the manifest's; ports moved: {ports})")
        try:
            docker("run", "--detach", "--name", container, *flags, image, *args)
            run_checks(docker, container, report, spec, api, sim, token, probe_port)
        except SmokeFailure as err:
            err.log = docker.logs(container, "--tail", "40")
            raise
        except subprocess.TimeoutExpired as err:
            failure = SmokeFailure(f"docker did not answer: {err}")
            failure.log = docker.logs(container, "--tail", "40")
            raise failure from err
        finally:
            docker("rm", "--force", container, check=False, timeout=60)
    finally:
        sim.close()
        shutil.rmtree(sa_dir, ignore_errors=True)


def run_checks(
    docker: Docker,
    container: str,
    report: Report,
    spec: PodSpec,
    api: Any,
    sim: Any,
    token: str,
    probe_port: int,
) -> None:
    """The checks against the running container, in the order a rollout would meet them."""
    from client.rest import resource_path

    def running() -> bool:
        state = docker("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", container)
        status, code = state.split()
        if status != "running":
            raise SmokeFailure(f"the container is {status} (exit code {code}), not running")
        return True

    running()
    # What the process really got (PID 1 is the controller: the entrypoint is exec form).
    probe = (
        "import os\n"
        "s = dict(l.split(':', 1) for l in open('/proc/1/status'))\n"
        "try:\n    open('/smoke', 'w'); ro = 'writable'\n"
        "except OSError as e:\n    ro = os.strerror(e.errno)\n"
        "print(os.getuid(), os.getgid(), s['CapEff'].strip(), s['NoNewPrivs'].strip(), ro)"
    )
    seen = docker("exec", container, "python", "-c", probe).split(maxsplit=4)
    want = [str(spec.user), str(spec.group), "0" * 16, "1", os.strerror(30)]  # 30: EROFS
    if seen != want:
        raise SmokeFailure(f"uid gid CapEff NoNewPrivs write(/): want {want}, got {seen}")
    report.ok(f"in the container: uid {seen[0]} gid {seen[1]}, CapEff 0, NoNewPrivs 1, / {seen[4]}")

    for kind, path in spec.probes.items():
        wait_for(f"{kind} probe {path}", lambda p=path: running() and http_status(probe_port, p))
        code = wait_for(f"{path} 200", lambda p=path: http_status(probe_port, p) == 200 and 200)
        report.ok(f"{kind} probe {path} -> {code}")

    lease_path = resource_path(*LEASES, spec.namespace)

    def holder() -> str:
        items = api.request("GET", lease_path)["items"]
        return next((i["spec"].get("holderIdentity") for i in items if i["spec"]), "")

    report.ok(f"Lease in {spec.namespace} held by {wait_for('a Lease holder', holder)}")

    foo = yaml.safe_load(EXAMPLE_FOO.read_text())
    ns = foo["metadata"].get("namespace", "default")
    name, dep_name = foo["metadata"]["name"], foo["spec"]["deploymentName"]
    foo_path = resource_path(*FOOS, ns, name)
    api.request("POST", resource_path(*FOOS, ns), body=foo)
    for replicas in (foo["spec"]["replicas"], foo["spec"]["replicas"] + 2):
        if replicas != foo["spec"]["replicas"]:
            api.request(
                "PATCH",
                foo_path,
                body={"spec": {"replicas": replicas}},
                content_type="application/merge-patch+json",
            )

        def deployment(r: int = replicas) -> dict | None:
            d = api.request("GET", resource_path(*DEPLOYMENTS, ns, dep_name))
            return d if d["spec"]["replicas"] == r else None

        dep = wait_for(f"Deployment {ns}/{dep_name} with {replicas} replicas", deployment)
        owners = [o for o in dep["metadata"].get("ownerReferences") or [] if o.get("controller")]
        if [o["kind"] + "/" + o["name"] for o in owners] != [f"Foo/{name}"]:
            raise SmokeFailure(f"Deployment {dep_name} controller: {owners}")

        def status(r: int = replicas) -> dict | None:
            s = api.request("GET", foo_path).get("status") or {}
            return s if s.get("availableReplicas") == r else None

        st = wait_for(f"Foo {ns}/{name} status availableReplicas={replicas}", status)
        report.ok(
            f"Foo {ns}/{name} replicas {replicas}: Deployment {dep_name} has {replicas}, "
            f"controlled by the Foo; Foo status availableReplicas {st['availableReplicas']}"
        )

    theirs = [r for r in sim.request_log if r.user_agent != USER_AGENT]
    refused = [f"{r.verb} {r.path} {r.code}" for r in theirs if r.code in (401, 403)]
    anonymous = [r for r in theirs if r.user == "system:anonymous"]
    if not theirs or refused or anonymous:
        raise SmokeFailure(f"requests refused {refused}, anonymous {len(anonymous)}")
    report.ok(f"in-cluster config: {len(theirs)} requests over TLS with the mounted token")

    start = time.monotonic()
    docker("stop", "--time", str(spec.grace_seconds), container, timeout=spec.grace_seconds + 30)
    took = time.monotonic() - start
    code = docker("inspect", "--format", "{{.State.ExitCode}}", container)
    if code != "0" or took >= spec.grace_seconds:
        raise SmokeFailure(f"SIGTERM: exit code {code} after {took:.1f} s")
    report.ok(
        f"SIGTERM (docker stop): exit code 0 after {took:.1f} s (grace {spec.grace_seconds}s)"
    )
    if holder():
        raise SmokeFailure(f"the Lease is still held by {holder()} after exit")
    report.ok("Lease released on shutdown")

    lines = [line for line in docker.logs(container).splitlines() if line.strip()]
    not_json = [line for line in lines if not _is_json(line)]
    if not_json or any(token in line for line in lines):
        raise SmokeFailure(f"log: {len(not_json)} non-JSON lines ({not_json[:2]}) or the token")
    report.ok(f"log: {len(lines)} lines, all JSON, none contains the token")


def _is_json(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="image-smoke", description=__doc__.split("\n\n")[0])
    p.add_argument("--image", default="sample-controller-py:0.1.0")
    p.add_argument("--docker", default="docker", help="the docker CLI (default: docker on PATH)")
    opts = p.parse_args(argv)

    why = engine_unreachable(opts.docker)
    if why:
        print(f"image-smoke: no docker engine reachable ({why}); nothing was tested", flush=True)
        return 1
    docker = Docker(opts.docker)
    report = Report()
    report.ok(f"docker engine {docker('version', '--format', '{{.Server.Version}}')} reachable")
    try:
        smoke(opts.image, docker, report)
    except (SmokeFailure, subprocess.TimeoutExpired) as err:
        print(f"FAIL  {err}", flush=True)
        if getattr(err, "log", ""):
            print(f"---- the container's last log lines:\n{err.log.rstrip()}", flush=True)
        return 1
    print(f"image-smoke: {len(report.lines)} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
