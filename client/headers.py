"""``http.client.parse_headers`` without the email parser, for the header blocks servers send.

No client-go twin (Go's ``net/textproto`` reads headers directly). Why: ``http.client`` hands
every response's header block to ``email.parser``, a general RFC 5322 parser (a feed parser,
regular expressions per line, a policy object per header). In the controller that was about a
sixth of its CPU during a burst of new Foos (py-spy, docs/benchmarks.md "Response headers"),
more than the JSON decoding of the same responses.

``parse_headers`` here returns the same ``HTTPMessage``, with the same headers and state, for
a block in which every line is ``Name: value`` (the name made of the characters the email
parser accepts, no folded continuation line, no stray CR or LF inside a line), which is what
kube-apiserver and kubesim send (two regular expressions over the whole block check and split
it, rather than string operations line by line); for anything else it hands the lines to the
email parser, as the standard library does, so odd input gives exactly the standard result,
defects included.
The limits (line length, number of headers) and their errors are the standard ones.

``install()`` puts it in place of ``http.client.parse_headers`` for the whole process (that is
where ``HTTPResponse.begin`` looks it up); ``runtime.manager.run_process`` calls it.
"""

from __future__ import annotations

import email.parser
import http.client
import re
from typing import IO, Any

__all__ = ["install", "parse_headers"]

# A header line as email.feedparser recognises one: a name of printable ASCII but ':' (its
# headerRE), then ':'. Our fast path also wants the name non-empty, the value free of CR and
# LF, and the line ended by a newline. One fullmatch checks a whole block of such lines...
_BLOCK = re.compile(r"(?:[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n)*")
# ... and one findall splits it: the name, then the value without its leading blanks (email's
# compat32 policy) and without the line end.
_FIELD = re.compile(r"([\x21-\x39\x3b-\x7e]+):[ \t]*([^\r\n]*)\r?\n")
_LINE_ENDS = (b"\r\n", b"\n", b"")
# http.client's limits (_MAXLINE, _MAXHEADERS), with the same errors
_MAXLINE = 65536
_MAXHEADERS = 100


def parse_headers(
    fp: IO[bytes], _class: type[http.client.HTTPMessage] = http.client.HTTPMessage
) -> http.client.HTTPMessage:
    """Read a header block from ``fp`` and parse it as ``http.client.parse_headers`` does."""
    lines = _read_header_lines(fp)
    # (the last line is the blank one that ends the block, or EOF)
    text = b"".join(lines[:-1]).decode("iso-8859-1")
    if _BLOCK.fullmatch(text) is None:
        return _email_parse(lines, _class)
    fields = _FIELD.findall(text)
    if _class is http.client.HTTPMessage:
        return _Indexed(fields)
    msg = _class()
    for name, value in fields:
        msg.set_raw(name, value)
    msg.set_payload("")  # what the email parser leaves after a header-only block
    return msg


class _Indexed(http.client.HTTPMessage):
    """An ``HTTPMessage`` whose ``get`` is one dict lookup, for a block the fast path parsed.

    ``Message.get`` walks every header and lowercases each name on every call, and
    ``HTTPResponse.begin`` alone makes three or four calls per response (Transfer-Encoding,
    Content-Length, Connection...). The index answers as that walk does (the first header of
    the name, its value as stored: the fast path's values need no sanitising), and is dropped
    by any change to the headers, after which ``get`` is the standard one again.
    """

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        super().__init__()
        first: dict[str, str] = {}
        for name, value in fields:
            http.client.HTTPMessage.set_raw(self, name, value)
            first.setdefault(name.lower(), value)
        self.set_payload("")  # what the email parser leaves after a header-only block
        # lowercased name -> the first value of that name; None once the headers change
        self._index: dict[str, str] | None = first

    def get(self, name: str, failobj: Any = None) -> Any:
        index = self._index
        if index is None:
            return super().get(name, failobj)
        return index.get(name.lower(), failobj)

    def __setitem__(self, name: str, val: Any) -> None:
        self._index = None
        super().__setitem__(name, val)

    def __delitem__(self, name: str) -> None:
        self._index = None
        super().__delitem__(name)

    def add_header(self, *args: Any, **kwargs: Any) -> None:
        self._index = None
        super().add_header(*args, **kwargs)

    def replace_header(self, *args: Any, **kwargs: Any) -> None:
        self._index = None
        super().replace_header(*args, **kwargs)

    def set_raw(self, name: str, value: Any) -> None:
        self._index = None
        super().set_raw(name, value)

    def set_boundary(self, boundary: str) -> None:
        self._index = None
        super().set_boundary(boundary)


def install() -> None:
    """Use ``parse_headers`` for every HTTP response this process reads (idempotent)."""
    http.client.parse_headers = parse_headers  # type: ignore[assignment]  # (typeshed: overloads)


def _read_header_lines(fp: IO[bytes]) -> list[bytes]:
    """http.client._read_headers: the lines up to and including the blank one."""
    lines: list[bytes] = []
    while True:
        line = fp.readline(_MAXLINE + 1)
        if len(line) > _MAXLINE:
            raise http.client.LineTooLong("header line")
        lines.append(line)
        if len(lines) > _MAXHEADERS:
            raise http.client.HTTPException(f"got more than {_MAXHEADERS} headers")
        if line in _LINE_ENDS:
            return lines


def _email_parse(
    lines: list[bytes], _class: type[http.client.HTTPMessage]
) -> http.client.HTTPMessage:
    """The standard library's way, for a block the fast path does not take."""
    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=_class).parsestr(text)
