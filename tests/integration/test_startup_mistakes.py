"""Start-up mistakes through the real entry points: one line on stderr naming the file, flag or
address, no traceback, and a non-zero exit; ``--version`` names the distribution and exits 0.

Each case runs the command as a user would (a subprocess), so the whole path is covered: the
argument parser, the entry point's error handling and the logging set-up.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.test_kubeconfig import BROKEN

PYTHON = sys.executable
CONTROLLER = str(Path(sys.executable).with_name("sample-controller"))
DISTRIBUTION_LINE = "(sample-controller-py "


def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The process failed with exactly one line on stderr holding ``words``; that line."""
    assert result.returncode != 0, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that something is listening on for the test's length."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


# ---- a bad kubeconfig: the controller, whose manager turns ConfigError into one log line -------


@pytest.mark.parametrize(
    "case", ["not YAML", "a string", "binary", "no server", "current-context naming nothing"]
)
def test_controller_names_the_broken_kubeconfig(tmp_path: Path, case: str) -> None:
    content, words = BROKEN[case]
    path = tmp_path / "kubeconfig"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    result = run(CONTROLLER, "--kubeconfig", str(path))
    assert result.returncode == 1
    assert_one_line(result, str(path), words)


# ---- kubesim ------------------------------------------------------------------------------------


def test_kubesim_version() -> None:
    result = run(PYTHON, "-m", "kubesim", "--version")
    assert result.returncode == 0, result.stderr
    # kubesim is a distribution of its own (kubesim/pyproject.toml)
    assert re.fullmatch(r"kubesim \d+\.\d+\.\d+\n", result.stdout), result.stdout


def test_kubesim_names_a_taken_port(taken_port: int) -> None:
    result = run(PYTHON, "-m", "kubesim", "--listen", f"127.0.0.1:{taken_port}")
    assert result.returncode == 2
    assert_one_line(result, f"--listen: cannot listen on 127.0.0.1:{taken_port}", "in use")


@pytest.fixture(scope="module")
def key_pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two self-signed certificates with their keys, and a PEM file that is not one."""
    from kubesim.server.tls import generate_certificate

    files: dict[str, Path] = {}
    for n in ("1", "2"):
        d = tmp_path_factory.mktemp(f"pair{n}")
        cert, key = generate_certificate(str(d), "127.0.0.1")
        files["cert" + n], files["key" + n] = Path(cert), Path(key)
    junk = tmp_path_factory.mktemp("junk") / "junk.pem"
    junk.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    files["junk"] = junk
    return files


@pytest.mark.parametrize(
    ("cert", "key", "words"),
    [
        ("cert1", "key2", ["--tls-private-key-file", "key.pem does not match the certificate"]),
        ("key1", "key1", ["--tls-cert-file", "does not load as a PEM certificate"]),
        ("junk", "key1", ["--tls-cert-file", "junk.pem does not load as a PEM certificate"]),
        ("cert1", "cert1", ["--tls-private-key-file", "does not load as a PEM private key"]),
        ("cert1", "missing", ["--tls-private-key-file", "cannot read", "No such file"]),
    ],
)
def test_kubesim_names_a_certificate_that_does_not_load(
    key_pairs: dict[str, Path], tmp_path: Path, cert: str, key: str, words: list[str]
) -> None:
    cert_path = key_pairs.get(cert, tmp_path / cert)
    key_path = key_pairs.get(key, tmp_path / key)
    result = run(
        PYTHON,
        "-m",
        "kubesim",
        "--tls-cert-file",
        str(cert_path),
        "--tls-private-key-file",
        str(key_path),
    )
    assert result.returncode == 2
    assert result.stdout == ""  # no URL: it never served
    assert_one_line(result, *words)


def test_kubesim_wants_the_certificate_and_key_together(key_pairs: dict[str, Path]) -> None:
    result = run(PYTHON, "-m", "kubesim", "--tls-cert-file", str(key_pairs["cert1"]))
    assert result.returncode == 2
    assert_one_line(result, "--tls-cert-file and --tls-private-key-file must be given together")


def test_kubesim_serves_a_certificate_it_is_given(key_pairs: dict[str, Path]) -> None:
    """The failure paths above are not all there is: a good pair serves HTTPS, and the
    kubeconfig written trusts it."""
    from client.rest import RESTClient
    from kubesim import KubeSim

    with KubeSim(
        tls_cert_file=str(key_pairs["cert1"]), tls_private_key_file=str(key_pairs["key1"])
    ) as sim:
        assert sim.url.startswith("https://")
        assert sim.ca_file == str(key_pairs["cert1"])
        version = RESTClient(sim.api_client).request("GET", "/version")
        assert version["major"] == "1"


# ---- the demo and demo-ui -----------------------------------------------------------------------


@pytest.mark.parametrize("module", ["demo", "demo.ui"])
def test_demo_version(module: str) -> None:
    result = run(PYTHON, "-m", module, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"python -m {module} {DISTRIBUTION_LINE}")


@pytest.mark.parametrize(
    ("module", "flags", "words"),
    [
        ("demo", ["--status-delay", "soon"], "argument --status-delay: expected seconds"),
        ("demo", ["--status-delay", "-1"], "argument --status-delay: must be 0 or more"),
        ("demo.ui", ["--port", "70000"], "argument --port: expected a port 0-65535"),
        ("demo", ["--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_demo_names_a_bad_flag(module: str, flags: list[str], words: str) -> None:
    result = run(PYTHON, "-m", module, *flags)
    assert result.returncode == 2
    assert_one_line(result, words)


def test_demo_ui_names_a_taken_port(taken_port: int) -> None:
    result = run(PYTHON, "-m", "demo.ui", "--port", str(taken_port))
    assert result.returncode == 2
    assert result.stdout == ""  # nothing started, no address printed
    assert_one_line(result, f"argument --port: cannot listen on 127.0.0.1:{taken_port}", "in use")
