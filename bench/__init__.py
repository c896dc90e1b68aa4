"""The project's benchmarks, each a module run as ``python -m bench.<name>_bench``.

Every bench prints its figures beside a baseline measured in the same run, because the
development machine is shared and only same-run ratios mean anything; docs/benchmarks.md
explains the figures. ``make bench`` runs every ``*_bench`` module here. ``bench.e2e`` holds
the parts of the end-to-end bench, ``bench.peers`` the other controllers it compares with.

Run from the repository root: the benches read ``crds/`` and ``docs/`` from it, and the
``bench`` package is found there rather than installed (it is not part of the controller).
"""
