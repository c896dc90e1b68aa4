"""Informers under injected faults, against kubesim over HTTP: 429 bursts and a hung watch.

The hung watch goes through a small TCP proxy that can black-hole a connection (hold it open and
forward nothing, in either direction): what a load balancer that silently dropped the flow does.
kubesim itself always closes a watch at its timeoutSeconds, so the hang has to sit between them.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from urllib.parse import parse_qs

from kubernetes import client

from client.rest import RESTClient
from client.wait import ExponentialBackoff
from controller.foo_controller import FOO_GVR
from informer import SharedIndexInformer, wait_for_cache_sync
from informer.listwatch import ListWatch
from informer.testing import RunningInformer
from tests.helpers import wait_for

GROUP, VERSION, PLURAL = FOO_GVR
NS = "default"


def create(sim, name):
    sim.rest.create(
        sim.registry.lookup(GROUP, VERSION, PLURAL),
        NS,
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Foo",
            "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": 1},
        },
        {},
    )


def requests(sim, verb):
    return [r for r in sim.request_log if r.resource == PLURAL and r.verb == verb]


def informer_with_tiny_backoff(sim, use_watch_list=False):
    """A Foo informer whose own backoff is tiny, so any wait of a second or more can only come
    from Retry-After; and the list of errors its watch error handler saw. It takes the list
    path unless told otherwise: these tests count LIST calls."""
    lw = ListWatch(RESTClient(sim.api_client), GROUP, VERSION, PLURAL, NS)
    informer = SharedIndexInformer(
        lw,
        name="foos",
        use_watch_list=use_watch_list,
        reflector_options={"backoff": ExponentialBackoff(initial=0.01, cap=0.02)},
    )
    errors = []
    informer.set_watch_error_handler(lambda r, e: errors.append(e))
    return informer, errors


def names(informer):
    return sorted(o["metadata"]["name"] for o in informer.lister().list())


def test_429_burst_on_watch_honours_retry_after_without_relisting(sim):
    create(sim, "a")
    informer, errors = informer_with_tiny_backoff(sim)
    sim.faults.fail_next(2, 429, verbs=["watch"], resources=[PLURAL], retry_after=1)
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        create(sim, "b")  # arrives once a watch finally gets through
        wait_for(lambda: names(informer) == ["a", "b"], timeout=5, message="watch after the burst")
    # the server logs a watch when it ends, i.e. once the informer has stopped
    wait_for(lambda: any(r.code == 200 for r in requests(sim, "watch")), message="watch logged")
    watches = requests(sim, "watch")
    throttled = [r for r in watches if r.code == 429]
    assert len(throttled) == 2
    later = [r for r in watches if r.code == 200]
    assert later[0].time - throttled[0].time >= 1.9  # two Retry-After: 1 waits
    assert throttled[1].time - throttled[0].time >= 0.95
    assert len(requests(sim, "list")) == 1  # throttling is no reason to relist
    assert errors == []  # nor an error that ends the list-and-watch cycle


def test_429_on_list_is_retried_after_retry_after(sim):
    create(sim, "a")
    informer, errors = informer_with_tiny_backoff(sim)
    sim.faults.fail_next(1, 429, verbs=["list"], resources=[PLURAL], retry_after=1)
    started = time.monotonic()
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=5)
        assert time.monotonic() - started >= 0.95
    assert [e.code for e in errors] == [429]
    assert [r.code for r in requests(sim, "list")] == [429, 200]


class BlackholeProxy:
    """Forwards TCP to a target; ``hang_watches()`` silences the connections carrying watches."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs: list[dict] = []  # {"client", "server", "watch": bool, "hung": bool}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, name="blackhole-proxy", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            pair = {"client": conn, "server": upstream, "watch": False, "hung": False}
            with self.lock:
                self.pairs.append(pair)
            threading.Thread(
                target=self._pump, args=(pair,), name="blackhole-pump", daemon=True
            ).start()

    def _pump(self, pair: dict) -> None:
        c, s = pair["client"], pair["server"]
        try:
            while not self.stop.is_set():
                ready, _, _ = select.select([c, s], [], [], 0.1)
                if pair["hung"]:
                    continue  # hold the connection open, move no bytes
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is c:
                        pair["watch"] = b"watch=true" in data
                        s.sendall(data)
                    else:
                        c.sendall(data)
        except OSError:
            return
        finally:
            c.close()
            s.close()

    def hang_watches(self) -> int:
        with self.lock:
            hung = [p for p in self.pairs if p["watch"] and not p["hung"]]
            for p in hung:
                p["hung"] = True
        return len(hung)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


def test_hung_watch_is_detected_and_replaced(sim):
    proxy = BlackholeProxy(sim.port)
    try:
        cfg = sim.configuration()
        cfg.host = f"http://127.0.0.1:{proxy.port}"
        lw = ListWatch(RESTClient(client.ApiClient(cfg)), GROUP, VERSION, PLURAL, NS)
        create(sim, "a")
        # Short watches so the test is quick: timeoutSeconds 1, and a read deadline half a second
        # past it. (Defaults: 5-10 minutes, and 5% past.)
        informer = SharedIndexInformer(
            lw,
            name="foos",
            # the list path: it counts LIST calls (test_informer_watch_list.py hangs a streamed one)
            use_watch_list=False,
            reflector_options={
                "min_watch_timeout": 1.0,
                "rand": lambda: 0.0,
                "watch_stall_timeout": lambda timeout_seconds: timeout_seconds + 0.5,
                "backoff": ExponentialBackoff(initial=0.01, cap=0.02),
            },
        )
        with RunningInformer(informer) as running:
            assert wait_for_cache_sync(running.stop, informer, timeout=5)
            create(sim, "b")
            wait_for(lambda: names(informer) == ["a", "b"], timeout=3)
            assert proxy.hang_watches() == 1  # the connection goes silent, no FIN, no RST
            hung_at = time.monotonic()
            create(sim, "c")  # kubesim sends it; the black hole swallows it
            wait_for(lambda: names(informer) == ["a", "b", "c"], timeout=5, message="recovery")
            # detected at the read deadline (1.5 s), not at some TCP keepalive hours later
            assert time.monotonic() - hung_at < 3.0
        lists = [r for r in requests(sim, "list")]
        assert len(lists) == 1  # a dropped connection needs a re-watch, not a relist
        rewatch = [parse_qs(r.query) for r in requests(sim, "watch")]
        assert all(q["allowWatchBookmarks"] == ["true"] for q in rewatch)
    finally:
        proxy.close()
