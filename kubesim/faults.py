"""Fault injection (filled in by step 3)."""

from __future__ import annotations


class FaultInjector:
    def __init__(self, sim) -> None:
        self.sim = sim

    def before_request(self, verb: str, resource: str) -> None:
        return None

    def handle_admin(self, server, h, req, body) -> None:
        from . import errors

        raise errors.page_not_found()
