"""client.wait: the exponential backoff between failed attempts (apimachinery
``ExponentialBackoffManager``), with an injected clock and random source."""

from __future__ import annotations

import pytest

from client.wait import ExponentialBackoff


def test_exponential_backoff_doubles_caps_and_resets():
    now = [0.0]
    b = ExponentialBackoff(clock=lambda: now[0], jitter=0.0)
    delays = []
    for _ in range(8):
        delays.append(b.next_delay())
        now[0] += 1
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    now[0] += 121  # two quiet minutes
    assert b.next_delay() == 0.8


def test_exponential_backoff_jitter_stretches_up_to_double():
    b = ExponentialBackoff(rand=lambda: 0.5)
    assert b.next_delay() == pytest.approx(1.2)
    b2 = ExponentialBackoff(rand=lambda: 0.999999)
    assert 1.59 < b2.next_delay() < 1.6


def test_jitter_does_not_compound_into_the_next_step():
    # the step doubles from 0.8, not from the jittered 1.2: 0.8 -> 1.6 -> 3.2, each * 1.5
    now = [0.0]
    b = ExponentialBackoff(clock=lambda: now[0], rand=lambda: 0.5)
    assert [b.next_delay() for _ in range(3)] == pytest.approx([1.2, 2.4, 4.8])


def test_initial_factor_and_cap_are_the_callers():
    b = ExponentialBackoff(initial=0.001, factor=10.0, cap=0.05, jitter=0.0, clock=lambda: 0.0)
    assert [b.next_delay() for _ in range(4)] == pytest.approx([0.001, 0.01, 0.05, 0.05])


def test_the_step_resets_only_after_more_than_reset_after_quiet_seconds():
    now = [0.0]
    b = ExponentialBackoff(clock=lambda: now[0], jitter=0.0, reset_after=120.0)
    assert b.next_delay() == 0.8
    now[0] += 120.0  # exactly reset_after: still the same run of failures
    assert b.next_delay() == 1.6
    now[0] += 120.5
    assert b.next_delay() == 0.8
