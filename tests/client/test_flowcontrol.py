"""client.flowcontrol: the client-side token bucket (client-go ``flowcontrol``
``NewTokenBucketRateLimiter``), driven by an injected clock so no test sleeps."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import client.flowcontrol
from client.flowcontrol import TokenBucketRateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_one_request_per_one_over_qps():
    clock = Clock()
    limiter = TokenBucketRateLimiter(qps=10, burst=3, clock=clock)
    # the burst goes at once; after it, each request waits 1/qps longer than the one before,
    # queued behind it rather than all waking together
    waits = [limiter.reserve() for _ in range(6)]
    assert waits == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3])
    clock.now += 0.3  # the reserved requests have gone
    assert limiter.reserve() == pytest.approx(0.1)


def test_requests_at_qps_never_wait():
    clock = Clock()
    limiter = TokenBucketRateLimiter(qps=5, burst=1, clock=clock)
    for _ in range(10):
        assert limiter.reserve() == 0.0
        clock.now += 0.2


def test_an_idle_bucket_refills_to_burst_and_no_further():
    clock = Clock()
    limiter = TokenBucketRateLimiter(qps=10, burst=2, clock=clock)
    assert [limiter.reserve() for _ in range(2)] == [0.0, 0.0]
    clock.now += 3600  # an hour idle: still only two tokens
    waits = [limiter.reserve() for _ in range(3)]
    assert waits == pytest.approx([0.0, 0.0, 0.1])


def test_a_clock_going_backwards_adds_no_tokens():
    clock = Clock()
    limiter = TokenBucketRateLimiter(qps=10, burst=1, clock=clock)
    assert limiter.reserve() == 0.0
    clock.now -= 5
    assert limiter.reserve() == pytest.approx(0.1)


@pytest.mark.parametrize(
    "qps, burst, message",
    [(0, 1, "qps must be positive"), (-1, 1, "qps must be positive"), (1, 0, "burst must be")],
)
def test_limits_that_could_never_grant_a_token_are_refused(qps, burst, message):
    with pytest.raises(ValueError, match=message):
        TokenBucketRateLimiter(qps=qps, burst=burst)


def test_accept_sleeps_for_the_reserved_delay_only_when_the_bucket_is_empty(monkeypatch):
    slept: list[float] = []
    # the module's own name for time, so no other thread's sleep is touched
    monkeypatch.setattr(client.flowcontrol, "time", SimpleNamespace(sleep=slept.append))
    limiter = TokenBucketRateLimiter(qps=4, burst=1, clock=Clock())
    limiter.accept()
    assert slept == []
    limiter.accept()
    assert slept == pytest.approx([0.25])
