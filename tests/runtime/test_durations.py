"""Go duration syntax for flags."""

import pytest

from runtime.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("30s", 30),
        ("1m30s", 90),
        ("500ms", 0.5),
        ("1h", 3600),
        ("0", 0),
        ("1.5s", 1.5),
        ("2h45m", 9900),
        ("-1s", -1),
        ("100us", 1e-4),
        ("10µs", 1e-5),
    ],
)
def test_parse(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text, message",
    [
        ("30", "missing unit"),
        ("", "invalid duration"),
        ("1x", "invalid duration"),
        ("s", "invalid duration"),
        ("1m 30s", "invalid duration"),
    ],
)
def test_invalid(text, message):
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


def test_format_round_trips():
    for s in (30, 90, 0.5, 3600, 3661):
        assert parse_duration(format_duration(s)) == pytest.approx(s)
