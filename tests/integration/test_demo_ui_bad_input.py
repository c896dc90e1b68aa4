"""demo-ui's server answers bad input with 400 and a JSON error naming what was wrong: never a
traceback and a dropped connection.

Most cases run against the page's server in this process, with a cluster that is not started:
the checks come before anything acts, so nothing needs to run behind them. One case runs the
real ``python -m demo.ui`` and reads its output, to show that the terminal stays clean and that
a good request after the bad ones still works.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from demo.ui.arguments import BadRequest, check_arguments, check_since
from demo.ui.cluster import Cluster
from demo.ui.server import make_server
from tests.helpers import ROOT, wait_for


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request; (status, decoded JSON body). A dropped connection fails the test."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        assert response.getheader("Content-Type") == "application/json", data
        return response.status, json.loads(data)
    finally:
        conn.close()


@pytest.fixture
def page_port() -> Iterator[int]:
    """The page's server for a cluster that never starts, on a free port."""
    server = make_server(Cluster())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


BAD_POSTS = [
    ("/api/action/create", b'{"replicas":"many"}', "replicas must be a whole number (got 'many')"),
    ("/api/action/create", b'{"replicas":true}', "replicas must be a whole number"),
    ("/api/action/create", b'{"name":7}', "name must be a string, not a number"),
    ("/api/action/create", b'{"colour":"red"}', "unknown argument 'colour'"),
    ("/api/action/inject500", b'{"count":100000}', "count must be from 1 to 100"),
    ("/api/action/create", b"replicas=3", "the body is not JSON"),
    ("/api/action/create", b"\xff\xfe", "the body is not JSON"),
    ("/api/action/create", b"[1, 2]", "the arguments must be a JSON object, not an array"),
    ("/api/action/create", b'"create"', "the arguments must be a JSON object, not a string"),
    ("/api/action/fly", b"{}", "no control 'fly' (controls: "),
]


@pytest.mark.parametrize(("path", "body", "words"), BAD_POSTS)
def test_a_bad_control_request_is_a_400_naming_the_problem(
    page_port: int, path: str, body: bytes, words: str
) -> None:
    status, answer = request(page_port, "POST", path, body, {"Content-Type": "application/json"})
    assert status == 400
    assert words in answer["error"]


def test_a_content_length_that_is_not_a_number_is_a_400(page_port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", page_port, timeout=10)
    try:
        conn.putrequest("POST", "/api/action/create")
        conn.putheader("Content-Length", "lots")
        conn.endheaders()
        response = conn.getresponse()
        assert response.status == 400
        assert "Content-Length must be a number" in json.loads(response.read())["error"]
    finally:
        conn.close()


@pytest.mark.parametrize("since", ["abc", "-1", "1.5"])
def test_a_poll_from_a_since_that_is_not_a_number_is_a_400(page_port: int, since: str) -> None:
    status, answer = request(page_port, "GET", f"/api/state?since={since}")
    assert status == 400
    assert answer["error"] == f"since must be a whole number of 0 or more (got {since!r})"


def test_a_good_poll_still_answers(page_port: int) -> None:
    status, answer = request(page_port, "GET", "/api/state?since=0")
    assert status == 200
    assert set(answer) == {"entries", "machinery", "cluster"}


def test_arguments_are_normalised() -> None:
    assert check_arguments(
        {"name": "a", "replicas": "3", "count": 2.0, "deploymentName": None}
    ) == {
        "name": "a",
        "replicas": 3,
        "count": 2,
    }
    assert check_since([]) == check_since([""]) == 0
    assert check_since(["12"]) == 12
    with pytest.raises(BadRequest, match="replicas must be a whole number"):
        check_arguments({"replicas": 2.5})


def test_the_real_page_answers_400_and_prints_no_traceback() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo.ui", "--status-delay", "0.2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    match = None
    for line in proc.stdout:
        lines.append(line)
        match = re.search(r"open http://127\.0\.0\.1:(\d+)/", line)
        if match:
            break
    assert match, "".join(lines)
    drain = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    drain.start()
    port = int(match.group(1))
    try:
        status, answer = request(port, "POST", "/api/action/create", b'{"replicas":"many"}')
        assert status == 400 and "replicas" in answer["error"]
        status, answer = request(port, "GET", "/api/state?since=abc")
        assert status == 400
        # the same connection pool, the same server: a good control still works
        status, answer = request(
            port, "POST", "/api/action/create", b'{"name":"example-foo","replicas":2}'
        )
        assert status == 200, answer
        assert "example-foo" in answer["done"]
        wait_for(
            lambda: request(port, "GET", "/api/state?since=0")[1]["cluster"].get("foos"),
            message="the Foo in the page's state",
        )
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=40)
        drain.join(5)
    out = "".join(lines)
    assert proc.returncode == 0, out
    assert "Traceback" not in out
