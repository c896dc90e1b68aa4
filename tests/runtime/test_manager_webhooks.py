"""The manager and its webhook server: built from the flags, started with the endpoints (before
any election), and watched by /readyz."""

from __future__ import annotations

import dataclasses
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from runtime.certwatcher import self_signed_certificate
from runtime.manager import Manager
from runtime.options import Options
from runtime.webhook.admission import Request, Response, allowed


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("certs")
    cert, key = self_signed_certificate()
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    return directory


def allow(request: Request) -> Response:
    return allowed()


def options(**changes) -> Options:
    return dataclasses.replace(Options(health_probe_bind_address=("127.0.0.1", 0)), **changes)


def readyz(manager: Manager) -> tuple[bool, list[str]]:
    return manager.readyz_checks().run()


def test_no_webhook_server_without_the_flag():
    manager = Manager(options(), rest=None, registry=CollectorRegistry())  # type: ignore[arg-type]
    assert manager.webhook_server is None
    assert not any("webhook" in line for line in readyz(manager)[1])


def test_the_server_starts_with_the_endpoints_and_readyz_watches_it(cert_dir):
    manager = Manager(
        options(webhook_bind_address=("127.0.0.1", 0), webhook_cert_path=str(cert_dir)),
        rest=None,  # type: ignore[arg-type]
        registry=CollectorRegistry(),
    )
    server = manager.webhook_server
    assert server is not None and manager.webhook_server is server  # one per process
    server.register("/validate", allow)
    assert "[-]webhook failed: webhook server has not been started yet" in readyz(manager)[1]
    servers = manager.start_endpoints()
    try:
        assert server in servers
        assert "[+]webhook ok" in readyz(manager)[1]
        probes = next(s for s in servers if s is not server)
        host, port = probes.address
        # (500 as a whole: no controller runs here, so the informers have not synced)
        with pytest.raises(urllib.error.HTTPError) as probe:
            urllib.request.urlopen(f"http://{host}:{port}/readyz?verbose", timeout=10)
        assert "[+]webhook ok" in probe.value.read().decode()
    finally:
        for s in servers:
            s.stop()
    assert "[-]webhook failed: webhook server has stopped" in readyz(manager)[1]


def test_a_busy_webhook_port_names_its_flag(cert_dir):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        manager = Manager(
            options(webhook_bind_address=("127.0.0.1", port), webhook_cert_path=str(cert_dir)),
            rest=None,  # type: ignore[arg-type]
            registry=CollectorRegistry(),
        )
        with pytest.raises(
            OSError, match=rf"^--webhook-bind-address: cannot listen on 127\.0\.0\.1:{port}: "
        ):
            manager.start_endpoints()
