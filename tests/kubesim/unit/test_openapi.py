"""kubesim.views.openapi: the /openapi/v3 documents kubectl explain and kubectl apply read.

What is checked is what kubectl relies on: the root lists every served group-version with a
hash of its document; each document tags its resource paths with the GVK and carries a
schema with the same x-kubernetes-group-version-kind, whose $refs resolve within the
document; PATCH operations take fieldValidation; custom resources get their CRD's schema
under apiextensions' name for it.
"""

from __future__ import annotations

import copy
import hashlib
import json

import yaml

from kubesim.api.resources import Registry
from kubesim.views import openapi
from tests.helpers import ROOT

SCHEMAS = "#/components/schemas/"


def _registry() -> Registry:
    registry = Registry()
    registry.set_crd(yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text()))
    return registry


def _refs(node) -> set[str]:
    if isinstance(node, dict):
        out = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        for v in node.values():
            out |= _refs(v)
        return out
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node)) if node else set()
    return set()


def _resolve(doc: dict, schema: dict) -> dict:
    """Follow a property's $ref or single allOf, as kubectl explain's template does."""
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return doc["components"]["schemas"][ref[len(SCHEMAS) :]] if ref else schema


def _schema_for(doc: dict, gvk: dict) -> dict:
    found = [
        s
        for s in doc["components"]["schemas"].values()
        if gvk in (s.get("x-kubernetes-group-version-kind") or [])
    ]
    assert len(found) == 1, gvk
    return found[0]


def test_root_lists_every_served_group_version_with_the_hash_of_its_document():
    registry = _registry()
    root = openapi.root_document(registry, "v1.36.0")
    served = {f"apis/{g}/{v}" if g else f"api/{v}" for g, v in registry.group_versions()}
    assert set(root["paths"]) == served
    assert {"api/v1", "apis/apps/v1", "apis/samplecontroller.k8s.io/v1alpha1"} <= served
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    body, etag = openapi.group_version_bytes(registry, "apps", "v1", "v1.36.0")
    # kube-openapi's handler3: the hash is the upper-case hex SHA-512 of the document
    assert etag == hashlib.sha512(body).hexdigest().upper() and len(etag) == 128
    assert url == f"/openapi/v3/apis/apps/v1?hash={etag}"
    assert openapi.group_version_bytes(registry, "nope", "v1") is None


def test_every_document_resolves_its_references_and_tags_paths_with_a_schema_gvk():
    registry = _registry()
    for group, version in registry.group_versions():
        doc = openapi.group_version_document(registry, group, version)
        schemas = doc["components"]["schemas"]
        assert doc["openapi"] == "3.0.0"
        missing = {r for r in _refs(doc) if r[len(SCHEMAS) :] not in schemas}
        assert not missing, (group, version, missing)
        for item in doc["paths"].values():
            for method, op in item.items():
                gvk = op["x-kubernetes-group-version-kind"]
                assert gvk["group"] == group and gvk["version"] == version
                _schema_for(doc, gvk)  # kubectl explain finds the kind's schema by this
                if method == "patch":
                    assert "fieldValidation" in {p["name"] for p in op["parameters"]}
                    assert "requestBody" not in op  # kubectl builds apply patches itself


def test_deployment_schema_carries_the_fields_users_explain():
    registry = _registry()
    doc = openapi.group_version_document(registry, "apps", "v1")
    paths = doc["paths"]
    assert "/apis/apps/v1/namespaces/{namespace}/deployments/{name}" in paths
    assert "/apis/apps/v1/deployments" in paths  # the all-namespaces list
    dep = _schema_for(doc, {"group": "apps", "kind": "Deployment", "version": "v1"})
    assert set(dep["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    for field in ("metadata", "spec", "status"):
        assert dep["properties"][field]["description"]
    spec = _resolve(doc, dep["properties"]["spec"])
    assert spec["required"] == ["selector", "template"]
    assert "Number of desired pods" in spec["properties"]["replicas"]["description"]
    assert spec["properties"]["replicas"]["type"] == "integer"
    status = _resolve(doc, dep["properties"]["status"])
    assert {"replicas", "readyReplicas", "availableReplicas", "conditions"} <= set(
        status["properties"]
    )
    meta = _resolve(doc, dep["properties"]["metadata"])
    assert meta["properties"]["labels"]["additionalProperties"] == {"type": "string", "default": ""}
    containers = _resolve(doc, _resolve(doc, spec["properties"]["template"])["properties"]["spec"])
    containers = containers["properties"]["containers"]
    # the patch markers kubectl apply's strategic merge patch depends on
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    container = _resolve(doc, containers["items"])
    assert container["required"] == ["name"] and "image" in container["properties"]


def test_custom_resource_schema_is_built_from_the_crd():
    registry = _registry()
    doc = openapi.group_version_document(registry, "samplecontroller.k8s.io", "v1alpha1")
    schemas = doc["components"]["schemas"]
    foo = schemas["io.k8s.samplecontroller.v1alpha1.Foo"]
    assert foo["x-kubernetes-group-version-kind"] == [
        {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"}
    ]
    assert foo["properties"]["metadata"]["allOf"] == [
        {"$ref": SCHEMAS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert foo["properties"]["kind"]["type"] == "string"
    assert "deploymentName" in foo["properties"]["spec"]["properties"]
    foo_list = schemas["io.k8s.samplecontroller.v1alpha1.FooList"]
    assert foo_list["properties"]["items"]["items"] == {
        "$ref": SCHEMAS + "io.k8s.samplecontroller.v1alpha1.Foo"
    }
    assert foo_list["x-kubernetes-group-version-kind"][0]["kind"] == "FooList"
    assert doc["info"]["title"] == "Kubernetes CRD Swagger"
    assert (
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{namespace}/foos/{name}/status"
        in (doc["paths"])
    )


def test_a_changed_crd_schema_changes_the_document_and_its_hash():
    registry = _registry()
    crd = yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text())
    before = openapi.root_document(registry)["paths"]["apis/samplecontroller.k8s.io/v1alpha1"]
    changed = copy.deepcopy(crd)
    spec_schema = changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["extra"] = {"type": "string", "description": "new"}
    registry.set_crd(changed)
    after = openapi.root_document(registry)["paths"]["apis/samplecontroller.k8s.io/v1alpha1"]
    assert before != after
    doc = openapi.group_version_document(registry, "samplecontroller.k8s.io", "v1alpha1")
    foo = doc["components"]["schemas"]["io.k8s.samplecontroller.v1alpha1.Foo"]
    assert foo["properties"]["spec"]["properties"]["extra"]["description"] == "new"
    # the built-in documents did not change
    assert json.dumps(openapi.group_version_document(registry, "apps", "v1"))
