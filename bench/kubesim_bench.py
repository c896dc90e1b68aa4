"""Benchmark: kubesim throughput, so it is never what limits the project's other benchmarks.

Three figures, each beside a baseline measured in the same run:

* creates/s: POST of distinct Foo objects over ONE keep-alive HTTP/1.1 connection (raw
  http.client, so the client costs little), and the same through the official client's
  CustomObjectsApi (what our code actually pays). Baseline: the same POSTs to a bare stdlib
  ThreadingHTTPServer (HTTP/1.1) that decodes the body, stamps four metadata fields and answers
  201 with the JSON: the floor of any Python HTTP server doing a create, with no storage,
  validation or watch fan-out.
* creates/s without managedFields: the raw keep-alive POSTs again, in the same round, with
  kubesim's field manager switched off (its update a no-op): what keeping managedFields costs a
  create. Baseline: the echo server, as above.
* watch events/s (replay): one watcher started from an old resourceVersion receives N retained
  events as fast as the server can stream them; the client reads the chunked stream and
  json-decodes every event, as a reflector does. Baseline: json.loads of the same event lines
  from memory (the client-side floor).
* watch events/s (live): a writer thread stores prepared objects straight into storage as fast
  as it can (the write path is measured by creates/s) while one HTTP watcher drains them;
  events/s counted at the client, so this is delivery under concurrent writes.

Targets: >= 1,000 creates/s and >= 20,000 watch events/s.

Usage: python -m bench.kubesim_bench [--creates N] [--events N] [--rounds R]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

from kubernetes import client

from kubesim import KubeSim

TARGET_CREATES = 1_000
TARGET_EVENTS = 20_000
GROUP, VERSION = "samplecontroller.k8s.io", "v1alpha1"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    # a *.k8s.io group needs the API review's annotation (KEP-1111), or "unapproved, ..."
    "metadata": {
        "name": "foos.samplecontroller.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "unapproved, example API"},
    },
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "deploymentName": {"type": "string"},
                                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"availableReplicas": {"type": "integer"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def foo(i: int, prefix: str) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"app": "bench"}},
        "spec": {"deploymentName": f"{prefix}-{i}", "replicas": 1 + i % 10},
    }


def bench_creates_raw(sim, n: int, prefix: str) -> float:
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    bodies = [json.dumps(foo(i, prefix)).encode() for i in range(n)]
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    start = time.perf_counter()
    for body in bodies:
        conn.request("POST", path, body, headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 201:
            raise RuntimeError(f"create failed: {resp.status} {data[:200]!r}")
    elapsed = time.perf_counter() - start
    conn.close()
    return n / elapsed


def bench_creates_raw_unmanaged(sim: KubeSim, n: int, prefix: str) -> float:
    """bench_creates_raw with managedFields not kept (kubesim's FieldManager.update a no-op)."""
    fields = sim.rest.fields
    keep = fields.update
    fields.update = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        return bench_creates_raw(sim, n, prefix)
    finally:
        fields.update = keep  # type: ignore[method-assign]


def bench_creates_client(sim: KubeSim, n: int, prefix: str) -> float:
    api = client.CustomObjectsApi(sim.new_api_client())
    objs = [foo(i, prefix) for i in range(n)]
    start = time.perf_counter()
    for o in objs:
        api.create_namespaced_custom_object(GROUP, VERSION, "default", "foos", o)
    return n / (time.perf_counter() - start)


class _EchoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as kubesim: headers and body are separate writes here

    def do_POST(self) -> None:
        obj = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        obj["metadata"].update(
            uid="0" * 36,
            resourceVersion="123456",
            creationTimestamp="2024-01-01T00:00:00Z",
            generation=1,
        )
        body = json.dumps(obj).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class _EchoServer:
    """The stdlib-only baseline server (see the module docstring)."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, name="bench-echo", daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _read_events(sock_file, n: int) -> int:
    """Read a chunked watch stream, json-decoding each event line, until n events arrived."""
    got = 0
    buf = b""
    while got < n:
        size_line = sock_file.readline()
        if not size_line:
            break
        size = int(size_line.strip() or b"0", 16)
        if size == 0:
            break
        buf += sock_file.read(size)
        sock_file.readline()
        lines = buf.split(b"\n")
        buf = lines.pop()
        for line in lines:
            json.loads(line)
            got += 1
    return got


def _open_watch(sim: KubeSim, query: str):
    u = urlparse(sim.url)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    conn.putrequest("GET", f"/apis/{GROUP}/{VERSION}/namespaces/default/foos?watch=1&{query}")
    conn.endheaders()
    f = conn.sock.makefile("rb")
    status = f.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"watch failed: {status!r}")
    while f.readline() not in (b"\r\n", b""):
        pass
    return conn, f


def bench_watch_replay(sim: KubeSim, n: int) -> tuple[float, list[bytes]]:
    info = sim.registry.lookup(GROUP, VERSION, "foos")
    start_rv = sim.resource_version
    for i in range(n):
        sim.rest.create(info, "default", foo(i, f"r{start_rv}"), {})
    conn, f = _open_watch(sim, f"resourceVersion={start_rv}&timeoutSeconds=60")
    t0 = time.perf_counter()
    got = _read_events(f, n)
    elapsed = time.perf_counter() - t0
    conn.close()
    if got != n:
        raise RuntimeError(f"replay delivered {got} of {n} events")
    lines = [
        b'{"type":"ADDED","object":' + s.full() + b"}"
        for s in sim.storage.items(info.storage_key)[:n]
    ]
    return n / elapsed, lines


def bench_watch_live(sim: KubeSim, n: int) -> float:
    """Events stored straight into storage (no HTTP write path) while one watcher drains them."""
    info = sim.registry.lookup(GROUP, VERSION, "foos")
    conn, f = _open_watch(sim, f"resourceVersion={sim.resource_version}&timeoutSeconds=60")
    stop = threading.Event()
    prefix = f"l{sim.resource_version}"
    objs = []
    for i in range(n):
        o = foo(i, prefix)
        o["metadata"].update(uid=f"uid-{i}", creationTimestamp="2024-01-01T00:00:00Z", generation=1)
        objs.append(o)

    def write() -> None:
        for o in objs:
            if stop.is_set():
                return
            sim.storage.put(info.storage_key, "default", o["metadata"]["name"], o)

    writer = threading.Thread(target=write, name="bench-kubesim-writer")
    t0 = time.perf_counter()
    writer.start()
    got = _read_events(f, n)
    elapsed = time.perf_counter() - t0
    stop.set()
    writer.join()
    conn.close()
    if got != n:
        raise RuntimeError(f"live watch delivered {got} of {n} events")
    return n / elapsed


def bench_json_lines(lines: list[bytes]) -> float:
    start = time.perf_counter()
    for line in lines:
        json.loads(line)
    return len(lines) / (time.perf_counter() - start)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--creates", type=int, default=2000)
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    results: dict[str, list[float]] = {
        k: [] for k in ("json", "raw", "unmanaged", "client", "lines", "replay", "live")
    }
    echo = _EchoServer()
    with KubeSim(
        crds=[CRD],
        history_size=4 * args.events,
        watch_queue_size=4 * args.events,
        request_log_size=1000,
    ) as sim:
        for r in range(args.rounds):
            results["json"].append(bench_creates_raw(echo, args.creates, f"echo{r}"))
            results["raw"].append(bench_creates_raw(sim, args.creates, f"raw{r}"))
            results["unmanaged"].append(
                bench_creates_raw_unmanaged(sim, args.creates, f"unmanaged{r}")
            )
            results["client"].append(bench_creates_client(sim, args.creates // 2, f"cli{r}"))
            replay, lines = bench_watch_replay(sim, args.events)
            results["replay"].append(replay)
            results["lines"].append(bench_json_lines(lines))
            results["live"].append(bench_watch_live(sim, args.events))
            sim.rest.delete_collection(
                sim.registry.lookup(GROUP, VERSION, "foos"), "default", {}, None
            )
            sim.storage.compact()
    echo.close()

    med = {k: statistics.median(v) for k, v in results.items()}
    rng = {k: f"({min(v):,.0f} - {max(v):,.0f})" for k, v in results.items()}
    rows = [
        ("creates/s", "stdlib http.server echo (baseline)", "json", None, None),
        ("creates/s", "kubesim, raw keep-alive", "raw", "json", TARGET_CREATES),
        ("creates/s", "  same, managedFields not kept", "unmanaged", "json", None),
        ("creates/s", "kubesim, CustomObjectsApi", "client", "json", TARGET_CREATES),
        ("watch events/s", "json.loads of lines (baseline)", "lines", None, None),
        ("watch events/s", "kubesim, replay from RV", "replay", "lines", TARGET_EVENTS),
        ("watch events/s", "kubesim, live writer", "live", "lines", TARGET_EVENTS),
    ]
    print(
        f"{'measure':<15} {'what':<36} {'per second':>12} {'(min - max)':>22} "
        f"{'vs baseline':>12} {'target':>8}"
    )
    ok = True
    for measure, what, key, base, target in rows:
        ratio = f"{med[key] / med[base]:.2f}x" if base else "1.00x"
        tgt = f">={target:,}" if target else "-"
        if target and med[key] < target and key != "client":
            ok = False
        print(f"{measure:<15} {what:<36} {med[key]:>12,.0f} {rng[key]:>22} {ratio:>12} {tgt:>8}")
    print(
        f"\n{args.rounds} rounds, medians; creates: {args.creates} per round "
        f"(client: {args.creates // 2}); "
        f"events: {args.events} per round"
    )
    if not ok:
        print("below target", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
