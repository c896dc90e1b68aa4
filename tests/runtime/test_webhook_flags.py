"""The webhook flags: off by default, exactly one source of certificate, a bad one is one line
and exit status 2 (as for the metrics certificate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.certwatcher import self_signed_certificate
from runtime.flags import parse_options


def fails(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        parse_options(list(argv))
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("webhook-certs")
    cert, key = self_signed_certificate()
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    return directory


def test_off_by_default():
    options = parse_options([])
    assert options.webhook_bind_address is None
    assert options.webhook_self_managed_certs is False


def test_a_server_with_a_certificate_directory(cert_dir):
    options = parse_options(["--webhook-bind-address=:9443", f"--webhook-cert-path={cert_dir}"])
    assert options.webhook_bind_address == ("", 9443)
    assert options.webhook_cert_path == str(cert_dir)


def test_self_managed_with_its_hosts_and_configurations():
    options = parse_options(
        [
            "--webhook-bind-address=127.0.0.1:0",
            "--webhook-self-managed-certs",
            "--webhook-cert-hosts=svc.ns.svc,10.0.0.1",
            "--webhook-validating-configuration=",
        ]
    )
    assert options.webhook_cert_hosts == ("svc.ns.svc", "10.0.0.1")
    assert options.webhook_validating_configuration == ""
    assert options.webhook_mutating_configuration == (
        "sample-controller-mutating-webhook-configuration"
    )


def test_a_server_without_a_certificate_is_refused(capsys):
    line = fails(capsys, "--webhook-bind-address=:9443")
    assert "needs a certificate the API server trusts" in line


def test_a_missing_certificate_file_names_the_flag(capsys, tmp_path):
    line = fails(capsys, "--webhook-bind-address=:9443", f"--webhook-cert-path={tmp_path}")
    assert line.endswith(f"--webhook-cert-name: '{tmp_path}/tls.crt' does not exist")


def test_a_bad_certificate_is_one_line(capsys, tmp_path):
    (tmp_path / "tls.crt").write_text("not a certificate")
    (tmp_path / "tls.key").write_text("not a key")
    line = fails(capsys, "--webhook-bind-address=:9443", f"--webhook-cert-path={tmp_path}")
    assert "--webhook-cert-path:" in line and "not a certificate and its key" in line


def test_both_sources_at_once_are_refused(capsys, cert_dir):
    line = fails(
        capsys,
        "--webhook-bind-address=:9443",
        f"--webhook-cert-path={cert_dir}",
        "--webhook-self-managed-certs",
    )
    assert "cannot be used together" in line


def test_certificate_flags_without_a_server_are_refused(capsys):
    line = fails(capsys, "--webhook-self-managed-certs")
    assert line.endswith(
        "--webhook-self-managed-certs needs --webhook-bind-address: no webhook server is started"
    )


def test_the_port_of_another_server_is_refused(capsys):
    line = fails(
        capsys,
        "--webhook-bind-address=:8081",
        "--webhook-self-managed-certs",
    )
    assert "--webhook-bind-address and --health-probe-bind-address must differ" in line


@pytest.mark.parametrize("hosts", ["", "Not_A_Name", "a..b"])
def test_bad_certificate_hosts(capsys, hosts):
    line = fails(capsys, f"--webhook-cert-hosts={hosts}")
    assert "argument --webhook-cert-hosts" in line
