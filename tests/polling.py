"""Polling with a deadline: how tests wait for another thread, instead of sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(
    predicate: Callable[[], object], timeout: float = 5.0, interval: float = 0.001
) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` real seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True
