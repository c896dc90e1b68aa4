"""Aggregated discovery: every group, version and resource in one document.

Twin of k8s.io/apiserver ``pkg/endpoints/discovery/aggregated`` (the handler behind ``/api``
and ``/apis`` when the client's Accept asks for
``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``) and of the
apidiscovery.k8s.io/v2 types. client-go's discovery client and kubectl ask for it first and
fall back to the per-group documents when it is not served; a real v1.36 serves it.

The document is built from the same Registry as the unaggregated one, so the two always agree.
Deliberate differences: JSON only (the protobuf form is not offered), and every version's
freshness is "Current" (nothing is aggregated from another server here).
"""

from __future__ import annotations

from typing import Any

from kubesim.api.resources import Registry, ResourceInfo

__all__ = ["MEDIA_TYPE", "aggregated_discovery", "wants_aggregated"]

MEDIA_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether an Accept header lists the v2 aggregated form as JSON (params in any order)."""
    for clause in accept.split(","):
        media, *params = (p.strip() for p in clause.split(";"))
        values = dict(p.partition("=")[::2] for p in params)
        if (
            media == "application/json"
            and values.get("g") == "apidiscovery.k8s.io"
            and values.get("v") == "v2"
            and values.get("as") == "APIGroupDiscoveryList"
        ):
            return True
    return False


def _kind(info: ResourceInfo) -> dict[str, str]:
    return {"group": info.group, "version": info.version, "kind": info.kind}


def _resource(info: ResourceInfo) -> dict[str, Any]:
    """APIResourceDiscovery of one resource, its subresources inside."""
    entries = info.discovery_entries()
    main = entries[0]
    out: dict[str, Any] = {
        "resource": info.plural,
        "responseKind": _kind(info),
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": main["singularName"],
        "verbs": list(main["verbs"]),
    }
    if main.get("shortNames"):
        out["shortNames"] = list(main["shortNames"])
    if main.get("categories"):
        out["categories"] = list(main["categories"])
    subresources = []
    for sub in entries[1:]:
        kind = {
            "group": sub.get("group", info.group),
            "version": sub.get("version", info.version),
            "kind": sub["kind"],
        }
        subresources.append(
            {
                "subresource": sub["name"].split("/", 1)[1],
                "responseKind": kind,
                "verbs": list(sub["verbs"]),
            }
        )
    if subresources:
        out["subresources"] = sorted(subresources, key=lambda s: s["subresource"])
    return out


def _group(registry: Registry, name: str, versions: list[str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if name:
        metadata = {"name": name, "creationTimestamp": None}
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": version,
                "resources": [
                    _resource(info)
                    for info in sorted(registry.resources_of(name, version), key=lambda i: i.plural)
                ],
                "freshness": "Current",
            }
            for version in versions
        ],
    }


def aggregated_discovery(registry: Registry, legacy: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of ``/api`` (``legacy``: the core group) or ``/apis``."""
    if legacy:
        items = [_group(registry, "", ["v1"])]
    else:
        groups = registry.api_group_list()["groups"]
        items = [_group(registry, g["name"], [v["version"] for v in g["versions"]]) for g in groups]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }
