"""runtime.flags: every flag rule, one row each; a bad flag is one line and exit status 2.

The table holds the flags, the flag the message must name and the rule it must state. The
rules follow client-go where it has them (NewLeaderElector's ordering, the clientset's burst
with QPS) and what the process needs otherwise (a worker, a port that can be bound).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.flags import build_parser, parse_options
from runtime.options import Options

ROOT = Path(__file__).resolve().parents[2]

INVALID = [
    # (flags, the flag named, the rule stated)
    (["--workers", "0"], "--workers", "must be at least 1 (got 0)"),
    (["--workers", "-3"], "--workers", "must be at least 1 (got -3)"),
    (["--workers", "two"], "--workers", "invalid int value: 'two'"),
    (["--resync-period=-5s"], "--resync-period", "must not be negative (got -5s)"),
    (["--resync-period", "5"], "--resync-period", "missing unit"),
    (["--kube-api-qps", "-1"], "--kube-api-qps", "must not be negative (got -1)"),
    (["--kube-api-qps", "nan"], "--kube-api-qps", "must be a finite number"),
    (["--kube-api-burst", "-1"], "--kube-api-burst", "must not be negative (got -1)"),
    (
        ["--kube-api-burst", "0"],
        "--kube-api-burst",
        "must be at least 1 when --kube-api-qps is above 0",
    ),
    (
        ["--graceful-shutdown-timeout=-1s"],
        "--graceful-shutdown-timeout",
        "must not be negative (got -1s)",
    ),
    (["--metrics-bind-address", ":99999"], "--metrics-bind-address", "port must be 0-65535"),
    (
        ["--health-probe-bind-address", "127.0.0.1:65536"],
        "--health-probe-bind-address",
        "port must be 0-65535",
    ),
    (["--metrics-bind-address", "8080"], "--metrics-bind-address", "is not host:port, :port or 0"),
    (
        ["--metrics-bind-address", ":8081"],
        "--metrics-bind-address and --health-probe-bind-address",
        "must differ",
    ),
    (
        ["--metrics-bind-address", "127.0.0.1:9000", "--health-probe-bind-address", ":9000"],
        "--metrics-bind-address and --health-probe-bind-address",
        "must differ",
    ),
    (
        ["--leader-elect-lease-duration", "10s"],
        "--leader-elect-lease-duration",
        "must be greater than --leader-elect-renew-deadline (10s)",
    ),
    (
        ["--leader-elect-lease-duration", "5s"],
        "--leader-elect-lease-duration",
        "must be greater than --leader-elect-renew-deadline (10s)",
    ),
    (
        ["--leader-elect-renew-deadline", "2400ms"],
        "--leader-elect-renew-deadline",
        "must be greater than 1.2 x --leader-elect-retry-period (2s)",
    ),
    (
        ["--leader-elect-lease-duration", "0s"],
        "--leader-elect-lease-duration",
        "must be greater than zero",
    ),
    (
        ["--leader-elect-renew-deadline=-1s"],
        "--leader-elect-renew-deadline",
        "must be greater than zero",
    ),
    (["--leader-elect-retry-period", "0"], "--leader-elect-retry-period", "greater than zero"),
    (["--v", "-1"], "-v/--v", "must not be negative (got -1)"),
    (["--namespace", "Team_A"], "--namespace", "must be a namespace name"),
    (["--namespace", "a" * 64], "--namespace", "must be a namespace name"),
    (["--leader-elect-namespace", "x-"], "--leader-elect-namespace", "must be a namespace name"),
    (["--leader-elect-lease-name", ""], "--leader-elect-lease-name", "must be an object name"),
    (["--leader-elect-lease-name", "Lease"], "--leader-elect-lease-name", "must be an object name"),
    (["--foo-selector", "a in (b"], "--foo-selector", ""),
    (["--fifo", "lifo"], "--fifo", "invalid choice"),
    (["--watch-list=maybe"], "--watch-list", "must be true or false (1, t, true, 0, f, false)"),
    (["--watch-list="], "--watch-list", "must be true or false"),
    (["--log-format", "xml"], "--log-format", "invalid choice"),
    (["--bogus"], "unrecognized arguments", "--bogus"),
    (["--metrics-secure=maybe"], "--metrics-secure", "must be true or false"),
    (["--enable-http2=yes"], "--enable-http2", "must be true or false"),
    (["--metrics-cert-name", "certs/tls.crt"], "--metrics-cert-name", "must be a file name"),
    (["--metrics-cert-key", ""], "--metrics-cert-key", "must be a file name"),
    (
        ["--metrics-cert-path", "/nonexistent/certs"],
        "--metrics-cert-path",
        "'/nonexistent/certs' is not a directory",
    ),
    (
        ["--metrics-cert-path", "/tmp", "--metrics-secure=false"],
        "--metrics-cert-path needs --metrics-secure",
        "the certificate would not be used",
    ),
    (
        ["--sharding", "--leader-elect"],
        "--sharding and --leader-elect",
        "cannot be used together",
    ),
    (["--sharding-buckets", "48"], "--sharding-buckets", "not a power of two"),
    (["--sharding-buckets", "0"], "--sharding-buckets", "not a power of two"),
    (["--identity", "Not_A_Name"], "--identity", "must be an object name"),
]


@pytest.mark.parametrize(("flags", "flag", "rule"), INVALID, ids=[" ".join(c[0]) for c in INVALID])
def test_an_invalid_flag_is_one_line_naming_the_flag_and_the_rule(capsys, flags, flag, rule):
    with pytest.raises(SystemExit) as exit_info:
        parse_options(flags)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err  # no usage block, no traceback
    assert lines[0].startswith("sample-controller: error: ")
    assert flag in lines[0] and rule in lines[0], lines[0]


VALID = [
    # edge values that are allowed, and what they become
    (["--kube-api-qps", "0", "--kube-api-burst", "0"], {"kube_api_qps": 0.0, "kube_api_burst": 0}),
    (["--resync-period", "0"], {"resync_period": 0.0}),
    (["--graceful-shutdown-timeout", "0s"], {"graceful_shutdown_timeout": 0.0}),
    (["--workers", "1"], {"workers": 1}),
    (
        ["--metrics-bind-address", ":0", "--health-probe-bind-address", ":0"],
        {"metrics_bind_address": ("", 0), "health_probe_bind_address": ("", 0)},
    ),
    (
        [
            "--metrics-bind-address",
            "127.0.0.1:9000",
            "--health-probe-bind-address",
            "10.0.0.1:9000",
        ],
        {
            "metrics_bind_address": ("127.0.0.1", 9000),
            "health_probe_bind_address": ("10.0.0.1", 9000),
        },
    ),
    (
        ["--metrics-bind-address", "0", "--health-probe-bind-address", "0"],
        {"metrics_bind_address": None, "health_probe_bind_address": None},
    ),
    (["--metrics-bind-address", "[::1]:8443"], {"metrics_bind_address": ("::1", 8443)}),
    (
        # the integration suite's fast leader election: 1500ms > 1.2 x 500ms
        [
            "--leader-elect",
            "--leader-elect-lease-duration",
            "2s",
            "--leader-elect-renew-deadline",
            "1500ms",
            "--leader-elect-retry-period",
            "500ms",
        ],
        {
            "leader_elect": True,
            "leader_elect_lease_duration": 2.0,
            "leader_elect_renew_deadline": 1.5,
            "leader_elect_retry_period": 0.5,
        },
    ),
    (
        ["--namespace", "team-a", "--leader-elect-lease-name", "a.b-c"],
        {"namespace": "team-a", "leader_elect_lease_name": "a.b-c"},
    ),
    (
        ["-kubeconfig", "/k", "-master", "https://h:6443"],
        {"kubeconfig": "/k", "master": "https://h:6443"},
    ),
    (["--resync-period", "1m30s", "--fifo", "delta"], {"resync_period": 90.0, "fifo": "delta"}),
    (["--no-strip-managed-fields", "-v", "4"], {"strip_managed_fields": False, "verbosity": 4}),
    (["--watch-list=false"], {"watch_list": False}),
    (["--watch-list=0"], {"watch_list": False}),
    (["--watch-list=true"], {"watch_list": True}),
    (["--watch-list"], {"watch_list": True}),
    # Go's boolean flags, as kubebuilder's manifests spell them
    (["--metrics-secure=false"], {"metrics_secure": False}),
    (
        ["--metrics-secure=0", "--enable-http2=true"],
        {"metrics_secure": False, "enable_http2": True},
    ),
    (["--metrics-secure", "--enable-http2"], {"metrics_secure": True, "enable_http2": True}),
]


@pytest.mark.parametrize(("flags", "fields"), VALID, ids=[" ".join(c[0]) for c in VALID])
def test_edge_values_that_are_valid_are_accepted(flags, fields):
    assert parse_options(flags) == dataclasses.replace(Options(), **fields)


def test_no_flags_are_the_options_defaults():
    # the parser's defaults and the dataclass's agree, so Options() is the process as shipped
    assert parse_options([]) == Options()


def test_every_flag_has_its_options_field():
    dests = {a.dest for a in build_parser()._actions if a.dest not in ("help", "version")}
    assert dests == {f.name for f in dataclasses.fields(Options)}


def test_version_prints_the_program_and_its_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_options(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == "sample-controller 0.1.0\n"


def test_every_flag_has_help_text():
    # (--log-format had none: a user reading --help could not tell what its choices mean)
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings} has no help"


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Options().workers = 3  # type: ignore[misc]


# -- the process: exit status and what reaches stderr ---------------------------------------------


def controller(*flags: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "controller", *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_the_process_exits_2_with_one_line_and_no_traceback():
    res = controller("--workers", "0")
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        "sample-controller: error: argument --workers: must be at least 1 (got 0)"
    ]


def test_a_missing_kubeconfig_is_reported_once_as_missing(tmp_path):
    missing = tmp_path / "nope.yaml"
    res = controller("--kubeconfig", str(missing))
    assert res.returncode == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr  # logged once, not logged and printed
    assert f"kubeconfig {missing} does not exist" in lines[0]
    assert "Traceback" not in res.stderr


def test_a_missing_kubeconfig_from_the_environment_names_the_variable(tmp_path):
    missing = tmp_path / "from-env.yaml"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(missing)}
    res = controller("--log-format", "json", env=env)
    assert res.returncode == 1
    records = [json.loads(line) for line in res.stderr.splitlines()]
    errors = [json.dumps(r) for r in records if r["level"] == "error"]
    assert len(errors) == 1, res.stderr
    assert f"kubeconfig {missing} (from $KUBECONFIG) does not exist" in errors[0]


def test_no_kubeconfig_anywhere_says_where_it_looked(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no ~/.kube/config, no KUBECONFIG
    res = controller(env=env)
    assert res.returncode == 1
    assert "no kubeconfig: ~/.kube/config does not exist" in res.stderr
    assert "Invalid kube-config file" not in res.stderr


# -- the metrics certificate files: read at parse time, one line and exit 2 when unusable -------


@pytest.fixture(scope="module")
def two_pairs() -> tuple[tuple[bytes, bytes], tuple[bytes, bytes]]:
    from runtime.selfsigned import generate

    return generate(), generate()


def cert_dir(tmp_path: Path, cert: bytes | None, key: bytes | None) -> str:
    for name, data in (("tls.crt", cert), ("tls.key", key)):
        if data is not None:
            (tmp_path / name).write_bytes(data)
    return str(tmp_path)


@pytest.mark.parametrize(
    ("files", "flag", "rule"),
    [
        ("no cert", "--metrics-cert-name", "tls.crt' does not exist"),
        ("no key", "--metrics-cert-key", "tls.key' does not exist"),
        ("key of another cert", "--metrics-cert-path", "not a certificate and its key"),
        ("not PEM", "--metrics-cert-path", "not a certificate and its key"),
    ],
)
def test_unusable_certificate_files_are_one_line_and_exit_2(
    capsys, tmp_path, two_pairs, files, flag, rule
):
    (cert, key), (_, other_key) = two_pairs
    directory = {
        "no cert": lambda: cert_dir(tmp_path, None, key),
        "no key": lambda: cert_dir(tmp_path, cert, None),
        "key of another cert": lambda: cert_dir(tmp_path, cert, other_key),
        "not PEM": lambda: cert_dir(tmp_path, b"hello", b"world"),
    }[files]()
    with pytest.raises(SystemExit) as exit_info:
        parse_options(["--metrics-cert-path", directory])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and flag in lines[0] and rule in lines[0], lines


def test_a_key_that_cannot_be_read_is_one_line_and_exit_2(capsys, tmp_path, two_pairs):
    # unreadable whoever runs the test, root included: a directory where the key should be
    (cert, _), _ = two_pairs
    directory = cert_dir(tmp_path, cert, None)
    (tmp_path / "tls.key").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        parse_options(["--metrics-cert-path", directory])
    assert exit_info.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"cannot read {tmp_path / 'tls.key'}: Is a directory" in line, line


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_key_is_one_line_and_exit_2(capsys, tmp_path, two_pairs):
    (cert, key), _ = two_pairs
    directory = cert_dir(tmp_path, cert, key)
    (tmp_path / "tls.key").chmod(0)
    with pytest.raises(SystemExit):
        parse_options(["--metrics-cert-path", directory])
    [line] = capsys.readouterr().err.splitlines()
    assert "cannot read" in line and "tls.key" in line and "Permission denied" in line


def test_a_good_pair_under_other_names_is_accepted(tmp_path, two_pairs):
    (cert, key), _ = two_pairs
    (tmp_path / "serving.pem").write_bytes(cert)
    (tmp_path / "serving-key.pem").write_bytes(key)
    flags = ["--metrics-cert-path", str(tmp_path), "--metrics-cert-name", "serving.pem"]
    options = parse_options([*flags, "--metrics-cert-key", "serving-key.pem"])
    assert options.metrics_cert_path == str(tmp_path)
    assert (options.metrics_cert_name, options.metrics_cert_key) == (
        "serving.pem",
        "serving-key.pem",
    )


def test_the_process_exits_2_on_a_missing_certificate_directory(tmp_path):
    res = controller("--metrics-cert-path", str(tmp_path / "missing"))
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        f"sample-controller: error: --metrics-cert-path: '{tmp_path / 'missing'}' is not a "
        "directory"
    ]


def test_sharding_flags_reach_the_options():
    options = parse_options(
        [
            "--sharding",
            "--sharding-ring",
            "blue",
            "--sharding-buckets",
            "128",
            "--identity",
            "pod-1",
        ]
    )
    assert (options.sharding, options.sharding_ring, options.sharding_buckets) == (
        True,
        "blue",
        128,
    )
    assert options.identity == "pod-1"
    defaults = parse_options([])
    assert (defaults.sharding, defaults.sharding_ring, defaults.sharding_buckets) == (
        False,
        "sample-controller",
        64,
    )
    assert defaults.identity == ""
