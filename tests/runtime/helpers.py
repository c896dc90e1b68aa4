"""What the runtime's tests share: a Manager against the test's kubesim, run in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from prometheus_client import CollectorRegistry

from client.rest import RESTClient
from kubesim import KubeSim
from runtime.manager import Manager
from runtime.options import Options

CONFIGMAPS = ("", "v1", "configmaps")
SECRETS = ("", "v1", "secrets")


def new_manager(sim: KubeSim, **options: object) -> Manager:
    """A manager with its own metrics registry, talking to ``sim`` (nothing served)."""
    opts = replace(Options(), kube_api_qps=0, **options)  # type: ignore[arg-type]
    rest = RESTClient(sim.new_api_client(), user_agent="runtime-test")
    return Manager(opts, rest, registry=CollectorRegistry())


@contextmanager
def running(manager: Manager) -> Iterator[threading.Event]:
    """Run the manager's runnables until the block ends; yields the stop event. Waits for the
    caches to sync before the block starts, and for a clean stop after it."""
    stop, ready = threading.Event(), threading.Event()
    result: dict[str, int] = {}
    thread = threading.Thread(
        target=lambda: result.update(code=manager.run_runnables(stop, ready)), daemon=True
    )
    thread.start()
    try:
        assert ready.wait(10), "the caches did not sync"
        yield stop
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive(), "the manager did not stop"
    assert result.get("code") == 0


def configmap(name: str, data: dict[str, str] | None = None, **meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", **meta},
        "data": data or {},
    }
