"""Warnings a request collects on its way, sent back as ``Warning: 299 - "..."`` headers.

Twin of k8s.io/apiserver/pkg/warning (``AddWarning(ctx, agent, text)``) and of the recorder
the WithWarningRecorder filter (pkg/endpoints/filters/warning.go) puts in each request's
context: the same text is recorded once, and every warning becomes one header written as
k8s.io/apimachinery/pkg/util/net's NewWarningHeader does (code 299, agent "-", the text
quoted with ``"`` and ``\\`` escaped). Go passes the recorder in a context.Context; here a
ContextVar holds it, so the REST layer can warn without a parameter threaded through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["add_warning", "header_values", "recording"]

_RECORDER: ContextVar[list[str] | None] = ContextVar("kubesim_warnings", default=None)


@contextmanager
def recording() -> Iterator[list[str]]:
    """Collect the warnings added while the block runs (one request's)."""
    warnings: list[str] = []
    token = _RECORDER.set(warnings)
    try:
        yield warnings
    finally:
        _RECORDER.reset(token)


def add_warning(text: str) -> None:
    """Record a warning for the current request; a repeat, or no request, records nothing."""
    warnings = _RECORDER.get()
    if warnings is not None and text and text not in warnings:
        warnings.append(text)


def header_values() -> list[str]:
    """The current request's warnings as Warning header values: ``299 - "text"``."""
    return [
        '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        for text in _RECORDER.get() or ()
    ]
