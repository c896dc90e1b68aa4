"""A running controller against kubesim, for the controller's integration tests.

``ControllerHarness`` runs ``runtime.manager.run`` against the test's kubesim in a thread with
its own stop event and metrics registry, and offers small helpers to read objects. Tests wait for
conditions with ``tests.helpers.wait_for`` (polls with deadlines, never fixed sleeps).
"""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry

from client.errors import APIError
from client.rest import RESTClient, resource_path
from controller.foo_controller import DEPLOYMENT_GVR, FOO_GVR
from controller.main import parse_foo_options, run
from kubesim import KubeSim


def foo(
    name: str,
    deployment_name: str | None = None,
    replicas: int | None = 1,
    namespace: str = "default",
    labels: dict | None = None,
) -> dict:
    spec: dict[str, Any] = {"deploymentName": deployment_name or name}
    if replicas is not None:
        spec["replicas"] = replicas
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": meta,
        "spec": spec,
    }


class ControllerHarness:
    def __init__(self, sim: KubeSim, *flags: str) -> None:
        self.sim = sim
        self.client = RESTClient(sim.new_api_client())  # the test's own client
        self.registry = CollectorRegistry()
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.options = parse_foo_options(["--kube-api-qps", "0", *flags])
        self._rest = RESTClient(sim.new_api_client(), user_agent="sample-controller-py/test")
        self.exit_code: int | None = None
        self.thread = threading.Thread(target=self._run, name="controller-under-test", daemon=True)

    def _run(self) -> None:
        self.exit_code = run(
            self.options, self._rest, self.stop, registry=self.registry, ready=self.ready
        )

    def start(self) -> ControllerHarness:
        self.thread.start()
        assert self.ready.wait(10), "controller caches did not sync"
        return self

    def shutdown(self, timeout: float = 10.0) -> int | None:
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "controller did not stop"
        return self.exit_code

    # -- API helpers (the test's own client, not the controller's) -------------------------------

    def create_foo(self, body: dict) -> dict:
        ns = body["metadata"].get("namespace", "default")
        return self.client.request("POST", resource_path(*FOO_GVR, ns), body=body)

    def get_foo(self, name: str, ns: str = "default") -> dict:
        return self.client.request("GET", resource_path(*FOO_GVR, ns, name))

    def patch_foo(self, name: str, patch: dict, ns: str = "default") -> dict:
        return self.client.request(
            "PATCH",
            resource_path(*FOO_GVR, ns, name),
            body=patch,
            content_type="application/merge-patch+json",
        )

    def delete_foo(self, name: str, ns: str = "default") -> dict:
        return self.client.request("DELETE", resource_path(*FOO_GVR, ns, name))

    def get_deployment(self, name: str, ns: str = "default") -> dict:
        return self.client.request("GET", resource_path(*DEPLOYMENT_GVR, ns, name))

    def deployment_or_none(self, name: str, ns: str = "default") -> dict | None:
        try:
            return self.get_deployment(name, ns)
        except APIError as err:
            if err.code == 404:
                return None
            raise

    def events(self, ns: str = "default", involved: str | None = None) -> list[dict]:
        params = {"fieldSelector": f"involvedObject.name={involved}"} if involved else None
        return self.client.request("GET", resource_path("", "v1", "events", ns), params=params)[
            "items"
        ]

    def metric(self, name: str, labels: dict | None = None) -> float | None:
        return self.registry.get_sample_value(name, labels or {})
