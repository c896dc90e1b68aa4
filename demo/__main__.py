"""The story ``make demo`` tells: the controller against kubesim, step by step.

No cluster needed: it starts kubesim as ``make sim`` does (``demo.sim.SIM_OPTIONS``: the
workload chain, where a Deployment owns a ReplicaSet which owns Pods, and a simulated node whose
kubelet runs them after ``--status-delay`` seconds), installs the Foo CRD, starts the controller
exactly as ``sample-controller --kubeconfig <file> --trace`` would, and then walks through what
a user does:

1. create ``manifests/example-foo.yaml`` and watch the Deployment, its Pods and the status
   appear;
2. scale the Foo;
3. delete its Deployment by hand and watch it come back, with new Pods;
4. create a Foo whose Deployment name is taken by someone else's Deployment;
5. delete the Foo and watch the garbage collector remove its Deployment, ReplicaSet and Pods;
6. turn on Foo's admission webhooks (the fourth component: the API server asks them before it
   stores a Foo), and watch a Foo get its default and a colliding Foo be refused at the door.

Each step prints the path a change takes, in plain lines (``demo.narration`` makes them):

    watch    Foo default/example-foo ADDED (rv 12)            the informer saw a change
    queue    add default/example-foo                          a handler enqueued its key
    sync     default/example-foo: creating deployment ...     the reconcile decided
    api      CREATE deployments default -> 201                the write reached the server
    event    Normal Synced on Foo default/example-foo: ...    an Event was recorded

and ``kubectl``-style tables of Foos, Deployments and Pods. A step prints its tables once it is
over (``demo.settle``): the cluster converged, and the controller has handled every change of
it, so no line of one step is printed under the next one's headline. It exits 0 when every
step converged.
"""

from __future__ import annotations

import logging
import sys
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
from demo.cli import OneLineParser, seconds
from demo.narration import (
    DEPLOYMENTS,
    FOOS,
    Narrator,
    RequestTap,
    elapsed,
    event_object,
    foreign_deployment,
    headline,
    print_lines,
    print_tables,
    say,
    table,
    tap_queue,
    tap_writes,
)
from demo.settle import Handled, tap_handlers, wait_settled
from demo.sim import SIM_OPTIONS
from runtime.manager import USER_AGENT, check_api

ROOT = Path(__file__).resolve().parents[1]


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = predicate()
        except APIError as err:
            if err.code != 404:
                raise
            result = None
        if result:
            return result
        time.sleep(0.05)
    raise SystemExit(f"demo: timed out waiting for {what}")


def admission_step(api: RESTClient, components: Components) -> None:
    """Step 6: Foo's webhooks served on 127.0.0.1 with a CA made here, registered by url from
    the shipped configurations; a defaulted Foo, then a refused one; then unregistered."""
    from controller.webhooks import register
    from runtime.webhook.selfmanaged import CertRotator
    from runtime.webhook.server import WebhookServer

    headline("6. admission webhooks: the API server asks Foo's webhooks before it stores a Foo")
    docs = yaml.safe_load_all(
        (ROOT / "manifests/components/webhooks/webhook-configurations.yaml").read_text()
    )
    configs = [(d["kind"].lower() + "s", d) for d in docs]
    rotator = CertRotator(api, ["127.0.0.1"], [(r, d["metadata"]["name"]) for r, d in configs])
    server = WebhookServer(("127.0.0.1", 0), rotator, starters=(rotator.ensure,))
    register(server, components.controller)
    server.start()
    port = server.address[1]
    admreg = "/apis/admissionregistration.k8s.io/v1"
    for resource, doc in configs:
        for hook in doc["webhooks"]:
            # by url: kubesim has no Service network (the manifests use the Service)
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{hook['clientConfig']['service']['path']}"
            }
        api.request("POST", f"{admreg}/{resource}", body=doc)
    rotator.inject(rotator.ca)
    say("setup", f"webhooks on https://127.0.0.1:{port}, CA written into both configurations")
    try:
        created = api.request(
            "POST",
            resource_path(*FOOS, "default"),
            body={
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "metadata": {"name": "defaulted"},
                "spec": {"replicas": 1},
            },
        )
        say(
            "admit",
            "Foo defaulted sent without spec.deploymentName; stored with deploymentName="
            + created["spec"]["deploymentName"],
        )
        try:
            api.request(
                "POST",
                resource_path(*FOOS, "default"),
                body={
                    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                    "kind": "Foo",
                    "metadata": {"name": "intruder"},
                    "spec": {"deploymentName": "not-ours", "replicas": 1},
                },
            )
        except APIError as err:
            say("admit", f"Foo intruder refused: {err.code} {err.message}")
        else:
            raise SystemExit("demo: the Foo naming not-ours was admitted")
        say("check", "nothing stored for intruder: the controller never sees it")
    finally:
        for resource, doc in configs:
            api.request("DELETE", f"{admreg}/{resource}/{doc['metadata']['name']}")
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser("python -m demo", __doc__.split("\n")[0])
    parser.add_argument(
        "--status-delay",
        type=seconds,
        default=1.0,
        help="seconds a Pod takes to run on the simulated node (default 1)",
    )
    opts = parser.parse_args(argv)

    from kubesim import KubeSim  # the demo's only extra: the embedded API server

    logging.basicConfig(level=logging.WARNING, format="  %(levelname)s %(name)s: %(message)s")
    for name in ("controller", "runtime", "tools"):  # the controller's lines, its Events
        logging.getLogger(name).setLevel(logging.INFO)
        logging.getLogger(name).addHandler(Narrator())
        logging.getLogger(name).propagate = False

    headline("starting kubesim, the embedded API server (workload chain, one simulated node)")
    with (
        KubeSim(deployment_status_delay=opts.status_delay, **SIM_OPTIONS) as sim,
        tempfile.TemporaryDirectory(prefix="sample-controller-demo-") as tmp,
    ):
        kubeconfig = sim.write_kubeconfig(Path(tmp) / "kubeconfig")
        say("setup", f"API server at {sim.url}, kubeconfig {kubeconfig}")
        api = RESTClient(client.ApiClient(load_client_configuration(kubeconfig)))

        crd = yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text())
        api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=crd)
        say("setup", "installed crds/foo-crd.yaml (foos.samplecontroller.k8s.io)")

        headline("starting the controller: sample-controller --kubeconfig " + kubeconfig)
        # --trace: its "informer" records are the watch lines (see demo.narration)
        options = parse_foo_options(
            ["--kubeconfig", kubeconfig, "--resync-period", "30s", "--trace"]
        )
        rest = RESTClient(
            client.ApiClient(load_client_configuration(kubeconfig)),
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent=USER_AGENT,
        )
        check_api(rest, sim.url, FOO_GVR)
        stop, ready = threading.Event(), threading.Event()
        started: list[Components] = []
        handled: list[Handled] = []

        def on_start(components: Components) -> None:
            # before the informers start: the handlers are wrapped before their first call
            started.append(components)
            handled.append(tap_handlers(components))

        exit_codes: list[int] = []
        runner = threading.Thread(
            target=lambda: exit_codes.append(
                run(
                    options,
                    rest,
                    stop,
                    registry=CollectorRegistry(),
                    ready=ready,
                    on_start=on_start,
                )
            ),
            name="controller",
            daemon=True,
        )
        runner.start()
        if not ready.wait(15):
            raise SystemExit("demo: controller caches did not sync")
        tap_queue(started[0].controller)
        tap_writes(started[0].controller)
        tap = RequestTap(sim, stop)
        tap.start()
        say("setup", "caches synced, 2 workers running")

        def step_over(also: Callable[[], str | None] = lambda: None) -> None:
            """Wait until the step is over (demo.settle), and print what it wrote last."""
            wait_settled(api, handled[0], started[0], also=also)
            tap.flush()

        headline("1. kubectl apply -f manifests/example-foo.yaml")
        example = yaml.safe_load((ROOT / "manifests" / "example-foo.yaml").read_text())
        example["metadata"]["namespace"] = "default"
        api.request("POST", resource_path(*FOOS, "default"), body=example)
        step_over()
        print_tables(api)

        headline('2. kubectl patch foo example-foo --type=merge -p \'{"spec":{"replicas":3}}\'')
        api.request(
            "PATCH",
            resource_path(*FOOS, "default", "example-foo"),
            body={"spec": {"replicas": 3}},
            content_type="application/merge-patch+json",
        )
        step_over()
        print_tables(api)

        headline("3. kubectl delete deployment example-foo   (by hand: the controller repairs it)")
        old_uid = api.request("GET", resource_path(*DEPLOYMENTS, "default", "example-foo"))[
            "metadata"
        ]["uid"]
        api.request("DELETE", resource_path(*DEPLOYMENTS, "default", "example-foo"))

        # and ends converged on the new Deployment: its Pods run, and the Foo's status says so
        # (the sync that recreated it wrote 0, so a 3 is the repaired one)
        def repaired() -> str | None:
            try:
                deployment = api.request(
                    "GET", resource_path(*DEPLOYMENTS, "default", "example-foo")
                )
            except APIError as err:
                if err.code != 404:
                    raise
                return "Deployment example-foo to be created again"
            return None if deployment["metadata"]["uid"] != old_uid else "the old one to go"

        step_over(also=repaired)
        print_tables(api)

        headline("4. a Foo whose Deployment name is taken by a Deployment it does not own")
        api.request(
            "POST",
            resource_path(*DEPLOYMENTS, "default"),
            body=foreign_deployment(),
        )
        say("setup", "created Deployment not-ours (no owner)")
        api.request(
            "POST",
            resource_path(*FOOS, "default"),
            body={
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "metadata": {"name": "collider"},
                "spec": {"deploymentName": "not-ours", "replicas": 2},
            },
        )
        wait_for(
            "collision warning",
            lambda: [
                e
                for e in api.request(
                    "GET",
                    resource_path("", "v1", "events", "default"),
                    params={"fieldSelector": "involvedObject.name=collider"},
                )["items"]
                if e["reason"] == "ErrResourceExists"
            ],
        )
        # a few retries, each after a longer backoff than the one before (the narration shows
        # them as they come)
        wait_for(
            "retries of collider",
            lambda: started[0].controller.workqueue.num_requeues("default/collider") >= 4,
        )
        untouched = api.request("GET", resource_path(*DEPLOYMENTS, "default", "not-ours"))
        say(
            "check",
            f"not-ours still has {untouched['spec']['replicas']} replica and no owner: "
            "the controller never writes what it does not own",
        )
        api.request("DELETE", resource_path(*FOOS, "default", "collider"))
        # over when its last retry has found it gone, and not-ours runs its Pod
        step_over()

        headline(
            "5. kubectl delete foo example-foo   (the garbage collector removes its Deployment)"
        )
        api.request("DELETE", resource_path(*FOOS, "default", "example-foo"))

        def collected() -> str | None:
            try:
                api.request("GET", resource_path(*DEPLOYMENTS, "default", "example-foo"))
            except APIError as err:
                if err.code == 404:
                    return None
                raise
            return "the garbage collector to delete Deployment example-foo"

        step_over(also=collected)
        say("check", "deployment example-foo is gone, and its ReplicaSet and Pods with it")
        print_tables(api)

        # the Foos' and Deployments' Events: the ReplicaSets' and Pods' are one line per Pod
        selector = "involvedObject.kind!=ReplicaSet,involvedObject.kind!=Pod"
        headline(f"kubectl get events --field-selector {selector}   (correlated)")
        events = api.request(
            "GET",
            resource_path("", "v1", "events", "default"),
            params={"fieldSelector": selector},
        )["items"]
        rows = [["TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"]]
        for e in events:
            rows.append([e["type"], e["reason"], event_object(e), e.get("count", 1), e["message"]])
        print_lines(table(rows))  # in one piece: no watch line lands inside the table

        admission_step(api, started[0])

        headline("shutting down (as on SIGTERM: drain the queue, flush events)")
        stop.set()
        runner.join(35)
        if runner.is_alive() or exit_codes != [0]:
            print("demo: controller did not stop cleanly", file=sys.stderr)
            return 1
        say("done", f"controller exited {exit_codes[0]}; demo finished in {elapsed():.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
