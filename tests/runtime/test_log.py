"""Structured logging: both formats carry the fields; no credential survives."""

import io
import json
import logging

import pytest

from runtime.log import configure_logging, log_v4, redact
from runtime.trace import TRACE_LOGGER


@pytest.fixture
def capture():
    def make(fmt, verbosity=0):
        stream = io.StringIO()
        handler = configure_logging(fmt, verbosity, stream)
        return stream, handler

    handlers = []
    # configure_logging turns off what no format prints (the process names); put them back.
    switches = (logging.logProcesses, logging.logMultiprocessing)
    yield lambda fmt, v=0: handlers.append(make(fmt, v)) or handlers[-1][0]
    for _, h in handlers:
        logging.getLogger().removeHandler(h)
    logging.logProcesses, logging.logMultiprocessing = switches


def test_text_format_has_klog_header_and_fields(capture):
    out = capture("text")
    logging.getLogger("t").info("successfully synced", extra={"key": "ns/foo", "duration": 0.25})
    line = out.getvalue().strip()
    assert line[0] == "I"
    assert '"successfully synced" key=ns/foo duration=0.25' in line


def test_json_format(capture):
    out = capture("json")
    logging.getLogger("t").warning("error syncing", extra={"key": "ns/foo", "requeues": 3})
    rec = json.loads(out.getvalue())
    assert rec["level"] == "warning" and rec["msg"] == "error syncing"
    assert rec["key"] == "ns/foo" and rec["requeues"] == 3


def test_verbosity_levels(capture):
    out = capture("text", 0)
    logging.getLogger("t").debug("hidden")
    assert out.getvalue() == ""
    out4 = capture("text", 4)
    logging.getLogger("t").debug("shown")
    assert "shown" in out4.getvalue()


def test_tokens_are_redacted(capture):
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl"
    out = capture("json")
    logging.getLogger("t").error(
        "request failed: Authorization: Bearer abc.def-123", extra={"token": jwt}
    )
    text = out.getvalue()
    assert "abc.def-123" not in text and jwt not in text
    assert redact('{"token": "s3cret"}') == '{"token": "[REDACTED]"}'
    assert redact("password=hunter2 ok") == "password=[REDACTED] ok"


BEARER = "Authorization: Bearer abc.def-123"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_token_in_message_is_redacted(capture, fmt):
    out = capture(fmt)
    log = logging.getLogger("t")
    for _ in range(2):  # a constant message is redacted once and remembered: both lines clean
        log.error(f"request failed: {BEARER}")
    log.error("request failed: %s (%s)", BEARER, JWT)  # arguments are redacted every time
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    for line in lines:
        assert "abc.def-123" not in line and JWT not in line and "[REDACTED]" in line
    assert "[REDACTED-JWT]" in lines[2]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_token_in_extra_value_is_redacted(capture, fmt):
    out = capture(fmt)
    logging.getLogger("t").error(
        "error syncing",
        extra={
            "key": "ns/foo",
            "error": f"Put https://x/y: 401 ({BEARER})",
            "detail": JWT,
            "body": '{"token": "s3cret"}',
            "bearer_token": "plain-looking-secret",
            "password": 1234,
            "requeues": 3,
        },
    )
    text = out.getvalue()
    for secret in ("abc.def-123", JWT, "s3cret", "plain-looking-secret", "1234"):
        assert secret not in text
    if fmt == "json":
        rec = json.loads(text)
        assert rec["bearer_token"] == rec["password"] == "[REDACTED]"
        assert rec["key"] == "ns/foo" and rec["requeues"] == 3
    else:
        assert "key=ns/foo" in text and "requeues=3" in text and "password=[REDACTED]" in text


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_token_in_exception_is_redacted(capture, fmt):
    out = capture(fmt)
    try:
        raise RuntimeError(f"server said: {BEARER}")
    except RuntimeError:
        logging.getLogger("t").exception("sync failed", extra={"key": "ns/foo"})
    text = out.getvalue()
    assert "RuntimeError" in text and "abc.def-123" not in text


def test_a_field_named_like_a_word_containing_token_is_kept(capture):
    out = capture("json")
    logging.getLogger("t").info("x", extra={"tokens_seen": 5, "tokenizer": "ws"})
    rec = json.loads(out.getvalue())
    assert rec["tokens_seen"] == 5 and rec["tokenizer"] == "ws"


@pytest.mark.parametrize(
    "plain",
    [
        "ns/foo-1",
        "kube-system/coredns",
        "bearer",
        "bearer.abc",
        "token",
        "password.hunter2",
        "eyj0.eyj1.abc",  # lowercase: not a JWT
        "0f3c2a9e-6b1d-4c7e-9a52-3f7d1e2b8c44",
        "12345",
    ],
)
def test_strings_written_without_redaction_could_not_have_been_redacted(plain):
    """The fast path skips redact() for plain strings: it must be exactly a no-op for them."""
    from runtime.log import _is_plain

    assert _is_plain(plain)
    assert redact(plain) == plain


class _Spy:
    """A value that counts how often it is turned into text."""

    def __init__(self) -> None:
        self.calls = 0

    def __str__(self) -> str:
        self.calls += 1
        return "spy"

    __repr__ = __str__


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_record_filtered_out_by_level_costs_no_formatting(capture, fmt):
    capture(fmt, 0)
    handler = logging.getLogger().handlers[-1]
    formatted = []
    real_format = handler.formatter.format
    handler.formatter.format = lambda record: formatted.append(record) or real_format(record)
    arg, field = _Spy(), _Spy()
    log = logging.getLogger("t")
    log.debug("processing %s", arg, extra={"object": field})
    assert formatted == [] and arg.calls == 0 and field.calls == 0
    log.info("processing %s", arg, extra={"object": field})
    assert len(formatted) == 1 and arg.calls >= 1 and field.calls >= 1  # (pytest formats too)


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abc.def",
        "BEARER xyz",
        "eyJhbGciOiJI.eyJzdWIiOiIx.c2ln",
        '{"Token": "s3cret"}',
        "PASSWORD=hunter2",
        "authorization=Basic Zm9v",
        "Foo synced successfully",
        "Normal",
        "",
    ],
)
def test_the_prefilter_lets_every_secret_reach_the_patterns(text):
    """``redact`` skips its substitutions when the prefilter finds none of the words every
    secret pattern needs: the result must be what the three substitutions give."""
    from runtime.log import _MAYBE_SECRET, _SECRETS

    expected = text
    for pattern, replacement in _SECRETS:
        expected = pattern.sub(replacement, expected)
    assert redact(text) == expected
    if expected != text:
        assert _MAYBE_SECRET.search(text) is not None


def test_a_remembered_field_value_is_written_redacted_and_quoted_every_time(capture):
    """The text format remembers how it wrote a value that needed redaction or quotes: the
    second line must be as safe as the first, and a credential's field name still wins."""
    out = capture("text")
    value = f"Put https://x/y: 401 ({BEARER})"
    for _ in range(2):
        logging.getLogger("t").error("e", extra={"error": value, "event_message": "Foo synced ok"})
    logging.getLogger("t").error("e", extra={"token": value})
    lines = out.getvalue().strip().split("\n")
    assert len(lines) == 3 and "abc.def-123" not in out.getvalue()
    assert lines[0].split("] ", 1)[1] == lines[1].split("] ", 1)[1]
    assert 'event_message="Foo synced ok"' in lines[1]
    assert lines[2].endswith("token=[REDACTED]")


@pytest.fixture
def trace_level():
    """The trace logger's level, put back after the test (``install_trace`` lowers it)."""
    trace = logging.getLogger(TRACE_LOGGER)
    level = trace.level
    yield trace
    trace.setLevel(level)


@pytest.mark.parametrize("verbosity", [0, 4])
def test_a_v4_line_shows_from_v4_and_in_the_trace_once(capture, trace_level, verbosity):
    out = capture("text", verbosity)
    logger = logging.getLogger("t.v4")
    log_v4(logger, "creating deployment", {"key": "ns/foo", "deployment": "d"})
    # without --trace: DEBUG, so only -v 4 shows it (sample-controller's update is V(4))
    shown = out.getvalue().splitlines()
    assert len(shown) == (1 if verbosity >= 4 else 0)
    assert all(line.startswith("D") and '"creating deployment"' in line for line in shown)
    # with --trace (install_trace lowers the trace logger): the same line at INFO, once
    trace_level.setLevel(logging.INFO)
    log_v4(logger, "creating deployment", {"key": "ns/foo", "deployment": "d"})
    (traced,) = out.getvalue().splitlines()[len(shown) :]
    assert traced.startswith("I") and '"creating deployment" key=ns/foo deployment=d' in traced
