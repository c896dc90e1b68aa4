"""Each exercise's reference solution (docs/solutions/) applies to this repository and passes
the tests it names, in a copy of the tree, so a solution cannot drift from the code it patches.

No client-go twin: this checks the study material. The copy holds the files git tracks (and
untracked ones it does not ignore), as a learner's checkout would; the tests run in it with the
project's interpreter, whose imports then come from the copy (the working directory comes
first on ``sys.path``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

LIFECYCLE = "tests/integration/test_controller.py::test_lifecycle_create_scale_repair_delete"
FOO_TESTS = "tests/controller/test_foo_controller.py"

# patch -> the tests it must pass once applied
SOLUTIONS = {
    "1-printer-column.patch": [
        "tests/kubesim/unit/test_table.py::test_the_foo_crd_shows_the_observed_generation_in_wide_output_only"
    ],
    "2-who-holds-the-name.patch": [FOO_TESTS],
    "3-a-second-owned-kind.patch": [FOO_TESTS, LIFECYCLE],
    "4-a-finalizer.patch": [FOO_TESTS, LIFECYCLE],
    "5-server-side-apply.patch": [
        f"{FOO_TESTS}::test_creates_deployment",
        f"{FOO_TESTS}::test_update_deployment_replicas",
        f"{FOO_TESTS}::test_not_controlled_by_us",
        LIFECYCLE,
    ],
}


def checkout_copy(dest: Path) -> None:
    """The tracked (and untracked, not ignored) files of the working tree, copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_every_solution_is_listed_here_and_in_its_readme():
    patches = sorted(p.name for p in (ROOT / "docs" / "solutions").glob("*.patch"))
    assert patches == sorted(SOLUTIONS)
    readme = (ROOT / "docs" / "solutions" / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in patches)


@pytest.mark.parametrize("patch", sorted(SOLUTIONS))
def test_the_solution_applies_and_passes_its_tests(patch, tmp_path):
    tree = tmp_path / "checkout"
    checkout_copy(tree)
    applied = subprocess.run(
        ["git", "apply", "--verbose", str(ROOT / "docs" / "solutions" / patch)],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    assert applied.returncode == 0, f"{patch} no longer applies:\n{applied.stderr}"
    # the tests must import the copy, patched, not this checkout (else this test cannot fail)
    where = subprocess.run(
        [sys.executable, "-c", "import controller, kubesim; print(controller.__file__)"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(tree), where
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SOLUTIONS[patch]],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ran.stderr
    assert ran.returncode == 0 and "failed" not in summary, f"{patch}: {summary}\n{ran.stdout}"
    assert "passed" in summary
