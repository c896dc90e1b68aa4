"""The controller under test, started from a kubeconfig: in this process, or as a real process.

- ``InProcessController`` runs ``runtime.manager.Manager.start`` on a thread with its own
  stop event and metrics registry, as ``python -m controller`` would after its start-up checks
  (which it runs too: ``check_api`` fails fast when the credentials cannot even see the Foo
  API). Scenarios that only need a working controller use it: it starts in well under a second.
- ``ControllerProcess`` is ``python -m controller`` itself (the integration suite's runner, from
  ``tests/integration/controller_process.py``), for what only a process has: being killed
  (SIGKILL: no lease release) or stopped by SIGTERM, and an exit code. It logs JSON lines; a
  reader thread decodes them so tests wait for log records instead of sleeping.

Both talk to the API server only through the kubeconfig they are given, which on a real API
server carries the ServiceAccount's minted token, never the admin's. Every wait on them is cut
to what is left of the test's budget (tests/e2e/budget.py), as the suite's wait_for is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client
from prometheus_client import CollectorRegistry

from client.config import load_client_configuration
from client.rest import RESTClient
from controller.apis import FOO_GVR
from controller.main import parse_foo_options, setup
from runtime.manager import Manager, check_api
from tests.e2e.budget import BUDGET
from tests.e2e.cluster import wait_for
from tests.integration.controller_process import ControllerProcess as _Process

# Quiet endpoints (tests do not scrape them) and a short resync, so that drift is repaired fast.
COMMON_FLAGS = (
    "--metrics-bind-address",
    "0",
    "--health-probe-bind-address",
    "0",
    "--resync-period",
    "2s",
)
USER_AGENT = "sample-controller-py/e2e"


class InProcessController:
    """``Manager.start`` on a named thread; ``start()`` returns once the caches have synced."""

    def __init__(self, kubeconfig: str, *flags: str, name: str = "controller") -> None:
        self.options = parse_foo_options(["--kubeconfig", kubeconfig, *COMMON_FLAGS, *flags])
        cfg = load_client_configuration(kubeconfig, "")
        self.rest = RESTClient(
            client.ApiClient(cfg),
            qps=self.options.kube_api_qps,
            burst=self.options.kube_api_burst,
            user_agent=USER_AGENT,
        )
        self.host = cfg.host  # for check_api's messages
        self.registry = CollectorRegistry()  # this instance's metrics only
        self.manager = Manager(self.options, self.rest, self.registry)
        self.components = setup(self.manager, self.options)  # exposes the controller
        self.stop = threading.Event()  # set by shutdown()
        self.exit_code: int | None = None  # Manager.start's result, once it returned
        self.error: BaseException | None = None  # what Manager.start raised, if it did
        self.thread = threading.Thread(target=self._serve, name=f"{name}-under-test", daemon=True)

    def _serve(self) -> None:
        try:
            self.exit_code = self.manager.start(self.stop)
        except BaseException as err:  # reported by start()/shutdown()
            self.error = err
            raise

    @property
    def controller(self) -> Any:
        """The controller once it runs (a standby's is None until it leads)."""
        return self.components.controller if self.manager.running.is_set() else None

    def start(self, timeout: float = 60.0) -> InProcessController:
        check_api(self.rest, self.host, FOO_GVR)
        self.thread.start()
        wait_for(
            lambda: (
                self.error is not None
                or (self.controller is not None and self.controller.has_synced())
            ),
            timeout=timeout,
            message="the controller's caches to sync",
        )
        assert self.error is None, f"the controller failed: {self.error!r}"
        return self

    def shutdown(self, timeout: float = 30.0) -> int | None:
        self.stop.set()
        seconds, note = BUDGET.clamp(timeout)
        self.thread.join(seconds)
        assert not self.thread.is_alive(), f"the controller did not stop within {seconds:g}s{note}"
        assert self.error is None, f"the controller failed: {self.error!r}"
        return self.exit_code

    def metric(self, name: str, labels: dict | None = None) -> float:
        return self.registry.get_sample_value(name, labels or {}) or 0.0


class ControllerProcess(_Process):
    """``python -m controller`` from a kubeconfig: the integration suite's process runner, with
    the e2e suite's quiet endpoints and short resync."""

    def __init__(self, kubeconfig: str, *flags: str, name: str = "controller") -> None:
        super().__init__(kubeconfig, *COMMON_FLAGS, *flags, name=name, endpoints=())

    def wait_log(
        self,
        msg: str,
        timeout: float = 30.0,  # a real cluster is slower than kubesim
        where: Callable[[dict], bool] = lambda r: True,
        **fields: Any,
    ) -> dict:
        seconds, note = BUDGET.clamp(timeout)
        try:
            return super().wait_log(msg, seconds, where, **fields)
        except AssertionError as err:
            raise AssertionError(f"{err}{note}") from None

    def wait_exit(self, timeout: float = 10.0) -> int:
        seconds, note = BUDGET.clamp(timeout)
        try:
            return super().wait_exit(seconds)
        except AssertionError as err:
            raise AssertionError(f"{err}{note}") from None
