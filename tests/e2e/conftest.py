"""Fixtures of the e2e suite: which API server, whose credentials, a namespace per test.

The target is chosen from the environment (see tests/e2e/cluster.py for what each offers):

- ``E2E_KUBECONFIG=path``: an existing cluster, reached with that admin kubeconfig;
- ``KUBEBUILDER_ASSETS=dir``: etcd + kube-apiserver started here (tests/e2e/envtest.py);
- otherwise kubesim, in-process, unless ``E2E_KUBESIM=0``: this is how the default suite
  proves the e2e code itself works before anyone points it at a real cluster. It runs once per
  kubesim deployment controller mode, each a kind of cluster the suite must handle
  (``E2E_KUBESIM_MODES``, default ``full,no-nodes,none``); scenarios marked ``e2e_once`` (they
  do not depend on the cluster's controllers or nodes) run in the first mode only;
- ``E2E_KUBESIM=0`` and neither of the others (what ``make e2e`` does on a machine without a
  cluster): every e2e test is skipped with one line saying how to run them.

Whatever the target, what it can do is probed once per session (tests/e2e/capabilities.py);
the terminal summary says what was found and which assertions it ruled out (report.py). Every
wait is cut to what is left of pytest-timeout's budget for the test (budget.py), which the
hooks below start and stop with pytest-timeout's own timer.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.budget import BUDGET
from tests.e2e.capabilities import detect
from tests.e2e.cluster import Cluster, load_manifests
from tests.e2e.controllers import InProcessController
from tests.e2e.report import REPORT
from tests.e2e.rollout import available_timeout

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


KUBESIM_MODES = ("full", "no-nodes", "none")  # kubesim's deployment controller modes
KUBESIM_PROBE_TIMEOUT = 2.0  # kubesim answers the probe within its 0.05 s status delay
PROBE_TIMEOUT = 10.0  # a real server's answer comes at once; a bare one costs this, once


def cluster_params() -> list[str]:
    """The clusters this run uses, one session each: the target, or kubesim's modes."""
    if TARGET != "kubesim":
        return [TARGET] if TARGET else []
    modes = [m.strip() for m in os.environ.get("E2E_KUBESIM_MODES", "").split(",") if m.strip()]
    unknown = set(modes) - set(KUBESIM_MODES)
    if unknown:
        raise pytest.UsageError(
            f"E2E_KUBESIM_MODES: unknown {sorted(unknown)}; choose from {list(KUBESIM_MODES)}"
        )
    return [f"kubesim-{m}" for m in modes or KUBESIM_MODES]


def _in_e2e(item: pytest.Item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def per_test_timeout(config: pytest.Config) -> float | None:
    """pytest-timeout's timeout for a test without a marker (--timeout, PYTEST_TIMEOUT, ini)."""
    try:
        from pytest_timeout import get_env_settings
    except ImportError:
        return None
    timeout = get_env_settings(config).timeout
    return float(timeout) if timeout else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e_once: the scenario does not depend on the cluster's controllers or nodes; "
        "against kubesim it runs in one mode only",
    )
    check_available_timeout(os.environ.get("E2E_AVAILABLE_TIMEOUT"), per_test_timeout(config))


def check_available_timeout(asked: str | None, timeout: float | None) -> None:
    """E2E_AVAILABLE_TIMEOUT must be below the per-test timeout, or the test would be killed
    before the wait could fail with its own message."""
    if not asked or not timeout:
        return
    try:
        seconds = float(asked)
    except ValueError:
        raise pytest.UsageError(f"E2E_AVAILABLE_TIMEOUT={asked}: not a number of seconds") from None
    if seconds >= timeout:
        raise pytest.UsageError(
            f"E2E_AVAILABLE_TIMEOUT={asked} is not below the per-test timeout ({timeout:g}s): "
            "a test would be killed before its wait could fail with a reason; raise the "
            "timeout too (pytest --timeout N)"
        )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test using ``cluster`` runs once per cluster of the run (see cluster_params)."""
    if "cluster" not in metafunc.fixturenames or TARGET is None:
        return
    params = cluster_params()
    if metafunc.definition.get_closest_marker("e2e_once"):
        params = params[:1]
    metafunc.parametrize("cluster", params, indirect=True, scope="session")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if TARGET is not None:
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if _in_e2e(item):
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if TARGET is None:
        return None
    if TARGET == "kubesim":
        modes = ", ".join(cluster_params())
        lines = [
            f"e2e target: kubesim, once per deployment controller mode ({modes}), RBAC "
            "enforced; the controller runs with the sample-controller ServiceAccount's minted "
            "token"
        ]
    else:
        lines = [
            f"e2e target: {TARGET}; the controller runs with the sample-controller "
            "ServiceAccount's minted token"
        ]
    timeout = per_test_timeout(config)
    lines.append(
        "e2e: what the cluster can do (deployment controller, garbage collector, schedulable "
        "nodes) is probed once per session; the summary says what it ruled out"
    )
    lines.append(
        f"e2e: every wait ends before the per-test timeout ({timeout:g}s); replicas may take "
        f"{available_timeout(TARGET):g}s to become available"
        if timeout
        else "e2e: no per-test timeout; waits keep their own timeouts"
    )
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = REPORT.lines()
    if lines:
        terminalreporter.section("e2e: what each cluster could show")
        for line in lines:
            terminalreporter.write_line(line)


# -- the per-test budget (budget.py), on pytest-timeout's own timer -------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: object) -> None:
    BUDGET.start(getattr(settings, "timeout", None))  # None: pytest-timeout's own impl runs too


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    BUDGET.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    BUDGET.in_teardown = True  # teardown may use the reserve the test body left for it


# -- the API server -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The API server of this session (one of cluster_params()), CRD installed, probed."""
    name: str = request.param
    workdir = tmp_path_factory.mktemp(name)
    if name.startswith("kubesim-"):
        from kubesim import KubeSim

        mode = name.removeprefix("kubesim-")
        # TLS and a bearer token, so the kubeconfig is used exactly as a cluster's would be, and
        # RBAC enforced, so the controller's ServiceAccount has the manifests' rights only.
        # "none" is envtest's twin: no kube-controller-manager, so no garbage collector either.
        with KubeSim(
            tls=True,
            token=f"admin-{uuid.uuid4().hex}",
            authorization_mode="RBAC",
            deployment_controller=mode,
            deployment_status_delay=None if mode == "none" else 0.05,
            garbage_collector=mode != "none",
        ) as sim:
            kubeconfig = sim.write_kubeconfig(workdir / "admin.kubeconfig")
            yield from _serve(
                Cluster("kubesim", kubeconfig, workdir, has_rbac=True, name=name),
                KUBESIM_PROBE_TIMEOUT,
            )
    elif name == "envtest":
        from tests.e2e.envtest import START_TIMEOUT, STOP_TIMEOUT, EnvTest

        keep_logs = os.environ.get("E2E_ENVTEST_LOGS")  # a directory to keep etcd/apiserver logs
        env = EnvTest(os.environ["KUBEBUILDER_ASSETS"], log_dir=keep_logs or None)
        left = BUDGET.left()  # the control plane starts within the first test's budget
        kubeconfig = env.start(START_TIMEOUT if left is None else min(START_TIMEOUT, left))
        try:
            yield from _serve(Cluster("envtest", kubeconfig, workdir, has_rbac=True), _probe())
        finally:
            left = BUDGET.left()  # stopped in the teardown of the session's last test
            env.stop(STOP_TIMEOUT if left is None else max(min(STOP_TIMEOUT, left), 0.5))
    elif name == "kubeconfig":
        yield from _serve(
            Cluster("kubeconfig", os.environ["E2E_KUBECONFIG"], workdir, has_rbac=True), _probe()
        )
    else:  # unreachable: every test is skipped at collection
        pytest.skip(SKIP_REASON)


def _probe() -> float:
    return float(os.environ.get("E2E_PROBE_TIMEOUT") or PROBE_TIMEOUT)


def _serve(c: Cluster, probe_timeout: float) -> Iterator[Cluster]:
    c.install_crd()
    try:
        c.capabilities = detect(c, probe_timeout)
        REPORT.probed(c.name, c.capabilities)
        yield c
    finally:
        c.cleanup()


@dataclass
class ControllerCredentials:
    """What the controller under test connects with."""

    kubeconfig: str  # path; on a real API server it holds the ServiceAccount's token
    identity: str  # who that is, for messages
    lease_namespace: str  # where the leader-election Role lets it hold its Lease
    service_account: str  # "<namespace>/<name>" from manifests/base/service-account.yaml
    token: str  # the bearer token in that kubeconfig (a minted, signed JWT on a real server)


@pytest.fixture(scope="session")
def credentials(cluster: Cluster) -> ControllerCredentials:
    sa = next(d for d in load_manifests("service-account.yaml") if d["kind"] == "ServiceAccount")
    sa_ns, sa_name = sa["metadata"]["namespace"], sa["metadata"]["name"]
    if cluster.has_rbac:
        cluster.install_rbac()
        token = cluster.mint_token(sa_ns, sa_name)
        identity = f"system:serviceaccount:{sa_ns}:{sa_name}"
    else:
        # A server that neither enforces RBAC nor mints tokens (none of the targets today): the
        # controller gets the admin's token, still through a kubeconfig written the way the
        # minted one would be.
        for doc in load_manifests("namespace.yaml"):
            cluster.apply(doc)
        token = cluster.admin_token()
        identity = "admin (fallback: no TokenRequest, RBAC not enforced)"
    kubeconfig = cluster.kubeconfig_with_token(token, "sample-controller")
    return ControllerCredentials(kubeconfig, identity, sa_ns, f"{sa_ns}/{sa_name}", token)


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
def skip_assertion(cluster: Cluster, request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Record an assertion this cluster rules out, and why, for the terminal summary."""

    def record(what: str, why: str) -> None:
        REPORT.skip_assertion(cluster.name, request.node.originalname, what, why)

    return record


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
