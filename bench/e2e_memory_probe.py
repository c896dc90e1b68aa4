"""The memory half of bench.e2e_bench, run as the controller's own process.

    python -m bench.e2e_memory_probe --kubeconfig PATH --expect 10000 [--strip] [--tracemalloc]

Runs the real controller (``runtime.manager.run``, the function the CLI runs) against a
kubesim that holds ``--expect`` converged Foos and as many Deployments, waits until both caches
hold every object and the workers are idle, and prints one JSON line:

- ``rss_delta``: VmRSS after the sync minus VmRSS before ``run`` (imports done), bytes;
- with ``--tracemalloc``: ``traced_delta``, Python memory still allocated after the sync (and a
  ``gc.collect()``) minus before ``run``; and ``decoded``: the same measurement for the objects
  alone, listed in the reflector's way (pages of 500, ``json.loads``) and kept in a list, with
  the same transform applied: the "decoded object itself" the cache cost is compared with.

``--strip`` installs a transform dropping ``metadata.managedFields`` on both informers
(client-go ``TransformFunc``; controller-runtime's ``TransformStripManagedFields``). The CLI
has no flag for it, so the probe passes it to the factories ``run`` builds.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import threading
import time
import tracemalloc

from kubernetes import client, config
from prometheus_client import CollectorRegistry

import controller.main as manager
import runtime.manager as runtime_manager
from client.rest import RESTClient, resource_path
from controller.main import parse_foo_options as parse_options
from informer.transforms import transform_strip_managed_fields

FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
DEPLOYMENT_GVR = ("apps", "v1", "deployments")


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def decoded_bytes(rest: RESTClient, transform) -> dict:
    """Traced bytes of every Foo and Deployment decoded and kept, with the transform applied.

    ``decoded``: listed in pages of 500 and ``json.loads``-ed page by page, as the reflector
    lists (keys are shared within a page: json's decoder memoises them per call);
    ``decoded_single``: each object ``json.loads``-ed on its own, as watch events arrive.
    """
    pages: list[bytes] = []
    for gvr in (FOO_GVR, DEPLOYMENT_GVR):
        params: dict = {"limit": 500}
        while True:
            page = rest.request("GET", resource_path(*gvr), params=params)
            pages.append(json.dumps(page).encode())
            token = page["metadata"].get("continue")
            if not token:
                break
            params = {"limit": 500, "continue": token}
            del page
    singles = [json.dumps(o).encode() for body in pages for o in json.loads(body)["items"]]

    def measure(decode) -> int:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        kept = decode()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - before
        del kept
        return size

    def one(obj: dict) -> dict:
        return transform(obj) if transform else obj

    return {
        "decoded": measure(lambda: [one(o) for b in pages for o in json.loads(b)["items"]]),
        "decoded_single": measure(lambda: [one(json.loads(b)) for b in singles]),
        "decoded_objects": len(singles),
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--expect", type=int, required=True, help="Foos (and Deployments) in kubesim")
    p.add_argument("--strip", action="store_true", help="drop managedFields before caching")
    p.add_argument("--tracemalloc", action="store_true")
    a = p.parse_args()

    cfg = client.Configuration()
    config.load_kube_config(a.kubeconfig, client_configuration=cfg)
    rest = RESTClient(client.ApiClient(cfg), user_agent=runtime_manager.USER_AGENT)
    options = parse_options(
        [
            "--kubeconfig",
            a.kubeconfig,
            "--kube-api-qps",
            "0",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
            "--strip-managed-fields" if a.strip else "--no-strip-managed-fields",
        ]
    )
    runtime_manager.tune_gc()  # what run_process() does before run()
    built: list[manager.Components] = []  # what run() built, from its on_start
    stop, ready = threading.Event(), threading.Event()
    gc.collect()
    if a.tracemalloc:
        tracemalloc.start()
    traced0, rss0 = tracemalloc.get_traced_memory()[0], rss()
    started = time.monotonic()
    runner = threading.Thread(
        target=manager.run,
        args=(options, rest, stop),
        kwargs={"registry": CollectorRegistry(), "ready": ready, "on_start": built.append},
        name="controller",
    )
    runner.start()
    if not ready.wait(600):
        raise SystemExit("caches did not sync")
    parts = built[0]
    foos, deps = parts.foo_informer.get_store(), parts.deployment_informer.get_store()
    queue = parts.controller.workqueue
    # Synced, then idle: every Foo was reconciled once (no writes: they are converged).
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if (
            len(foos.list_keys()) >= a.expect
            and len(deps.list_keys()) >= a.expect
            and len(queue) == 0
        ):
            break
        time.sleep(0.1)
    synced = time.monotonic() - started
    time.sleep(1.0)
    gc.collect()
    out = {
        "strip": a.strip,
        "objects": len(foos.list_keys()) + len(deps.list_keys()),
        "rss_delta": rss() - rss0,
        "rss": rss(),
        "sync_seconds": synced,
        "traced_peak": tracemalloc.get_traced_memory()[1] - traced0,
    }
    if a.tracemalloc:
        out["traced_delta"] = tracemalloc.get_traced_memory()[0] - traced0
        out.update(decoded_bytes(rest, transform_strip_managed_fields if a.strip else None))
    stop.set()
    runner.join(30)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
