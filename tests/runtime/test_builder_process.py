"""A Builder-made controller gets the whole process from the runtime: /readyz, /metrics, leader
election and a bounded graceful shutdown. The controller is examples/bar (for_(Bar),
owns(ConfigMap)), run as ``python -m examples.bar`` with the shared process flags against the
test's kubesim, as the Foo controller's process tests run ``python -m controller``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from client.rest import RESTClient, resource_path
from kubesim import KubeSim
from runtime.sharding.assignment import BUCKET_LABEL, bucket_of
from tests.helpers import ROOT, wait_for
from tests.integration.controller_process import (
    FAST_LEADER_ELECTION,
    LOOPBACK_ENDPOINTS,
    ControllerProcess,
)

BAR_CRD = ROOT / "examples" / "bar" / "crd.yaml"
BARS = ("tutorial.example.com", "v1", "bars")
CONFIGMAPS = ("", "v1", "configmaps")

pytestmark = pytest.mark.kubesim(crds=[BAR_CRD])


class BarProcess(ControllerProcess):
    """``python -m examples.bar`` with JSON logs, the loopback endpoints and ``flags``; the log
    reader and the helpers are ``ControllerProcess``'s."""

    def __init__(self, kubeconfig: str, *flags: str, name: str) -> None:
        self.name = name
        self.cmd = [sys.executable, "-m", "examples.bar", "--kubeconfig", kubeconfig]
        self.cmd += ["--log-format", "json", "--kube-api-qps", "0", *LOOPBACK_ENDPOINTS, *flags]
        self.records: list[dict] = []
        self._cond = threading.Condition()
        self._eof = False
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._reader = threading.Thread(target=self._read, name=f"{name}-log-reader", daemon=True)
        self._reader.start()


@pytest.fixture
def bar_process(sim: KubeSim, tmp_path: Path) -> Iterator[Callable[..., BarProcess]]:
    procs: list[BarProcess] = []

    def start(*flags: str, name: str = "bar") -> BarProcess:
        kubeconfig = str(sim.write_kubeconfig(tmp_path / f"{name}.kubeconfig"))
        procs.append(BarProcess(kubeconfig, *flags, name=name))
        return procs[-1]

    yield start
    for p in procs:
        p.close()


def create_bar(sim: KubeSim, name: str, configmap: str) -> None:
    RESTClient(sim.new_api_client()).request(
        "POST",
        resource_path(*BARS, "default"),
        body={
            "apiVersion": "tutorial.example.com/v1",
            "kind": "Bar",
            "metadata": {"name": name},
            "spec": {"configMapName": configmap, "data": {"a": "1"}},
        },
    )


def configmap_exists(sim: KubeSim, name: str) -> bool:
    found = RESTClient(sim.new_api_client()).request(
        "GET",
        resource_path(*CONFIGMAPS, "default"),
        params={"fieldSelector": f"metadata.name={name}"},
    )
    return bool(found["items"])


def reconciles(proc: BarProcess) -> float:
    return (
        proc.metric(
            "controller_runtime_reconcile_total", {"controller": "bar", "result": "success"}
        )
        or 0
    )


def test_readyz_metrics_and_a_bounded_shutdown(sim, bar_process):
    proc = bar_process("--graceful-shutdown-timeout", "3s")
    wait_for(lambda: proc.get("health-probes", "/readyz") == (200, "ok"), message="/readyz 200")
    code, body = proc.get("health-probes", "/readyz?verbose")
    assert code == 200 and "[+]informer-sync ok" in body
    assert proc.get("health-probes", "/healthz") == (200, "ok")

    create_bar(sim, "one", "cm-one")
    wait_for(lambda: configmap_exists(sim, "cm-one"), message="the Bar's ConfigMap")
    wait_for(lambda: reconciles(proc) >= 1, message="controller_runtime_reconcile_total{bar}")
    # the Builder's queue is counted under the controller's name too
    assert proc.metric("workqueue_adds_total", {"name": "bar"}) >= 1

    stopped = time.monotonic()
    assert proc.terminate(timeout=10) == 0
    # within --graceful-shutdown-timeout (and the exit margin past it)
    assert time.monotonic() - stopped < 3 + 1.5
    assert proc.has_log("controllers stopped")


def test_two_replicas_with_leader_election_only_the_leader_reconciles(sim, bar_process):
    election = (*FAST_LEADER_ELECTION, "--leader-elect-namespace", "default")
    first = bar_process(*election, name="first")
    first.wait_log("starting workers")
    second = bar_process(*election, name="second")
    # the standby is ready (it waits for the lease) but does not work
    wait_for(lambda: second.get("health-probes", "/readyz") == (200, "ok"), message="standby ready")
    lease = RESTClient(sim.new_api_client()).request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/bar-controller"
    )
    assert lease["spec"]["holderIdentity"] == first.identity

    create_bar(sim, "two", "cm-two")
    wait_for(lambda: configmap_exists(sim, "cm-two"), message="the leader's work")
    wait_for(lambda: reconciles(first) >= 1, message="the leader reconciled")
    assert reconciles(second) == 0
    assert not second.has_log("starting workers")

    # the leader goes: the standby takes the lease over and reconciles
    assert first.terminate(timeout=10) == 0
    second.wait_log("starting workers", timeout=10)
    create_bar(sim, "three", "cm-three")
    wait_for(lambda: configmap_exists(sim, "cm-three"), message="the new leader's work")
    assert second.terminate(timeout=10) == 0


SHARDED = (
    "--sharding",
    "--sharding-buckets",
    "4",
    "--leader-elect-namespace",
    "default",
    "--leader-elect-lease-duration",
    "2s",
    "--leader-elect-renew-deadline",
    "1500ms",
    "--leader-elect-retry-period",
    "500ms",
)


def test_two_sharded_replicas_share_the_bars_and_label_what_they_make(sim, bar_process):
    replicas = [bar_process(*SHARDED, "--identity", n, name=n) for n in ("replica-a", "replica-b")]

    def owned(p: BarProcess) -> float:
        return p.metric("sharding_buckets_owned", {"ring": "bar-controller"}) or 0

    # both hold buckets: the work is split
    wait_for(
        lambda: all(owned(p) > 0 for p in replicas) and sum(owned(p) for p in replicas) == 4,
        timeout=20,
        message="the four buckets split between the replicas",
    )
    api = RESTClient(sim.new_api_client())
    bars = {}

    def creators() -> set[str]:
        return {p.name for p in replicas if p.logs("creating configmap")}

    # Bars until both replicas have made a ConfigMap: a Bar's bucket comes from its random uid,
    # so a fixed handful could all fall in one replica's buckets (up to 10% for 8 Bars)
    for i in range(32):
        create_bar(sim, f"bar-{i}", f"cm-{i}")
        bars[f"bar-{i}"] = api.request("GET", resource_path(*BARS, "default", f"bar-{i}"))
        wait_for(lambda i=i: configmap_exists(sim, f"cm-{i}"), message=f"cm-{i}")
        if i >= 7 and creators() == {"replica-a", "replica-b"}:
            break

    # each ConfigMap carries its Bar's bucket: the owned informers of its replica select on it
    for name, created in bars.items():
        cm = api.request("GET", resource_path(*CONFIGMAPS, "default", f"cm-{name[4:]}"))
        assert cm["metadata"]["labels"][BUCKET_LABEL] == str(bucket_of(created, 4))
    # each Bar's ConfigMap was made by one replica, and both did some of the work
    made = [r["bar"] for p in replicas for r in p.logs("creating configmap")]
    assert sorted(made) == sorted(f"default/{n}" for n in bars)
    assert creators() == {"replica-a", "replica-b"}
    for p in replicas:
        assert p.terminate(timeout=15) == 0
