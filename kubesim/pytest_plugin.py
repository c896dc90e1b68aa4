"""kubesim's pytest plugin: a running API server, and its kubeconfig, as fixtures.

No upstream twin in Kubernetes itself. The closest are controller-runtime's envtest
(``envtest.Environment``: start etcd and kube-apiserver, hand back a ``rest.Config``) and
pytest-kind / pytest-kubernetes, which start a cluster per session; this starts kubesim
in-process, in milliseconds, per test or per module.

Installed with kubesim, pytest loads it through the ``pytest11`` entry point; with
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` set, one line of conftest loads it instead::

    pytest_plugins = ["kubesim.pytest_plugin"]

Fixtures:

- ``sim``: a started ``KubeSim`` of the test's own, stopped after it;
- ``shared_sim``: one ``KubeSim`` for all the tests of a module (they must keep out of each
  other's way: a namespace each, or read-only requests);
- ``kubesim_kubeconfig``: the path of an admin kubeconfig for ``sim`` (what a client, kubectl
  or ``KUBECONFIG`` needs);
- ``kubesim_factory``: ``start(**options)`` starts further servers with exactly these options
  (the defaults below are not added), all stopped after the test;
- ``kubesim_defaults``: the options every ``sim`` and ``shared_sim`` starts with, before the
  marker's. Empty here; a project overrides this fixture in its conftest to set its own
  defaults in one place (say, its CRDs installed).

Options are ``KubeSim``'s keyword arguments (kubesim/sim.py documents each), given by the
``kubesim`` marker on a test, class or module; the closest marker wins, whole (a test's marker
replaces its module's, it does not add to it)::

    pytestmark = pytest.mark.kubesim(crds=["crds/foo.yaml"], deployment_controller="no-nodes")

    @pytest.mark.kubesim(server_version="1.24", tls=True, authorization_mode="RBAC")
    def test_old_server(sim, kubesim_kubeconfig): ...

Deliberate differences from envtest: no binaries to download and no etcd, but also not the
real server (kubesim/README.md lists its limits); and the server is per test by default, since
starting one costs milliseconds, not seconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubesim.sim import KubeSim

MARKER = "kubesim"


def pytest_configure(config: pytest.Config) -> None:
    # Declared so that --strict-markers accepts it, and `pytest --markers` explains it.
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): KubeSim keyword arguments for the sim and shared_sim fixtures, "
        "over the kubesim_defaults fixture's (see kubesim/pytest_plugin.py)",
    )


def marker_options(node: pytest.Item | pytest.Collector, defaults: dict[str, Any]) -> dict:
    """The KubeSim options for ``node``: ``defaults``, overridden by its closest marker.

    A marker takes keywords only: KubeSim's host and port are keywords too, and a positional
    argument would otherwise be dropped without a word.
    """
    marker = node.get_closest_marker(MARKER)
    if marker is None:
        return dict(defaults)
    if marker.args:
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.{MARKER} takes KubeSim's keyword arguments only "
            f"(got positional {marker.args!r})"
        )
    return {**defaults, **marker.kwargs}


@pytest.fixture(scope="session")
def kubesim_defaults() -> dict[str, Any]:
    """The options every ``sim`` and ``shared_sim`` starts with; override it in a conftest."""
    return {}


@pytest.fixture
def kubesim_factory() -> Iterator[Callable[..., KubeSim]]:
    """Start kubesims with ``KubeSim(**options)`` (no defaults added); all stop after the test."""
    # imported here, not with the plugin, which pytest loads in sessions that use no kubesim
    from kubesim.sim import KubeSim

    with contextlib.ExitStack() as stack:

        def start(**options: Any) -> KubeSim:
            return stack.enter_context(KubeSim(**options))

        yield start


@pytest.fixture
def sim(
    request: pytest.FixtureRequest,
    kubesim_factory: Callable[..., KubeSim],
    kubesim_defaults: dict[str, Any],
) -> KubeSim:
    """A kubesim of the test's own, with the defaults and its ``kubesim`` marker's options."""
    return kubesim_factory(**marker_options(request.node, kubesim_defaults))


@pytest.fixture(scope="module")
def shared_sim(
    request: pytest.FixtureRequest, kubesim_defaults: dict[str, Any]
) -> Iterator[KubeSim]:
    """One kubesim for all tests of a module, with the options of the module's marker."""
    from kubesim.sim import KubeSim

    with KubeSim(**marker_options(request.node, kubesim_defaults)) as s:
        yield s


@pytest.fixture
def kubesim_kubeconfig(sim: KubeSim, tmp_path: Path) -> str:
    """The path of an admin kubeconfig for ``sim`` (context "kubesim", namespace default)."""
    return sim.write_kubeconfig(tmp_path / "kubesim.kubeconfig")
