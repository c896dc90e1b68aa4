"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.integration.controller_process import ControllerProcess


@pytest.fixture
def proc_factory(sim, tmp_path) -> Iterator[Callable[..., ControllerProcess]]:
    """Start ``python -m controller`` processes against the test's ``sim``; all are reaped after."""
    procs: list[ControllerProcess] = []

    def start(*flags: str) -> ControllerProcess:
        p = ControllerProcess.against(sim, tmp_path, *flags)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.close()
