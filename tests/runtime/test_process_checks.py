"""runtime.manager.Manager: what /healthz and /readyz conclude from the controller's state."""

import dataclasses
import socket
import threading

import pytest
from prometheus_client import CollectorRegistry

from runtime.manager import STUCK_SYNC_SECONDS, Manager
from runtime.options import Options


class FakeController:
    """A Controller and its Workers in one (the probes read controller.workers)."""

    def __init__(self, started=2, alive=2, stuck=0.0, synced=True):
        self.n_started, self.n_alive, self.stuck, self.synced = started, alive, stuck, synced
        self.workers = self

    def started(self):
        return self.n_started

    def alive(self):
        return self.n_alive

    def longest_running_sync(self):
        return self.stuck

    def has_synced(self):
        return self.synced


def manager():
    m = Manager(Options(), rest=None)
    m.stop = threading.Event()  # what start() is given: the process's stop event
    return m


def running(m, controller):
    """The manager as run_runnables leaves it: the controller added and running."""
    m._runnables = [controller]
    m.running.set()


def probe(checks):
    ok, lines = checks.run()
    return ok, [line for line in lines if line.startswith("[-]")]


def test_liveness_fails_when_a_worker_died_or_a_sync_is_wedged():
    p = manager()
    assert probe(p.healthz_checks()) == (True, [])  # not started yet: alive
    running(p, FakeController())
    assert probe(p.healthz_checks()) == (True, [])
    running(p, FakeController(alive=1))
    assert probe(p.healthz_checks()) == (
        False,
        ["[-]workers failed: 1 of 2 worker threads have died"],
    )
    running(p, FakeController(started=4, alive=3))  # --workers 4
    assert probe(p.healthz_checks()) == (
        False,
        ["[-]workers failed: 1 of 4 worker threads have died"],
    )
    running(p, FakeController(stuck=STUCK_SYNC_SECONDS + 1))
    ok, failed = probe(p.healthz_checks())
    assert not ok and "a reconcile has been running for" in failed[0]
    p.stop.set()  # draining on purpose: threads ending is not a failure
    running(p, FakeController(alive=0))
    assert probe(p.healthz_checks()) == (True, [])


def test_readiness_needs_synced_caches_and_fails_once_stopping():
    p = manager()
    assert probe(p.readyz_checks()) == (False, ["[-]informer-sync failed: controller not started"])
    running(p, FakeController(synced=False))
    assert probe(p.readyz_checks()) == (
        False,
        ["[-]informer-sync failed: informer caches not synced"],
    )
    running(p, FakeController())
    assert probe(p.readyz_checks()) == (True, [])
    p.stop.set()
    assert probe(p.readyz_checks()) == (False, ["[-]shutdown failed: shutting down"])


def test_endpoints_that_cannot_all_bind_leave_none_running():
    # the probe port is taken: start_endpoints fails, and /metrics, already bound, is let go
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            metrics_port = free.getsockname()[1]
        options = dataclasses.replace(
            Options(),
            metrics_bind_address=("127.0.0.1", metrics_port),
            health_probe_bind_address=("127.0.0.1", busy),
        )
        with pytest.raises(OSError):
            Manager(options, rest=None, registry=CollectorRegistry()).start_endpoints()
    with socket.socket() as again:
        again.bind(("127.0.0.1", metrics_port))  # free again: the metrics server was closed
