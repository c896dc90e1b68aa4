"""What the official client costs the process: at import, and at the controller's peak.

    python -m bench.import_bench [--rounds 5] [--venv DIR ...]            # imports only
    python -m bench.import_bench --peak [--foos 500] [--peak-rounds 3] [--baseline DIR]
    python -m bench.import_bench --stand-ins [--rounds 5]      # what each stand-in saves

Two parts:

- **import** (always): each way of getting the official client's loaders, in a fresh
  interpreter per measurement, rounds interleaved; for each, VmRSS after the import, the modules
  it added and its wall time, medians. The same-run baseline is the plain
  ``import kubernetes.config``. ``--venv DIR`` adds the plain import in another virtualenv (e.g.
  an older ``kubernetes`` installed there: ``python -m venv DIR && DIR/bin/pip install
  kubernetes==34.1.0``); that interpreter starts without this project's editable finder, so its
  *bare* row is measured too.
- **peak** (``--peak``): the controller (``python -m controller``, 2 workers, unlimited QPS)
  against a fresh kubesim, warmed up with one Foo, then ``--foos`` Foos created at once and
  awaited; the figure is the child's VmHWM (peak RSS, start-up included) once all converged.
  Beside it, alternating: the same controller with the plain ``import kubernetes.config``
  (and the ``ApiClient`` it used to build) done first, which is what start-up loaded before
  ``client/official.py``; and with ``--baseline DIR`` the controller of another checkout
  (``git archive REV | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Printed by every measurement: RSS (MiB), modules added, seconds; the import runs in between.
PROBE = """
import sys, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
n0, t0 = len(sys.modules), time.perf_counter()
{code}
t1 = time.perf_counter()
print(rss(), len(sys.modules) - n0, t1 - t0)
"""

IMPORTS: dict[str, str] = {
    "bare interpreter": "pass",
    "plain `import kubernetes.config` (baseline)": "import kubernetes.config",
    "plain import, then its modules dropped and collected": (
        "import kubernetes.config, gc\n"
        "for m in [m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes', 'pydantic', 'pydantic_core', 'requests', 'oauthlib', 'requests_oauthlib',"
        " 'websocket', 'dateutil')]: del sys.modules[m]\n"
        "gc.collect()"
    ),
    "client/official.py `import_loaders()` (a kubeconfig with a plugin)": (
        "from client.official import import_loaders\n"
        "import_loaders()\n"
        "from kubernetes.client.configuration import Configuration\n"
        "from client.restconfig import Config\n"
        "c = Configuration()\n"
        "c.host = 'https://127.0.0.1:6443'\n"
        "Config.from_configuration(c).pool()"
    ),
    "controller start-up imports, before (plain import first)": (
        "import kubernetes.config\n"
        "from kubernetes import client\n"
        "client.ApiClient(client.Configuration())\n"
        "import runtime.flags, runtime.manager"
    ),
    # as ``python -m controller`` does it with a kubeconfig without plugins
    "controller start-up imports, now": (
        "import runtime.flags, runtime.manager\n"
        "from client.restconfig import Config\n"
        "Config(host='https://127.0.0.1:6443').pool()"
    ),
}


# What each of client/official.py's stand-ins saves, in the same run: the controller's start-up
# imports as ``python -m controller`` makes them, and the same with one stand-in defeated by
# importing the real module first (a stand-in steps aside for a module already imported). The
# gain of a stand-in is the RSS its row adds over "all stand-ins" (issue 32: a private
# internal must buy 1 MB of RSS or 5% of CPU).
_START_UP = (
    "from client.official import import_loaders\n"
    "import_loaders()\n"
    "import controller.main, runtime.flags, runtime.manager\n"
    "from kubernetes.client.configuration import Configuration\n"
    "from client.restconfig import Config\n"
    "c = Configuration()\n"
    "c.host = 'https://127.0.0.1:6443'\n"
    "Config.from_configuration(c).pool()"
)
STAND_INS: dict[str, str] = {
    "all stand-ins (python -m controller)": "",
    "without `importlib.metadata`'s (urllib3.http2)": "import importlib.metadata\n",
    "without the lazy `kubernetes` package": "import kubernetes\n",
    "without `ApiClient`'s (kube_config)": "import kubernetes.client.api_client\n",
    "without `requests_oauthlib`'s and `oauthlib`'s": "import requests_oauthlib, oauthlib.oauth2\n",
    "without `multiprocessing`'s (configuration)": "import multiprocessing\n",
    "without `subprocess`'s (kube_config, exec_provider)": "import subprocess\n",
}


def stand_ins_part(rounds: int) -> None:
    got: dict[str, list[tuple[float, int, float]]] = {name: [] for name in STAND_INS}
    for _ in range(rounds):
        for name, first in STAND_INS.items():
            got[name].append(probe(sys.executable, first + _START_UP))
    base = statistics.median(r[0] for r in got["all stand-ins (python -m controller)"])
    print(f"stand-ins: median of {rounds} fresh interpreters each, interleaved")
    print("| start-up imports | RSS after | the stand-in saves | modules added |")
    print("|---|---:|---:|---:|")
    for name in STAND_INS:
        rss = statistics.median(r[0] for r in got[name])
        mods = statistics.median(r[1] for r in got[name])
        print(f"| {name} | {rss:.1f} MiB | {rss - base:+.2f} MiB | {mods:.0f} |")


def probe(python: str, code: str) -> tuple[float, int, float]:
    out = subprocess.run(
        [python, "-c", PROBE.format(code=code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    return float(out[0]), int(out[1]), float(out[2])


def import_part(rounds: int, venvs: list[Path]) -> None:
    cases = [(name, sys.executable, code) for name, code in IMPORTS.items()]
    for venv in venvs:
        python = str(venv / "bin" / "python")
        version = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('kubernetes'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        cases.append((f"{venv.name}: bare interpreter", python, "pass"))
        cases.append(
            (
                f"{venv.name}: plain import, kubernetes {version}",
                python,
                IMPORTS["plain `import kubernetes.config` (baseline)"],
            )
        )
    got: dict[str, list[tuple[float, int, float]]] = {name: [] for name, _, _ in cases}
    for _ in range(rounds):
        for name, python, code in cases:
            got[name].append(probe(python, code))
    base = statistics.median(r[0] for r in got["plain `import kubernetes.config` (baseline)"])
    print(f"import: median of {rounds} fresh interpreters each, interleaved")
    print("| how | RSS after | vs baseline | modules added | import time |")
    print("|---|---:|---:|---:|---:|")
    for name, _, _ in cases:
        rss = statistics.median(r[0] for r in got[name])
        mods = statistics.median(r[1] for r in got[name])
        secs = statistics.median(r[2] for r in got[name])
        print(
            f"| {name} | {rss:.1f} MiB | {rss - base:+.1f} MiB | {mods:.0f} | "
            f"{secs * 1000:.0f} ms |"
        )


# The same controller with what start-up used to load loaded first: `python -c` with this, then
# the CLI (``controller.__main__``) as ``python -m controller`` runs it.
PLAIN_FIRST = (
    "import runpy, sys\n"
    "import kubernetes.config\n"
    "from kubernetes import client\n"
    "client.ApiClient(client.Configuration())\n"
    "sys.argv[0] = 'controller'\n"
    "runpy.run_module('controller', run_name='__main__', alter_sys=True)\n"
)


def vm_hwm(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def peak_trial(label: str, foos: int, workdir: Path, baseline: Path | None) -> float:
    """The controller's VmHWM after a burst of ``foos`` converged (see the module docstring).

    The stage is ``bench.e2e.harness``'s (a fresh kubesim, one warm-up Foo), the command line
    its ``python -m controller`` one; only the variant "plain import first" starts the same CLI
    through ``python -c`` after the plain import.
    """
    from bench.e2e import harness

    sim, tracker = harness.new_sim(0.0)
    kubeconfig = sim.write_kubeconfig(workdir / "kubeconfig")
    cmd = harness.COMMANDS["ours"](harness.OURS, kubeconfig, harness.Launch())
    if label == "plain import first":
        cmd = [cmd[0], "-c", PLAIN_FIRST, *cmd[3:]]
    with open(workdir / "controller.log", "wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=baseline if label == "baseline" else ROOT,
            env=dict(os.environ, KUBECONFIG=kubeconfig),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            for batch, timeout in (
                (["warmup"], harness.WARMUP_TIMEOUT),
                (harness.foo_names(foos), 300),
            ):
                tracker.arm(batch)
                harness.create_foos(sim, batch)
                if not tracker.done.wait(timeout):
                    raise RuntimeError(f"{label}: {len(tracker.pending)} Foos did not converge")
            return vm_hwm(proc.pid)
        finally:
            proc.terminate()
            proc.wait(15)
            sim.close()


def peak_part(foos: int, rounds: int, baseline: Path | None) -> None:
    labels = ["now", "plain import first"] + (["baseline"] if baseline else [])
    got: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in labels if r % 2 == 0 else reversed(labels):
            with tempfile.TemporaryDirectory() as tmp:
                got[label].append(peak_trial(label, foos, Path(tmp), baseline))
    print(f"\npeak RSS (VmHWM) of the controller, {foos} Foos, 2 workers, {rounds} rounds")
    print("| controller | peak RSS, median | min - max |")
    print("|---|---:|---:|")
    for label in labels:
        v = got[label]
        print(f"| {label} | {statistics.median(v):.1f} MiB | {min(v):.1f} - {max(v):.1f} |")
    print(json.dumps(got))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.import_bench", description=__doc__)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--venv", type=Path, action="append", default=[])
    p.add_argument("--peak", action="store_true", help="also the controller's peak RSS")
    p.add_argument("--foos", type=int, default=500)
    p.add_argument("--peak-rounds", type=int, default=3)
    p.add_argument("--baseline", type=Path, help="another checkout's controller, beside ours")
    p.add_argument(
        "--stand-ins", action="store_true", help="only what each of client/official.py's saves"
    )
    args = p.parse_args(argv)
    if args.stand_ins:
        stand_ins_part(args.rounds)
        return 0
    import_part(args.rounds, args.venv)
    if args.peak:
        peak_part(args.foos, args.peak_rounds, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
