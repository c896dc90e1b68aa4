"""The controller as a real process (``python -m controller``) against an in-process kubesim.

For what only a process has: signal handling and exit codes, two replicas competing for one
Lease, and the endpoints the CLI binds. The test keeps kubesim in-process, so it can still read
``sim.request_log``, inject faults and look at storage directly.

The controller logs JSON lines (``--log-format json``) on stderr; a reader thread decodes them,
so tests wait for log records with deadlines (``wait_log``) instead of sleeping, and learn the
ports the endpoints bound (``127.0.0.1:0``) from the ``serving`` records.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesim import KubeSim
from tests.helpers import ROOT

LEASES = ("coordination.k8s.io", "leases")  # kubesim storage key of Leases
# runtime.manager.USER_AGENT: what the process sends, then " (<identity>)"
USER_AGENT = "sample-controller-py/0.1.0"

# Leader election timings small enough for tests, with client-go's ordering
# (lease > renew deadline > 1.2 x retry period).
FAST_LEADER_ELECTION = (
    "--leader-elect",
    "--leader-elect-lease-duration",
    "2s",
    "--leader-elect-renew-deadline",
    "1500ms",
    "--leader-elect-retry-period",
    "500ms",
)
LEASE_DURATION, RETRY_PERIOD = 2.0, 0.5


def http_get(url: str, timeout: float = 5.0, token: str | None = None) -> tuple[int, str]:
    """GET ``url``; (status, body). https is not verified: the secure /metrics serves a
    self-signed certificate, and Prometheus scrapes it with insecureSkipVerify the same way."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = None
    if url.startswith("https:"):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


# /metrics in plain HTTP (--metrics-secure=false), as the tests scrape it without a token;
# tests/integration/test_metrics_auth.py scrapes the secure default.
LOOPBACK_ENDPOINTS = (
    "--metrics-bind-address",
    "127.0.0.1:0",
    "--metrics-secure=false",
    "--health-probe-bind-address",
    "127.0.0.1:0",
)


class ControllerProcess:
    """One ``python -m controller`` process with JSON logs and helpers.

    Built from a kubeconfig, so the e2e suite runs the very same class against a real API
    server; ``against(sim, tmp_path, ...)`` is the kubesim shorthand the integration tests use.
    """

    def __init__(
        self,
        kubeconfig: str,
        *flags: str,
        name: str = "controller",
        env: dict[str, str] | None = None,
        endpoints: tuple[str, ...] = LOOPBACK_ENDPOINTS,
    ) -> None:
        self.name = name  # for messages: which replica
        self.cmd = [
            sys.executable,
            "-m",
            "controller",
            "--kubeconfig",
            kubeconfig,
            "--log-format",
            "json",
            "--kube-api-qps",
            "0",
            *endpoints,
            *flags,
        ]
        self.records: list[dict] = []  # decoded log records, in order (raw lines as {"raw": ...})
        self._cond = threading.Condition()  # notified on every new record and at EOF
        self._eof = False  # stderr closed: the process has exited
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, name=f"{name}-log-reader", daemon=True)
        self._reader.start()

    @classmethod
    def against(
        cls,
        sim: KubeSim,
        tmp_path: Path,
        *flags: str,
        name: str = "controller",
        env: dict[str, str] | None = None,
    ) -> ControllerProcess:
        """A process talking to this kubesim through a kubeconfig written for it."""
        kubeconfig = sim.write_kubeconfig(tmp_path / f"{name}.kubeconfig")
        return cls(kubeconfig, *flags, name=name, env=env)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            try:
                record = json.loads(line)
            except ValueError:
                record = {"raw": line.rstrip("\n")}
            if not isinstance(record, dict):
                record = {"raw": line.rstrip("\n")}
            with self._cond:
                self.records.append(record)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    # -- logs ------------------------------------------------------------------------------------

    def wait_log(
        self,
        msg: str,
        timeout: float = 10.0,
        where: Callable[[dict], bool] = lambda r: True,
        **fields: Any,
    ) -> dict:
        """The first record with this msg (and these field values, and ``where``); waits for it."""

        def match(r: dict) -> bool:
            return (
                r.get("msg") == msg and all(r.get(k) == v for k, v in fields.items()) and where(r)
            )

        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for r in self.records:
                    if match(r):
                        return r
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    break
                self._cond.wait(left)
        raise AssertionError(
            f"{self.name}: no log record {msg!r} {fields} within {timeout}s "
            f"(exit code {self.proc.poll()}); log:\n{self.log_text()}"
        )

    def logs(self, msg: str | None = None) -> list[dict]:
        """The records so far, or those with this msg."""
        with self._cond:
            return [r for r in self.records if msg is None or r.get("msg") == msg]

    def has_log(self, msg: str, **fields: Any) -> bool:
        with self._cond:
            return any(
                r.get("msg") == msg and all(r.get(k) == v for k, v in fields.items())
                for r in self.records
            )

    def log_text(self) -> str:
        with self._cond:
            return "\n".join(r.get("raw") or json.dumps(r) for r in self.records[-60:])

    @property
    def identity(self) -> str:
        """The holder identity this replica uses for the Lease (``<hostname>_<uuid>``)."""
        return self.wait_log("leader election on")["identity"]

    # -- endpoints ---------------------------------------------------------------------------------

    def url(self, server: str) -> str:
        """Base URL of an endpoint server ("metrics" or "health-probes"), once it is bound."""
        record = self.wait_log("serving", server=server)
        return f"{'https' if record.get('secure') else 'http'}://{record['address']}"

    def get(self, server: str, path: str, token: str | None = None) -> tuple[int, str]:
        return http_get(self.url(server) + path, token=token)

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """One sample from this process's /metrics, or None when absent."""
        from prometheus_client.parser import text_string_to_metric_families

        code, body = self.get("metrics", "/metrics")
        assert code == 200, body
        for family in text_string_to_metric_families(body):
            for sample in family.samples:
                if sample.name == name and all(
                    sample.labels.get(k) == v for k, v in (labels or {}).items()
                ):
                    return sample.value
        return None

    # -- lifecycle ---------------------------------------------------------------------------------

    def send(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait_exit(self, timeout: float = 10.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{self.name} did not exit within {timeout}s; log:\n{self.log_text()}"
            ) from None

    def kill(self) -> None:
        """SIGKILL: a crashed pod; nothing is released."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit code (graceful shutdown: drain, release the lease)."""
        self.send(signal.SIGTERM)
        return self.wait_exit(timeout)

    def running(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Kill the process if it still runs (a failed test) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._reader.join(5)
        self._reader.join(5)


def lease_spec(sim: KubeSim, namespace: str = "default", name: str = "sample-controller") -> dict:
    stored = sim.storage.get(LEASES, namespace, name)
    return dict((stored.obj.get("spec") or {}) if stored is not None else {})
