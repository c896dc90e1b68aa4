"""Structured logs: klog-style ``key=value`` text or one JSON object per line.

Every log call in the controller passes its fields through ``extra={...}`` (key, namespace,
name, duration, result, ...), so both formats carry the same data and a log pipeline can filter
on ``key`` without parsing prose. ``-v`` maps onto levels as klog's verbosity does for a
controller: 0-1 INFO and up, 2-3 adds our own "narration" lines, 4+ DEBUG.

No credential is ever logged: nothing here formats requests, and a last-line filter replaces
anything that looks like a bearer token or a ServiceAccount JWT, in case a library below us
(urllib3, the official client in debug mode) would.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

__all__ = ["configure_logging", "redact"]

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}

_SECRETS = [
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1[REDACTED]"),
    (re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), "[REDACTED-JWT]"),
    (
        re.compile(r'(?i)("?(?:token|password|authorization)"?\s*[:=]\s*"?)[^",\s}]+'),
        r"\1[REDACTED]",
    ),
]


def redact(text: str) -> str:
    """Replace bearer tokens, JWTs and token/password values in text."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")
    }


def _value(v: Any) -> str:
    s = str(v)
    return json.dumps(s) if (not s or any(c in s for c in ' "=')) else s


class TextFormatter(logging.Formatter):
    """``I1129 18:44:08.123456 thread msg key=value ...`` (klog's header, logfmt fields).

    Differs from klog: the thread name stands where klog prints the goroutine id and file:line.
    """

    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        header = (
            f"{record.levelname[0]}{time.strftime('%m%d', t)} "
            f"{time.strftime('%H:%M:%S', t)}.{micros:06d} {record.threadName}]"
        )
        parts = [header, json.dumps(record.getMessage())]
        parts += [f"{k}={_value(v)}" for k, v in _fields(record).items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return redact(line)


class JSONFormatter(logging.Formatter):
    """One JSON object per line, with ``ts``, ``level``, ``logger``, ``msg`` and the fields
    (like component-base's ``--logging-format=json``; field names are ours)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "thread": record.threadName,
            "msg": record.getMessage(),
        }
        for k, v in _fields(record).items():
            out[k] = v if isinstance(v, (int, float, bool, type(None))) else str(v)
        if record.exc_info:
            out["error_trace"] = self.formatException(record.exc_info)
        return redact(json.dumps(out))


def configure_logging(fmt: str = "text", verbosity: int = 0, stream: Any = None) -> logging.Handler:
    """Install one handler on the root logger; return it (tests remove it again)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_sample_controller", False):
            root.removeHandler(old)
    handler._sample_controller = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbosity >= 4 else logging.INFO)
    # Libraries stay at WARNING unless asked for a lot: their debug output is noise here.
    for name in ("urllib3", "kubernetes"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbosity >= 9 else logging.WARNING)
    return handler
