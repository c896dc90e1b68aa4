"""The Bar controller: your own resource on the Foo controller's informers, queue and workers.

sample-controller twin: controller.go again, with Foo -> Bar and Deployment -> ConfigMap. A Bar
(examples/bar/crd.yaml) names a ConfigMap and its data; the controller creates that ConfigMap,
owned by the Bar, puts back what someone changes, and leaves the deletion to the garbage
collector. docs/your-own-controller.md builds it step by step and lists what it leaves out of
``controller.foo_controller`` (status, Events, expectations, validation), and where each lives.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from typing import Any

from kubernetes import client as k8s

from client.config import load_client_configuration
from client.errors import APIError, is_already_exists, is_conflict, is_not_found
from client.rest import RESTClient, resource_path
from informer.factory import SharedInformerFactory
from informer.lister import NotFoundError
from informer.shared_informer import ResourceEventHandlerFuncs, wait_for_cache_sync
from informer.store import (
    DeletedFinalStateUnknown,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from runtime.context import Context
from runtime.log import configure_logging
from runtime.shutdown import ShutdownBudget
from runtime.worker import Result, Workers
from workqueue import RateLimitingQueue, default_controller_rate_limiter

log = logging.getLogger(__name__)

BAR_GVR = ("tutorial.example.com", "v1", "bars")
BAR_API_VERSION = "tutorial.example.com/v1"
# what an ownerReference to a Bar says
BAR = (BAR_API_VERSION, "Bar")
CONFIGMAP_GVR = ("", "v1", "configmaps")
# every write says who made it (managedFields)
FIELD_MANAGER = "bar-controller"


def new_configmap(bar: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap a Bar asks for, with the ownerReference that makes it the Bar's."""
    meta = bar["metadata"]
    owner = {"apiVersion": BAR_API_VERSION, "kind": "Bar", "name": meta["name"]}
    owner |= {"uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": bar["spec"]["configMapName"], "ownerReferences": [owner]},
        "data": bar["spec"].get("data") or {},
    }


def name_of(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def owner_of(obj: dict[str, Any]) -> str | None:
    """The name of the Bar that controls ``obj``, or None."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and (ref.get("apiVersion"), ref.get("kind")) == BAR:
            return str(ref["name"])
    return None


class ResourceExistsError(Exception):
    """The ConfigMap a Bar names is someone else's: retried with backoff, never written."""


class BarController:
    """Keeps each Bar's ConfigMap as the Bar says (sample-controller twin: ``Controller``)."""

    def __init__(self, rest: RESTClient, factory: SharedInformerFactory) -> None:
        self.rest = rest
        bars, configmaps = factory.for_resource(*BAR_GVR), factory.for_resource(*CONFIGMAP_GVR)
        # reads come from the caches, never from the API
        self.bars, self.configmaps = bars.lister(), configmaps.lister()
        self.queue = RateLimitingQueue(default_controller_rate_limiter(), name="bar")
        self.workers = Workers(self.queue, self.reconcile, name="bar", log=log)
        on_bar = ResourceEventHandlerFuncs(self.enqueue, lambda old, new: self.enqueue(new))
        on_configmap = ResourceEventHandlerFuncs(
            self.handle_object, lambda old, new: self.handle_object(new), self.handle_object
        )
        self._registrations = [
            bars.add_event_handler(on_bar),
            configmaps.add_event_handler(on_configmap),
        ]

    def enqueue(self, bar: Any) -> None:
        self.queue.add(meta_namespace_key_func(bar))

    def handle_object(self, obj: Any) -> None:
        """A ConfigMap changed: enqueue the Bar that owns it, if one does."""
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        owner = owner_of(obj)
        if owner is not None:
            self.queue.add(f"{obj['metadata']['namespace']}/{owner}")

    def run(self, workers: int, stop: threading.Event) -> None:
        if wait_for_cache_sync(stop, *self._registrations):
            self.workers.run(workers, stop, ShutdownBudget(10.0))

    def reconcile(self, ctx: Context, key: str) -> Result:
        namespace, name = split_meta_namespace_key(key)
        try:
            self.sync(self.bars.get(namespace, name))
        except NotFoundError:
            # the Bar is gone: the garbage collector deletes its ConfigMap
            return Result()
        except APIError as err:
            # our cache was behind (409, or 404: deleted meanwhile): its event comes next
            if is_conflict(err) or is_already_exists(err) or is_not_found(err):
                return Result(requeue=True, cause=str(err))
            return Result(error=err)
        return Result()

    def sync(self, bar: dict[str, Any]) -> None:
        want = new_configmap(bar)
        namespace, name = bar["metadata"]["namespace"], want["metadata"]["name"]
        params = {"fieldManager": FIELD_MANAGER}
        try:
            current = self.configmaps.get(namespace, name)
        except NotFoundError:
            log.info("creating configmap", extra={"bar": name_of(bar), "configmap": name})
            path = resource_path(*CONFIGMAP_GVR, namespace)
            self.rest.request("POST", path, params=params, body=want)
            return
        if owner_of(current) != bar["metadata"]["name"]:
            # someone else's: never write it (sample-controller's ErrResourceExists)
            message = f'ConfigMap "{name}" already exists and is not managed by Bar'
            raise ResourceExistsError(message)
        if current.get("data") != want["data"]:
            log.info("updating configmap", extra={"bar": name_of(bar), "configmap": name})
            # cached objects are shared: a new dict, with the resourceVersion we read (a 409
            # if someone wrote in between)
            path = resource_path(*CONFIGMAP_GVR, namespace, name)
            self.rest.request("PUT", path, params=params, body={**current, "data": want["data"]})


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, wire the controller, run it until SIGINT or SIGTERM (main.go)."""
    parser = argparse.ArgumentParser(prog="python -m examples.bar", description=__doc__)
    parser.add_argument("--kubeconfig", default="", help="empty: in-cluster config")
    parser.add_argument("--workers", type=int, default=2)
    opts = parser.parse_args(argv)
    # the Foo controller's klog-style lines: `I1201 ... bar-worker-0] "msg" key=...`
    configure_logging()
    rest = RESTClient(k8s.ApiClient(load_client_configuration(opts.kubeconfig)))
    factory = SharedInformerFactory(rest)
    controller = BarController(rest, factory)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    factory.start(stop)
    controller.run(opts.workers, stop)
    factory.shutdown(5.0)
    return 0
