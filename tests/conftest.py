"""Fixtures every suite shares: kubesim, the in-process API server tests talk to.

``sim`` is a fresh kubesim for one test, with the Foo CRD (``crds/foo-crd.yaml``) installed.
A module or test that needs another server says so with the ``kubesim`` marker, whose keywords
are ``KubeSim``'s own and override the defaults (``crds=[]`` for a server without the CRD)::

    pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05)  # Deployments become ready

    @pytest.mark.kubesim(crds=[FOO_CRD], bookmark_interval=0.1)
    def test_bookmarks(sim): ...

The closest marker wins: a test's marker replaces its module's, it does not add to it.

``shared_sim`` is the same server built once per module, for modules whose tests keep out of
each other's way (a namespace each, or read-only requests). ``kubesim_factory`` starts further
servers with explicit options, for a test that needs more than one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubesim import KubeSim
from tests.helpers import CRD

DEFAULT_KUBESIM_OPTIONS: dict[str, Any] = {"crds": [CRD]}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kubesim(**options): KubeSim keyword arguments for the sim and shared_sim fixtures "
        "(default: crds=[crds/foo-crd.yaml])",
    )


def kubesim_options(node: pytest.Item | pytest.Collector) -> dict[str, Any]:
    """The KubeSim options for ``node``: its closest ``kubesim`` marker, else the defaults."""
    marker = node.get_closest_marker("kubesim")
    return {**DEFAULT_KUBESIM_OPTIONS, **(marker.kwargs if marker else {})}


@pytest.fixture
def kubesim_factory() -> Iterator[Callable[..., KubeSim]]:
    """Start kubesims with ``KubeSim(**options)`` (no defaults added); all stop after the test."""
    with contextlib.ExitStack() as stack:

        def start(**options: Any) -> KubeSim:
            return stack.enter_context(KubeSim(**options))

        yield start


@pytest.fixture
def sim(request: pytest.FixtureRequest, kubesim_factory: Callable[..., KubeSim]) -> KubeSim:
    """A kubesim of the test's own, with the options of its ``kubesim`` marker."""
    return kubesim_factory(**kubesim_options(request.node))


@pytest.fixture(scope="module")
def shared_sim(request: pytest.FixtureRequest) -> Iterator[KubeSim]:
    """One kubesim for all tests of a module, with the options of the module's marker."""
    with KubeSim(**kubesim_options(request.node)) as s:
        yield s
