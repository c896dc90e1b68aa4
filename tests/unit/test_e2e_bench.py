"""bench/e2e_bench.py's own logic: when a burst counts as converged, medians and ratios, and
that rewriting docs/benchmarks.md touches only the "End to end" section."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import e2e_bench as bench  # noqa: E402


def event(etype: str, key: tuple, name: str, obj: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(type=etype, key=key, name=name, obj=SimpleNamespace(obj=obj or {}))


def foo(replicas: int, available: int | None = None) -> dict:
    status = {} if available is None else {"availableReplicas": available}
    return {"spec": {"replicas": replicas}, "status": status}


def test_tracker_converges_only_when_every_foo_has_its_deployment_and_available_replicas():
    t = bench.Tracker()
    t.arm(["a", "b"])
    t(event("ADDED", bench.FOO_KEY, "a", foo(2)))
    t(event("ADDED", bench.FOO_KEY, "b", foo(1)))
    # b reports available before its Deployment exists: not converged (the Deployment is required)
    t(event("MODIFIED", bench.FOO_KEY, "b", foo(1, 1)))
    assert t.pending == {"a", "b"}
    t(event("ADDED", bench.DEPLOY_KEY, "a"))
    t(event("MODIFIED", bench.FOO_KEY, "a", foo(2, 1)))  # 1 of 2 available
    assert t.pending == {"a", "b"}
    t(event("MODIFIED", bench.FOO_KEY, "a", foo(2, 2)))
    assert t.pending == {"b"} and not t.done.is_set()
    t(event("ADDED", bench.DEPLOY_KEY, "b"))
    t(event("DELETED", bench.FOO_KEY, "b", foo(1, 1)))  # deletions never count
    assert not t.done.is_set()
    t(event("MODIFIED", bench.FOO_KEY, "b", foo(1, 1)))
    assert t.done.is_set() and t.done_at > 0
    assert set(t.foo_created) == {"a", "b"} and set(t.dep_created) == {"a", "b"}


def test_tracker_ignores_foos_outside_the_armed_batch():
    t = bench.Tracker()
    t.arm(["a"])
    t(event("ADDED", bench.DEPLOY_KEY, "warmup"))
    t(event("MODIFIED", bench.FOO_KEY, "warmup", foo(1, 1)))
    assert t.pending == {"a"} and not t.done.is_set()


def burst_row(variant: str, seconds: float, cpu: float, rnd: int, n: int = 10) -> dict:
    return {
        "variant": variant,
        "n": n,
        "latency": 0.0,
        "round": rnd,
        "seconds": seconds,
        "foos_per_s": n / seconds,
        "cpu": cpu,
        "server_cpu": 1.0,
        "p50": 0.1,
        "p99": 0.2,
        "writes": 4 * n,
        "converged": True,
    }


def test_summary_takes_medians_and_ratios_compare_like_with_like():
    ours, kopf = "ours w=2 qps=unlimited", "kopf"
    rows = [
        burst_row(ours, s, c, i) for i, (s, c) in enumerate([(1.0, 2.0), (9.0, 1.0), (2.0, 3.0)])
    ]
    rows += [burst_row(kopf, s, 4.0, i) for i, s in enumerate([4.0, 5.0, 3.0])]
    summary = bench.summarise(rows)
    assert summary[(ours, 10, 0.0)]["seconds"] == 2.0
    assert summary[(ours, 10, 0.0)]["min"] == 1.0 and summary[(ours, 10, 0.0)]["max"] == 9.0
    assert summary[(ours, 10, 0.0)]["cpu"] == 2.0
    table = "\n".join(bench.ratio_table(summary))
    assert "| 10 | 0 ms | ours w=2 / kopf | **0.50x** | 0.50x |" in table
    assert "official" not in table  # no row for a peer that did not run


def test_pct_picks_nearest_rank():
    assert bench.pct([5, 1, 3, 2, 4], 0.5) == 3
    assert bench.pct(list(range(101)), 0.99) == 99
    assert bench.pct([], 0.5) != bench.pct([], 0.5)  # nan


@pytest.fixture
def docs(tmp_path, monkeypatch):
    path = tmp_path / "benchmarks.md"
    monkeypatch.setattr(bench, "DOCS", path)
    return path


def test_write_docs_replaces_only_its_own_section(docs):
    docs.write_text(
        "# Benchmarks\n\nintro\n\n## Workqueue\n\nW\n\n## End to end\n\nold\nold\n\n## Zeta\n\nZ\n"
    )
    bench.write_docs("## End to end\n\nnew\n")
    assert docs.read_text() == (
        "# Benchmarks\n\nintro\n\n## Workqueue\n\nW\n\n## End to end\n\nnew\n\n## Zeta\n\nZ\n"
    )


def test_write_docs_replaces_a_last_section_and_appends_when_missing(docs):
    docs.write_text("# Benchmarks\n\n## End to end\n\nold\n")
    bench.write_docs("## End to end\n\nnew\n")
    assert docs.read_text() == "# Benchmarks\n\n## End to end\n\nnew\n"
    docs.write_text("# Benchmarks\n\n## Workqueue\n\nW\n")
    bench.write_docs("## End to end\n\nnew\n")
    assert docs.read_text() == "# Benchmarks\n\n## Workqueue\n\nW\n\n## End to end\n\nnew\n"
