"""The parts of the end-to-end bench (``python -m bench.e2e_bench``), one job each.

- ``harness``: the stage: a fresh kubesim in this process, one controller (ours or a peer)
  in a child process, warmed up;
- ``measure``: what is read off a trial: convergence from kubesim's storage events, CPU from
  /proc, requests from kubesim's request log, reconciles from ``/metrics``, py-spy profiles;
- ``preload``: the memory trial's objects, with the managedFields a real cluster stores;
- ``trials``: one burst, the steady state, the memory of a full cache, each a plain dict;
- ``plan``: which trials a run makes (quick or full), interleaved in rounds;
- ``stats``: percentiles and medians over rounds;
- ``report``: console lines, Markdown tables, targets, the chart;
- ``docs``: the marked block of docs/benchmarks.md a run rewrites.

docs/benchmarks.md explains the figures; this code only produces them.
"""
