"""The controller under test, started from a kubeconfig: in this process, or as a real process.

- ``InProcessController`` runs the CLI's ``serve()`` on a thread with its own stop event and
  metrics registry, as ``python -m controller`` would after its start-up checks (which it runs
  too: ``check_api`` fails fast when the credentials cannot even see the Foo API). Scenarios that
  only need a working controller use it: it starts in well under a second.
- ``ControllerProcess`` is ``python -m controller`` itself, for what only a process has: being
  killed (SIGKILL: no lease release) or stopped by SIGTERM, and an exit code. It logs JSON lines;
  a reader thread decodes them so tests wait for log records instead of sleeping.

Both talk to the API server only through the kubeconfig they are given, which on a real API
server carries the ServiceAccount's minted token, never the admin's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from prometheus_client import CollectorRegistry

from controller.__main__ import Process, build_parser, check_api, serve
from controller.config import load_client_configuration
from informer.rest import RESTClient
from tests.e2e.cluster import ROOT, wait_for

# Quiet endpoints (tests do not scrape them) and a short resync, so that drift is repaired fast.
COMMON_FLAGS = ("--metrics-bind-address", "0", "--health-probe-bind-address", "0",
                "--resync-period", "2s")
USER_AGENT = "sample-controller-py/e2e"


class InProcessController:
    """``serve()`` on a named thread; ``start()`` returns once the caches have synced."""

    def __init__(self, kubeconfig: str, *flags: str, name: str = "controller") -> None:
        self.args = build_parser().parse_args(["--kubeconfig", kubeconfig, *COMMON_FLAGS, *flags])
        cfg = load_client_configuration(kubeconfig, "")
        self.rest = RESTClient(client.ApiClient(cfg), qps=self.args.kube_api_qps,
                               burst=self.args.kube_api_burst, user_agent=USER_AGENT)
        self.host = cfg.host  # for check_api's messages
        self.registry = CollectorRegistry()  # this instance's metrics only
        self.process = Process(self.args.leader_elect)  # what serve() exposes: the controller
        self.stop = threading.Event()  # set by shutdown()
        self.exit_code: int | None = None  # serve()'s result, once it returned
        self.error: BaseException | None = None  # what serve() raised, if it did
        self.thread = threading.Thread(target=self._serve, name=f"{name}-under-test", daemon=True)

    def _serve(self) -> None:
        try:
            self.exit_code = serve(self.args, self.rest, self.stop, registry=self.registry,
                                   process=self.process)
        except BaseException as err:  # noqa: BLE001 - reported by start()/shutdown()
            self.error = err
            raise

    @property
    def controller(self) -> Any:
        return self.process.parts.get("controller")

    def start(self, timeout: float = 60.0) -> InProcessController:
        check_api(self.rest, self.host)
        self.thread.start()
        wait_for(lambda: self.error is not None or (self.controller is not None
                                                    and self.controller.has_synced()),
                 timeout=timeout, message="the controller's caches to sync")
        assert self.error is None, f"the controller failed: {self.error!r}"
        return self

    def shutdown(self, timeout: float = 30.0) -> int | None:
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the controller did not stop"
        assert self.error is None, f"the controller failed: {self.error!r}"
        return self.exit_code

    def metric(self, name: str, labels: dict | None = None) -> float:
        return self.registry.get_sample_value(name, labels or {}) or 0.0


class ControllerProcess:
    """``python -m controller`` with JSON logs on stderr, decoded as they come."""

    def __init__(self, kubeconfig: str, *flags: str, name: str = "controller") -> None:
        self.name = name  # which replica, for messages
        self.cmd = [sys.executable, "-m", "controller", "--kubeconfig", kubeconfig,
                    "--log-format", "json", *COMMON_FLAGS, *flags]
        self.records: list[dict] = []  # decoded log records in order (others as {"raw": line})
        self._lock = threading.Lock()  # guards records
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._reader = threading.Thread(target=self._read, name=f"{name}-log-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            try:
                record = json.loads(line)
            except ValueError:
                record = {"raw": line.rstrip("\n")}
            with self._lock:
                self.records.append(record if isinstance(record, dict) else {"raw": line})

    def logs(self, msg: str | None = None) -> list[dict]:
        with self._lock:
            return [r for r in self.records if msg is None or r.get("msg") == msg]

    def wait_log(self, msg: str, timeout: float = 30.0,
                 where: Callable[[dict], bool] = lambda r: True) -> dict:
        def find() -> dict | None:
            found = [r for r in self.logs(msg) if where(r)]
            if not found and self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode} before "
                                     f"logging {msg!r}; last lines: {self.logs()[-8:]}")
            return found[0] if found else None
        return wait_for(find, timeout=timeout, interval=0.05, message=f"{self.name}: {msg!r}")

    @property
    def identity(self) -> str:
        """The holder identity this replica competes with (from its "leader election on" log)."""
        return self.wait_log("leader election on")["identity"]

    def kill(self) -> None:
        """SIGKILL: a crashed pod; nothing is released."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit code (graceful shutdown: drain, release the lease)."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)

    @staticmethod
    def wait_all_exited(processes: list[ControllerProcess], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        for p in processes:
            p.proc.wait(max(0.1, deadline - time.monotonic()))
