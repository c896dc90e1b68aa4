"""Graceful shutdown of a real controller process: SIGTERM drains, a second signal exits at once.

A slow reconcile is made by kubesim's latency fault on the controller's Deployment create: the
fault rule counts a request as soon as the server has it (``rule.hits``), so the test knows the
reconcile is in flight before it signals.
"""

from __future__ import annotations

import signal
import time

from client.rest import RESTClient, resource_path
from controller.foo_controller import FOO_GVR
from kubesim import KubeSim
from tests.helpers import wait_for
from tests.integration.controller_harness import foo

from .controller_process import (
    FAST_LEADER_ELECTION,
    USER_AGENT,
    ControllerProcess,
    lease_spec,
)


def start_slow_reconcile(sim: KubeSim, proc: ControllerProcess, seconds: float):
    """Create a Foo whose Deployment create takes `seconds`; return once it is in flight."""
    rule = sim.faults.add_latency(seconds, verbs=["create"], resources=["deployments"])
    wait_for(lambda: proc.get("health-probes", "/readyz")[0] == 200, message="controller ready")
    RESTClient(sim.new_api_client()).request(
        "POST", resource_path(*FOO_GVR, "default"), body=foo("slow")
    )
    wait_for(lambda: rule.hits >= 1, message="the Deployment create to reach the server")
    return rule


def index_of(records, predicate) -> int:
    return next(i for i, r in enumerate(records) if predicate(r))


def test_sigterm_finishes_the_inflight_reconcile_releases_and_exits_0(sim, proc_factory):
    proc = proc_factory(*FAST_LEADER_ELECTION, "--leader-elect-namespace", "default")
    proc.wait_log("became leader")
    start_slow_reconcile(sim, proc, 1.0)
    signalled = time.monotonic()
    proc.send(signal.SIGTERM)

    # Draining: no longer ready, but still alive while the reconcile finishes.
    proc.wait_log("shutting down workers")
    code, body = proc.get("health-probes", "/readyz?verbose")
    assert code == 500 and "[-]shutdown failed: shutting down" in body
    assert proc.get("health-probes", "/healthz")[0] == 200

    assert proc.wait_exit(10) == 0
    assert time.monotonic() - signalled >= 0.5  # it waited for the slow write
    assert proc.has_log("successfully synced", key="default/slow")
    assert not proc.has_log("in-flight work did not finish within the graceful shutdown timeout")

    # The reconcile completed: Deployment created, status written, Event flushed ...
    log = [r for r in sim.request_log if r.user_agent == USER_AGENT]
    created = index_of(log, lambda r: r.verb == "create" and r.resource == "deployments")
    assert log[created].code == 201
    status = index_of(log, lambda r: r.verb == "update" and r.resource == "foos/status")
    event = index_of(log, lambda r: r.verb == "create" and r.resource == "events")
    assert log[status].code == 200 and log[event].code == 201
    events = RESTClient(sim.new_api_client()).request(
        "GET", resource_path("", "v1", "events", "default")
    )["items"]
    assert [e["reason"] for e in events if e["involvedObject"]["name"] == "slow"] == ["Synced"]
    # ... and only then was the Lease released (no holder, 1 s).
    release = max(i for i, r in enumerate(log) if r.verb == "update" and r.resource == "leases")
    assert release > max(created, status, event)
    spec = lease_spec(sim)
    assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 1


def test_second_signal_exits_1_at_once(sim, proc_factory):
    proc = proc_factory()
    rule = start_slow_reconcile(sim, proc, 8.0)  # far longer than this test waits
    proc.send(signal.SIGINT)  # SIGINT and SIGTERM are handled alike
    proc.wait_log("signal received, shutting down gracefully")
    proc.wait_log("shutting down workers")
    assert proc.running()  # the first signal drains: the stuck reconcile holds the exit

    second = time.monotonic()
    proc.send(signal.SIGTERM)
    assert proc.wait_exit(5) == 1
    assert time.monotonic() - second < 2.0
    assert proc.has_log("second signal, exiting immediately")
    assert not proc.has_log("successfully synced", key="default/slow")
    sim.faults.remove(rule)


def test_drain_is_bounded_by_the_graceful_shutdown_timeout(sim, proc_factory):
    proc = proc_factory("--graceful-shutdown-timeout", "500ms")
    rule = start_slow_reconcile(sim, proc, 8.0)  # cannot finish in time
    signalled = time.monotonic()
    proc.send(signal.SIGTERM)
    assert proc.wait_exit(5) == 0  # a bounded drain is still a clean stop
    took = time.monotonic() - signalled
    assert 0.5 <= took < 4.0, took
    assert proc.has_log("in-flight work did not finish within the graceful shutdown timeout")
    assert not proc.has_log("successfully synced", key="default/slow")
    sim.faults.remove(rule)
