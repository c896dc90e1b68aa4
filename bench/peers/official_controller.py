"""Peer (b) of bench.e2e_bench: the Foo controller as a Python user would write it on the
official client alone: ``kubernetes.informer.SharedInformer`` for the caches, a plain
``queue.Queue`` of keys, N worker threads, and the generated API classes for writes.

The reconcile is ours, statement for statement (``controller.foo_controller``'s pure functions
``new_deployment``, ``desired_status``, ``controller_of``): read the Foo and its Deployment
from the caches, create the Deployment when missing, fix its replicas, write the status only
when it differs, record a ``Synced`` Event after a write. What differs is only what the
official client gives: model objects for Deployments (decoded from JSON into V1Deployment),
no de-duplication of keys (a plain queue may hand one key to two workers at once; the loser
gets a 409 and its key is put back), no rate-limited retry (a failed key is put back after a
fixed 50 ms), and no Event correlation (one POST per Event).

Two adaptations were needed for it to work at all, both documented where they are made:
``SharedInformer`` reads ``resp.items`` / ``resp.metadata.resource_version`` from the list
call, which a custom-object list (a dict) does not have, so Foos are listed through a wrapper
that returns the same shape; and its ``ObjectCache`` keys dicts and models alike.

    python -m bench.peers.official_controller --kubeconfig PATH [--workers 2]
"""

from __future__ import annotations

import argparse
import logging
import queue
import signal
import sys
import threading
import types
from datetime import UTC, datetime

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.informer import ADDED, DELETED, MODIFIED, SharedInformer

from controller.builders import desired_status, keep_transition_times, new_deployment
from controller.foo_controller import MESSAGE_RESOURCE_SYNCED, SUCCESS_SYNCED

log = logging.getLogger("official-peer")

GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
RETRY_DELAY = 0.05  # seconds before a failed key is put back (no backoff: a plain queue)


def list_all_foos(custom: client.CustomObjectsApi):
    """A list function for SharedInformer over a custom resource.

    SharedInformer expects the list call to return an object with ``.items`` and
    ``.metadata.resource_version`` (a generated *List model); the custom-objects API returns a
    dict, on which ``getattr(resp, "items")`` is the dict method and the informer fails. The watch
    call (``watch=True``) is passed through untouched; the docstring is kept because
    ``Watch.stream`` reads the return type from it (``object``: events stay dicts).
    """

    def list_foos(**kwargs):
        resp = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, **kwargs)
        if kwargs.get("watch"):
            return resp
        return types.SimpleNamespace(
            items=resp.get("items") or [],
            metadata=types.SimpleNamespace(
                resource_version=resp["metadata"].get("resourceVersion")
            ),
        )

    list_foos.__doc__ = custom.list_cluster_custom_object.__doc__
    return list_foos


class OfficialController:
    def __init__(self, api_client: client.ApiClient, workers: int) -> None:
        self.apps = client.AppsV1Api(api_client)  # Deployment writes
        self.custom = client.CustomObjectsApi(api_client)  # Foo status writes
        self.core = client.CoreV1Api(api_client)  # Events
        self.workers = workers
        self.queue: queue.Queue[str] = queue.Queue()  # keys "ns/name"; duplicates allowed
        self.foos = SharedInformer(list_all_foos(self.custom))
        self.deployments = SharedInformer(self.apps.list_deployment_for_all_namespaces)
        for event in (ADDED, MODIFIED):
            self.foos.add_event_handler(event, self.enqueue_foo)
        for event in (ADDED, MODIFIED, DELETED):
            self.deployments.add_event_handler(event, self.handle_deployment)

    # -- handlers: run on the informers' watch threads --------------------------------------

    def enqueue_foo(self, foo: dict) -> None:
        meta = foo["metadata"]
        self.queue.put(f"{meta['namespace']}/{meta['name']}")

    def handle_deployment(self, dep: client.V1Deployment) -> None:
        for ref in dep.metadata.owner_references or []:
            if ref.controller and ref.kind == "Foo" and ref.api_version.startswith(GROUP + "/"):
                if self.foos.cache.get_by_key(f"{dep.metadata.namespace}/{ref.name}") is not None:
                    self.queue.put(f"{dep.metadata.namespace}/{ref.name}")
                return

    # -- workers ------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        self.foos.start()
        self.deployments.start()
        for i in range(self.workers):
            threading.Thread(target=self.worker, name=f"worker-{i}", daemon=True).start()
        stop.wait()

    def worker(self) -> None:
        while True:
            key = self.queue.get()
            try:
                self.sync(key)
            except Exception as err:  # every error is retried
                log.info("retrying %s: %s", key, err)
                timer = threading.Timer(RETRY_DELAY, self.queue.put, args=(key,))
                timer.daemon = True
                timer.start()
            finally:
                self.queue.task_done()

    def sync(self, key: str) -> None:
        namespace, name = key.split("/", 1)
        foo = self.foos.cache.get_by_key(key)
        if foo is None:
            return
        dep_name = (foo.get("spec") or {}).get("deploymentName")
        if not dep_name:
            return
        wrote = False
        dep = self.deployments.cache.get_by_key(f"{namespace}/{dep_name}")
        if dep is None:
            dep = self.apps.create_namespaced_deployment(
                namespace, new_deployment(foo), field_manager="sample-controller"
            )
            wrote = True
        refs = [r for r in dep.metadata.owner_references or [] if r.controller]
        if not refs or refs[0].uid != foo["metadata"]["uid"]:
            raise RuntimeError(f"deployment {dep_name} is not controlled by foo {name}")
        replicas = (foo.get("spec") or {}).get("replicas")
        if replicas is not None and replicas != dep.spec.replicas:
            body = self.apps.api_client.sanitize_for_serialization(dep)
            body["spec"]["replicas"] = replicas
            dep = self.apps.replace_namespaced_deployment(
                dep_name, namespace, body, field_manager="sample-controller"
            )
            wrote = True
        available = {
            "status": {
                "availableReplicas": (dep.status.available_replicas or 0) if dep.status else 0
            }
        }
        current = foo.get("status") or {}
        status = keep_transition_times(current, desired_status(foo, available))
        if status != current:
            try:
                self.custom.replace_namespaced_custom_object_status(
                    GROUP,
                    VERSION,
                    namespace,
                    PLURAL,
                    name,
                    {**foo, "status": status},
                    field_manager="sample-controller",
                )
            except ApiException as err:
                if err.status != 404:
                    raise
            wrote = True
        if wrote:
            self.record_event(foo)

    def record_event(self, foo: dict) -> None:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta = foo["metadata"]
        self.core.create_namespaced_event(
            meta["namespace"],
            {
                "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
                "involvedObject": {
                    "apiVersion": foo["apiVersion"],
                    "kind": "Foo",
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "uid": meta["uid"],
                    "resourceVersion": meta.get("resourceVersion"),
                },
                "reason": SUCCESS_SYNCED,
                "message": MESSAGE_RESOURCE_SYNCED,
                "type": "Normal",
                "source": {"component": "official-peer"},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            },
        )


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    cfg = client.Configuration()
    config.load_kube_config(args.kubeconfig, client_configuration=cfg)
    api_client = client.ApiClient(cfg)
    api_client.user_agent = "official-peer"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    OfficialController(api_client, args.workers).run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
