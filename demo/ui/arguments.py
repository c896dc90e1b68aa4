"""The controls' arguments and the poll's query, checked before anything acts on them.

No client-go twin: part of the demo. The page's server answers a request it cannot act on with
400 and a JSON ``{"error": ...}`` naming the field and what was wrong, as kube-apiserver answers a
bad request with a Status: never a traceback on the terminal and a dropped connection (what
``int("many")`` deep inside a control used to give).

What a control may be given (``demo.ui.cluster``'s controls read these and nothing else):

- ``name``, ``deploymentName``: strings (empty: the default, ``example-foo``; the API server
  judges the name itself and its 422 is the control's answer);
- ``replicas``: a whole number, or a string of digits as a form sends it (null: not given);
- ``count``: a whole number from 1 to 100 (how many faults to inject).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BadRequest", "check_arguments", "check_since"]

STRINGS = ("name", "deploymentName")
COUNT_RANGE = (1, 100)


class BadRequest(ValueError):
    """The request cannot be acted on; the message is the JSON error's text (no client-go
    twin: apimachinery's ``NewBadRequest`` plays this part on the server)."""


def check_arguments(args: object) -> dict[str, Any]:
    """``args`` checked and normalised (numbers as int, null dropped); BadRequest otherwise."""
    if not isinstance(args, Mapping):
        raise BadRequest(f"the arguments must be a JSON object, not {_json_kind(args)}")
    out: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue  # a form's empty number (NaN becomes null in JSON): not given
        if key in STRINGS:
            if not isinstance(value, str):
                raise BadRequest(f"{key} must be a string, not {_json_kind(value)}")
            out[key] = value
        elif key == "replicas":
            out[key] = _whole_number(key, value)
        elif key == "count":
            count = _whole_number(key, value)
            low, high = COUNT_RANGE
            if not low <= count <= high:
                raise BadRequest(f"count must be from {low} to {high} (got {count})")
            out[key] = count
        else:
            known = ", ".join((*STRINGS, "replicas", "count"))
            raise BadRequest(f"unknown argument {key!r} (known: {known})")
    return out


def check_since(values: list[str]) -> int:
    """The poll's ``since`` (the last entry the page has), a whole number >= 0; 0 if absent."""
    if not values or values[0] == "":
        return 0
    text = values[0]
    if not text.isdigit():
        raise BadRequest(f"since must be a whole number of 0 or more (got {text!r})")
    return int(text)


def _whole_number(key: str, value: object) -> int:
    # bool is an int to Python, not to JSON
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise BadRequest(f"{key} must be a whole number (got {value!r})")


def _json_kind(value: object) -> str:
    """A JSON reader's name for a decoded value's type."""
    names = {str: "a string", list: "an array", bool: "a boolean", int: "a number"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, float) else type(value).__name__)
