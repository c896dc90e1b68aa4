"""The in-cluster path of load_client_configuration against kubesim with TLS and a bearer token.

A pod finds its API server through KUBERNETES_SERVICE_HOST/PORT and authenticates with the
ServiceAccount token the kubelet mounts (and rotates) next to the cluster CA. The test writes
its own token and CA files and hands their paths and the environment to the loader, which is
the official client's ``InClusterConfigLoader``.

Token rotation: the official loader re-reads the token file when its cached copy is older than
``_token_refresh_period`` (one minute), checked on every request through the configuration's
``refresh_api_key_hook``. The test moves that module's clock forward instead of waiting a minute.
"""

from __future__ import annotations

import datetime as real_datetime
import shutil
import types
from pathlib import Path

import pytest
from kubernetes import client

from client.config import ConfigError, load_client_configuration
from client.errors import APIError, TransportError
from client.rest import RESTClient
from client.restconfig import Config
from kubesim import KubeSim
from kubesim.server.tls import generate_certificate

DISCOVERY = "/apis/samplecontroller.k8s.io/v1alpha1"


pytestmark = pytest.mark.kubesim(tls=True, token="token-one")

# The controller's own (client/official.py) and the official client's: the same pool, TLS
# settings and credentials either way.
API_CLIENTS = pytest.mark.parametrize("api_client", [Config.from_configuration, client.ApiClient])


@pytest.fixture
def pod_files(sim, tmp_path) -> dict[str, Path]:
    """The ServiceAccount volume as the kubelet mounts it: token and ca.crt."""
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("token-one")
    shutil.copy(sim.ca_file, ca)
    return {"token": token, "ca": ca}


def pod_environ(sim: KubeSim) -> dict[str, str]:
    return {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(sim.port)}


class ShiftedClock:
    """Stands in for the ``datetime`` module inside incluster_config; now() runs ahead."""

    def __init__(self) -> None:
        self.offset = real_datetime.timedelta(0)
        clock = self

        class _DateTime(real_datetime.datetime):
            @classmethod
            def now(cls, tz=None):  # type: ignore[override]
                return real_datetime.datetime.now(tz) + clock.offset

        self.module = types.SimpleNamespace(datetime=_DateTime, timedelta=real_datetime.timedelta)


@API_CLIENTS
def test_in_cluster_config_authenticates_and_verifies_tls(sim, pod_files, api_client):
    cfg = load_client_configuration(
        environ=pod_environ(sim), token_file=str(pod_files["token"]), ca_file=str(pod_files["ca"])
    )
    assert cfg.host == f"https://127.0.0.1:{sim.port}"
    assert cfg.verify_ssl is True and cfg.ssl_ca_cert == str(pod_files["ca"])

    rest = RESTClient(api_client(cfg), user_agent="incluster-test")
    found = rest.request("GET", DISCOVERY)
    assert "foos" in {r["name"] for r in found["resources"]}
    rest.request("GET", "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos")
    mine = [r for r in sim.request_log if r.user_agent == "incluster-test"]
    assert [r.code for r in mine] == [200, 200]
    assert {r.user for r in mine} == {"kubesim-user"}  # authenticated, not anonymous


@API_CLIENTS
def test_rotated_token_is_read_again_after_a_401(sim, pod_files, api_client):
    """The kubelet rotates the projected token; the first request with the old one gets a 401,
    which marks the cached credential stale (client-go's ``ResetTokenOlderThan``), so the next
    request reads the file again. The periodic re-read (about every minute, without a 401) is
    tested with an injected clock in tests/client/test_auth.py."""
    cfg = load_client_configuration(
        environ=pod_environ(sim), token_file=str(pod_files["token"]), ca_file=str(pod_files["ca"])
    )
    rest = RESTClient(api_client(cfg))
    rest.request("GET", DISCOVERY)

    # The kubelet rotates the token; the API server stops accepting the old one.
    pod_files["token"].write_text("token-two")
    sim.server.token = "token-two"
    with pytest.raises(APIError) as err:
        rest.request("GET", DISCOVERY)  # still the cached token
    assert err.value.code == 401

    rest.request("GET", DISCOVERY)  # the 401 made the transport read the file again
    assert sim.request_log[-1].code == 200 and sim.request_log[-1].user == "kubesim-user"


@API_CLIENTS
def test_a_server_certificate_not_signed_by_the_ca_is_refused(sim, pod_files, tmp_path, api_client):
    other = tmp_path / "other-ca"
    other.mkdir()
    cert, _key = generate_certificate(str(other), "127.0.0.1")  # a different self-signed CA
    shutil.copy(cert, pod_files["ca"])
    cfg = load_client_configuration(
        environ=pod_environ(sim), token_file=str(pod_files["token"]), ca_file=str(pod_files["ca"])
    )
    before = len(sim.request_log)
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        RESTClient(api_client(cfg)).request("GET", DISCOVERY, timeout=5)
    assert len(sim.request_log) == before  # the token never reached the server


def test_incomplete_pod_environment_falls_back_to_kubeconfig(sim, tmp_path, monkeypatch):
    # KUBERNETES_SERVICE_HOST without a token file: not a usable pod environment; the loader
    # says so and falls back to the kubeconfig rules, which here find nothing either.
    missing = str(tmp_path / "missing-kubeconfig")
    monkeypatch.setenv("KUBECONFIG", missing)
    with pytest.raises(ConfigError, match="missing-kubeconfig"):
        load_client_configuration(
            environ=pod_environ(sim),
            token_file=str(tmp_path / "no-token"),
            ca_file=str(tmp_path / "no-ca"),
        )
