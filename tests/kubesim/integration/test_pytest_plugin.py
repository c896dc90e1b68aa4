"""kubesim's pytest plugin (kubesim/pytest_plugin.py), as another project would use it.

Each test runs pytest in a subprocess, in a directory of its own (its own rootdir, none of this
repository's conftests), with a test file that asserts what the fixtures give. The plugin comes
from the installed kubesim distribution: through its entry point, or through one conftest line
when plugin autoloading is off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import CRD

# The other project's tests: the fixtures' options reach the server, the kubeconfig reaches it.
USER_TESTS = """
import json
import urllib.request

import pytest
import yaml

pytestmark = pytest.mark.kubesim(server_version="1.24")


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=10) as answer:
        return json.load(answer)


def test_module_marker_reaches_the_server(sim):
    assert get(sim.url, "/version")["minor"] == "24"


@pytest.mark.kubesim(deployment_controller="no-nodes")
def test_the_closest_marker_replaces_the_module_one(sim):
    assert get(sim.url, "/version")["minor"] != "24"
    assert sim.controllers.deployment_controller == "no-nodes"


def test_kubeconfig_names_the_running_server(sim, kubesim_kubeconfig):
    with open(kubesim_kubeconfig) as f:
        server = yaml.safe_load(f)["clusters"][0]["cluster"]["server"]
    assert server == sim.url
    assert get(server, "/api/v1/namespaces/default")["metadata"]["name"] == "default"


def test_factory_starts_servers_with_exactly_its_options(kubesim_factory):
    a, b = kubesim_factory(), kubesim_factory(server_version="1.24")
    assert a.url != b.url
    assert get(b.url, "/version")["minor"] == "24"


SEEN = []


def test_shared_sim_is_one_server_per_module(shared_sim):
    SEEN.append(shared_sim)
    assert get(shared_sim.url, "/version")["minor"] == "24"


def test_shared_sim_again(shared_sim):
    assert SEEN == [shared_sim]
"""


def run_pytest(
    directory: Path, *args: str, autoload: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def project(tmp_path: Path, conftest: str = "") -> Path:
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    if conftest:
        (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    return tmp_path


def test_loading_the_plugin_imports_none_of_the_server():
    # pytest loads it in every session of a project with kubesim installed, used or not
    probe = (
        "import json, sys, kubesim.pytest_plugin; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'kubesim')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert json.loads(loaded) == ["kubesim", "kubesim.pytest_plugin"]


def test_the_entry_point_gives_the_fixtures_without_a_conftest(tmp_path):
    result = run_pytest(project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


def test_without_autoload_one_conftest_line_loads_it(tmp_path):
    result = run_pytest(
        project(tmp_path, 'pytest_plugins = ["kubesim.pytest_plugin"]\n'), autoload=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


def test_without_autoload_or_the_line_there_is_no_fixture(tmp_path):
    result = run_pytest(project(tmp_path), autoload=False)
    assert result.returncode != 0
    assert "fixture 'sim' not found" in result.stdout


def test_the_entry_point_and_the_conftest_line_register_it_once(tmp_path):
    result = run_pytest(project(tmp_path, 'pytest_plugins = ["kubesim.pytest_plugin"]\n'))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


def test_a_conftest_sets_the_defaults_and_a_marker_overrides_them(tmp_path):
    conftest = f"""
        import pytest

        @pytest.fixture(scope="session")
        def kubesim_defaults():
            return {{"crds": [{str(CRD)!r}]}}
    """
    (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    (tmp_path / "test_defaults.py").write_text(
        textwrap.dedent(
            """
            import pytest

            FOOS = ("samplecontroller.k8s.io", "v1alpha1", "foos")

            def test_the_defaults_install_the_crd(sim, shared_sim):
                assert sim.registry.lookup(*FOOS) is not None
                assert shared_sim.registry.lookup(*FOOS) is not None

            @pytest.mark.kubesim(crds=[])
            def test_a_marker_overrides_a_default(sim):
                assert sim.registry.lookup(*FOOS) is None

            def test_the_factory_adds_no_defaults(kubesim_factory):
                assert kubesim_factory().registry.lookup(*FOOS) is None
            """
        )
    )
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


@pytest.mark.parametrize(
    "marker, error",
    [
        # a positional option would be lost without a word: refused
        ('"127.0.0.1"', "takes KubeSim's keyword arguments only"),
        # KubeSim's own refusal of an option it does not have, at the test
        ("no_such_option=1", "unexpected keyword argument 'no_such_option'"),
    ],
)
def test_a_bad_marker_fails_the_test_with_the_reason(tmp_path, marker, error):
    (tmp_path / "test_bad.py").write_text(
        f"import pytest\n\n@pytest.mark.kubesim({marker})\ndef test_it(sim):\n    pass\n"
    )
    result = run_pytest(tmp_path)
    assert result.returncode != 0
    assert error in result.stdout
