"""The page's cluster: kubesim and the controller, as ``make demo`` starts them, and the controls.

No client-go twin: part of the demo. kubesim runs as ``make sim`` and ``make demo`` run it
(``demo.sim.SIM_OPTIONS``: the workload chain and a simulated node), so each Deployment has a
ReplicaSet and Pods that run. The controller runs exactly as ``sample-controller
--kubeconfig <file> --trace`` would (``runtime.manager.run``, in a thread); the demo only
listens to it (``demo.ui.recorder``) and, for the pause, holds its workers from outside (see
``Cluster.hold_workers``). Each control is what a learner would do with kubectl, or a fault
kubesim injects (``kubesim.faults``), and returns a short text the page shows beside the
machinery's answer, in English and Japanese (``demo.ui.words.ANSWERS``).
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from prometheus_client import CollectorRegistry

from client.config import load_client_configuration
from client.errors import APIError
from client.rest import RESTClient, resource_path
from controller.apis import FOO_GVR
from controller.main import Components, parse_foo_options, run
from demo.narration import DEPLOYMENTS, FOOS, foreign_deployment
from demo.sim import SIM_OPTIONS
from demo.ui.recorder import Recorder
from demo.ui.words import Answer, answer
from demo.workloads import pod_ready, pod_ready_column, pod_status, workloads
from runtime.manager import USER_AGENT, check_api
from runtime.trace import TRACE_LOGGER

__all__ = ["ACTIONS", "Cluster"]

ROOT = Path(__file__).resolve().parents[2]
# The page's own requests (the controls) carry this User-Agent: the request log tells them apart.
PAGE_AGENT = "demo-ui/0.1.0"
# The loggers whose records the page shows: the controller's (its log and --trace) and the
# reflector's; "tools" carries the Events the recorder writes.
LOGGERS = ("controller", TRACE_LOGGER, "tools", "informer.reflector")


class Cluster:
    """kubesim, the controller in a thread, the recorder, and the controls (no client-go twin)."""

    def __init__(self, status_delay: float = 1.0) -> None:
        self.status_delay = status_delay
        self.recorder = Recorder(USER_AGENT, PAGE_AGENT)
        self.stop = threading.Event()
        # set: the workers may take keys; cleared by the pause control
        self.resumed = threading.Event()
        self.resumed.set()
        self.sim: Any = None
        self.api: RESTClient | None = None
        self.components: Components | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._runner: threading.Thread | None = None
        self._tap: threading.Thread | None = None
        self.exit_codes: list[int] = []

    # -- start and stop ------------------------------------------------------------------------

    def start(self) -> None:
        from kubesim import KubeSim  # the demo's only extra: the embedded API server

        for name in LOGGERS:
            logger = logging.getLogger(name)
            logger.setLevel(logging.DEBUG)
            logger.addHandler(self.recorder)
            logger.propagate = False
        self.sim = KubeSim(deployment_status_delay=self.status_delay, **SIM_OPTIONS).start()
        self._tmp = tempfile.TemporaryDirectory(prefix="sample-controller-demo-ui-")
        kubeconfig = self.sim.write_kubeconfig(Path(self._tmp.name) / "kubeconfig")
        self.api = RESTClient(
            client.ApiClient(load_client_configuration(kubeconfig)), user_agent=PAGE_AGENT
        )
        crd = yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text())
        self.api.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=crd
        )

        options = parse_foo_options(["--kubeconfig", kubeconfig, "--resync-period", "0", "--trace"])
        rest = RESTClient(
            client.ApiClient(load_client_configuration(kubeconfig)),
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent=USER_AGENT,
        )
        check_api(rest, self.sim.url, FOO_GVR)
        registry = CollectorRegistry()
        self.recorder.registry = registry
        ready = threading.Event()

        def started(components: Components) -> None:
            # before anything starts: the workers' first get() already meets the hold
            self.components = self.recorder.components = components
            self.recorder.tap_adds(components)
            self.hold_workers(components)

        self._runner = threading.Thread(
            target=lambda: self.exit_codes.append(
                run(options, rest, self.stop, registry=registry, ready=ready, on_start=started)
            ),
            name="controller",
            daemon=True,
        )
        self._runner.start()
        if not ready.wait(15):
            raise SystemExit("demo-ui: controller caches did not sync")
        self._tap = threading.Thread(
            target=self._tap_requests, name="demo-ui-requests", daemon=True
        )
        self._tap.start()

    def _tap_requests(self) -> None:
        while not self.stop.wait(0.05):
            self.recorder.poll_requests(self.sim)

    def close(self) -> int:
        """Stop the controller (as on SIGTERM) and the server; the controller's exit code."""
        self.resumed.set()
        self.stop.set()
        if self._runner is not None:
            self._runner.join(35)
        if self.sim is not None:
            self.sim.close()
        if self._tmp is not None:
            self._tmp.cleanup()
        return self.exit_codes[0] if self.exit_codes else 1

    # -- pausing the workers, from the demo's side -------------------------------------------

    def hold_workers(self, components: Components) -> None:
        """Make the workers wait before they take a key while the demo is paused.

        The controller has no pause (client-go's neither): the demo wraps the queue's ``get``
        on this one instance, as ``demo.narration.tap_queue`` wraps ``add``. A worker asks for
        a key only when one is queued and the demo is not paused, one worker at a time, so
        no worker sits inside ``get`` waiting to grab the next key while paused. Keys added
        meanwhile stay *queued* (a burst for one key stays one entry: the de-duplication),
        and the syncs in flight when the pause began finish normally.
        """
        queue: Any = components.controller.workqueue
        get = queue.get
        one_at_a_time = threading.Lock()

        def held_get() -> tuple[Any, bool]:
            with one_at_a_time:
                # The queue has no way to wait for a key without taking it: poll its length
                # (every 10 ms, one worker at a time; the others wait on the lock).
                while not queue.shutting_down():
                    if not self.resumed.is_set():
                        self.resumed.wait(0.05)
                    elif len(queue):
                        break
                    else:
                        time.sleep(0.01)
                return get()

        queue.get = held_get

    # -- the controls ----------------------------------------------------------------------------

    def act(self, name: str, args: dict[str, Any]) -> Answer:
        """Run the control ``name``; what was done, in both languages (APIError: its message)."""
        action = ACTIONS.get(name)
        if action is None:
            raise KeyError(name)
        self.recorder.add("apiserver", f"control: {name} {_args_text(args)}".rstrip(), control=name)
        try:
            return action(self, args)
        except APIError as err:
            return answer("error", code=err.code, message=err)

    def _api(self) -> RESTClient:
        assert self.api is not None
        return self.api

    def create_foo(self, args: dict[str, Any]) -> Answer:
        name = _name(args)
        body = {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": name},
            "spec": {
                "deploymentName": args.get("deploymentName") or name,
                "replicas": int(args.get("replicas", 1)),
            },
        }
        self._api().request("POST", resource_path(*FOOS, "default"), body=body)
        return answer("create", name=name)

    def scale_foo(self, args: dict[str, Any]) -> Answer:
        name = _name(args)
        foo = self._api().request("GET", resource_path(*FOOS, "default", name))
        replicas = int(args.get("replicas") or (foo["spec"].get("replicas", 1) + 1))
        self._patch_foo(name, {"spec": {"replicas": replicas}})
        return answer("scale", name=name, replicas=replicas)

    def _patch_foo(self, name: str, patch: dict[str, Any]) -> None:
        self._api().request(
            "PATCH",
            resource_path(*FOOS, "default", name),
            body=patch,
            content_type="application/merge-patch+json",
        )

    def delete_foo(self, args: dict[str, Any]) -> Answer:
        name = _name(args)
        self._api().request("DELETE", resource_path(*FOOS, "default", name))
        return answer("delete", name=name)

    def delete_deployment(self, args: dict[str, Any]) -> Answer:
        name = self._deployment_of(_name(args))
        self._api().request("DELETE", resource_path(*DEPLOYMENTS, "default", name))
        return answer("deleteDeployment", name=name)

    def _deployment_of(self, foo: str) -> str:
        try:
            obj = self._api().request("GET", resource_path(*FOOS, "default", foo))
        except APIError:
            return foo
        return str(obj["spec"].get("deploymentName") or foo)

    def collide(self, args: dict[str, Any]) -> Answer:
        """A Deployment nobody owns, then a Foo that wants its name (ErrResourceExists)."""
        api = self._api()
        body = foreign_deployment()
        try:
            api.request("POST", resource_path(*DEPLOYMENTS, "default"), body=body)
        except APIError as err:
            if err.code != 409:
                raise
        self.create_foo({"name": "collider", "deploymentName": "not-ours", "replicas": 2})
        return answer("collide")

    def burst(self, args: dict[str, Any]) -> Answer:
        """Five changes to one Foo in a row: five events, one key in the queue."""
        name = _name(args)
        for i in range(5):
            self._patch_foo(name, {"metadata": {"annotations": {"demo-ui/burst": str(i)}}})
        return answer("burst", name=name)

    def drop_watches(self, args: dict[str, Any]) -> Answer:
        closed = self.sim.faults.close_watches()
        return answer("dropWatches", closed=closed)

    def bookmarks(self, args: dict[str, Any]) -> Answer:
        """Every watch that asked for bookmarks gets a BOOKMARK now, as the server sends one
        a minute: no object, only the resourceVersion the watch has reached (kubesim sends
        one only when that moved since the last)."""
        self.sim.send_bookmarks()
        return answer("bookmarks")

    def compact(self, args: dict[str, Any]) -> Answer:
        """Move history past every watcher's resourceVersion, then end the watches: each
        watch again from its RV meets 410 Gone, and its reflector relists."""
        self._advance_resource_version()
        self.sim.faults.compact()
        closed = self.sim.faults.close_watches()
        return answer("compact", rv=self.sim.resource_version, closed=closed)

    def _advance_resource_version(self) -> None:
        # A write neither informer watches: the global resourceVersion passes theirs, so the
        # compaction is past what they hold (else a watch from the newest RV would still work).
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "demo-ui-"}}
        self._api().request("POST", resource_path("", "v1", "configmaps", "default"), body=body)

    def tombstone(self, args: dict[str, Any]) -> Answer:
        """Delete a Deployment while the Deployment watch is down, and compact: the relist
        finds it gone, and the informer hands the handlers a DeletedFinalStateUnknown."""
        name = self._deployment_of(_name(args))
        faults = self.sim.faults
        # the Deployment watch (and WatchList stream) cannot reopen while this rule is on
        rule = faults.fail_fraction(1.0, 503, verbs=["watch", "list"], resources=["deployments"])
        try:
            faults.close_watches()
            self._api().request("DELETE", resource_path(*DEPLOYMENTS, "default", name))
            self._advance_resource_version()
            faults.compact()
            time.sleep(0.5)
        finally:
            faults.remove(rule)
        return answer("tombstone", name=name)

    def inject_500(self, args: dict[str, Any]) -> Answer:
        """The next Deployment writes fail with 500, and the Foo needs one: each failure adds
        the key back with the rate limiter's backoff, which doubles."""
        name = _name(args)
        count = int(args.get("count", 8))
        self.sim.faults.fail_next(count, 500, verbs=["create", "update"], resources=["deployments"])
        self.scale_foo({"name": name})
        return answer("inject500", count=count, name=name)

    def inject_409(self, args: dict[str, Any]) -> Answer:
        """Real 409 Conflicts: hold the controller's status write for a moment, and write the
        Foo meanwhile, so the write carries a resourceVersion that is no longer current."""
        name = _name(args)
        count = int(args.get("count", 3))
        announced = threading.Event()

        def listen(record: logging.LogRecord) -> None:
            if record.getMessage() == "status write":
                announced.set()

        self.recorder.on_record(listen)
        faults = self.sim.faults
        rule = faults.add_latency(0.4, verbs=["update"], resources=["foos"])
        conflicts = 0
        try:
            self.scale_foo({"name": name})
            for i in range(count):
                if not announced.wait(3):
                    break
                announced.clear()
                self._patch_foo(name, {"metadata": {"annotations": {"demo-ui/conflict": str(i)}}})
                conflicts += 1
        finally:
            faults.remove(rule)
            self.recorder.off_record(listen)
        return answer("inject409", name=name, conflicts=conflicts)

    def restart(self, args: dict[str, Any]) -> Answer:
        threading.Thread(target=self.sim.restart, name="demo-ui-restart", daemon=True).start()
        return answer("restart")

    def pause(self, args: dict[str, Any]) -> Answer:
        self.resumed.clear()
        return answer("pause")

    def resume(self, args: dict[str, Any]) -> Answer:
        self.resumed.set()
        return answer("resume")

    # -- what the page shows besides the machinery --------------------------------------------

    def cluster_state(self) -> dict[str, Any]:
        """The Foos, Deployments and Events as kubectl would list them, and each Deployment's
        Pods (``workloads``)."""
        if self.sim is None:
            return {}
        out: dict[str, Any] = {"resourceVersion": str(self.sim.resource_version)}
        try:
            api = self._api()
            out["foos"] = api.request("GET", resource_path(*FOOS, "default"), timeout=2)["items"]
            out["deployments"] = api.request(
                "GET", resource_path(*DEPLOYMENTS, "default"), timeout=2
            )["items"]
            out["workloads"] = self._workloads(out["deployments"])
            # the Foos' and Deployments' Events (the ReplicaSets' and Pods' are one per Pod)
            selector = "involvedObject.kind!=ReplicaSet,involvedObject.kind!=Pod"
            events = api.request(
                "GET",
                resource_path("", "v1", "events", "default"),
                params={"fieldSelector": selector},
                timeout=2,
            )
            out["events"] = events["items"]
            out["up"] = True
        except Exception:
            out["up"] = False
        out["paused"] = not self.resumed.is_set()
        out["faults"] = [r.to_dict() for r in self.sim.faults.rules]
        return out

    def _workloads(self, deployments: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each Deployment's ReplicaSets and Pods, by controller reference (demo.workloads), as
        the page draws them; Pods whose ReplicaSet is gone (being collected) under ``""``."""
        api = self._api()
        replica_sets = api.request(
            "GET", resource_path("apps", "v1", "replicasets", "default"), timeout=2
        )["items"]
        pods = api.request("GET", resource_path("", "v1", "pods", "default"), timeout=2)["items"]
        found, orphans = workloads(deployments, replica_sets, pods)
        drawn = [
            {
                "deployment": w.name,
                "replicaSets": sorted(rs["metadata"]["name"] for rs in w.replica_sets),
                "pods": [_pod(p) for p in w.pods],
            }
            for w in found
        ]
        if orphans:
            drawn.append({"deployment": "", "replicaSets": [], "pods": [_pod(p) for p in orphans]})
        return drawn


def _pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A Pod as the page draws it: kubectl's NAME, READY and STATUS, and its Ready condition."""
    return {
        "name": pod["metadata"]["name"],
        "status": pod_status(pod),
        "ready": pod_ready(pod),
        "readyColumn": pod_ready_column(pod),
        "replicaSet": next(
            (
                ref.get("name")
                for ref in pod["metadata"].get("ownerReferences") or []
                if ref.get("controller")
            ),
            "",
        ),
    }


def _name(args: dict[str, Any]) -> str:
    return str(args.get("name") or "example-foo")


def _args_text(args: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(args.items()) if v not in ("", None))


ACTIONS: dict[str, Callable[[Cluster, dict[str, Any]], Answer]] = {
    "create": Cluster.create_foo,
    "scale": Cluster.scale_foo,
    "delete": Cluster.delete_foo,
    "deleteDeployment": Cluster.delete_deployment,
    "collide": Cluster.collide,
    "burst": Cluster.burst,
    "dropWatches": Cluster.drop_watches,
    "bookmarks": Cluster.bookmarks,
    "compact": Cluster.compact,
    "tombstone": Cluster.tombstone,
    "inject500": Cluster.inject_500,
    "inject409": Cluster.inject_409,
    "restart": Cluster.restart,
    "pause": Cluster.pause,
    "resume": Cluster.resume,
}
