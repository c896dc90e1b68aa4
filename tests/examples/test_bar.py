"""The Bar controller of docs/your-own-controller.md, as its reader runs it: kubesim with the
Bar CRD, ``python -m examples.bar --kubeconfig FILE`` in a process of its own, and a Bar
created, edited and deleted through the API while the test watches its ConfigMap.

Copy it with the controller: change the names, keep the shape (start the server, start the
controller, make a change, wait for what the controller should do, never sleep).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from client.errors import APIError
from client.rest import RESTClient, resource_path
from tests.helpers import ROOT, wait_for

BAR_CRD = ROOT / "examples" / "bar" / "crd.yaml"
BARS = ("tutorial.example.com", "v1", "bars")
CONFIGMAPS = ("", "v1", "configmaps")

pytestmark = pytest.mark.kubesim(crds=[BAR_CRD], gc_delay=0.0)


@pytest.fixture
def api(sim) -> RESTClient:
    return RESTClient(sim.new_api_client())


class Process(NamedTuple):
    proc: subprocess.Popen[str]
    # what it printed so far
    log: Path
    # the kubeconfig it was given (kubectl's too)
    kubeconfig: Path


@pytest.fixture
def bar_controller(sim, tmp_path) -> Iterator[Process]:
    """``python -m examples.bar`` against the test's kubesim; stopped with SIGTERM after it.
    Its probes listen on a free port (the default, :8081, may be taken on a shared machine)."""
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    log = (tmp_path / "bar.log").open("w")
    probes = "--health-probe-bind-address=127.0.0.1:0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "examples.bar", "--kubeconfig", str(kubeconfig), probes],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield Process(proc, Path(log.name), Path(kubeconfig))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        output = Path(log.name).read_text()
        assert code == 0, f"python -m examples.bar exited {code}:\n{output}"
        assert "Traceback" not in output, output


def bar(name: str, configmap: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "tutorial.example.com/v1",
        "kind": "Bar",
        "metadata": {"name": name},
        "spec": {"configMapName": configmap, "data": data},
    }


def configmap(api: RESTClient, name: str) -> dict[str, Any] | None:
    try:
        return api.request("GET", resource_path(*CONFIGMAPS, "default", name))
    except APIError as err:
        if err.code == 404:
            return None
        raise


def test_a_bar_gets_its_configmap_kept_and_collected(api, bar_controller, sim):
    created = api.request(
        "POST", resource_path(*BARS, "default"), body=bar("greeting", "hello", {"text": "hi"})
    )

    # it appears, with the Bar's data, owned by the Bar
    cm = wait_for(lambda: configmap(api, "hello"), message="the Bar's ConfigMap to appear")
    assert cm["data"] == {"text": "hi"}
    (owner,) = cm["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "Bar",
        "greeting",
        created["metadata"]["uid"],
    )
    assert owner["controller"] is True
    # the write said who made it
    assert any(
        r.verb == "create"
        and r.resource == "configmaps"
        and "fieldManager=bar-controller" in r.query
        for r in sim.request_log
    )

    # the Bar changes: the ConfigMap follows
    api.request(
        "PATCH",
        resource_path(*BARS, "default", "greeting"),
        body={"spec": {"data": {"text": "hello", "lang": "en"}}},
        content_type="application/merge-patch+json",
    )
    wait_for(
        lambda: (configmap(api, "hello") or {}).get("data") == {"text": "hello", "lang": "en"},
        message="the ConfigMap to follow the Bar",
    )

    # someone edits the ConfigMap by hand: the controller puts the Bar's data back
    cm = configmap(api, "hello")
    api.request(
        "PUT",
        resource_path(*CONFIGMAPS, "default", "hello"),
        body={**cm, "data": {"text": "tampered"}},
    )
    wait_for(
        lambda: (configmap(api, "hello") or {}).get("data") == {"text": "hello", "lang": "en"},
        message="the controller to repair the ConfigMap",
    )

    # someone deletes it: the controller creates it again
    uid = configmap(api, "hello")["metadata"]["uid"]
    api.request("DELETE", resource_path(*CONFIGMAPS, "default", "hello"))
    wait_for(
        lambda: (configmap(api, "hello") or {"metadata": {"uid": uid}})["metadata"]["uid"] != uid,
        message="the controller to recreate the ConfigMap",
    )

    # the Bar is deleted: the garbage collector removes the ConfigMap it owns
    api.request("DELETE", resource_path(*BARS, "default", "greeting"))
    wait_for(lambda: configmap(api, "hello") is None, message="the ConfigMap to be collected")


def test_a_configmap_of_someone_else_is_never_written(api, bar_controller, sim):
    theirs = api.request(
        "POST",
        resource_path(*CONFIGMAPS, "default"),
        body={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "taken"},
            "data": {"a": "1"},
        },
    )
    api.request("POST", resource_path(*BARS, "default"), body=bar("late", "taken", {"a": "2"}))
    # the controller refuses, and retries with backoff
    wait_for(
        lambda: (
            bar_controller.log.read_text().count(
                'ConfigMap \\"taken\\" already exists and is not managed by Bar'
            )
            >= 2
        ),
        message=lambda: "two refusals in the log:\n" + bar_controller.log.read_text(),
    )
    after = configmap(api, "taken")
    assert after["data"] == {"a": "1"}
    assert after["metadata"]["resourceVersion"] == theirs["metadata"]["resourceVersion"]
    assert "ownerReferences" not in after["metadata"]
    # and no request wrote it
    writes = [
        r
        for r in sim.request_log
        if r.resource == "configmaps"
        and r.verb in ("update", "patch", "delete")
        and r.name == "taken"
    ]
    assert not writes


def test_without_the_crd_it_exits_with_one_line_saying_so(kubesim_factory, tmp_path):
    bare = kubesim_factory()
    kubeconfig = bare.write_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [sys.executable, "-m", "examples.bar", "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "the CRD bars.tutorial.example.com is not installed" in done.stderr
    assert "kubectl apply -f examples/bar/crd.yaml" in done.stderr
    assert "Traceback" not in done.stderr
