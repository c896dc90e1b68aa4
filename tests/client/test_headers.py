"""client.headers.parse_headers gives what http.client's own parse_headers gives, faster."""

from __future__ import annotations

import email.parser
import http.client
import io

import pytest

from client.headers import install, parse_headers


def stdlib_parse_headers(block: bytes) -> http.client.HTTPMessage:
    # http.client.parse_headers as shipped (it may have been replaced by install())
    lines = []
    fp = io.BytesIO(block)
    while True:
        line = fp.readline(65537)
        lines.append(line)
        if line in (b"\r\n", b"\n", b""):
            break
    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=http.client.HTTPMessage).parsestr(text)


BLOCKS = {
    "kube-apiserver": (
        b"Audit-Id: 0b1c\r\nCache-Control: no-cache, private\r\nContent-Type: application/json\r\n"
        b"X-Kubernetes-Pf-Flowschema-Uid: 5f1\r\nDate: Tue, 01 Dec 2026 05:00:00 GMT\r\n"
        b"Content-Length: 1234\r\n\r\n"
    ),
    "chunked watch": b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    "no headers": b"\r\n",
    "bare LF": b"A: 1\nB:2\n\n",
    "blanks kept at the end, dropped at the start": b"A:  \t x  \r\n\r\n",
    "empty value": b"A:\r\nB: \r\n\r\n",
    "repeated names": b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n",
    "latin-1": "X-Name: caf\u00e9\r\n\r\n".encode("iso-8859-1"),
    "colon in the value": b"Location: http://h:80/x\r\n\r\n",
    "EOF instead of a blank line": b"A: 1\r\n",
    "last line without its newline": b"A: 1",
    # what the fast path leaves to the email parser, with its defects and payload
    "folded continuation": b"A: 1\r\n  continued\r\nB: 2\r\n\r\n",
    "line without a colon": b"A: 1\r\nnot a header\r\nB: 2\r\n\r\n",
    "space in the name": b"Bad Name: 1\r\n\r\n",
    "empty name": b": 1\r\n\r\n",
    "stray CR": b"A: 1\r2\r\nB: 3\r\n\r\n",
    "unix from": b"From someone\r\nA: 1\r\n\r\n",
}


@pytest.mark.parametrize("name", BLOCKS)
def test_the_same_message_as_the_standard_library(name):
    block = BLOCKS[name]
    ours = parse_headers(io.BytesIO(block + b"BODY"))
    theirs = stdlib_parse_headers(block + b"BODY")
    # the same state, but the fast path's index of names (client.headers._Indexed)
    state = {k: v for k, v in vars(ours).items() if k != "_index"}
    assert state.keys() == vars(theirs).keys()
    assert {k: v for k, v in state.items() if k != "defects"} == {
        k: v for k, v in vars(theirs).items() if k != "defects"
    }
    assert [type(d) for d in ours.defects] == [type(d) for d in theirs.defects]
    assert ours.items() == theirs.items()
    # every lookup answers as the standard walk does: each name, any case, and a missing one
    for name in [k for k, _ in theirs.items()] + ["content-length", "X-Missing"]:
        for asked in (name, name.lower(), name.upper()):
            assert ours.get(asked) == theirs.get(asked)
            assert ours.get(asked, "dflt") == theirs.get(asked, "dflt")
            assert ours.get_all(asked) == theirs.get_all(asked)


def test_a_changed_message_answers_from_its_headers_not_the_index():
    ours = parse_headers(io.BytesIO(BLOCKS["kube-apiserver"]))
    assert ours.get("content-length") == "1234"
    del ours["Content-Length"]
    assert ours.get("content-length") is None
    ours["Content-Length"] = "5"
    ours.replace_header("Content-Length", "6")
    assert ours.get("CONTENT-LENGTH") == "6"
    fresh = parse_headers(io.BytesIO(BLOCKS["kube-apiserver"]))
    fresh.set_raw("X-New", "1")
    assert fresh.get("x-new") == "1"


def test_the_body_is_left_unread():
    fp = io.BytesIO(BLOCKS["kube-apiserver"] + b'{"kind":"Foo"}')
    parse_headers(fp)
    assert fp.read() == b'{"kind":"Foo"}'


def test_the_standard_limits_and_errors():
    with pytest.raises(http.client.LineTooLong):
        parse_headers(io.BytesIO(b"A: " + b"x" * 70_000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        parse_headers(io.BytesIO(b"A: 1\r\n" * 101 + b"\r\n"))


def test_install_puts_it_where_http_client_looks_it_up(monkeypatch):
    monkeypatch.setattr(http.client, "parse_headers", http.client.parse_headers)
    install()
    assert http.client.parse_headers is parse_headers
    response = http.client.HTTPResponse(
        FakeSocket(b"HTTP/1.1 200 OK\r\n" + BLOCKS["kube-apiserver"])
    )
    response.begin()
    assert response.status == 200 and response.length == 1234
    assert response.getheader("audit-id") == "0b1c"


class FakeSocket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode):
        return io.BytesIO(self.data)
