"""bench.reconcile_errors, small: the measurement docs/benchmarks.md records still runs, and a
converging run through the real CLI still makes no reconcile error and gets no 409."""

from __future__ import annotations

import pytest

from bench import reconcile_errors


def test_a_small_converging_run_through_the_cli_makes_no_errors(tmp_path):
    out = reconcile_errors.run(12, workers=2, status_delay=0.1, rate=100.0, workdir=tmp_path)
    assert out["errors_total"] == 0
    results = out["results"]
    assert results["error"] == 0 and results["success"] >= 12 * 3  # create, scale, delete
    assert out["conflicts"] == {}  # not even a requeue's 409


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_recorded_run_makes_no_errors(tmp_path):
    out = reconcile_errors.run(500, workers=2, status_delay=1.0, rate=50.0, workdir=tmp_path)
    assert out["errors_total"] == 0 and out["conflicts"] == {}
