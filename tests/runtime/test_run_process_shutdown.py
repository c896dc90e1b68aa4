"""runtime.manager.run_process: the process ends within its shutdown budget, whatever hangs.

The manager's own steps keep to the budget (tests/integration/test_shutdown.py); this covers
the last resort: a manager that does not return (a request to a server that never answers, in
a step nobody bounded) still lets the process exit, with status 1, half the exit margin after
the budget.
"""

from __future__ import annotations

import threading
import time

import pytest

from runtime import manager
from runtime.options import Options
from runtime.shutdown import EXIT_MARGIN


class FakeManager:
    """Stands in for Manager: start() returns 0 once stopped, or never (``hang``)."""

    hang = False

    def __init__(self, options, rest, budget=None):
        self.budget = budget

    def start(self, stop):
        stop.wait()
        if FakeManager.hang:
            threading.Event().wait()  # a step that never ends
        return 0


@pytest.fixture
def process(monkeypatch):
    """run_process with no server: returns a function that runs it and signals it after
    ``signal_after`` seconds, as the first SIGTERM does (budget begun, stop set)."""
    handlers = {}
    monkeypatch.setattr(manager, "configure_logging", lambda *a, **k: None)
    monkeypatch.setattr(manager, "tune_gc", lambda: None)
    monkeypatch.setattr(manager, "connect", lambda options, agent: (None, "fake"))
    monkeypatch.setattr(manager, "check_api", lambda rest, host, gvr, hint="": None)
    monkeypatch.setattr(manager, "Manager", FakeManager)
    monkeypatch.setattr(
        manager,
        "install_signal_handlers",
        lambda stop, budget=None: handlers.update(stop=stop, budget=budget),
    )

    def run(timeout: float, signal_after: float = 0.1) -> tuple[int, float]:
        def sigterm():
            time.sleep(signal_after)
            handlers["budget"].begin()
            handlers["stop"].set()

        threading.Thread(target=sigterm, daemon=True).start()
        start = time.monotonic()
        code = manager.run_process(Options(graceful_shutdown_timeout=timeout), lambda m: None)
        return code, time.monotonic() - start - signal_after

    yield run
    FakeManager.hang = False


def test_a_clean_stop_exits_0_at_once(process):
    code, took = process(timeout=5.0)
    assert code == 0 and took < 1.0


def test_a_hung_shutdown_still_ends_within_the_budget_and_half_the_margin(process, caplog):
    FakeManager.hang = True
    with caplog.at_level("ERROR", logger="runtime.manager"):
        code, took = process(timeout=0.6)
    assert code == 1
    assert 0.6 + EXIT_MARGIN / 2 - 0.1 <= took < 0.6 + EXIT_MARGIN, took
    assert [r.getMessage() for r in caplog.records] == [
        "the graceful shutdown overran its budget; exiting now"
    ]
