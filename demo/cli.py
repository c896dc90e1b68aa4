"""The demo's command lines (``python -m demo``, ``python -m demo.ui``): one line per mistake.

No client-go twin: part of the demo. argparse's own error prints the usage block and then the
problem; a learner who mistypes a flag should read one line that names the flag, as kubesim's
command line does (kubesim/__main__.py), and ``--version`` should name what they are running.
"""

from __future__ import annotations

import argparse
import math
from typing import NoReturn

__all__ = ["DISTRIBUTION", "OneLineParser", "seconds", "tcp_port", "version_line"]

# the distribution the demo ships beside (pyproject.toml)
DISTRIBUTION = "sample-controller-py"


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage block) and a ``--version`` flag."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description)
        self.add_argument("--version", action="version", version=version_line(prog))

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def version_line(prog: str) -> str:
    """``python -m demo (sample-controller-py 0.1.0)``; "unknown" from a tree not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version(DISTRIBUTION)
    except PackageNotFoundError:
        number = "unknown"
    return f"{prog} ({DISTRIBUTION} {number})"


def seconds(value: str) -> float:
    """A delay flag: a finite number of seconds, 0 or more."""
    try:
        delay = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected seconds, e.g. 1 or 0.5 (got {value!r})"
        ) from None
    if not math.isfinite(delay) or delay < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds (got {value})")
    return delay


def tcp_port(value: str) -> int:
    """A TCP port, 0-65535 (0: any free one)."""
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535 (got {value!r})")
    return int(value)
