"""The end-to-end bench's own logic (``bench.e2e``): when a burst counts as converged, medians
and ratios, the report's figures, and that rewriting docs/benchmarks.md touches only the marked
block of figures. Nothing here starts a process or a server."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.e2e import report, stats
from bench.e2e.docs import BEGIN, END, write_docs
from bench.e2e.measure import DEPLOY_KEY, FOO_KEY, Tracker


def event(etype: str, key: tuple, name: str, obj: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(type=etype, key=key, name=name, obj=SimpleNamespace(obj=obj or {}))


def foo(replicas: int, available: int | None = None) -> dict:
    status = {} if available is None else {"availableReplicas": available}
    return {"spec": {"replicas": replicas}, "status": status}


def test_tracker_converges_only_when_every_foo_has_its_deployment_and_available_replicas():
    t = Tracker()
    t.arm(["a", "b"])
    t(event("ADDED", FOO_KEY, "a", foo(2)))
    t(event("ADDED", FOO_KEY, "b", foo(1)))
    # b reports available before its Deployment exists: not converged (the Deployment is required)
    t(event("MODIFIED", FOO_KEY, "b", foo(1, 1)))
    assert t.pending == {"a", "b"}
    t(event("ADDED", DEPLOY_KEY, "a"))
    t(event("MODIFIED", FOO_KEY, "a", foo(2, 1)))  # 1 of 2 available
    assert t.pending == {"a", "b"}
    t(event("MODIFIED", FOO_KEY, "a", foo(2, 2)))
    assert t.pending == {"b"} and not t.done.is_set()
    t(event("ADDED", DEPLOY_KEY, "b"))
    t(event("DELETED", FOO_KEY, "b", foo(1, 1)))  # deletions never count
    assert not t.done.is_set()
    t(event("MODIFIED", FOO_KEY, "b", foo(1, 1)))
    assert t.done.is_set() and t.done_at > 0
    assert set(t.foo_created) == {"a", "b"} and set(t.dep_created) == {"a", "b"}


def test_tracker_ignores_foos_outside_the_armed_batch():
    t = Tracker()
    t.arm(["a"])
    t(event("ADDED", DEPLOY_KEY, "warmup"))
    t(event("MODIFIED", FOO_KEY, "warmup", foo(1, 1)))
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
    summary = stats.summarise(rows)
    assert summary[(ours, 10, 0.0)]["seconds"] == 2.0
    assert summary[(ours, 10, 0.0)]["min"] == 1.0 and summary[(ours, 10, 0.0)]["max"] == 9.0
    assert summary[(ours, 10, 0.0)]["cpu"] == 2.0
    table = "\n".join(report.ratio_table(summary))
    assert "| 10 | 0 ms | ours w=2 / kopf | **0.50x** | 0.50x |" in table
    assert "official" not in table  # no row for a peer that did not run


def test_pct_picks_nearest_rank():
    assert stats.pct([5, 1, 3, 2, 4], 0.5) == 3
    assert stats.pct(list(range(101)), 0.99) == 99
    assert stats.pct([], 0.5) != stats.pct([], 0.5)  # nan


def memory_row(strip: bool, scale: float) -> dict:
    return {
        "strip": strip,
        "objects": 20,
        "rss_delta": 4000.0 * scale,
        "traced_delta": 1000.0 * scale,
        "decoded": 900.0 * scale,
        "decoded_single": 1200.0 * scale,
        "traced_peak": 2**20,
    }


def test_report_prints_figures_of_every_part_and_the_targets():
    rows = [burst_row("ours w=2 qps=unlimited", 1.0, 0.5, 0), burst_row("kopf", 2.0, 1.0, 0)]
    steady = {
        "n": 10,
        "resync": 2.0,
        "periods": 2,
        "writes": 0,
        "requests": 0,
        "syncs": 20.0,
        "cpu": 0.1,
    }
    memory = [memory_row(False, 2.0), memory_row(True, 1.0)]
    results = {"bursts": rows, "steady": steady, "memory": memory, "elapsed": 60.0}
    text = report.figures(results, "python -m bench.e2e_bench --sizes 10")
    assert "python -m bench.e2e_bench --sizes 10" in text
    assert "| 10 | 0 ms | ours w=2 / kopf | **0.50x** | 0.50x |" in text
    assert "| 10 | 2s | 2 | **0** | 0 | 20 | 0.10 |" in text  # steady state
    assert "| stripped (transform) | 200 B | 50 B | 45 B | 1.11x | **4.44x** |" in text
    assert (
        "peak RSS (the delta over start-up) within 1.3x of the decoded objects: **missed**" in text
    )
    assert "- Steady-state writes are 0: met (0 writes over 2 resync periods)." in text
    figures = dict(report.bound_figures(results, stats.summarise(rows)))
    assert figures["ours w=2, 0 ms, N=10: controller CPU per Foo"] == "50.0 ms"
    assert figures["managedFields stripped: the cache (traced) smaller by"] == "50%"


def section(figures: str) -> str:
    return f"{BEGIN}\n\n{figures}\n\n{END}"


def test_write_docs_replaces_only_its_own_block(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text(
        "# Benchmarks\n\nintro\n\n## Workqueue\n\nW\n\n## End to end\n\nhow\n\n"
        + section("old\nold")
        + "\n\nwhy\n\n## Zeta\n\nZ\n"
    )
    write_docs("new\n", docs)
    assert docs.read_text() == (
        "# Benchmarks\n\nintro\n\n## Workqueue\n\nW\n\n## End to end\n\nhow\n\n"
        + section("new")
        + "\n\nwhy\n\n## Zeta\n\nZ\n"
    )


def test_write_docs_replaces_a_last_block_and_appends_when_missing(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\n## End to end\n\n" + section("old") + "\n")
    write_docs("new", docs)
    assert docs.read_text() == "# Benchmarks\n\n## End to end\n\n" + section("new") + "\n"
    docs.write_text("# Benchmarks\n\n## Workqueue\n\nW\n")
    write_docs("new", docs)
    assert docs.read_text() == (
        "# Benchmarks\n\n## Workqueue\n\nW\n\n## End to end\n\n" + section("new") + "\n"
    )


def test_cpu_per_foo_sets_ours_beside_the_peers_and_the_floor():
    rows = [
        burst_row("ours w=2 qps=unlimited", 1.0, 0.03, 0, n=10),
        burst_row("kopf", 2.0, 0.06, 0, n=10),
        burst_row("floor", 0.5, 0.01, 0, n=10),
    ]
    summary = stats.summarise(rows)
    table = "\n".join(report.cpu_per_foo_table(summary))
    assert "| N | latency | ours w=2 | kopf | floor | ours w=2 / floor |" in table
    assert "| 10 | 0 ms | 3.00 ms | 6.00 ms | 1.00 ms | **3.00x** |" in table
    text = report.figures({"bursts": rows, "elapsed": 1.0}, "cmd")
    assert "CPU within 1.2x of the floor" in text and "**missed** (3.00x-3.00x)" in text
    # the floor is a yardstick, not a peer to beat on time
    assert "vs floor" not in text


def test_every_kind_of_contender_has_a_command():
    from bench.e2e import harness

    for v in (harness.OURS, harness.KOPF, harness.OFFICIAL, harness.FLOOR):
        cmd = harness.COMMANDS[v.kind](v, "/tmp/kubeconfig", harness.Launch())
        assert cmd and "/tmp/kubeconfig" in " ".join(cmd) or v.kind == "kopf"
    assert harness.FLOOR.label == "floor"


def test_peers_and_latencies_pick_the_trials_and_the_command_says_so():
    """``--peers`` and ``--latencies`` narrow a run to the trials named (the floor ratio at
    0 ms: ours and the floor only, no 1-worker or qps=20 extras), and the printed command
    reproduces the run."""
    from bench import e2e_bench
    from bench.e2e import plan

    argv = ["--sizes", "500", "--latencies", "0", "--peers", "ours w=2 qps=unlimited,floor"]
    args = e2e_bench.parser().parse_args(argv)
    assert args.latencies == [0.0]
    assert [v.label for v in args.peers] == ["ours w=2 qps=unlimited", "floor"]
    assert "--latencies 0 --peers 'ours w=2 qps=unlimited,floor'" in e2e_bench.command_line(args)
    the_plan = e2e_bench.make_plan(args)
    labels = [(v.label, n, lat) for v, n, lat in plan.schedule(the_plan, first_round=True)]
    assert labels == [("ours w=2 qps=unlimited", 500, 0.0), ("floor", 500, 0.0)]
    with pytest.raises(SystemExit):
        e2e_bench.parser().parse_args(["--peers", "nobody"])
