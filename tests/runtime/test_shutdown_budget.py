"""runtime.shutdown: one deadline for the drain, the Event flush and the Lease release."""

from __future__ import annotations

import pytest

from runtime.shutdown import EXIT_MARGIN, RESERVE_MAX, ShutdownBudget


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("timeout", "drain", "flush"),
    [
        (30.0, 28.0, 29.0),  # the default: 2 s kept back (RESERVE_MAX)
        (4.0, 3.0, 3.5),  # a quarter when that is less
        (0.5, 0.375, 0.4375),
        (0.0, 0.0, 0.0),  # nothing to wait for; the release still gets tried (manager)
    ],
)
def test_the_drain_the_flush_and_the_release_share_one_deadline(timeout, drain, flush):
    clock = Clock()
    budget = ShutdownBudget(timeout, clock=clock)
    assert budget.begin() == 50.0 + timeout
    assert budget.deadline == 50.0 + timeout
    assert budget.drain_deadline == pytest.approx(50.0 + drain)
    assert budget.flush_deadline == pytest.approx(50.0 + flush)
    assert budget.reserve <= RESERVE_MAX


def test_the_first_begin_wins():
    clock = Clock()
    budget = ShutdownBudget(4.0, clock=clock)
    assert not budget.started
    with pytest.raises(RuntimeError):
        budget.deadline  # noqa: B018 - not begun: no deadline yet
    budget.begin()  # the signal handler
    clock.now += 1.5
    assert budget.begin() == 54.0  # the controller noticing later does not move it
    assert budget.left() == pytest.approx(2.5)
    assert budget.left(budget.drain_deadline) == pytest.approx(1.5)
    clock.now += 10
    assert budget.left() == 0.0  # never negative


def test_a_negative_timeout_is_none():
    assert ShutdownBudget(-3).timeout == 0.0


def test_the_stated_margin_is_what_the_manifest_allows_for():
    # terminationGracePeriodSeconds must cover the budget plus the exit margin; the manifest
    # test checks the numbers, this one that the margin stays small
    assert 0 < EXIT_MARGIN <= 1.0
