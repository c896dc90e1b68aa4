"""The floor of bench.e2e_bench: the controller's API calls, made by the plainest loop there is.

Not a controller: no cache, no queue, no retries, no correlation, no logging. It makes the API
calls our controller must make for each new Foo, once each, over ``http.client`` connections
kept alive and bodies through the stdlib's ``json``:

- list, then watch, Foos and Deployments, decoding every event (what the informers decode);
- for a new Foo: POST its Deployment (the body ``new_deployment`` builds);
- when the Deployment reports ``availableReplicas == spec.replicas``: PUT the Foo's status (the
  body ``desired_status`` builds) and POST one ``Synced`` Event.

So its CPU per Foo is what any Python program pays to make these calls and read these events
on this interpreter: the floor under ours, the official-client peer and kopf. Three threads,
each with its own connection: one per watch (the Foo watch's thread makes the Deployment POSTs,
the Deployment watch's thread the status PUTs) and one posting Events from a plain queue, so
no call waits on a call of another kind.

    python -m bench.peers.floor --kubeconfig PATH

Plain HTTP or HTTPS with a bearer token or none: what kubesim's kubeconfig holds, nothing more.
"""

from __future__ import annotations

import argparse
import http.client
import json
import queue
import signal
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import yaml

from controller.builders import desired_status, new_deployment
from controller.foo_controller import MESSAGE_RESOURCE_SYNCED, SUCCESS_SYNCED

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/foos"
DEPLOYMENTS = "/apis/apps/v1/deployments"


class Server:
    """Where the API is and how to reach it: one new connection per call of ``connect``."""

    def __init__(self, kubeconfig: str) -> None:
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        context = next(c for c in cfg["contexts"] if c["name"] == cfg["current-context"])
        cluster = next(c for c in cfg["clusters"] if c["name"] == context["context"]["cluster"])
        user = next(u for u in cfg["users"] if u["name"] == context["context"]["user"])
        url = urlsplit(cluster["cluster"]["server"])
        self.https = url.scheme == "https"
        self.host, self.port = url.hostname or "127.0.0.1", url.port
        self.tls: ssl.SSLContext | None = None
        if self.https:
            self.tls = ssl.create_default_context(
                cafile=cluster["cluster"].get("certificate-authority")
            )
        self.headers = {"Accept": "application/json", "Content-Type": "application/json"}
        token = (user.get("user") or {}).get("token")
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def connect(self) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, context=self.tls)
        return http.client.HTTPConnection(self.host, self.port)


class Caller:
    """One kept-alive connection, one request at a time."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.conn = server.connect()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers=self.server.headers)
        resp = self.conn.getresponse()
        payload = resp.read()
        if resp.status >= 300:
            print(f"{method} {path}: {resp.status} {payload[:200]!r}", file=sys.stderr)
            return None
        return json.loads(payload)


def watch(server: Server, path: str) -> Iterator[tuple[str, dict]]:
    """List, then watch from the list's resourceVersion: (type, object) for every event."""
    listed = Caller(server).call("GET", path)
    for item in listed["items"]:
        yield "ADDED", item
    rv = listed["metadata"]["resourceVersion"]
    conn = server.connect()
    conn.request(
        "GET",
        f"{path}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true",
        headers=server.headers,
    )
    resp = conn.getresponse()
    while line := resp.readline():
        ev = json.loads(line)
        yield ev["type"], ev["object"]


def new_event(foo: dict) -> dict:
    """The Synced Event, with the fields the recorder writes."""
    meta = foo["metadata"]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": meta["namespace"]},
        "involvedObject": {
            "kind": "Foo",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": foo["apiVersion"],
            "resourceVersion": meta["resourceVersion"],
        },
        "reason": SUCCESS_SYNCED,
        "message": MESSAGE_RESOURCE_SYNCED,
        "source": {"component": "floor"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Normal",
        "reportingComponent": "floor",
    }


class Floor:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.foos: dict[str, dict] = {}  # "ns/name" -> the Foo as last seen
        self.created: set[str] = set()  # Foos whose Deployment was POSTed
        self.reported: set[str] = set()  # Foos whose status was PUT
        self.events: queue.Queue[dict] = queue.Queue()

    def watch_foos(self) -> None:
        caller = Caller(self.server)
        for etype, foo in watch(self.server, FOOS):
            meta = foo["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            if etype == "DELETED":
                self.foos.pop(key, None)
                continue
            if etype == "BOOKMARK":
                continue
            self.foos[key] = foo
            if key not in self.created and not foo.get("status"):
                self.created.add(key)
                caller.call(
                    "POST",
                    f"/apis/apps/v1/namespaces/{meta['namespace']}/deployments",
                    new_deployment(foo),
                )

    def watch_deployments(self) -> None:
        caller = Caller(self.server)
        for etype, dep in watch(self.server, DEPLOYMENTS):
            if etype not in ("ADDED", "MODIFIED"):
                continue
            meta = dep["metadata"]
            owner = next(
                (r for r in meta.get("ownerReferences") or [] if r.get("controller")), None
            )
            if owner is None or owner.get("kind") != "Foo":
                continue
            key = f"{meta['namespace']}/{owner['name']}"
            foo = self.foos.get(key)
            if foo is None or key in self.reported:
                continue
            available = (dep.get("status") or {}).get("availableReplicas")
            if available != foo["spec"].get("replicas", 1):
                continue
            self.reported.add(key)
            caller.call(
                "PUT",
                f"{FOOS.replace('/foos', '')}/namespaces/{meta['namespace']}/foos/"
                f"{owner['name']}/status",
                {**foo, "status": desired_status(foo, dep)},
            )
            self.events.put(foo)

    def post_events(self) -> None:
        caller = Caller(self.server)
        while True:
            foo = self.events.get()
            caller.call(
                "POST", f"/api/v1/namespaces/{foo['metadata']['namespace']}/events", new_event(foo)
            )

    def run(self, stop: threading.Event) -> None:
        for fn in (self.watch_foos, self.watch_deployments, self.post_events):
            threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
        stop.wait()


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench.peers.floor")
    p.add_argument("--kubeconfig", required=True)
    args = p.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    Floor(Server(args.kubeconfig)).run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
