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
from runtime.shutdown import EXIT_MARGIN, ShutdownBudget
from tests.helpers import wait_for
from tests.integration.controller_harness import foo
from tests.integration.controller_process import (
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
    log = [r for r in sim.request_log if r.user_agent.startswith(USER_AGENT)]
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
    # it waited for the drain (the budget less its reserve for the Event flush and the Lease
    # release), and exited within the budget and the stated margin
    budget = ShutdownBudget(0.5)
    assert 0.5 - budget.reserve <= took < 0.5 + EXIT_MARGIN, took
    assert proc.has_log("in-flight work did not finish within the graceful shutdown timeout")
    assert not proc.has_log("successfully synced", key="default/slow")
    sim.faults.remove(rule)


def test_shutdown_keeps_to_its_budget_under_slow_creates(sim, proc_factory):
    # 14 Foos queued, 3 s on every Deployment create, 6 workers (six creates in flight at a
    # time, one per worker) and a 4 s budget: the queue cannot drain in time. At the drain
    # deadline (3 s: 4 s less a quarter kept for the Event flush and the Lease release) no key
    # starts any more, the creates in flight are abandoned, and the process still releases the
    # Lease, flushes its Events and exits 0 within the budget and the stated margin.
    timeout = 4.0
    proc = proc_factory(
        *FAST_LEADER_ELECTION,
        "--leader-elect-namespace",
        "default",
        "--graceful-shutdown-timeout",
        f"{timeout:g}s",
        "--workers",
        "6",
        "--trace",
    )
    proc.wait_log("became leader")
    wait_for(lambda: proc.get("health-probes", "/readyz")[0] == 200, message="controller ready")
    rule = sim.faults.add_latency(3.0, verbs=["create"], resources=["deployments"])
    client = RESTClient(sim.new_api_client())
    names = [f"queued-{i}" for i in range(14)]
    for name in names:
        client.request("POST", resource_path(*FOO_GVR, "default"), body=foo(name))
    wait_for(lambda: rule.hits >= 6, message="six creates in flight")
    # The scenario's timing, not a synchronisation: signalled 0.5 s into the first creates,
    # the next six keys start at about 2.5 s and are in flight at the drain deadline (3 s),
    # rather than starting just as it passes.
    time.sleep(0.5)
    signalled = time.monotonic()
    proc.send(signal.SIGTERM)
    assert proc.wait_exit(timeout + EXIT_MARGIN + 2) == 0
    took = time.monotonic() - signalled
    assert took < timeout + EXIT_MARGIN, f"exited {took:.2f}s after SIGTERM"

    # The drain deadline passed with work in flight, and from then on no key was started.
    records = proc.logs()
    [deadline] = [
        i
        for i, r in enumerate(records)
        if r.get("msg") == "in-flight work did not finish within the graceful shutdown timeout"
    ]
    abandoned = records[deadline]["abandoned"].split(",")
    assert abandoned != [""], "the drain deadline found nothing in flight"
    started = {r["key"] for r in records if r.get("msg") == "dequeue"}
    assert not [r for r in records[deadline:] if r.get("msg") == "dequeue"], "a key started late"
    assert set(abandoned) <= started and len(started) == 12  # two never started at all
    synced = {r["key"] for r in records if r.get("msg") == "successfully synced"}
    deadline_ts = records[deadline]["ts"]
    for r in records[deadline:]:  # an abandoned sync announces no further write
        assert r.get("msg") not in (
            "creating deployment",
            "updating deployment replicas",
            "status write",
            "event",
        ), r

    # The Lease was released and the Events of the finished syncs were written.
    spec = lease_spec(sim)
    assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 1
    events = RESTClient(sim.new_api_client()).request(
        "GET", resource_path("", "v1", "events", "default")
    )["items"]
    assert {e["involvedObject"]["name"] for e in events if e["reason"] == "Synced"} == {
        key.split("/")[1] for key in synced
    }
    # The server received no write the log had not announced before the deadline: every
    # Deployment create was a "creating deployment" (the abandoned ones end in the server
    # after their 3 s, logged with their start time), and what arrived after the deadline's
    # record, but Events and the Lease, was a write announced before it and still in transit.
    creates = lambda: [  # noqa: E731
        r for r in sim.request_log if r.resource == "deployments" and r.verb == "create"
    ]
    wait_for(lambda: len(creates()) == rule.hits, timeout=5, message="the creates to end")
    assert len(creates()) == len([r for r in records if r.get("msg") == "creating deployment"])
    announced = {r["key"] for r in records[:deadline] if r.get("msg") == "status write"}
    late = [
        r
        for r in sim.request_log
        if r.user_agent.startswith(USER_AGENT)
        and r.verb in ("create", "update")
        and r.time > deadline_ts
        and r.resource not in ("events", "leases")
    ]
    for r in late:
        assert r.resource in ("foos/status", "deployments"), r  # creates: counted above
        assert r.resource == "deployments" or f"default/{r.name}" in announced, r
        assert r.time < deadline_ts + 0.5, r  # sent before the deadline
    sim.faults.remove(rule)
