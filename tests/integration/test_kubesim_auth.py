"""kubesim TLS and bearer-token auth: the client's certificate and token paths are exercised."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client, config

from kubesim import KubeSim


@pytest.fixture(scope="module")
def sim():
    with KubeSim(tls=True, token="s3cret") as s:
        yield s


def get(sim, path: str, token: str | None) -> tuple[int, bytes]:
    ctx = ssl.create_default_context(cafile=sim.ca_file)
    req = urllib.request.Request(sim.url + path)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_official_client_over_tls_with_token(sim):
    assert sim.url.startswith("https://")
    names = [n.metadata.name for n in client.CoreV1Api(sim.api_client).list_namespace().items]
    assert "default" in names


def test_kubeconfig_round_trip(sim, tmp_path):
    path = sim.write_kubeconfig(tmp_path / "kc")
    api = config.new_client_from_config(config_file=path)
    assert client.VersionApi(api).get_code().git_version.startswith("v1.")


def test_anonymous_gets_version_and_healthz_but_403_on_resources(sim):
    assert get(sim, "/version", None)[0] == 200
    assert get(sim, "/healthz", None) == (200, b"ok")
    code, body = get(sim, "/api/v1/namespaces/default/events", None)
    st = json.loads(body)
    assert code == 403 and st["reason"] == "Forbidden"
    assert 'User "system:anonymous" cannot list resource "events"' in st["message"]
    assert get(sim, "/api", None)[0] == 403


def test_bad_token_is_401_everywhere(sim):
    for path in ("/healthz", "/version", "/api/v1/namespaces"):
        code, body = get(sim, path, "wrong")
        assert code == 401 and json.loads(body)["reason"] == "Unauthorized"


def test_untrusted_certificate_is_rejected(sim):
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(
            sim.url + "/version", context=ssl.create_default_context(), timeout=5
        )
