"""Durations written as Go writes them (``30s``, ``1m30s``, ``500ms``, ``1h``).

sample-controller's and controller-runtime's flags are ``time.Duration`` values, parsed by Go's
``time.ParseDuration``; using the same syntax lets a manifest's args move between the Go and the
Python controller unchanged.
"""

from __future__ import annotations

import re

__all__ = ["format_duration", "parse_duration"]

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string; ValueError with Go's wording when it is not one."""
    s = text.strip()
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    pos, total = 0, 0.0
    while pos < len(s):
        m = _PART.match(s, pos)
        if not m:
            if re.match(r"(\d+(?:\.\d*)?|\.\d+)$", s[pos:]):
                raise ValueError(f'time: missing unit in duration "{text}"')
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def format_duration(seconds: float) -> str:
    """A short Go-style rendering (``1m30s``, ``500ms``) for help texts and logs."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    out = ""
    if hours:
        out += f"{hours}h"
    if minutes or hours:
        out += f"{minutes}m"
    return out + f"{secs:g}s"
