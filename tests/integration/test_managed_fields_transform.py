"""The informer's managedFields transform against the real thing: kubesim keeps managedFields
(as kube-apiserver does), the transform keeps them out of the cache.

Until kubesim kept managedFields, transform_strip_managed_fields only ever met copies that
tests and the bench added by hand; here the server writes them (a create's Update entry, an
apply's Apply entry) and the cache must still hold none.
"""

from __future__ import annotations

import json
import threading
import urllib.request

from kubernetes import client

from controller.foo_controller import FOO_GVR
from informer import SharedInformerFactory
from informer.transforms import transform_strip_managed_fields
from tests.helpers import wait_for

GROUP, VERSION, PLURAL = FOO_GVR


def _foo(name: str, replicas: int) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


def _apply(sim, ns: str, body: dict, manager: str) -> dict:
    url = f"{sim.url}/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURAL}/{body['metadata']['name']}"
    req = urllib.request.Request(
        f"{url}?fieldManager={manager}&force=true",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/apply-patch+yaml"},
        method="PATCH",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_cached_objects_have_no_managed_fields_while_the_server_keeps_them(shared_sim):
    ns = "managed-fields-transform"
    client.CoreV1Api(shared_sim.api_client).create_namespace({"metadata": {"name": ns}})
    custom = client.CustomObjectsApi(shared_sim.api_client)
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, _foo("created", 1))
    factory = SharedInformerFactory(
        shared_sim.api_client, 0.0, namespace=ns, transform=transform_strip_managed_fields
    )
    foos = factory.for_resource(GROUP, VERSION, PLURAL)
    stop = threading.Event()
    try:
        factory.start(stop)
        assert all(factory.wait_for_cache_sync(stop, timeout=10).values())
        # objects that arrive by watch: an apply that creates, one that updates
        applied = _apply(shared_sim, ns, _foo("applied", 2), "sample-controller")
        assert [e["operation"] for e in applied["metadata"]["managedFields"]] == ["Apply"]
        _apply(shared_sim, ns, _foo("created", 3), "sample-controller")
        lister = foos.lister()

        def cached() -> dict[str, dict]:
            return {o["metadata"]["name"]: o for o in lister.list()}

        wait_for(
            lambda: (
                set(cached()) == {"created", "applied"}
                and cached()["created"]["spec"]["replicas"] == 3
            ),
            timeout=10,
        )
        for obj in cached().values():
            assert "managedFields" not in obj["metadata"]
        # the server still has them: the create's Update entry and the apply's
        got = custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "created")
        operations = sorted(e["operation"] for e in got["metadata"]["managedFields"])
        assert operations == ["Apply", "Update"]
    finally:
        stop.set()
        factory.shutdown(timeout=2)
