"""What one API request costs the controller's CPU, path by path, against a local kubesim.

    python -m bench.transport_bench [--requests 2000] [--rounds 5] [--tls]
    python bench/transport_bench.py

kubesim runs in a child process (``python -m kubesim --token ...``) so that only the client's
work is counted: each figure is this process's CPU time (``time.process_time``) per request,
with wall time beside it, median over rounds in which every path runs in turn. The client
loads the kubeconfig kubesim writes (a bearer token, so the official refresh hook is in play,
as with every real kubeconfig or in-cluster config) and GETs one small Foo again and again on
a kept-alive connection, decoding each body with ``json.loads``. The paths:

- ``official CustomObjectsApi``: the official client's own call for a custom object, for
  reference (what a controller written on the generated API pays);
- ``param_serialize + PoolManager.request``: how client/rest.py has sent requests:
  ``ApiClient.param_serialize`` per request (headers, auth, the refresh hook) and
  ``PoolManager.request`` with the full URL;
- ``cached headers``: the same urllib3 pool and options, but headers from
  ``client.auth.RequestHeaders`` (built once, refreshed on the credential's schedule) and the
  URL as ``host + path``;
- ``client/transport``: also skip urllib3's per-request URL parsing and pool lookup by
  resolving the connection pool once and sending the path to it (what ``PoolManager`` does
  internally after parsing): ``client.transport.Transport``, as client/rest.py would use it;
- ``http.client loop (floor)``: one ``http.client`` connection kept alive, the cached headers,
  nothing else: no pool, no retries, no timeouts object. The cheapest a request can be in
  Python with the stdlib, and not a candidate (no proxies, no pool, no reconnects);
- ``RESTClient.request``: client/rest.py as it is in this checkout, whichever of the above it
  uses, plus its throttle check and body decoding (through ``client.jsonutil`` once wired);
- ``RESTClient.request + client/headers``: the same, with ``http.client.parse_headers``
  replaced by ``client.headers.parse_headers`` while it runs, as the controller process does
  (``client.headers.install``); every other path runs with the standard one.

Last, the header block of one of these responses parsed alone, by both.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import urllib3
from kubernetes import client

from client import headers
from client.auth import RequestHeaders
from client.config import load_client_configuration
from client.rest import RESTClient
from client.transport import Transport

CRD = Path(__file__).resolve().parents[1] / "crds" / "foo-crd.yaml"
GROUP, VERSION, PLURAL, NS, NAME = "samplecontroller.k8s.io", "v1alpha1", "foos", "default", "foo"
PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{PLURAL}/{NAME}"
TOKEN = "bench-token"
USER_AGENT = "sample-controller-py/bench"
# What client/rest.py passes for a GET: a retry only for a dead keep-alive connection.
GET_RETRY = urllib3.Retry(total=1, connect=0, read=1, redirect=0, status=0, other=0)
TIMEOUT = urllib3.Timeout(total=60.0)


def start_kubesim(tmp: str, tls: bool) -> tuple[subprocess.Popen[str], str]:
    """kubesim in a child process; returns it and the kubeconfig it wrote."""
    kubeconfig = str(Path(tmp) / "kubeconfig")
    cmd = [sys.executable, "-m", "kubesim", "--crd", str(CRD), "--token", TOKEN]
    cmd += ["--kubeconfig", kubeconfig] + (["--tls"] if tls else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()  # the URL: the server is up and the kubeconfig written
    return proc, kubeconfig


def param_serialize_path(api_client: Any) -> Callable[[str, str], dict[str, Any]]:
    """How client/rest.py sent requests before client/auth and client/transport: headers, auth
    and the refresh hook through ``ApiClient.param_serialize`` on every request, then
    ``PoolManager.request`` with the absolute URL. Kept here as the baseline."""
    manager = api_client.rest_client.pool_manager

    def request(method: str, path: str) -> dict[str, Any]:
        _, url, headers, _, _ = api_client.param_serialize(
            method,
            path,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        headers["User-Agent"] = USER_AGENT
        resp = manager.request(method, url, headers=headers, timeout=TIMEOUT, retries=GET_RETRY)
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status}")
        return json.loads(resp.data)  # type: ignore[no-any-return]

    return request


def cached_headers_path(api_client: Any) -> Callable[[str, str], dict[str, Any]]:
    """Only the first step: headers from client.auth.RequestHeaders and the URL as host + path,
    still sent through ``PoolManager.request`` as client/rest.py does today."""
    headers = RequestHeaders.from_api_client(api_client, user_agent=USER_AGENT)
    host = api_client.configuration.host
    manager = api_client.rest_client.pool_manager

    def request(method: str, path: str) -> dict[str, Any]:
        resp = manager.request(
            method, host + path, headers=headers.get(), timeout=TIMEOUT, retries=GET_RETRY
        )
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status}")
        return json.loads(resp.data)  # type: ignore[no-any-return]

    return request


def transport_path(api_client: Any) -> Callable[[str, str], dict[str, Any]]:
    """Both steps: client.transport.Transport (cached headers, pool resolved once)."""
    transport = Transport.from_api_client(api_client, user_agent=USER_AGENT)

    def request(method: str, path: str) -> dict[str, Any]:
        resp = transport.send(method, path, timeout=TIMEOUT, retries=GET_RETRY)
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status}")
        return json.loads(resp.data)  # type: ignore[no-any-return]

    return request


def floor_path(api_client: Any, ca_file: str | None) -> Callable[[str, str], dict[str, Any]]:
    """The plainest keep-alive loop over http.client, with the same headers."""
    headers = dict(RequestHeaders.from_api_client(api_client, user_agent=USER_AGENT).get())
    parts = urlsplit(api_client.configuration.host)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        ctx = ssl.create_default_context(cafile=ca_file)
        conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, context=ctx)
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port)

    def request(method: str, path: str) -> dict[str, Any]:
        conn.request(method, path, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status}")
        return json.loads(data)  # type: ignore[no-any-return]

    return request


def measure(fn: Callable[[], object], count: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) per call of ``fn`` over ``count`` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(count):
        fn()
    return (time.process_time() - cpu) / count, (time.perf_counter() - wall) / count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per path per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--tls", action="store_true", help="serve and talk HTTPS")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="transport-bench-") as tmp:
        proc, kubeconfig = start_kubesim(tmp, args.tls)
        try:
            run(kubeconfig, args)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def run(kubeconfig: str, args: argparse.Namespace) -> None:
    def api_client() -> Any:  # one ApiClient (one connection pool) per path
        return client.ApiClient(load_client_configuration(kubeconfig=kubeconfig))

    setup = RESTClient(api_client())
    setup.request(
        "POST",
        f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{PLURAL}",
        body={
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Foo",
            "metadata": {"name": NAME},
            "spec": {"deploymentName": NAME, "replicas": 1},
        },
    )
    official_api = client.CustomObjectsApi(api_client())
    rest = RESTClient(api_client(), user_agent=USER_AGENT)
    serialized = param_serialize_path(api_client())
    cached = cached_headers_path(api_client())
    pooled = transport_path(api_client())
    floor_client = api_client()
    floor = floor_path(floor_client, floor_client.configuration.ssl_ca_cert)
    paths: dict[str, Callable[[], object]] = {
        "official CustomObjectsApi": lambda: official_api.get_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, NAME
        ),
        "param_serialize + PoolManager.request": lambda: serialized("GET", PATH),
        "cached headers (client/auth)": lambda: cached("GET", PATH),
        "client/transport (+ pool resolved once)": lambda: pooled("GET", PATH),
        "http.client loop (floor)": lambda: floor("GET", PATH),
        "RESTClient.request (client/rest.py now)": lambda: rest.request("GET", PATH),
        "RESTClient.request + client/headers": lambda: rest.request("GET", PATH),
    }
    stdlib_parse = http.client.parse_headers
    for fn in paths.values():  # warm up: connections open, first token read
        for _ in range(20):
            fn()
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    wall: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(args.rounds):
        for name, fn in paths.items():
            fast = name.endswith("client/headers")
            http.client.parse_headers = headers.parse_headers if fast else stdlib_parse  # type: ignore[assignment]
            c, w = measure(fn, args.requests)
            http.client.parse_headers = stdlib_parse
            cpu[name].append(c)
            wall[name].append(w)

    scheme = "https" if args.tls else "http"
    print(
        f"GET one Foo over {scheme}, bearer token from the kubeconfig; {args.requests} requests"
        f" per path per round, median of {args.rounds} interleaved rounds\n"
    )
    floor_cpu = statistics.median(cpu["http.client loop (floor)"])
    print(f"{'path':38} {'client CPU/request':>19} {'x floor':>8} {'wall/request':>13}")
    for name in paths:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"{name:38} {c * 1e6:16.1f} us {c / floor_cpu:7.2f}x {w * 1e6:10.1f} us")
    block = header_block(rest, PATH)
    print(f"\nparsing this response's header block alone ({len(block)} bytes):")
    for name, parse in (
        ("http.client (email.parser)", stdlib_parse),
        ("client/headers", headers.parse_headers),
    ):
        c, _ = measure(lambda p=parse: p(io.BytesIO(block)), args.requests * 5)
        print(f"  {name:36} {c * 1e6:16.1f} us")


def header_block(rest: RESTClient, path: str) -> bytes:
    """The header block of one GET response, as the server sent it."""
    response = Transport.from_api_client(rest.api_client).send(
        "GET", path, timeout=TIMEOUT, retries=GET_RETRY
    )
    lines = [f"{k}: {v}" for k, v in response.headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("iso-8859-1")


if __name__ == "__main__":
    main()
