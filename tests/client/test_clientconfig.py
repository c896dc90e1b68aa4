"""client/clientconfig.py and client.config.load_rest_config: a rest.Config from a kubeconfig
or a pod's environment, without the official loader unless a plugin needs it."""

from __future__ import annotations

import base64
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from client.clientconfig import in_cluster_config
from client.config import ConfigError, load_rest_config
from client.errors import TransportError
from client.rest import RESTClient
from kubesim import KubeSim
from kubesim.server.tls import generate_certificate

NAMESPACES = "/api/v1/namespaces"


@pytest.fixture(scope="module")
def tls_sim():
    with KubeSim(tls=True, token="s3cret") as sim:
        yield sim


def _kubeconfig(path: Path, cluster: dict, user: dict) -> str:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return str(path)


def _ca_data(sim: KubeSim) -> str:
    with open(str(sim.ca_file), "rb") as f:
        return base64.b64encode(f.read()).decode()


def test_a_token_and_inline_ca_reach_a_tls_server_verified(tls_sim, tmp_path):
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": tls_sim.url, "certificate-authority-data": _ca_data(tls_sim)},
        {"token": "s3cret"},
    )
    config = load_rest_config(path)
    assert config.host == tls_sim.url and not config.tls.insecure
    rest = RESTClient(config, user_agent="clientconfig-test")
    assert rest.request("GET", NAMESPACES)["kind"] == "NamespaceList"
    assert tls_sim.request_log[-1].user != "system:anonymous"


def test_a_relative_token_file_and_ca_are_read_beside_the_kubeconfig(tls_sim, tmp_path):
    (tmp_path / "token").write_text("s3cret\n")
    (tmp_path / "ca.crt").write_bytes(base64.b64decode(_ca_data(tls_sim)))
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": tls_sim.url, "certificate-authority": "ca.crt"},
        {"tokenFile": "token"},
    )
    rest = RESTClient(load_rest_config(path))
    assert rest.request("GET", NAMESPACES)["kind"] == "NamespaceList"


def test_a_server_certificate_the_ca_did_not_sign_is_refused(tls_sim, tmp_path):
    other, _key = generate_certificate(str(tmp_path), "127.0.0.1")
    with open(other, "rb") as f:
        other_ca = base64.b64encode(f.read()).decode()
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": tls_sim.url, "certificate-authority-data": other_ca},
        {"token": "s3cret"},
    )
    before = len(tls_sim.request_log)
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        RESTClient(load_rest_config(path)).request("GET", NAMESPACES, timeout=5)
    assert len(tls_sim.request_log) == before  # the token never reached the server


def test_insecure_skip_tls_verify_and_basic_auth_are_read(tmp_path):
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True},
        {"username": "admin", "password": "pw"},
    )
    config = load_rest_config(path)
    assert config.tls.insecure
    assert config.token_source.token() == "Basic " + base64.b64encode(b"admin:pw").decode()


def test_master_replaces_the_server_and_tls_server_name_is_kept(tmp_path):
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": "https://10.0.0.1:6443", "tls-server-name": "kubernetes.default"},
        {},
    )
    config = load_rest_config(path, master="https://127.0.0.1:7443/")
    assert config.host == "https://127.0.0.1:7443"
    assert config.tls.server_name == "kubernetes.default"
    assert config.token_source.token() is None


def test_data_that_is_not_base64_is_one_line_naming_the_file(tmp_path):
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": "https://127.0.0.1:6443", "certificate-authority-data": "%%%"},
        {},
    )
    with pytest.raises(ConfigError, match=f"kubeconfig {path}: certificate-authority-data is not"):
        load_rest_config(path)


def test_a_missing_client_certificate_file_is_one_line(tmp_path):
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": "https://127.0.0.1:6443"},
        {"client-certificate": "absent.crt", "client-key": "absent.key"},
    )
    with pytest.raises(ConfigError, match=f"^cannot load kubeconfig {path}: "):
        load_rest_config(path)


def test_an_exec_plugin_goes_to_the_official_loader(tmp_path):
    """A user with an exec plugin is loaded by the official client: its credential comes from
    the plugin, and the process imports the official loader only then."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        textwrap.dedent("""\
            import json
            print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1",
                              "kind": "ExecCredential", "status": {"token": "from-exec"}}))
        """)
    )
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": "http://127.0.0.1:6443"},
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(plugin)],
                "interactiveMode": "Never",
            }
        },
    )
    config = load_rest_config(path)
    assert config.token_source.token() == "Bearer from-exec"


def test_a_kubeconfig_without_plugins_never_imports_the_official_client_or_urllib3(tmp_path):
    path = _kubeconfig(tmp_path / "kc", {"server": "https://127.0.0.1:6443"}, {"token": "t"})
    code = textwrap.dedent(f"""\
        import sys
        from client.config import load_rest_config
        from client.rest import RESTClient
        RESTClient(load_rest_config({path!r}))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "urllib3")))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_in_cluster_reads_the_environment_token_file_and_ca(tmp_path):
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("token-1\n")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    config = in_cluster_config(env, str(token), str(ca))
    assert config.host == "https://[fd00::1]:443"  # net.JoinHostPort
    assert config.tls.ca_file == str(ca) and not config.tls.insecure
    assert config.token_source.token() == "Bearer token-1"


def test_an_incomplete_pod_environment_falls_back_to_the_kubeconfig_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="missing"):
        load_rest_config(
            environ=env, token_file=str(tmp_path / "no-token"), ca_file=str(tmp_path / "no-ca")
        )


def test_the_pool_checked_at_load_is_the_one_the_client_uses(tls_sim, tmp_path):
    """load_rest_config builds the pool to report a certificate that does not load; the
    client made from the config then uses that pool, its TLS context made once."""
    path = _kubeconfig(
        tmp_path / "kc",
        {"server": tls_sim.url, "certificate-authority-data": _ca_data(tls_sim)},
        {"token": "s3cret"},
    )
    config = load_rest_config(path)
    checked = config.pool()
    rest = RESTClient(config)
    assert rest._transport.pool is checked
    rest.request("GET", NAMESPACES)
    assert checked.opened == 1


def test_a_client_certificate_logs_in_as_its_subject_from_files_or_inline(tmp_path):
    """The certificate and key as files (kubesim's kubeconfig), or inline as kind writes its
    admin's (``client-certificate-data``, ``client-key-data``): the server reads the user and
    groups from the certificate, and no token is sent."""
    with KubeSim(admin_client_certificate=True) as sim:
        path = Path(sim.write_kubeconfig(tmp_path / "kc"))
        doc = yaml.safe_load(path.read_text())
        user = doc["users"][0]["user"]
        assert set(user) == {"client-certificate", "client-key"}
        inline = tmp_path / "kc-inline"
        doc["users"][0]["user"] = {
            f"{key}-data": base64.b64encode(Path(user[key]).read_bytes()).decode()
            for key in ("client-certificate", "client-key")
        }
        inline.write_text(yaml.safe_dump(doc))
        for kubeconfig in (path, inline):
            review = RESTClient(load_rest_config(str(kubeconfig))).request(
                "POST",
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            )
            info = review["status"]["userInfo"]
            assert info["username"] == "kubernetes-admin"
            assert info["groups"] == ["kubeadm:cluster-admins", "system:authenticated"]
