"""Format checks on strings: names, label keys and values, ports, percentages.

Twin of k8s.io/apimachinery/pkg/api/validate/content (dns.go, kube.go, path.go, errors.go)
and the helpers of k8s.io/apimachinery/pkg/util/validation that use it. Each ``is_*``
function returns the list of messages a value fails (empty when it is valid), worded exactly
as upstream words them, so that the 422 causes built from them read as the real server's.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "empty_error",
    "inclusive_range_error",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_key",
    "is_label_value",
    "is_path_segment_name",
    "is_path_segment_prefix",
    "is_valid_percent",
    "is_valid_port_name",
    "is_valid_port_num",
    "max_len_error",
    "regex_error",
]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
LABEL_KEY_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_PERCENT_FMT = "[0-9]+%"
_PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'"

# Go's regexp.MatchString with ^...$ anchors: \Z, because Python's $ also matches before a
# trailing newline, which Go's does not.
_DNS1123_LABEL = re.compile(f"^{_DNS1123_LABEL_FMT}\\Z")
_DNS1123_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}\\Z")
_DNS1035_LABEL = re.compile(f"^{_DNS1035_LABEL_FMT}\\Z")
_LABEL_KEY = re.compile(f"^{_LABEL_KEY_FMT}\\Z")
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}\\Z")
_PERCENT = re.compile(f"^{_PERCENT_FMT}\\Z")
_PORT_NAME_CHARSET = re.compile("^[-a-z0-9]+\\Z")
_PORT_NAME_ONE_LETTER = re.compile("[a-z]")


def _blen(value: str) -> int:
    """len() as Go counts a string: bytes of its UTF-8 encoding."""
    return len(value.encode())


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """RegexError: the message, examples, and the regex used."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.match(value):
        if _DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")  # a valid subdomain: it has dots
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    return list(_dns1123_subdomain(value))


@lru_cache(maxsize=4096)
def _dns1123_subdomain(value: str) -> tuple[str, ...]:
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL.match(value):
        errs.append(regex_error(_DNS1035_LABEL_ERR, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_label_key(value: str) -> list[str]:
    """IsLabelKey (a "qualified name"): an optional DNS subdomain prefix and '/', then a name."""
    return list(_label_key(value))


@lru_cache(maxsize=4096)  # labels repeat: the checks are cached per string
def _label_key(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(prefix))
    else:
        return (
            "a valid label key "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part " + empty_error())
    elif _blen(name) > LABEL_KEY_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(LABEL_KEY_NAME_MAX_LENGTH))
    if not _LABEL_KEY.match(name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errs)


def is_label_value(value: str) -> list[str]:
    return list(_label_value(value))


@lru_cache(maxsize=4096)
def _label_value(value: str) -> tuple[str, ...]:
    errs = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.match(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


def is_path_segment_name(name: str) -> list[str]:
    """A name that can be one segment of a REST path (the generic check every object gets)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return is_path_segment_prefix(name)


def is_path_segment_prefix(name: str) -> list[str]:
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def is_valid_percent(value: str) -> list[str]:
    if not _PERCENT.match(value):
        return [regex_error(_PERCENT_ERR, _PERCENT_FMT, "1%", "93%")]
    return []


def is_valid_port_num(port: int) -> list[str]:
    if 1 <= port <= 65535:
        return []
    return [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    errs = []
    if _blen(port) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARSET.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_ONE_LETTER.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs
