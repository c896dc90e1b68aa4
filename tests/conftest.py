"""The project's defaults for kubesim's pytest plugin (kubesim/pytest_plugin.py).

The plugin, which pytest loads from the kubesim distribution's entry point, gives the ``sim``,
``shared_sim``, ``kubesim_factory`` and ``kubesim_kubeconfig`` fixtures and the ``kubesim``
marker. This project's tests mostly talk to the Foo CRD (``crds/foo-crd.yaml``), so every
``sim`` and ``shared_sim`` has it installed, unless a marker says otherwise (``crds=[]`` for a
server without it)::

    pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05)  # Deployments become ready

    @pytest.mark.kubesim(crds=[FOO_CRD], bookmark_interval=0.1)
    def test_bookmarks(sim): ...

The closest marker wins: a test's marker replaces its module's, it does not add to it; the
defaults below stay under both.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import CRD

# Also loaded through its entry point; naming it here keeps the suite working with
# PYTEST_DISABLE_PLUGIN_AUTOLOAD, and the entry point's name is the module's, so pytest does
# not register it twice.
pytest_plugins = ["kubesim.pytest_plugin"]

DEFAULT_KUBESIM_OPTIONS: dict[str, Any] = {"crds": [CRD]}


@pytest.fixture(scope="session")
def kubesim_defaults() -> dict[str, Any]:
    """The options of every ``sim`` and ``shared_sim`` here, under their markers'."""
    return DEFAULT_KUBESIM_OPTIONS
