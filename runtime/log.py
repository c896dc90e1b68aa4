"""Structured logs: klog-style ``key=value`` text or one JSON object per line.

Every log call in the controller passes its fields through ``extra={...}`` (key, namespace,
name, duration, result, ...), so both formats carry the same data and a log pipeline can filter
on ``key`` without parsing prose. ``-v`` maps onto levels as klog's verbosity does for a
controller: 0-3 INFO and up, 4+ DEBUG. A line sits at the V-level its upstream twin uses
(sample-controller, client-go): "successfully synced" and each Event's line at ``V(0)``
(``StartStructuredLogging(0)``), a Deployment's create or update at ``V(4)`` (``log_v4``: the
update's level; sample-controller logs no create).

No credential is ever logged: nothing here formats requests, every piece of free text passes a
filter (``redact``) that replaces anything that looks like a bearer token, a ServiceAccount JWT
or a ``token=``/``password:`` value, in case a library below us (urllib3, the official client in
debug mode) would log one, and a field named like a credential (``token``, ``bearer_token``,
``password``, ``authorization``) is written as ``[REDACTED]`` whatever it holds.

A line is cheap, because every sync writes one at ``-v 0`` ("successfully synced"):

- nothing is formatted for a record the level filters out (the logger drops it before a record
  exists, and the record's ``%`` arguments are only applied by ``getMessage`` when written);
- redaction runs per piece, not over the whole line, and only on pieces that could hold a
  secret: free text (messages, string values, exceptions) is always redacted, while numbers,
  booleans and strings of the shape of keys and names (``ns/name``, lowercase DNS labels,
  UIDs, resource versions) cannot match any secret pattern and are written as they are;
- a text that holds none of the words the secret patterns start from (``bearer``, ``eyJ``,
  ``token``, ...) is returned after one search, not three substitutions;
- a message without arguments is a constant of the code, so it is redacted and quoted once
  and remembered, as is a field value that needed either (the text format), and the time
  header is built once per second;
- the record does not look up the process names, which neither format prints (public
  switches). It still finds its caller's file and line: turning that off takes the private
  ``logging._srcfile``, for about 2.7 us a line, under 1% of the controller's CPU at ``-v 0``
  (docs/benchmarks.md, issue 32: a private internal must buy 5%).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Iterator
from itertools import islice
from typing import Any

from client import jsonutil
from runtime.trace import TRACE_LOGGER

__all__ = ["JSONFormatter", "TextFormatter", "configure_logging", "log_v4", "redact"]

# Attributes every LogRecord has; anything else on a record came from ``extra=`` (or a record
# factory). LogRecord.__init__ sets the first _N_STANDARD entries of a record's __dict__, always
# in the same order, so the fields are found in the tail without testing every attribute.
_INIT_ATTRS = logging.LogRecord("", 0, "", 0, "", (), None).__dict__
_N_STANDARD = len(_INIT_ATTRS)
_STANDARD = frozenset(_INIT_ATTRS) | {"message", "asctime", "taskName"}

_SECRETS = [
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1[REDACTED]"),
    (re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), "[REDACTED-JWT]"),
    (
        re.compile(r'(?i)("?(?:token|password|authorization)"?\s*[:=]\s*"?)[^",\s}]+'),
        r"\1[REDACTED]",
    ),
]
# Each pattern above needs one of these words in the text ("eyJ" case-insensitively, a
# superset): one search finds the texts that cannot match any, and they skip the three subs.
_MAYBE_SECRET = re.compile(r"(?i)bearer|eyj|token|password|authorization")
# Keys, names, namespaces, UIDs, resource versions: lowercase letters, digits, '.', '-', '/'.
_PLAIN = re.compile(r"[a-z0-9./-]+")
# A field named like a credential ("token", "bearer_token", "Password") is never written.
# fullmatch: a suffix
_SECRET_KEY = re.compile(r"(?i).*(?:token|password|authorization)")
# field name -> named like a credential (names are few)
_secret_keys: dict[str, bool] = {}
_REDACTED = "[REDACTED]"
_SAFE_TYPES = (int, float, bool, type(None))
# distinct constant messages remembered (the code has ~100)
_MESSAGE_CACHE_SIZE = 1024


def redact(text: str) -> str:
    """Replace bearer tokens, JWTs and token/password values in text."""
    if _MAYBE_SECRET.search(text) is None:
        return text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _is_plain(s: str) -> bool:
    """True when ``s`` cannot hold anything ``redact`` would replace (see ``_SECRETS``)."""
    return _PLAIN.fullmatch(s) is not None


def _is_secret_key(key: str) -> bool:
    secret = _secret_keys.get(key)
    if secret is None:
        if len(_secret_keys) >= _MESSAGE_CACHE_SIZE:
            _secret_keys.clear()
        secret = _secret_keys[key] = _SECRET_KEY.fullmatch(key) is not None
    return secret


def _extra(record: logging.LogRecord) -> Iterator[tuple[str, Any]]:
    """The record's fields (from ``extra=``), in the order they were given."""
    for k, v in islice(record.__dict__.items(), _N_STANDARD, None):
        if k not in _STANDARD and k[0] != "_":
            yield k, v


def _safe_field(key: str, value: Any) -> Any:
    """A field's value with secrets removed: numbers and plain strings as they are, other
    values as redacted text, and anything under a credential's name not at all."""
    if _is_secret_key(key):
        return _REDACTED
    if isinstance(value, _SAFE_TYPES):
        return value
    s = value if type(value) is str else str(value)
    return s if _is_plain(s) else redact(s)


def _quote(s: str) -> str:
    return json.dumps(s) if (not s or any(c in s for c in ' "=')) else s


class _Messages:
    """The redacted text of each record's message, remembered for messages without arguments
    (constants of the code); a message built from arguments is redacted every time."""

    def __init__(self) -> None:
        # message -> its redacted (and, for text, quoted) form
        self._done: dict[str, str] = {}

    def get(self, record: logging.LogRecord, quote: bool) -> str:
        msg = record.msg
        if record.args or type(msg) is not str:
            text = redact(record.getMessage())
            return json.dumps(text) if quote else text
        done = self._done.get(msg)
        if done is None:
            if len(self._done) >= _MESSAGE_CACHE_SIZE:
                self._done.clear()  # a flood of distinct messages: start over, stay bounded
            text = redact(msg)
            done = self._done[msg] = json.dumps(text) if quote else text
        return done


class TextFormatter(logging.Formatter):
    """``I1129 18:44:08.123456 thread msg key=value ...`` (klog's header, logfmt fields).

    Differs from klog: the thread name stands where klog prints the goroutine id and file:line.
    """

    def __init__(self) -> None:
        super().__init__()
        self._messages = _Messages()
        # a field value that needed redaction or quotes -> its written form: such values are
        # few and repeat on every line of their kind (a kind, a reason, an Event's message)
        self._values: dict[str, str] = {}
        # (whole second, its "MMDD HH:MM:SS")
        self._second: tuple[int, str] = (-1, "")

    def _clock(self, created: float) -> str:
        second = int(created)
        # one read: another thread may replace it meanwhile
        cached = self._second
        if cached[0] != second:
            cached = (second, time.strftime("%m%d %H:%M:%S", time.localtime(second)))
            self._second = cached
        return cached[1]

    def format(self, record: logging.LogRecord) -> str:
        micros = int((record.created % 1) * 1_000_000)
        parts = [
            f"{record.levelname[0]}{self._clock(record.created)}.{micros:06d} {record.threadName}]",
            self._messages.get(record, quote=True),
        ]
        for k, v in _extra(record):
            if _is_secret_key(k):
                parts.append(f"{k}={_REDACTED}")
            elif isinstance(v, _SAFE_TYPES):
                parts.append(f"{k}={v!s}")
            else:
                s = v if type(v) is str else str(v)
                written = self._values.get(s)
                if written is None:
                    # A plain string needs neither redaction nor quotes (no space, '"' or '=').
                    if _is_plain(s):
                        written = s
                    else:
                        if len(self._values) >= _MESSAGE_CACHE_SIZE:
                            self._values.clear()  # many distinct values: stay bounded
                        written = self._values[s] = _quote(redact(s))
                parts.append(f"{k}={written}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + redact(self.formatException(record.exc_info))
        return line


class JSONFormatter(logging.Formatter):
    """One JSON object per line, with ``ts``, ``level``, ``logger``, ``msg`` and the fields
    (like component-base's ``--logging-format=json``; field names are ours)."""

    def __init__(self) -> None:
        super().__init__()
        self._messages = _Messages()

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "thread": record.threadName,
            "msg": self._messages.get(record, quote=False),
        }
        for k, v in _extra(record):
            out[k] = _safe_field(k, v)
        if record.exc_info:
            out["error_trace"] = redact(self.formatException(record.exc_info))
        return jsonutil.dumps(out).decode()  # compact, UTF-8; msgspec when installed


_trace = logging.getLogger(TRACE_LOGGER)


def log_v4(logger: logging.Logger, message: str, extra: dict[str, Any]) -> None:
    """A line klog would log at ``V(4)`` (DEBUG here, shown from ``-v 4``), which ``--trace``
    also shows as a step of a key's path: on the trace logger at INFO when the trace is on,
    so the trace reads the same at any ``-v``, and the line is written once either way."""
    (_trace.info if _trace.isEnabledFor(logging.INFO) else logger.debug)(message, extra=extra)


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
    # What neither format prints, no record collects: the process names (two of the logging
    # HOWTO's "Optimization" switches, both public).
    logging.logProcesses = False
    logging.logMultiprocessing = False
    return handler
