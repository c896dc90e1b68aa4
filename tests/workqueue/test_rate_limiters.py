"""Rate limiters: exact delay sequences (client-go default_rate_limiters.go and
golang.org/x/time/rate reservations). Delays are seconds; time is a FakeClock."""

from __future__ import annotations

import math
import threading

import pytest

from workqueue import (
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
    sample_controller_rate_limiter,
)

# 5 ms doubling: the 18th failure (2^17 * 5 ms = 655.36 s) is the last under the 1000 s cap.
EXPONENTIAL_5MS = [
    0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56,
    5.12, 10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1000.0, 1000.0,
]  # fmt: skip


class TestItemExponentialFailureRateLimiter:
    def test_doubles_from_base_up_to_the_cap(self):
        limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
        assert [limiter.when("a") for _ in range(20)] == EXPONENTIAL_5MS
        assert limiter.num_requeues("a") == 20

    def test_counts_each_item_separately(self):
        limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
        assert [limiter.when("a") for _ in range(3)] == [0.001, 0.002, 0.004]
        assert limiter.when("b") == 0.001
        assert limiter.num_requeues("a") == 3
        assert limiter.num_requeues("b") == 1
        assert limiter.num_requeues("never-failed") == 0

    def test_forget_restarts_the_backoff(self):
        limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
        limiter.when("a")
        limiter.when("a")
        limiter.forget("a")
        assert limiter.num_requeues("a") == 0
        assert limiter.when("a") == 0.001
        limiter.forget("unknown")  # forgetting an untracked item is harmless

    def test_huge_failure_counts_return_the_cap_instead_of_overflowing(self):
        limiter = ItemExponentialFailureRateLimiter(0.001, 1000.0)
        delays = [limiter.when("a") for _ in range(1100)]
        assert delays[-1] == 1000.0
        assert max(delays) == 1000.0

    def test_is_consistent_under_concurrent_failures(self):
        limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)

        def fail() -> None:
            for _ in range(500):
                limiter.when("a")

        threads = [threading.Thread(target=fail, name=f"test-fail-{i}") for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert limiter.num_requeues("a") == 2000


class TestItemFastSlowRateLimiter:
    def test_fast_for_max_fast_attempts_then_slow(self):
        limiter = ItemFastSlowRateLimiter(0.005, 10.0, 3)
        assert [limiter.when("a") for _ in range(5)] == [0.005, 0.005, 0.005, 10.0, 10.0]
        assert limiter.num_requeues("a") == 5
        assert limiter.when("b") == 0.005

    def test_forget_returns_to_fast(self):
        limiter = ItemFastSlowRateLimiter(0.005, 10.0, 1)
        assert [limiter.when("a") for _ in range(2)] == [0.005, 10.0]
        limiter.forget("a")
        assert limiter.num_requeues("a") == 0
        assert limiter.when("a") == 0.005


class TestBucketRateLimiter:
    def test_burst_is_free_then_tokens_are_reserved_from_the_future(self):
        clock = FakeClock()
        limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
        delays = [limiter.when(f"item-{i}") for i in range(6)]
        assert delays == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3])

    def test_refills_at_qps(self):
        clock = FakeClock()
        limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
        for _ in range(5):
            limiter.when("x")  # three free, two reserved ahead: the bucket is at -2
        clock.step(0.2)  # refills exactly the two borrowed tokens
        assert limiter.when("x") == pytest.approx(0.1)
        clock.step(0.25)  # -1 + 2.5 = 1.5 tokens
        assert limiter.when("x") == 0.0
        assert limiter.when("x") == pytest.approx(0.05)

    def test_refill_never_exceeds_the_burst(self):
        clock = FakeClock()
        limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
        limiter.when("x")
        clock.step(3600)
        assert [limiter.when("x") for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.1])

    def test_is_one_bucket_for_all_items_and_tracks_none(self):
        clock = FakeClock()
        limiter = BucketRateLimiter(qps=1, burst=1, clock=clock)
        assert limiter.when("a") == 0.0
        assert limiter.when("b") == pytest.approx(1.0)
        limiter.forget("b")
        assert limiter.num_requeues("a") == 0
        assert limiter.num_requeues("b") == 0
        assert limiter.when("c") == pytest.approx(2.0)

    def test_infinite_qps_never_delays(self):
        limiter = BucketRateLimiter(qps=math.inf, burst=0)
        assert [limiter.when("x") for _ in range(1000)] == [0.0] * 1000

    @pytest.mark.parametrize(("qps", "burst"), [(0, 10), (-1, 10), (10, 0)])
    def test_rejects_limits_that_could_never_grant_a_token(self, qps: float, burst: int):
        with pytest.raises(ValueError):
            BucketRateLimiter(qps=qps, burst=burst)

    def test_reservations_are_not_lost_under_concurrency(self):
        clock = FakeClock()
        limiter = BucketRateLimiter(qps=100, burst=10, clock=clock)
        delays: list[float] = []
        lock = threading.Lock()

        def reserve() -> None:
            for _ in range(50):
                delay = limiter.when("x")
                with lock:
                    delays.append(delay)

        threads = [threading.Thread(target=reserve, name=f"test-reserve-{i}") for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        # 200 reservations, 10 free: the last one waits for 190 refills at 100 qps.
        assert sorted(delays) == pytest.approx([0.0] * 10 + [n / 100 for n in range(1, 191)])


class TestMaxOfRateLimiter:
    def test_takes_the_longest_delay_and_consults_every_limiter(self):
        fast_slow = ItemFastSlowRateLimiter(0.005, 3.0, 3)
        exponential = ItemExponentialFailureRateLimiter(0.001, 1.0)
        limiter = MaxOfRateLimiter(fast_slow, exponential)
        delays = [limiter.when("a") for _ in range(5)]
        # exponential: 1, 2, 4, 8, 16 ms; fast/slow: 5, 5, 5 ms, 3 s, 3 s
        assert delays == [0.005, 0.005, 0.005, 3.0, 3.0]
        assert limiter.num_requeues("a") == 5
        assert exponential.num_requeues("a") == 5
        for _ in range(4):
            limiter.when("a")
        # exponential 2^8 ms = 0.256 s, fast/slow 3 s
        assert limiter.when("a") == 3.0

    def test_num_requeues_is_the_maximum(self):
        a = ItemExponentialFailureRateLimiter(0.001, 1.0)
        b = ItemExponentialFailureRateLimiter(0.001, 1.0)
        limiter = MaxOfRateLimiter(a, b)
        b.when("x")
        b.when("x")
        assert limiter.num_requeues("x") == 2

    def test_forget_reaches_every_limiter(self):
        fast_slow = ItemFastSlowRateLimiter(0.005, 3.0, 1)
        exponential = ItemExponentialFailureRateLimiter(0.001, 1.0)
        limiter = MaxOfRateLimiter(fast_slow, exponential)
        limiter.when("a")
        limiter.when("a")
        limiter.forget("a")
        assert fast_slow.num_requeues("a") == 0
        assert exponential.num_requeues("a") == 0
        assert limiter.when("a") == 0.005

    def test_needs_at_least_one_limiter(self):
        with pytest.raises(ValueError):
            MaxOfRateLimiter()


class TestDefaults:
    def test_default_controller_rate_limiter_backs_off_one_item_exponentially(self):
        limiter = default_controller_rate_limiter(clock=FakeClock())
        assert [limiter.when("a") for _ in range(20)] == EXPONENTIAL_5MS

    def test_default_controller_rate_limiter_bounds_all_items_to_10_qps_after_100(self):
        limiter = default_controller_rate_limiter(clock=FakeClock())
        first = [limiter.when(f"item-{i}") for i in range(100)]
        assert first == [0.005] * 100  # the burst of 100 is free; the 5 ms first backoff wins
        assert [limiter.when(f"item-{i}") for i in range(100, 103)] == pytest.approx(
            [0.1, 0.2, 0.3]
        )

    def test_sample_controller_rate_limiter_is_50_qps_burst_300(self):
        limiter = sample_controller_rate_limiter(clock=FakeClock())
        assert [limiter.when(f"item-{i}") for i in range(300)] == [0.005] * 300
        assert [limiter.when(f"item-{i}") for i in range(300, 302)] == pytest.approx([0.02, 0.04])
        assert [limiter.when("item-0") for _ in range(2)] == pytest.approx([0.06, 0.08])

    def test_default_item_based_rate_limiter_starts_at_1ms(self):
        limiter = default_item_based_rate_limiter()
        assert [limiter.when("a") for _ in range(4)] == [0.001, 0.002, 0.004, 0.008]
        for _ in range(16):
            limiter.when("a")
        assert limiter.when("a") == 1000.0  # 2^20 ms > 1000 s
