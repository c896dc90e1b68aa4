"""Garbage collector (filled in by step 2)."""

from __future__ import annotations


class GarbageCollector:
    def __init__(self, storage, rest, registry, controllers, delay: float) -> None:
        self.storage = storage
