"""client/official.py: the official client's loaders without the rest of the official client.

Each case that is about what gets imported runs in a fresh interpreter (``run_fresh``): in the
suite's own process some other test has long imported the whole official client.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.client.test_auth import write_exec_kubeconfig
from tests.helpers import ROOT

# What the controller's start-up must not load: the official client's models and their
# validation (pydantic), its async client (aiohttp), the ApiClient that needs them, and what
# only the OIDC refresh and the unused parts of the package need.
HEAVY = (
    "pydantic",
    "aiohttp",
    "kubernetes.client.models",
    "kubernetes.client.api_client",
    "kubernetes.dynamic",
    "kubernetes.stream",
    "websocket",
    "requests",
    "oauthlib.oauth2",
)

PRINT_HEAVY = f"import sys; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"


def run_fresh(code: str, env: dict[str, str] | None = None) -> list[str]:
    """Run ``code`` in a new interpreter from the repository root; its stdout lines."""
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + textwrap.dedent(code)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def write_kubeconfig(path: Path, user: dict, server: str = "http://127.0.0.1:1") -> str:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
            }
        )
    )
    return str(path)


# -- what is imported ---------------------------------------------------------------------------


def test_the_plain_import_loads_the_heavy_modules():
    """The baseline the light import is measured against: without this, the next test could
    pass only because a future official client stopped importing them anyway."""
    [heavy] = run_fresh("import kubernetes.config\n" + PRINT_HEAVY)
    assert {"pydantic", "kubernetes.client.api_client", "requests"} <= set(json.loads(heavy))


# What ``python -m controller`` keeps out besides: standard modules that urllib3 and the
# official client import for names they never or rarely use (client/official.py), prometheus_client
# while no /metrics is served (runtime.manager.Metrics), and http.server until an endpoint is.
UNUSED_AT_START = (
    "prometheus_client",
    "http.server",
)


def test_the_controllers_start_up_path_imports_none_of_the_heavy_modules(tmp_path):
    """``python -m controller`` as a user runs it (``main``: the flags, the client, the first
    request, which fails here at once), then the manager it would build."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"token": "t"})
    [code, heavy, unused, official, registry] = run_fresh(
        f"""
        from controller.__main__ import main
        print(main(["--kubeconfig", {kubeconfig!r}]))
        {PRINT_HEAVY}
        print(json.dumps([m for m in {UNUSED_AT_START!r} if m in sys.modules]))
        print(json.dumps([m for m in sys.modules if m.split(".")[0] in ("kubernetes", "urllib3")]))
        from runtime.flags import parse_options
        from runtime.manager import Manager, connect
        options = parse_options(["--kubeconfig", {kubeconfig!r}])
        print(Manager(options, connect(options)[0]).registry)
        """
    )
    # (the kubeconfig's server, 127.0.0.1:1, refuses: "cannot start", exit 1)
    assert code == "1"
    assert json.loads(heavy) == []
    assert json.loads(unused) == []
    # a kubeconfig without plugins: neither the official client nor urllib3 (client/pool.py)
    assert json.loads(official) == []
    assert registry == "None"


def test_the_standard_modules_each_saving_under_1_mb_are_imported_plainly():
    """importlib.metadata, multiprocessing and subprocess are the real modules in their
    importers' globals: a stand-in for each saved under 1 MB (``bench.import_bench
    --stand-ins``), and issue 32 keeps a private internal only for 1 MB or 5% of CPU."""
    [real] = run_fresh(
        """
        from client.official import import_loaders
        import_loaders()
        import importlib.metadata, multiprocessing, subprocess
        import kubernetes.client.configuration as configuration
        import kubernetes.config.exec_provider as exec_provider
        import urllib3.http2
        print(json.dumps([urllib3.http2.version is importlib.metadata.version,
                          configuration.multiprocessing is multiprocessing,
                          exec_provider.subprocess is subprocess]))
        """
    )
    assert json.loads(real) == [True, True, True]


def test_metrics_served_are_collected_into_the_global_registry(tmp_path):
    """With --metrics-bind-address the manager's registry is prometheus_client's global one."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"token": "t"})
    [same] = run_fresh(
        f"""
        from prometheus_client import REGISTRY
        from runtime.flags import parse_options
        from runtime.manager import Manager, connect
        options = parse_options(["--kubeconfig", {kubeconfig!r},
                                 "--metrics-bind-address", "127.0.0.1:0"])
        print(Manager(options, connect(options)[0]).registry is REGISTRY)
        """
    )
    assert same == "True"


def test_an_exec_plugin_and_in_cluster_config_load_without_the_heavy_modules(tmp_path):
    kubeconfig, _counter = write_exec_kubeconfig(tmp_path, expires="")
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token\n")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    [exec_auth, in_cluster_auth, heavy] = run_fresh(
        f"""
        from client.auth import token_source_for
        from client.config import load_client_configuration

        def authorization(cfg):
            return token_source_for(cfg).token()

        print(authorization(load_client_configuration({kubeconfig!r})))
        cfg = load_client_configuration(environ={env!r}, token_file={str(token)!r},
                                        ca_file={str(ca)!r})
        print(authorization(cfg), cfg.host, cfg.ssl_ca_cert == {str(ca)!r})
        {PRINT_HEAVY}
        """
    )
    assert exec_auth == "Bearer token-1"
    assert in_cluster_auth == "Bearer sa-token https://10.96.0.1:443 True"
    assert json.loads(heavy) == []


# -- the deferred names work when used ------------------------------------------------------------


def _jwt(claims: dict) -> str:
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}.c2ln"


class _IdP(BaseHTTPRequestHandler):
    """An OIDC issuer: discovery, and a token endpoint that trades refresh-1 for a new id token."""

    fresh_id_token = _jwt({"exp": 4_000_000_000, "sub": "refreshed"})
    refreshed: list[str] = []  # the refresh tokens it was sent

    # http.server's naming (do_GET, do_POST).
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        self._send({"token_endpoint": f"http://127.0.0.1:{port}/token"})

    def do_POST(self) -> None:
        form = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.refreshed.append(form)
        self._send(
            {
                "access_token": "a",
                "token_type": "Bearer",
                "id_token": self.fresh_id_token,
                "refresh_token": "refresh-2",
            }
        )

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def idp() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _IdP)
    thread = threading.Thread(target=server.serve_forever, name="idp", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_oidc_refresh_runs_through_the_deferred_names(tmp_path, idp):
    """An expired OIDC id token makes kube_config discover the issuer (its ``ApiClient``) and
    refresh (``OAuth2Session``, ``oauthlib``): the three names the light import defers. They
    are imported then, and the refreshed token is the one sent."""
    _IdP.refreshed.clear()
    provider = {
        "name": "oidc",
        "config": {
            "client-id": "cid",
            "client-secret": "secret",
            "id-token": _jwt({"exp": 1_000, "sub": "expired"}),
            "refresh-token": "refresh-1",
            "idp-issuer-url": idp,
        },
    }
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"auth-provider": provider})
    [before, auth, after] = run_fresh(
        f"""
        from client.config import load_rest_config
        {PRINT_HEAVY}
        cfg = load_rest_config({kubeconfig!r})
        print(cfg.token_source.token())
        {PRINT_HEAVY}
        """,
        # oauthlib refuses plain-HTTP token endpoints unless told
        env={"OAUTHLIB_INSECURE_TRANSPORT": "1"},
    )
    assert json.loads(before) == []
    assert auth == f"Bearer {_IdP.fresh_id_token}"
    assert len(_IdP.refreshed) == 1 and "refresh_token=refresh-1" in _IdP.refreshed[0]
    assert {"kubernetes.client.api_client", "requests", "oauthlib.oauth2"} <= set(json.loads(after))


def test_the_package_runs_its_own_init_for_anyone_who_reads_it():
    """Code that imports the official client after the controller's modules sees all of it."""
    [out] = run_fresh(
        """
        import client.config
        import kubernetes
        from kubernetes import client as k8s
        from kubernetes.config import kube_config
        print(kubernetes.__version__ == k8s.__version__, kubernetes.watch.Watch.__name__,
              k8s.CoreV1Api.__name__, kube_config.new_client_from_config.__name__)
        """
    )
    assert out == "True Watch CoreV1Api new_client_from_config"


def test_an_official_client_imported_first_is_used_as_it_is():
    [out] = run_fresh(
        """
        import kubernetes.config
        import client.config
        from kubernetes.client.api_client import ApiClient
        from kubernetes.config import kube_config
        print(kube_config.ApiClient is ApiClient, type(kubernetes).__name__)
        """
    )
    assert out == "True module"


def test_a_failed_light_import_falls_back_to_the_plain_one():
    [out] = run_fresh(
        """
        import client.official as official

        def broken(name):
            raise ImportError("kubernetes moved")

        official._register_lazy_package = broken
        official.import_loaders()
        from kubernetes.client.api_client import ApiClient
        from kubernetes.config import kube_config
        print(kube_config.ApiClient is ApiClient)
        """
    )
    assert out == "True"


# -- the pin --------------------------------------------------------------------------------------


def test_what_the_kubernetes_pin_stands_for(tmp_path):
    """pyproject.toml pins ``kubernetes>=37,<38``. No 38 exists yet (PyPI's newest is 37.0.2,
    checked for issue 32); these are the official client's internals this project reads, and
    this test fails on the first release that moves one, so that the pin is raised only with
    the code that follows it (client/official.py's light import, client/auth.py's token sources):

    - kube_config binds ``ApiClient``, ``OAuth2Session`` and ``oauthlib`` at import, which the
      light import replaces by stand-ins while it imports them;
    - the loaders keep their state in ``_user``, ``_cluster``, ``_get_base_path`` (kubeconfig)
      and ``_token_filename`` (in-cluster), from which the cached credentials are built;
    - the refresh hook that ``load_kube_config`` installs holds its loader in its closure.
    """
    import importlib.metadata

    from kubernetes.config import kube_config
    from kubernetes.config.incluster_config import InClusterConfigLoader

    from client.auth import _loader_of

    assert importlib.metadata.version("kubernetes").split(".")[0] == "37"
    assert {"ApiClient", "OAuth2Session", "oauthlib"} <= set(vars(kube_config))
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"tokenFile": "token"})
    loader = kube_config.KubeConfigLoader(
        config_dict=yaml.safe_load(Path(kubeconfig).read_text()), config_base_path=str(tmp_path)
    )
    assert "tokenFile" in loader._user and loader._cluster is not None
    assert loader._get_base_path(loader._user.path) == str(tmp_path)
    token = tmp_path / "token"
    token.write_text("t\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    assert InClusterConfigLoader(str(token), "", environ=env)._token_filename == str(token)
    configuration = client.Configuration()
    kube_config.load_kube_config(kubeconfig, client_configuration=configuration)
    assert _loader_of(configuration.refresh_api_key_hook) is not None
