"""JSON codecs on the controller's real payloads: ``orjson`` and ``msgspec`` beside ``json``.

    python -m bench.json_bench [--objects 500] [--rounds 7]
    python bench/json_bench.py

Every figure is printed beside the stdlib ``json`` measured in the same run, on the same bytes,
interleaved round by round (so load on a shared machine hits every codec alike); each figure is
the median over the rounds of the thread's CPU time per operation.

The payloads are what the controller decodes and encodes, as kubesim serialises them: kubesim
runs in this process, objects are created through its HTTP API, and the raw bytes of the list
and watch responses are read off the socket before any measurement starts.

- a Deployment list body (``GET .../deployments``), with and without ``metadata.managedFields``;
- a Foo list body (small custom objects);
- watch lines (one ``{"type", "object"}`` JSON line each) of Deployments, with and without
  managedFields, and of Foos;
- encoding the body of a Foo status PUT (``PUT .../foos/<name>/status``): what the controller
  sends after every change, from a plain dict to bytes (``json.dumps(...).encode()`` today).

kubesim writes managedFields as a real server does, but its entries depend on how the bench
made the objects; so that the payloads stay those recorded in docs/benchmarks.md, each
Deployment is re-stored once: for the "with managedFields" payloads with the block a real API
server keeps for an object applied by kubectl and updated by kube-controller-manager, for the
others without managedFields. Everything else is kubesim's own output. A codec is only a
candidate if it returns the same plain dicts ``json`` does: that is checked on every payload
before timing.
"""

from __future__ import annotations

import argparse
import copy
import gc
import http.client
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kubesim import KubeSim

CRD = Path(__file__).resolve().parents[1] / "crds" / "foo-crd.yaml"
NS_PLAIN, NS_MANAGED = "bench-plain", "bench-managed"
FOO_PATH = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos"
DEPLOY_PATH = "/apis/apps/v1/namespaces/{ns}/deployments"

# What a real API server keeps for a Deployment applied with kubectl and then updated by
# kube-controller-manager (trimmed of nothing: this is the size it really has).
MANAGED_FIELDS: list[dict[str, Any]] = [
    {
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {
                "f:annotations": {
                    ".": {},
                    "f:kubectl.kubernetes.io/last-applied-configuration": {},
                },
                "f:labels": {".": {}, "f:app": {}, "f:controller": {}},
                "f:ownerReferences": {".": {}, 'k:{"uid":"0"}': {}},
            },
            "f:spec": {
                "f:progressDeadlineSeconds": {},
                "f:replicas": {},
                "f:revisionHistoryLimit": {},
                "f:selector": {},
                "f:strategy": {
                    "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                    "f:type": {},
                },
                "f:template": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:controller": {}}},
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"nginx"}': {
                                ".": {},
                                "f:image": {},
                                "f:imagePullPolicy": {},
                                "f:name": {},
                                "f:resources": {},
                                "f:terminationMessagePath": {},
                                "f:terminationMessagePolicy": {},
                            }
                        },
                        "f:dnsPolicy": {},
                        "f:restartPolicy": {},
                        "f:schedulerName": {},
                        "f:securityContext": {},
                        "f:terminationGracePeriodSeconds": {},
                    },
                },
            },
        },
    },
    {
        "manager": "kube-controller-manager",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-01-01T00:00:05Z",
        "fieldsType": "FieldsV1",
        "subresource": "status",
        "fieldsV1": {
            "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
            "f:status": {
                "f:availableReplicas": {},
                "f:conditions": {
                    ".": {},
                    'k:{"type":"Available"}': {
                        ".": {},
                        "f:lastTransitionTime": {},
                        "f:lastUpdateTime": {},
                        "f:message": {},
                        "f:reason": {},
                        "f:status": {},
                        "f:type": {},
                    },
                    'k:{"type":"Progressing"}': {
                        ".": {},
                        "f:lastTransitionTime": {},
                        "f:lastUpdateTime": {},
                        "f:message": {},
                        "f:reason": {},
                        "f:status": {},
                        "f:type": {},
                    },
                },
                "f:observedGeneration": {},
                "f:readyReplicas": {},
                "f:replicas": {},
                "f:updatedReplicas": {},
            },
        },
    },
]


# -- payloads, read off kubesim's sockets ---------------------------------------------------------


class Api:
    """The plainest keep-alive HTTP client: enough to create objects and read raw bodies."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port)

    def call(self, method: str, path: str, body: Any = None) -> bytes:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {raw[:200]!r}")
        return raw


def deployment(ns: str, foo: dict[str, Any]) -> dict[str, Any]:
    """The Deployment the controller creates for a Foo (sample-controller's newDeployment)."""
    name = foo["spec"]["deploymentName"]
    labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "ownerReferences": [
                {
                    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                    "kind": "Foo",
                    "name": foo["metadata"]["name"],
                    "uid": foo["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": foo["spec"]["replicas"],
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }


def populate(sim: KubeSim, api: Api, ns: str, count: int) -> list[dict[str, Any]]:
    """Create ``count`` Foos, their Deployments and the Foos' status, as the controller does;
    return the status PUT bodies it sent."""
    api.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    bodies = []
    for i in range(count):
        foo = json.loads(
            api.call(
                "POST",
                FOO_PATH.format(ns=ns),
                {
                    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                    "kind": "Foo",
                    "metadata": {"name": f"foo-{i:05d}"},
                    "spec": {"deploymentName": f"foo-{i:05d}", "replicas": 1 + i % 3},
                },
            )
        )
        api.call("POST", DEPLOY_PATH.format(ns=ns), deployment(ns, foo))
        update = copy.deepcopy(foo)
        update["status"] = {"availableReplicas": foo["spec"]["replicas"]}
        bodies.append(update)
        path = f"{FOO_PATH.format(ns=ns)}/{foo['metadata']['name']}/status"
        api.call("PUT", path, update)
    return bodies


def set_managed_fields(sim: KubeSim, ns: str, managed: list | None) -> None:
    """Re-store every Deployment of ``ns`` with ``managed`` as its managedFields (None: none),
    one MODIFIED watch event each."""
    info = sim.registry.lookup("apps", "v1", "deployments")
    for stored in sim.storage.items(info.storage_key):
        meta = stored.obj["metadata"]
        if meta.get("namespace") != ns:
            continue
        obj = copy.deepcopy(stored.obj)
        obj["metadata"].pop("managedFields", None)
        if managed is not None:
            obj["metadata"]["managedFields"] = copy.deepcopy(managed)
        sim.storage.put(info.storage_key, ns, meta["name"], obj)


def watch_lines(url: str, path: str, since: str) -> list[bytes]:
    """Every watch line kubesim replays for ``path`` from resourceVersion ``since``."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port)
    conn.request("GET", f"{path}?watch=1&resourceVersion={since}&timeoutSeconds=1")
    body = conn.getresponse().read()  # the server ends the stream after timeoutSeconds
    conn.close()
    return [line for line in body.split(b"\n") if line.strip()]


def last_per_object(lines: list[bytes]) -> list[bytes]:
    """The last MODIFIED line of each object: the steady-state event of a resync or update."""
    last: dict[str, bytes] = {}
    for line in lines:
        event = json.loads(line)
        if event["type"] == "MODIFIED":
            last[event["object"]["metadata"]["name"]] = line
    return list(last.values())


def payloads(objects: int) -> dict[str, Any]:
    with KubeSim(crds=[CRD], deployment_status_delay=0.0, history_size=objects * 20) as sim:
        api = Api(sim.url)
        since = json.loads(api.call("GET", "/api/v1/namespaces"))["metadata"]["resourceVersion"]
        bodies = populate(sim, api, NS_PLAIN, objects)
        populate(sim, api, NS_MANAGED, objects)
        if not sim.wait_idle(timeout=30.0):
            raise RuntimeError("kubesim did not settle (deployment status loop)")
        set_managed_fields(sim, NS_MANAGED, MANAGED_FIELDS)
        set_managed_fields(sim, NS_PLAIN, None)
        out = {
            "list: Deployments, managedFields": api.call("GET", DEPLOY_PATH.format(ns=NS_MANAGED)),
            "list: Deployments, no managedFields": api.call("GET", DEPLOY_PATH.format(ns=NS_PLAIN)),
            "list: Foos": api.call("GET", FOO_PATH.format(ns=NS_PLAIN)),
            "watch: Deployment, managedFields": last_per_object(
                watch_lines(sim.url, DEPLOY_PATH.format(ns=NS_MANAGED), since)
            ),
            "watch: Deployment, no managedFields": last_per_object(
                watch_lines(sim.url, DEPLOY_PATH.format(ns=NS_PLAIN), since)
            ),
            "watch: Foo": last_per_object(
                watch_lines(sim.url, FOO_PATH.format(ns=NS_PLAIN), since)
            ),
            "encode: Foo status PUT body": bodies,
        }
        api.conn.close()
    return out


# -- codecs ---------------------------------------------------------------------------------------


def codecs() -> dict[str, tuple[Callable[[bytes], Any], Callable[[Any], bytes]]]:
    """name -> (decode bytes, encode to bytes); ``json`` first, as client/rest.py uses it."""
    out: dict[str, tuple[Callable[[bytes], Any], Callable[[Any], bytes]]] = {
        "json": (json.loads, lambda obj: json.dumps(obj).encode())
    }
    try:
        import orjson

        out["orjson"] = (orjson.loads, orjson.dumps)
    except ImportError:
        print("orjson is not installed: skipped")
    try:
        import msgspec

        decoder, encoder = msgspec.json.Decoder(), msgspec.json.Encoder()
        out["msgspec"] = (decoder.decode, encoder.encode)
    except ImportError:
        print("msgspec is not installed: skipped")
    return out


def timed(fn: Callable[[], object], number: int) -> float:
    """CPU seconds of this thread per call (not wall time: on a shared machine, time spent
    waiting for a core is not the codec's), with the cyclic GC off while timing (as ``timeit``
    does): a collection that one codec's garbage triggers would otherwise be billed to whichever
    codec runs next."""
    gc.collect()
    gc.disable()
    try:
        started = time.thread_time()
        for _ in range(number):
            fn()
        return (time.thread_time() - started) / number
    finally:
        gc.enable()


def compare(cases: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each case, the cases interleaved round by round."""
    for fn in cases.values():  # warm up: the allocator's arenas, the decoders' key caches
        timed(fn, 2)
    # ~50 ms per case per round, and at least 5 calls: one call of a large list is at the mercy
    # of page faults and of the other processes on the machine.
    number = max(5, int(0.05 / max(timed(cases["json"], 3), 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(timed(fn, number))
    return {name: statistics.median(values) for name, values in samples.items()}


def check_same(name: str, data: list[bytes], decode: Callable[[bytes], Any]) -> None:
    for raw in data:
        if decode(raw) != json.loads(raw):
            raise AssertionError(f"{name} decodes differently from json")


def per_item(
    label: str,
    data: bytes | list[bytes] | list[dict[str, Any]],
    available: dict[str, tuple[Callable[[bytes], Any], Callable[[Any], bytes]]],
    rounds: int,
) -> tuple[float, dict[str, float]]:
    """(mean size in bytes, codec -> seconds per body/line/object) for one payload."""
    items: list[Any] = [data] if isinstance(data, bytes) else list(data)
    encode = label.startswith("encode:")
    raws: list[bytes] = [json.dumps(obj).encode() for obj in items] if encode else items
    cases: dict[str, Callable[[], object]] = {}
    for name, (decode, enc) in available.items():
        if encode:
            cases[name] = lambda enc=enc: [enc(obj) for obj in items]
        else:
            check_same(name, raws, decode)
            cases[name] = lambda decode=decode: [decode(raw) for raw in raws]
    result = compare(cases, rounds)
    size = sum(len(r) for r in raws) / len(raws)
    return size, {name: secs / len(items) for name, secs in result.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=500, help="Foos (and Deployments) per list")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per figure")
    args = parser.parse_args(argv)

    found = payloads(args.objects)
    available = codecs()
    others = [name for name in available if name != "json"]
    print(f"{args.objects} objects per list; median of {args.rounds} interleaved rounds\n")
    print(f"{'payload':38} {'size':>10} " + "".join(f"{n:>19}" for n in others) + f"{'json':>12}")
    for label, data in found.items():
        size, per = per_item(label, data, available, args.rounds)
        base = per["json"]
        cells = "".join(f"{_fmt(per[n]):>11} {base / per[n]:>5.1f}x " for n in others)
        print(f"{label:38} {_size(size):>10} {cells}{_fmt(base):>12}")
    print(
        "\nsize: bytes per list body, watch line or PUT body. Each figure: CPU time per body or"
        "\nline (cyclic GC off while timing, as timeit does and as the controller's tuned GC nearly"
        "\nis), then how many times faster than json in the same run."
    )


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _size(size: float) -> str:
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size:.0f} B"


if __name__ == "__main__":
    main()
