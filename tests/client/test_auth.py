"""client/auth.py: headers built once, credentials refreshed on their schedule and after a 401."""

import json
import logging
import stat
import sys
import textwrap
from datetime import UTC, datetime

import pytest
import yaml
from kubernetes import client

from client.auth import (
    EXEC_LEEWAY,
    TOKEN_FILE_LEEWAY,
    TOKEN_FILE_PERIOD,
    CachedFileTokenSource,
    CredentialError,
    ExecCredentialSource,
    RefreshHookSource,
    RequestHeaders,
    StaticTokenSource,
    token_source_for,
)
from client.config import load_client_configuration
from kubesim import KubeSim


class FakeClock:
    """Wall-clock seconds that move only when the test says so."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return FakeClock(datetime.now(UTC).timestamp())


# -- in-cluster: the ServiceAccount token file, rotated in place by the kubelet ----------------


@pytest.fixture
def in_cluster(tmp_path):
    """A pod's view: service env, token file and CA; returns (token file, ApiClient)."""
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("token-1\n")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = load_client_configuration(environ=env, token_file=str(token), ca_file=str(ca))
    return token, client.ApiClient(cfg)


def test_in_cluster_config_gets_a_cached_file_token_source(in_cluster, clock):
    token, api_client = in_cluster
    source = token_source_for(api_client.configuration, clock=clock)
    assert isinstance(source, CachedFileTokenSource) and source.path == str(token)


def test_a_rotated_token_file_is_picked_up_within_the_period(in_cluster, clock):
    token, api_client = in_cluster
    headers = RequestHeaders.from_api_client(api_client, clock=clock)
    assert headers.get()["Authorization"] == "Bearer token-1"
    token.write_text("token-2\n")  # the kubelet rotates the projected token
    clock.now += TOKEN_FILE_PERIOD - TOKEN_FILE_LEEWAY - 1
    assert headers.get()["Authorization"] == "Bearer token-1"  # not re-read on every request
    clock.now += 2
    assert headers.get()["Authorization"] == "Bearer token-2"


def test_a_401_forces_the_token_file_to_be_read_again(in_cluster, clock):
    token, api_client = in_cluster
    headers = RequestHeaders.from_api_client(api_client, clock=clock)
    sent = headers.get()
    token.write_text("token-2")
    headers.unauthorized(sent)
    assert headers.get()["Authorization"] == "Bearer token-2"  # no time has passed


def test_a_401_for_a_token_already_replaced_does_not_read_again(tmp_path, clock):
    token = tmp_path / "token"
    token.write_text("token-1")
    source = CachedFileTokenSource(str(token), clock=clock)
    headers = RequestHeaders(source, {})
    old = dict(headers.get())
    token.write_text("token-2")
    headers.unauthorized(old)
    fresh = dict(headers.get())
    token.write_text("token-3")
    headers.unauthorized(old)  # a late 401 for a request sent with token-1
    assert headers.get() == fresh == {"Authorization": "Bearer token-2"}


def test_a_failed_reread_keeps_the_previous_token(tmp_path, clock, caplog):
    token = tmp_path / "token"
    token.write_text("token-1")
    source = CachedFileTokenSource(str(token), clock=clock)
    assert source.token() == "Bearer token-1"
    token.unlink()
    clock.now += TOKEN_FILE_PERIOD
    with caplog.at_level(logging.ERROR, "client.auth"):
        assert source.token() == "Bearer token-1"
    assert "unable to rotate credentials" in caplog.text
    token.write_text("token-2")
    assert source.token() == "Bearer token-1"  # retried after a pause, not on every request
    clock.now += 1.5
    assert source.token() == "Bearer token-2"


def test_no_token_at_all_fails_the_request_as_a_transport_error(tmp_path, clock):
    source = CachedFileTokenSource(str(tmp_path / "missing"), clock=clock)
    with pytest.raises(CredentialError) as info:
        RequestHeaders(source, {}).get()
    assert isinstance(info.value, OSError)  # a TransportError: callers back off and retry


# -- exec plugins ---------------------------------------------------------------------------------


def write_exec_kubeconfig(tmp_path, expires: str) -> tuple[str, object]:
    """A kubeconfig whose user is an exec plugin printing token-<n> on its n-th run."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, pathlib
            counter = pathlib.Path(os.environ["COUNTER"])
            runs = int(counter.read_text()) + 1
            counter.write_text(str(runs))
            status = {{"token": f"token-{{runs}}"}}
            if os.environ["EXPIRES"]:
                status["expirationTimestamp"] = os.environ["EXPIRES"]
            print(json.dumps({{
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "kind": "ExecCredential",
                "status": status,
            }}))
            """
        )
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    kubeconfig = tmp_path / "kubeconfig"
    exec_user = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": str(plugin),
        "env": [{"name": "COUNTER", "value": str(counter)}, {"name": "EXPIRES", "value": expires}],
        "interactiveMode": "Never",
    }
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"exec": exec_user}}],
            }
        )
    )
    return str(kubeconfig), counter


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_an_expiring_exec_credential_is_refreshed_before_it_expires(tmp_path, clock):
    expiry = int(clock.now) + 600
    kubeconfig, runs = write_exec_kubeconfig(tmp_path, rfc3339(expiry))
    cfg = load_client_configuration(kubeconfig=kubeconfig)
    assert runs.read_text() == "1"  # the official loader ran the plugin once
    headers = RequestHeaders.from_api_client(client.ApiClient(cfg), clock=clock)
    assert isinstance(headers._source, ExecCredentialSource)
    assert headers.get()["Authorization"] == "Bearer token-1"
    assert runs.read_text() == "1"  # the loader's credential is reused, not fetched again
    clock.now = expiry - EXEC_LEEWAY - 1
    assert headers.get()["Authorization"] == "Bearer token-1"
    clock.now = expiry - EXEC_LEEWAY + 1  # still before expirationTimestamp
    assert headers.get()["Authorization"] == "Bearer token-2"
    assert runs.read_text() == "2"


def test_an_exec_credential_without_expiry_is_kept_until_a_401(tmp_path, clock):
    kubeconfig, runs = write_exec_kubeconfig(tmp_path, "")
    cfg = load_client_configuration(kubeconfig=kubeconfig)
    headers = RequestHeaders.from_api_client(client.ApiClient(cfg), clock=clock)
    sent = headers.get()
    clock.now += 365 * 86400
    assert headers.get() == sent and runs.read_text() == "1"
    headers.unauthorized(sent)
    assert headers.get()["Authorization"] == "Bearer token-2"
    assert runs.read_text() == "2"


def test_a_short_lived_exec_credential_is_not_fetched_on_every_request(clock):
    runs = []

    def plugin():
        runs.append(1)
        return {"token": f"t{len(runs)}", "expirationTimestamp": rfc3339(clock.now + 20)}

    source = ExecCredentialSource(plugin, clock=clock)
    for _ in range(100):
        source.token()
    assert len(runs) == 1  # 20 s of life < the 30 s leeway: renewed at half its life
    clock.now += 11
    assert source.token() == "Bearer t2"


# -- anything else: the configuration's own refresh hook, asked less often ----------------------


def test_an_unknown_refresh_hook_is_asked_every_interval_and_after_a_401(clock):
    calls = []
    cfg = client.Configuration()
    cfg.api_key = {"BearerToken": "Bearer a"}

    def hook(c):
        calls.append(1)
        c.api_key["BearerToken"] = f"Bearer h{len(calls)}"

    cfg.refresh_api_key_hook = hook
    source = token_source_for(cfg, clock=clock)
    assert isinstance(source, RefreshHookSource)
    headers = RequestHeaders(source, {})
    for _ in range(50):
        sent = headers.get()
    assert sent["Authorization"] == "Bearer h1" and len(calls) == 1
    clock.now += 10
    assert headers.get()["Authorization"] == "Bearer h2"
    headers.unauthorized(headers.get())
    assert headers.get()["Authorization"] == "Bearer h3"


def test_a_kubeconfig_token_file_is_reread_unlike_the_official_client(tmp_path, clock):
    token = tmp_path / "tok"
    token.write_text("file-1\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"tokenFile": "tok"}}],  # relative path
            }
        )
    )
    cfg = load_client_configuration(kubeconfig=str(kubeconfig))
    headers = RequestHeaders.from_api_client(client.ApiClient(cfg), clock=clock)
    assert headers.get()["Authorization"] == "Bearer file-1"  # newline stripped
    token.write_text("file-2\n")
    clock.now += TOKEN_FILE_PERIOD
    assert headers.get()["Authorization"] == "Bearer file-2"


# -- the headers themselves ----------------------------------------------------------------------


def test_the_headers_are_what_param_serialize_sends(clock):
    cfg = client.Configuration()
    cfg.host = "http://127.0.0.1:1"
    cfg.api_key = {"authorization": "s3cret"}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    api_client = client.ApiClient(cfg)
    api_client.set_default_header("X-Extra", "1")
    _, _, official, _, _ = api_client.param_serialize(
        "GET", "/api", header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
    )
    headers = RequestHeaders.from_api_client(api_client, clock=clock)
    assert isinstance(headers._source, StaticTokenSource)
    lower = {k.lower(): v for k, v in headers.get().items()}  # HTTP names: any case
    assert lower == {k.lower(): v for k, v in official.items()}
    assert lower["authorization"] == "Bearer s3cret" and lower["x-extra"] == "1"
    ours = RequestHeaders.from_api_client(api_client, user_agent="sample-controller/x")
    assert ours.get()["User-Agent"] == "sample-controller/x"


def test_no_credentials_no_authorization_header():
    cfg = client.Configuration()
    headers = RequestHeaders.from_api_client(client.ApiClient(cfg))
    assert "Authorization" not in headers.get() and headers.get()["Accept"] == "application/json"


def test_the_same_dict_is_reused_until_the_token_changes(tmp_path, clock):
    token = tmp_path / "token"
    token.write_text("a")
    headers = RequestHeaders(CachedFileTokenSource(str(token), clock=clock), {"Accept": "x"})
    first = headers.get()
    assert headers.get() is first
    token.write_text("b")
    clock.now += TOKEN_FILE_PERIOD
    assert headers.get() is not first and headers.get()["Authorization"] == "Bearer b"


def test_against_a_server_a_401_then_the_rotated_token_gets_through(tmp_path, clock):
    """What RESTClient does with it: send get(); on 401, unauthorized(sent); the next request
    carries the rotated token."""
    token = tmp_path / "token"
    token.write_text("old")
    with KubeSim(token="new") as sim:
        api_client = sim.new_api_client()
        source = CachedFileTokenSource(str(token), clock=clock)
        headers = RequestHeaders.from_api_client(api_client, source=source)
        pool = api_client.rest_client.pool_manager
        url = sim.url + "/api/v1/namespaces"
        sent = headers.get()
        token.write_text("new")  # rotated, but not yet due for a re-read
        assert headers.get() is sent
        assert pool.request("GET", url, headers=sent).status == 401
        headers.unauthorized(sent)
        resp = pool.request("GET", url, headers=headers.get())
        assert resp.status == 200 and json.loads(resp.data)["kind"] == "NamespaceList"
