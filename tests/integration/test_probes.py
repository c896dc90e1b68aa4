"""The CLI's endpoints, served by a real controller process: /readyz, /healthz and /metrics.

The process binds 127.0.0.1:0 and logs the address it got ("serving" records), so the tests
never guess a free port.
"""

from __future__ import annotations

import re
import signal

import pytest
from prometheus_client.parser import text_string_to_metric_families

from client.rest import RESTClient, resource_path
from controller.foo_controller import FOO_GVR
from tests.helpers import ROOT, wait_for
from tests.integration.controller_harness import foo
from tests.integration.controller_process import FAST_LEADER_ELECTION

pytestmark = pytest.mark.kubesim(deployment_status_delay=0.1)


def test_readyz_fails_until_caches_sync_then_passes(sim, proc_factory):
    # Every list and watch of Foos fails until the test lifts the fault: the Foo informer can
    # neither stream its state (WatchList, the default) nor list it when it falls back.
    rule = sim.faults.fail_fraction(1.0, 500, verbs=["list", "watch"], resources=["foos"])
    proc = proc_factory()
    wait_for(lambda: rule.hits >= 2, message="the Foo informer's stream and its fallback list")

    code, body = proc.get("health-probes", "/readyz")
    assert code == 500
    code, body = proc.get("health-probes", "/readyz?verbose")
    assert code == 500 and "[-]informer-sync failed: informer caches not synced" in body
    assert "[+]shutdown ok" in body
    # Not synced is not unhealthy: liveness must not restart a pod that waits for the server.
    assert proc.get("health-probes", "/healthz") == (200, "ok")

    sim.faults.remove(rule)  # the reflector's next attempt (after its 0.8-1.6 s backoff) streams
    wait_for(
        lambda: proc.get("health-probes", "/readyz") == (200, "ok"),
        timeout=8,
        message="/readyz 200 after the caches synced",
    )
    code, body = proc.get("health-probes", "/readyz?verbose")
    assert code == 200 and "[+]informer-sync ok" in body
    assert proc.get("health-probes", "/nope")[0] == 404

    proc.send(signal.SIGTERM)
    assert proc.wait_exit() == 0


def samples(body: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found: dict, metric: str, **labels: str) -> float | None:
    """The first sample with these label values (other labels ignored); None when absent."""
    for (n, lbls), v in found.items():
        if n == metric and all(dict(lbls).get(k) == want for k, want in labels.items()):
            return v
    return None


def test_metrics_endpoint_serves_every_family(sim, proc_factory):
    # The list path, so that informer_lists_total counts something (a streamed sync makes no
    # LIST call; tests/informer/test_informer_metrics.py counts a streamed one).
    proc = proc_factory(
        *FAST_LEADER_ELECTION, "--leader-elect-namespace", "default", "--watch-list=false"
    )
    proc.wait_log("became leader")
    wait_for(lambda: proc.get("health-probes", "/readyz")[0] == 200, message="ready")
    api = RESTClient(sim.new_api_client())
    api.request(
        "POST",
        resource_path(*FOO_GVR, "default"),
        body=foo("metered"),
    )
    wait_for(
        lambda: proc.has_log("successfully synced", key="default/metered"),
        message="a reconcile of default/metered",
    )

    code, body = proc.get("metrics", "/metrics")
    assert code == 200
    found = samples(body)
    # the named workqueue, with client-go's names
    assert value(found, "workqueue_depth", name="foo") is not None
    assert value(found, "workqueue_adds_total", name="foo") >= 1
    assert value(found, "workqueue_work_duration_seconds_count", name="foo") >= 1
    assert value(found, "workqueue_retries_total", name="foo") is not None
    # reconciles, controller-runtime's names
    assert (
        value(found, "controller_runtime_reconcile_total", controller="foo", result="success") >= 1
    )
    # (errors happen: a status write from a cache one event behind gets a 409 and is retried)
    assert value(found, "controller_runtime_reconcile_errors_total", controller="foo") is not None
    assert value(found, "controller_runtime_reconcile_time_seconds_count", controller="foo") >= 1
    # informers
    assert value(found, "informer_lists_total", resource="foos") >= 1
    assert value(found, "informer_watches_total", resource="deployments") >= 1
    assert value(found, "informer_store_resource_version", resource="foos") > 0
    # leader election
    assert value(found, "leader_election_master_status", name="sample-controller") == 1
    # process metrics (prometheus-client's default collectors)
    assert value(found, "process_cpu_seconds_total") > 0
    assert value(found, "process_resident_memory_bytes") > 0
    assert value(found, "python_info") == 1
    # every series the metrics table of docs/operating.md (moved there from the README) names
    # is served
    operating = (ROOT / "docs" / "operating.md").read_text()
    table = operating[operating.index("\n## Metrics\n") : operating.index("\n## Leader election\n")]
    named = set(
        re.findall(
            r"`((?:workqueue|controller_runtime|informer|leader_election|python)"
            r"_[a-z_]+)`",
            table,
        )
    )
    served = {n for n, _ in found} | {f.name for f in text_string_to_metric_families(body)}
    assert named and named <= served, named - served
    # the health endpoints are on their own port, /metrics is not served there
    assert proc.get("health-probes", "/metrics")[0] == 404

    proc.send(signal.SIGTERM)
    assert proc.wait_exit() == 0


def test_a_taken_port_is_one_line_naming_the_flag_and_address(sim, tmp_path):
    """The process started on a port another socket holds: one error record that names the
    flag and the address to change, and exit status 1, before the controller starts."""
    import socket

    from tests.integration.controller_process import ControllerProcess

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = ControllerProcess(
            sim.write_kubeconfig(tmp_path / "kubeconfig"),
            endpoints=(
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                f"127.0.0.1:{port}",
            ),
        )
        try:
            assert proc.wait_exit(30) == 1
        finally:
            proc.close()
    [error] = [r for r in proc.records if r.get("level") == "error"]
    assert error["msg"] == "cannot serve endpoints"
    assert error["error"] == (
        f"--health-probe-bind-address: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert "Traceback" not in proc.log_text()


def test_readyz_fails_while_the_crd_is_gone_and_passes_once_it_is_back(sim, proc_factory):
    """Synced once is not up to date now: with the Foo CRD deleted the Foo informer cannot
    list, so /readyz names it (the process must not count as up), while /healthz stays ok (a
    restart would not bring the CRD back); the CRD applied again, a list succeeds, ready."""
    import yaml

    from tests.helpers import CRD

    proc = proc_factory()
    wait_for(lambda: proc.get("health-probes", "/readyz")[0] == 200, message="ready")
    api = RESTClient(sim.new_api_client())
    crds = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    crd = yaml.safe_load(CRD.read_text())
    api.request("DELETE", resource_path(*crds, None, crd["metadata"]["name"]))

    def not_ready() -> str | None:
        code, body = proc.get("health-probes", "/readyz?verbose")
        return body if code == 500 else None

    body = wait_for(not_ready, message="not ready without the CRD")
    failed = "[-]informer-sync failed: informer samplecontroller.k8s.io/v1alpha1/foos cannot sync"
    assert failed in body
    assert proc.get("health-probes", "/healthz") == (200, "ok")
    # the reflector names the missing resource, once however many times it retries
    hint = "the server does not serve this resource (404); is its CustomResourceDefinition"
    named = wait_for(
        lambda: [r for r in proc.records if hint in str(r.get("msg", ""))],
        message="the reflector's hint",
    )
    assert len(named) == 1

    api.request("POST", resource_path(*crds, None), body=crd)
    wait_for(lambda: not_ready() is None, timeout=20, message="ready again with the CRD back")
    assert len([r for r in proc.records if hint in str(r.get("msg", ""))]) == 1
