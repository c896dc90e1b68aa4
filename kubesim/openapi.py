"""A minimal /openapi/v3 so kubectl's client-side checks find what they look for.

kube-apiserver serves full OpenAPI v3 documents (since 1.27). kubectl uses them before apply,
create and replace to ask one question (cli-runtime queryParamVerifierV3): does the PATCH
operation of this group-version-kind accept the ``fieldValidation`` query parameter? If it
does, kubectl leaves validation to the server; if /openapi/v3 and /openapi/v2 are both missing
it refuses to run without --validate=false. kubesim therefore serves, per served
group-version, a document whose item paths carry that PATCH operation with
``x-kubernetes-group-version-kind`` and the parameter, and no schemas (``kubectl explain``
has nothing to show: a documented limit).
"""

from __future__ import annotations

import hashlib
import json

from .resources import Registry

__all__ = ["root_document", "group_version_document"]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def group_version_document(registry: Registry, group: str, version: str) -> dict | None:
    infos = registry.resources_of(group, version)
    if not infos:
        return None
    paths = {}
    for info in sorted(infos, key=lambda i: i.plural):
        base = "/" + _gv_path(group, version)
        item = (
            f"{base}/namespaces/{{namespace}}/{info.plural}/{{name}}"
            if info.namespaced
            else f"{base}/{info.plural}/{{name}}"
        )
        gvk = {"group": group, "version": version, "kind": info.kind}
        params = [
            {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
            for n in ("dryRun", "fieldManager", "fieldValidation", "force")
        ]
        paths[item] = {
            "patch": {
                "operationId": f"patch{info.kind}",
                "parameters": params,
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
            }
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "kubesim"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def root_document(registry: Registry) -> dict:
    """GET /openapi/v3: one serverRelativeURL per served group-version (hash = content hash)."""
    paths = {}
    for group, version in registry.group_versions():
        doc = group_version_document(registry, group, version)
        if doc is None:
            continue
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        p = _gv_path(group, version)
        paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={digest}"}
    return {"paths": paths}
