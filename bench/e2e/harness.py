"""The end-to-end bench's stage: a fresh kubesim, and one controller under test beside it.

kubesim runs in the bench's own process (its CPU is the bench's, see ``measure.self_cpu``); each
controller runs in a child process of its own, so that its CPU seconds count nothing else. The
controllers are ours (``python -m controller``, the real CLI) and the peers in ``bench.peers``.
A new contender is one more ``Kind``, one more entry in ``COMMANDS``, and its program in
``bench.peers``: every trial, figure and table then takes it like the others. The floor
(``bench.peers.floor``: the controller's API calls made by the plainest loop) came in that way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from bench.e2e.measure import Tracker
from kubesim import KubeSim

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "foo-crd.yaml"
PEERS = ROOT / "bench" / "peers"
PY = sys.executable
FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
NAMESPACE = "default"
WARMUP_TIMEOUT = 90.0  # seconds a controller may take to start and converge its first Foo

Kind = Literal["ours", "kopf", "official", "floor"]


@dataclass(frozen=True)
class Variant:
    """One controller configuration: which program, how many workers, which client rate limit."""

    kind: Kind
    workers: int = 2  # worker threads (ours, official); kopf schedules per object
    qps: float = 0.0  # ours: --kube-api-qps (0: unlimited)
    # ours: run the controller of this other checkout (its controller, client, informer, ...)
    # instead of this one's: a same-run baseline for a change. None: this checkout.
    source: Path | None = None
    # ours from another checkout: the name it goes by in tables (``--variant NAME=DIR``), so
    # that several checkouts (a change and its parts, each left out) run in the same rounds
    name: str | None = None
    # ours: serve /healthz and /readyz (on a free loopback port) as the default flags do;
    # the other variants run without, as the Go sample-controller has none
    probes: bool = False

    @property
    def label(self) -> str:
        """The name tables and results use; it identifies the variant across rounds."""
        if self.name is not None:
            return self.name
        if self.kind == "ours" and self.source is not None:
            return f"base w={self.workers}"
        if self.kind == "ours":
            qps = "unlimited" if not self.qps else f"{self.qps:g}"
            return f"ours w={self.workers} qps={qps}" + (" probes" if self.probes else "")
        if self.kind == "official":
            return f"official w={self.workers}"
        return self.kind  # kopf, floor: no knobs


OURS = Variant("ours")
OURS8 = Variant("ours", workers=8)
KOPF = Variant("kopf")
OFFICIAL = Variant("official")
OFFICIAL8 = Variant("official", workers=8)
FLOOR = Variant("floor")


@dataclass(frozen=True)
class Launch:
    """What one controller process is started with, beyond the kubeconfig."""

    # ours: --resync-period; E2E_RESYNC overrides it for every trial ("0": off), to see what
    # resyncs cost a long burst (bench/resync_cost.py measures one resync)
    resync: str = field(default_factory=lambda: os.environ.get("E2E_RESYNC", "30s"))
    metrics_port: int = 0  # ours: serve /metrics on this port (0: no metrics server)


def _ours(v: Variant, kubeconfig: str, launch: Launch) -> list[str]:
    metrics = f"127.0.0.1:{launch.metrics_port}" if launch.metrics_port else "0"
    return [
        PY,
        "-m",
        "controller",
        "--kubeconfig",
        kubeconfig,
        "--workers",
        str(v.workers),
        "--kube-api-qps",
        f"{v.qps:g}",
        "--resync-period",
        launch.resync,
        "--metrics-bind-address",
        metrics,
        # plain HTTP: the bench scrapes its own process on loopback, with no token to review
        "--metrics-secure=false",
        "--health-probe-bind-address",
        "127.0.0.1:0" if v.probes else "0",
    ]


def _official(v: Variant, kubeconfig: str, launch: Launch) -> list[str]:
    peer = "bench.peers.official_controller"
    return [PY, "-m", peer, "--kubeconfig", kubeconfig, "--workers", str(v.workers)]


def _kopf(v: Variant, kubeconfig: str, launch: Launch) -> list[str]:
    # kopf loads an operator by file; it reads the kubeconfig from KUBECONFIG.
    kopf = Path(PY).parent / "kopf"
    return [str(kopf), "run", "--standalone", "-A", str(PEERS / "kopf_operator.py")]


def _floor(v: Variant, kubeconfig: str, launch: Launch) -> list[str]:
    return [PY, "-m", "bench.peers.floor", "--kubeconfig", kubeconfig]


# The command line of each kind of controller. Children run in ROOT, so ``python -m bench...``
# finds the bench package there and ``controller`` comes from the editable install.
COMMANDS: dict[Kind, Callable[[Variant, str, Launch], list[str]]] = {
    "ours": _ours,
    "official": _official,
    "kopf": _kopf,
    "floor": _floor,
}


def new_sim(latency: float) -> tuple[KubeSim, Tracker]:
    """A fresh kubesim with the Foo CRD, the deployment status loop and optional latency.

    Deployment status is set at once (``deployment_status_delay=0``), so what is timed is the
    controller's work, not a simulated rollout. History and request log are sized for the
    largest burst, so neither a watch nor the request count loses anything.
    """
    sim = KubeSim(
        crds=[CRD], deployment_status_delay=0.0, history_size=500_000, request_log_size=2_000_000
    )
    tracker = Tracker()
    sim.storage.add_listener(tracker)
    sim.start()
    if latency:
        sim.faults.add_latency(latency)
    return sim, tracker


def foo_body(name: str, replicas: int) -> dict:
    """A Foo as a user would create it."""
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


def foo_names(n: int) -> list[str]:
    return [f"foo-{i:05d}" for i in range(n)]


def create_foos(sim: KubeSim, names: list[str]) -> None:
    """Create Foos inside kubesim, through its REST layer.

    Validation, defaulting, resourceVersion and watch events are exactly as for a POST, but no
    HTTP client of ours competes with the controller for the CPU. Replicas cycle 1, 2, 3.
    """
    info = sim.registry.lookup(*FOO_GVR)
    for i, name in enumerate(names):
        sim.rest.create(info, NAMESPACE, foo_body(name, 1 + i % 3), {})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Controller:
    """One controller under test, in its own process, its output appended to a log file."""

    def __init__(self, v: Variant, kubeconfig: str, log_path: Path, launch: Launch) -> None:
        self.variant = v
        self.log_path = log_path
        env = dict(os.environ, KUBECONFIG=kubeconfig)
        self._log: IO[bytes] = open(log_path, "ab")  # closed in stop()
        self.proc = subprocess.Popen(
            COMMANDS[v.kind](v, kubeconfig, launch),
            # ``python -m`` puts the working directory first on sys.path: a baseline's source
            # tree is imported instead of this one (the same interpreter and dependencies)
            cwd=v.source or ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        """SIGTERM, as a kubelet would, then SIGKILL if it does not exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()


@contextlib.contextmanager
def running(
    v: Variant, latency: float, workdir: Path, launch: Launch | None = None
) -> Iterator[tuple[KubeSim, Tracker, Controller]]:
    """kubesim + one controller, warmed up with one converged Foo.

    The warm-up Foo makes start-up (imports, the initial list, opening the watches) happen
    before anything is timed.
    """
    sim, tracker = new_sim(latency)
    kubeconfig = sim.write_kubeconfig(workdir / "kubeconfig")
    ctl = Controller(v, kubeconfig, workdir / f"{v.kind}.log", launch or Launch())
    try:
        tracker.arm(["warmup"])
        create_foos(sim, ["warmup"])
        if not tracker.done.wait(WARMUP_TIMEOUT):
            raise RuntimeError(f"{v.label}: warm-up Foo did not converge; see {ctl.log_path}")
        yield sim, tracker, ctl
    finally:
        ctl.stop()
        sim.close()


def revision() -> str:
    """The commit of the code the controllers run, marked '+changes' when the work tree differs."""

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    code = ("controller", "client", "informer", "tools", "workqueue", "kubesim")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *code)
    return head + ("+changes" if dirty else "")
