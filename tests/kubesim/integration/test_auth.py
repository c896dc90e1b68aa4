"""kubesim TLS and bearer-token auth: the client's certificate and token paths are exercised."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client, config

pytestmark = pytest.mark.kubesim(crds=[], tls=True, token="s3cret")


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


def test_official_client_over_tls_with_token(shared_sim):
    assert shared_sim.url.startswith("https://")
    names = [
        n.metadata.name for n in client.CoreV1Api(shared_sim.api_client).list_namespace().items
    ]
    assert "default" in names


def test_kubeconfig_round_trip(shared_sim, tmp_path):
    path = shared_sim.write_kubeconfig(tmp_path / "kc")
    api = config.new_client_from_config(config_file=path)
    assert client.VersionApi(api).get_code().git_version.startswith("v1.")


def test_anonymous_gets_version_and_healthz_but_403_on_resources(shared_sim):
    assert get(shared_sim, "/version", None)[0] == 200
    assert get(shared_sim, "/healthz", None) == (200, b"ok")
    code, body = get(shared_sim, "/api/v1/namespaces/default/events", None)
    st = json.loads(body)
    assert code == 403 and st["reason"] == "Forbidden"
    assert 'User "system:anonymous" cannot list resource "events"' in st["message"]
    assert get(shared_sim, "/api", None)[0] == 403


def test_bad_token_is_401_everywhere(shared_sim):
    for path in ("/healthz", "/version", "/api/v1/namespaces"):
        code, body = get(shared_sim, path, "wrong")
        assert code == 401 and json.loads(body)["reason"] == "Unauthorized"


def test_untrusted_certificate_is_rejected(shared_sim):
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(
            shared_sim.url + "/version", context=ssl.create_default_context(), timeout=5
        )
