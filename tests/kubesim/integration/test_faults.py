"""kubesim fault injection, restart and the request log, observed through the official client."""

from __future__ import annotations

import json
import threading
import time

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.helpers import wait_for
from tests.kubesim.integration.test_api import FOO_CRD, GROUP, PLURAL, VERSION, foo, raw

pytestmark = pytest.mark.kubesim(crds=[FOO_CRD])


@pytest.fixture
def custom(sim):
    return client.CustomObjectsApi(sim.api_client)


def no_retry_client(sim) -> client.ApiClient:
    cfg = sim.configuration()
    cfg.retries = 0  # urllib3 must not hide the injected failures
    return client.ApiClient(cfg)


def test_fail_next_n_matching_requests_then_recover(sim):
    custom = client.CustomObjectsApi(no_retry_client(sim))
    sim.faults.fail_next(2, 503, verbs=["list"], resources=["foos"])
    # create: unaffected
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    for _ in range(2):
        with pytest.raises(ApiException) as ei:
            custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
        assert ei.value.status == 503
        assert json.loads(ei.value.body)["reason"] == "ServiceUnavailable"
    assert (
        len(custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["items"]) == 1
    )
    assert sim.faults.rules == []


def test_429_carries_retry_after(sim):
    sim.faults.fail_next(1, 429, retry_after=3)
    code, headers, body = raw(sim, "GET", "/api/v1/namespaces")
    st = json.loads(body)
    assert code == 429 and headers["Retry-After"] == "3"
    assert st["reason"] == "TooManyRequests" and st["details"]["retryAfterSeconds"] == 3


def test_fail_fraction_is_roughly_p(sim):
    sim.faults.fail_fraction(0.5, 500, seed=7)
    codes = [raw(sim, "GET", "/api/v1/namespaces")[0] for _ in range(60)]
    assert 15 <= codes.count(500) <= 45 and codes.count(200) + codes.count(500) == 60
    sim.faults.clear()
    assert raw(sim, "GET", "/api/v1/namespaces")[0] == 200


def test_latency(sim):
    sim.faults.add_latency(0.2, verbs=["get"])
    t0 = time.monotonic()
    raw(sim, "GET", "/api/v1/namespaces/default")
    assert time.monotonic() - t0 >= 0.2
    t0 = time.monotonic()
    raw(sim, "GET", "/api/v1/namespaces")  # list: not matched
    assert time.monotonic() - t0 < 0.2


def test_close_watches_ends_client_watch(sim, custom):
    w = watch.Watch()
    ended = threading.Event()

    def consume():
        for _ in w.stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            "default",
            PLURAL,
            timeout_seconds=30,
        ):
            pass
        ended.set()

    threading.Thread(target=consume, name="test-watch-consumer", daemon=True).start()
    wait_for(sim.storage.watchers, timeout=2, message="the watch registered")
    assert sim.faults.close_watches() == 1
    assert ended.wait(2)


def test_restart_keeps_state_and_port(sim, custom):
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    url, rv = sim.url, sim.resource_version
    sim.restart()
    assert sim.url == url and sim.resource_version == rv
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "a")
    assert got["metadata"]["name"] == "a"


def test_admin_http_api(sim):
    code, _, body = raw(
        sim,
        "POST",
        "/kubesim/faults",
        {"action": "fail", "count": 1, "code": 504, "verbs": ["get"]},
    )
    assert code == 200 and json.loads(body)["remaining"] == 1
    assert json.loads(raw(sim, "GET", "/kubesim/faults")[2])["rules"][0]["code"] == 504
    assert raw(sim, "GET", "/api/v1/namespaces/default")[0] == 504
    assert raw(sim, "GET", "/api/v1/namespaces/default")[0] == 200
    raw(sim, "POST", "/kubesim/faults", {"action": "fail", "probability": 1.0, "code": 500})
    assert raw(sim, "GET", "/api/v1/namespaces")[0] == 500
    assert raw(sim, "DELETE", "/kubesim/faults")[0] == 200
    assert raw(sim, "GET", "/api/v1/namespaces")[0] == 200
    rv = sim.resource_version
    assert json.loads(raw(sim, "POST", "/kubesim/faults", {"action": "compact"})[2])["compacted"]
    assert sim.storage.oldest_rv == rv
    assert raw(sim, "POST", "/kubesim/faults", {"action": "nope"})[0] == 400
    old_server = sim.server.httpd
    code, _, body = raw(sim, "POST", "/kubesim/faults", {"action": "restart"})
    assert code == 200
    # the restart runs on its own thread after the answer
    wait_for(lambda: sim.server.httpd not in (old_server, None), timeout=3, message="a new server")
    log = json.loads(raw(sim, "GET", "/kubesim/requests")[2])["items"]
    assert any(r["code"] == 504 for r in log)


def test_request_log_records_verbs_resources_users_codes(sim, custom):
    sim.clear_request_log()
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, foo("a"))
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "a", {"spec": {"replicas": 2}}
    )
    with pytest.raises(ApiException):
        custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "zz")
    log = sim.request_log
    assert [(r.verb, r.resource, r.namespace, r.name, r.code) for r in log] == [
        ("create", "foos", "default", "", 201),
        ("patch", "foos", "default", "a", 200),
        ("get", "foos", "default", "zz", 404),
    ]
    assert log[0].path == f"/apis/{GROUP}/{VERSION}/namespaces/default/foos"
    assert log[0].user == "system:admin" and log[0].user_agent.startswith("OpenAPI-Generator")
