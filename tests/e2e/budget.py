"""The running test's time budget, so that every e2e wait ends before pytest-timeout does.

pytest-timeout (``timeout = 120`` in pyproject.toml, ``--timeout`` or ``PYTEST_TIMEOUT``) kills a
test that runs too long, setup and teardown included, with a stack dump instead of a reason.
Against a real cluster a wait can legitimately be long (pulling an image), so each wait's own
timeout is cut to what is left of the test's budget: it then fails with its own message, saying
that it was cut, before the kill. tests/e2e/conftest.py starts and stops the budget from
pytest-timeout's own hooks, which give the exact timeout and the moment its timer starts.

The body of a test leaves ``teardown_reserve()`` seconds for teardown (stopping controllers,
deleting the namespace); teardown itself may use all but ``FINAL_MARGIN``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["BUDGET", "FINAL_MARGIN", "Budget", "teardown_reserve"]

FINAL_MARGIN = 1.0  # seconds kept back from the very end, for reporting the failure


def teardown_reserve(timeout: float) -> float:
    """Seconds the test body leaves for teardown: 10 s, or a fifth of a short budget."""
    return min(10.0, timeout / 5)


@dataclass
class Budget:
    """pytest-timeout's limit for the running test, and how much of it is left."""

    timeout: float | None = None  # seconds pytest-timeout gives the running test; None: no limit
    started: float = 0.0  # time.monotonic() when its timer started
    in_teardown: bool = False  # teardown may use the reserve the body left for it

    def start(self, timeout: float | None) -> None:
        self.timeout = timeout if timeout and timeout > 0 else None
        self.started = time.monotonic()
        self.in_teardown = False

    def stop(self) -> None:
        self.timeout = None
        self.in_teardown = False

    def left(self) -> float | None:
        """Seconds a wait may still take now, or None when no timeout applies."""
        if self.timeout is None:
            return None
        reserve = FINAL_MARGIN if self.in_teardown else teardown_reserve(self.timeout)
        return self.started + self.timeout - reserve - time.monotonic()

    def clamp(self, seconds: float) -> tuple[float, str]:
        """``seconds``, or what is left of the budget if less; with a note saying it was cut."""
        left = self.left()
        if left is None or seconds <= left:
            return seconds, ""
        left = max(left, 0.0)
        return left, (
            f" (cut from {seconds:g}s to the {left:.1f}s left of this test's "
            f"{self.timeout:g}s pytest-timeout)"
        )


BUDGET = Budget()  # the running test's; the suite runs one test at a time
