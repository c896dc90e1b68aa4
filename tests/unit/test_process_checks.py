"""controller.__main__.Process: what /healthz and /readyz conclude from the controller's state."""

import threading

from controller.__main__ import STUCK_SYNC_SECONDS, Process


class FakeController:
    def __init__(self, started=2, alive=2, stuck=0.0, synced=True):
        self.started, self.alive, self.stuck, self.synced = started, alive, stuck, synced

    def workers_started(self):
        return self.started

    def workers_alive(self):
        return self.alive

    def longest_running_sync(self):
        return self.stuck

    def has_synced(self):
        return self.synced


def probe(checks):
    ok, lines = checks.run()
    return ok, [line for line in lines if line.startswith("[-]")]


def test_liveness_fails_when_a_worker_died_or_a_sync_is_wedged():
    p = Process(leader_elect=False, stop=threading.Event())
    assert probe(p.healthz_checks()) == (True, [])  # not started yet: alive
    p.parts["controller"] = FakeController()
    assert probe(p.healthz_checks()) == (True, [])
    p.parts["controller"] = FakeController(alive=1)
    assert probe(p.healthz_checks()) == (
        False,
        ["[-]workers failed: 1 of 2 worker threads have died"],
    )
    p.parts["controller"] = FakeController(stuck=STUCK_SYNC_SECONDS + 1)
    ok, failed = probe(p.healthz_checks())
    assert not ok and "a reconcile has been running for" in failed[0]
    p.stop.set()  # draining on purpose: threads ending is not a failure
    p.parts["controller"] = FakeController(alive=0)
    assert probe(p.healthz_checks()) == (True, [])


def test_readiness_needs_synced_caches_and_fails_once_stopping():
    p = Process(leader_elect=False, stop=threading.Event())
    assert probe(p.readyz_checks()) == (False, ["[-]informer-sync failed: controller not started"])
    p.parts["controller"] = FakeController(synced=False)
    assert probe(p.readyz_checks()) == (
        False,
        ["[-]informer-sync failed: informer caches not synced"],
    )
    p.parts["controller"] = FakeController()
    assert probe(p.readyz_checks()) == (True, [])
    p.stop.set()
    assert probe(p.readyz_checks()) == (False, ["[-]shutdown failed: shutting down"])
