"""Fixtures of the e2e suite: which API server, whose credentials, a namespace per test.

The target is chosen from the environment (see tests/e2e/cluster.py for what each offers):

- ``E2E_KUBECONFIG=path``: an existing cluster, reached with that admin kubeconfig;
- ``KUBEBUILDER_ASSETS=dir``: etcd + kube-apiserver started here (tests/e2e/envtest.py);
- otherwise kubesim, in-process, unless ``E2E_KUBESIM=0``: this is how the default suite
  proves the e2e code itself works before anyone points it at a real cluster;
- ``E2E_KUBESIM=0`` and neither of the others (what ``make e2e`` does on a machine without a
  cluster): every e2e test is skipped with one line saying how to run them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.cluster import Cluster, load_manifests
from tests.e2e.controllers import InProcessController

HERE = Path(__file__).resolve().parent

SKIP_REASON = (
    "e2e: no API server: set E2E_KUBECONFIG=<admin kubeconfig> or "
    "KUBEBUILDER_ASSETS=<envtest binaries> (E2E_KUBESIM=1 runs the suite on kubesim)"
)


def e2e_target() -> str | None:
    if os.environ.get("E2E_KUBECONFIG"):
        return "kubeconfig"
    if os.environ.get("KUBEBUILDER_ASSETS"):
        return "envtest"
    if os.environ.get("E2E_KUBESIM", "1") != "0":
        return "kubesim"
    return None


TARGET = e2e_target()


def _in_e2e(item: pytest.Item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if TARGET is not None:
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if _in_e2e(item):
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str | None:
    if TARGET == "kubesim":
        return (
            "e2e target: kubesim (the controller runs with the admin's token: kubesim has "
            "no ServiceAccounts, TokenRequest or RBAC; RBAC scenarios skip)"
        )
    if TARGET is not None:
        return (
            f"e2e target: {TARGET}; the controller runs with the sample-controller "
            "ServiceAccount's minted token"
        )
    return None


# -- the API server -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("e2e")
    if TARGET == "kubesim":
        from kubesim import KubeSim

        # TLS and a bearer token, so the kubeconfig is used exactly as a cluster's would be
        with KubeSim(
            tls=True, token=f"admin-{uuid.uuid4().hex}", deployment_status_delay=0.05
        ) as sim:
            kubeconfig = sim.write_kubeconfig(workdir / "admin.kubeconfig")
            yield from _serve(
                Cluster(
                    "kubesim",
                    kubeconfig,
                    workdir,
                    has_garbage_collector=True,
                    has_deployment_controller=True,
                    has_rbac=False,
                )
            )
    elif TARGET == "envtest":
        from tests.e2e.envtest import EnvTest

        keep_logs = os.environ.get("E2E_ENVTEST_LOGS")  # a directory to keep etcd/apiserver logs
        env = EnvTest(os.environ["KUBEBUILDER_ASSETS"], log_dir=keep_logs or None)
        kubeconfig = env.start()
        try:
            yield from _serve(
                Cluster(
                    "envtest",
                    kubeconfig,
                    workdir,
                    has_garbage_collector=False,
                    has_deployment_controller=False,
                    has_rbac=True,
                )
            )
        finally:
            env.stop()
    elif TARGET == "kubeconfig":
        yield from _serve(
            Cluster(
                "kubeconfig",
                os.environ["E2E_KUBECONFIG"],
                workdir,
                has_garbage_collector=True,
                has_deployment_controller=True,
                has_rbac=True,
            )
        )
    else:  # unreachable: every test is skipped at collection
        pytest.skip(SKIP_REASON)


def _serve(c: Cluster) -> Iterator[Cluster]:
    c.install_crd()
    try:
        yield c
    finally:
        c.cleanup()


@dataclass
class ControllerCredentials:
    """What the controller under test connects with."""

    kubeconfig: str  # path; on a real API server it holds the ServiceAccount's token
    identity: str  # who that is, for messages
    lease_namespace: str  # where the leader-election Role lets it hold its Lease
    service_account: str  # "<namespace>/<name>" from manifests/service-account.yaml


@pytest.fixture(scope="session")
def credentials(cluster: Cluster) -> ControllerCredentials:
    sa = next(d for d in load_manifests("service-account.yaml") if d["kind"] == "ServiceAccount")
    sa_ns, sa_name = sa["metadata"]["namespace"], sa["metadata"]["name"]
    if cluster.has_rbac:
        cluster.install_rbac()
        token = cluster.mint_token(sa_ns, sa_name)
        identity = f"system:serviceaccount:{sa_ns}:{sa_name}"
    else:
        # kubesim: no ServiceAccounts, no TokenRequest, no RBAC. The controller gets the admin's
        # token, still through a kubeconfig written the way the minted one would be.
        for doc in load_manifests("namespace.yaml"):
            cluster.apply(doc)
        token = cluster.admin_token()
        identity = "admin (kubesim fallback: no TokenRequest, RBAC not enforced)"
    kubeconfig = cluster.kubeconfig_with_token(token, "sample-controller")
    return ControllerCredentials(kubeconfig, identity, sa_ns, f"{sa_ns}/{sa_name}")


# -- per test --------------------------------------------------------------------------------------


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test, deleted afterwards (with what is left in it)."""
    name = cluster.create_namespace(
        "e2e-" + request.node.originalname.removeprefix("test_").replace("_", "-")
    )
    yield name
    cluster.delete_namespace(name)


@pytest.fixture
def start_controller(
    credentials: ControllerCredentials,
) -> Iterator[Callable[..., InProcessController]]:
    """Start in-process controllers with the controller's credentials; stopped at teardown."""
    started: list[InProcessController] = []

    def start(*flags: str, name: str = "controller") -> InProcessController:
        c = InProcessController(credentials.kubeconfig, *flags, name=name)
        started.append(c)
        return c.start()

    yield start
    for c in started:
        if c.thread.is_alive():
            c.shutdown()
