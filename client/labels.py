"""Label selectors: parse the string form and match it against an object's labels.

Mirrors k8s.io/apimachinery/pkg/labels (selector.go). One implementation serves both sides of the
wire: the Lister filters the cache with it, and kubesim filters lists and watches with it, so a
selector means the same thing to the client and to the test server.

Grammar (as labels.Parse):

    selector    = requirement { "," requirement }
    requirement = key | "!" key
                | key ("=" | "==" | "!=") value
                | key ("in" | "notin") "(" value { "," value } ")"
                | key (">" | "<") integer

``!=`` and ``notin`` also match objects that lack the key, exactly as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Requirement",
    "Selector",
    "SelectorParseError",
    "everything",
    "parse_selector",
    "selector_from_label_selector",
    "selector_from_set",
]

# A qualified name: an optional DNS-1123 subdomain prefix and "/", then a name of at most 63
# characters that starts and ends with an alphanumeric.
_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY_RE = re.compile(rf"^({_PREFIX}/)?{_NAME}$")
_VALUE_RE = re.compile(rf"^({_NAME})?$")

_OPERATORS = ("==", "!=", "=", ">", "<")


class SelectorParseError(ValueError):
    """The selector string is not valid; the message says where and why (apimachinery
    ``labels.Parse`` returns an error)."""


@dataclass(frozen=True)
class Requirement:
    """One clause of a selector, as apimachinery's ``labels.Requirement`` (immutable here too).

    operator is one of: "exists", "!", "=", "!=", "in", "notin", "gt", "lt".
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        op = self.operator
        if op == "exists":
            return has
        if op == "!":
            return not has
        if op in ("=", "in"):
            return has and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return not has or labels[self.key] not in self.values
        if op in ("gt", "lt"):
            if not has:
                return False
            try:
                actual = int(labels[self.key])
            except ValueError:
                return False
            bound = int(self.values[0])
            return actual > bound if op == "gt" else actual < bound
        raise AssertionError(f"unknown operator {op!r}")

    def __str__(self) -> str:
        op = self.operator
        if op == "exists":
            return self.key
        if op == "!":
            return "!" + self.key
        if op in ("in", "notin"):
            return f"{self.key} {op} ({','.join(sorted(self.values))})"
        symbol = {"gt": ">", "lt": "<"}.get(op, op)
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements; the empty selector matches everything (apimachinery
    ``labels.Selector``; label selectors only, not field selectors)."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def everything() -> Selector:
    """The selector that matches every object (labels.Everything)."""
    return Selector()


def _check_key(key: str, text: str) -> str:
    if not _KEY_RE.match(key):
        raise SelectorParseError(f"invalid label key {key!r} in selector {text!r}")
    return key


def _check_value(value: str, text: str) -> str:
    if not _VALUE_RE.match(value):
        raise SelectorParseError(f"invalid label value {value!r} in selector {text!r}")
    return value


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside an ``in (...)`` value list."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise SelectorParseError(f"unbalanced ')' in selector {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise SelectorParseError(f"unbalanced '(' in selector {text!r}")
    parts.append(text[start:])
    return parts


_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")


def _parse_requirement(part: str, text: str) -> Requirement:
    part = part.strip()
    if not part:
        raise SelectorParseError(f"empty requirement in selector {text!r}")
    m = _SET_RE.match(part)
    if m:
        values = tuple(
            sorted({_check_value(v.strip(), text) for v in m.group("values").split(",")})
        )
        return Requirement(_check_key(m.group("key"), text), m.group("op"), values)
    if part.startswith("!"):
        return Requirement(_check_key(part[1:].strip(), text), "!")
    for symbol in _OPERATORS:
        idx = part.find(symbol)
        if idx < 0:
            continue
        key = _check_key(part[:idx].strip(), text)
        value = part[idx + len(symbol) :].strip()
        if symbol in (">", "<"):
            if not re.fullmatch(r"-?\d+", value):
                raise SelectorParseError(
                    f"for '{symbol}' operator the value must be an integer in selector {text!r}"
                )
            return Requirement(key, "gt" if symbol == ">" else "lt", (value,))
        op = "=" if symbol in ("=", "==") else "!="
        return Requirement(key, op, (_check_value(value, text),))
    return Requirement(_check_key(part, text), "exists")


def parse_selector(text: str | None) -> Selector:
    """Parse a label selector string (labels.Parse); raise SelectorParseError when invalid.

    None or an empty/blank string is the selector that matches everything.
    """
    if text is None or not text.strip():
        return everything()
    reqs = tuple(_parse_requirement(p, text) for p in _split_top_level(text))
    return Selector(tuple(sorted(reqs, key=lambda r: r.key)))


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """The selector that requires every given label (labels.SelectorFromSet)."""
    return Selector(tuple(Requirement(k, "=", (v,)) for k, v in sorted(labels.items())))


def selector_from_label_selector(label_selector: Mapping[str, Any] | None) -> Selector:
    """Convert a metav1.LabelSelector dict (matchLabels / matchExpressions).

    As metav1.LabelSelectorAsSelector, an empty selector matches everything. (Upstream a nil
    pointer matches nothing; decoded JSON has no nil pointer, so callers check for absence.)
    """
    if not label_selector:
        return everything()
    reqs: list[Requirement] = []
    for k, v in (label_selector.get("matchLabels") or {}).items():
        reqs.append(Requirement(k, "=", (v,)))
    for expr in label_selector.get("matchExpressions") or []:
        op = expr.get("operator")
        key = expr.get("key", "")
        values = tuple(expr.get("values") or ())
        if op == "In":
            reqs.append(Requirement(key, "in", values))
        elif op == "NotIn":
            reqs.append(Requirement(key, "notin", values))
        elif op == "Exists":
            reqs.append(Requirement(key, "exists"))
        elif op == "DoesNotExist":
            reqs.append(Requirement(key, "!"))
        else:
            raise SelectorParseError(f"{op!r} is not a valid label selector operator")
    return Selector(tuple(sorted(reqs, key=lambda r: r.key)))
