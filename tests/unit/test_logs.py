"""Structured logging: both formats carry the fields; no credential survives."""

import io
import json
import logging

import pytest

from controller.logs import configure_logging, redact


@pytest.fixture
def capture():
    def make(fmt, verbosity=0):
        stream = io.StringIO()
        handler = configure_logging(fmt, verbosity, stream)
        return stream, handler

    handlers = []
    yield lambda fmt, v=0: handlers.append(make(fmt, v)) or handlers[-1][0]
    for _, h in handlers:
        logging.getLogger().removeHandler(h)


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
