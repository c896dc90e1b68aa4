"""Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for.

Twin of apiserver's TableConvertor (pkg/registry/rest/table.go) and of apiextensions'
tableconvertor for CRDs. A request with ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1``
gets columns Name (format name) and Age (type date) by default, or Name followed by the CRD
version's additionalPrinterColumns; Deployments and Namespaces get the columns kubectl shows
for them. Each row carries the object as PartialObjectMetadata (includeObject=Metadata, the
default), as the real server sends.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from .resources import ResourceInfo
from .storage import Stored

__all__ = ["render_table", "human_duration", "jsonpath_get"]

_NAME_COL = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": (
        "Name must be unique within a namespace. Is required when creating resources, although "
        "some resources may allow a client to request the generation of an appropriate name "
        "automatically. Name is primarily intended for creation idempotence and configuration "
        "definition. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
    ),
}
_AGE_COL = {
    "name": "Age",
    "type": "date",
    "format": "",
    "priority": 0,
    "description": (
        "CreationTimestamp is a timestamp representing the server time when this object was "
        "created. It is not guaranteed to be set in happens-before order across separate "
        "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
        "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
        "#metadata"
    ),
}


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 192:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        y = h // (24 * 365)
        d = (h // 24) % 365
        return f"{y}y{d}d" if d else f"{y}y"
    return f"{h // (24 * 365)}y"


def _age(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        t = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.UTC)
    except ValueError:
        return "<invalid>"
    return human_duration((_dt.datetime.now(_dt.UTC) - t).total_seconds())


_TOKEN = re.compile(
    r"\.([A-Za-z0-9_\-/]+)|\[(\d+)\]|\['([^']+)'\]"
    r"|\[\?\(@\.([A-Za-z0-9_\-]+)\s*==\s*(?:\"([^\"]*)\"|'([^']*)')\)\]"
)


def jsonpath_get(obj: Any, path: str) -> Any:
    """The JSONPath forms printer columns use: .a.b, .a[0].b, .a['x.y'] and the equality
    filter .a[?(@.type=="Ready")] (first match, as a condition column wants); None if absent."""
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1]
    if p.startswith("$"):
        p = p[1:]
    cur = obj
    pos = 0
    while pos < len(p):
        m = _TOKEN.match(p, pos)
        if not m:
            return None
        pos = m.end()
        if m.group(4) is not None:
            want = m.group(5) if m.group(5) is not None else m.group(6)
            if not isinstance(cur, list):
                return None
            cur = next((x for x in cur if isinstance(x, dict) and x.get(m.group(4)) == want), None)
            if cur is None:
                return None
        elif m.group(2) is not None:
            idx = int(m.group(2))
            if not isinstance(cur, list) or idx >= len(cur):
                return None
            cur = cur[idx]
        else:
            key = m.group(1) or m.group(3)
            if not isinstance(cur, dict) or key not in cur:
                return None
            cur = cur[key]
    return cur


def _cell(col: dict, value: Any) -> Any:
    if value is None:
        return None
    t = col.get("type")
    if t == "date":
        return _age(value) if isinstance(value, str) else value
    if t == "integer":
        return value if isinstance(value, int) else None
    if t == "number":
        return value if isinstance(value, (int, float)) else None
    if t == "boolean":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else __import__("json").dumps(value)


def _builtin_columns(info: ResourceInfo):
    """Columns and a row function for the built-in kinds kubectl users look at most."""
    if info.custom:
        return None
    if info.kind == "Deployment":
        cols = [
            _NAME_COL,
            {
                "name": "Ready",
                "type": "string",
                "format": "",
                "priority": 0,
                "description": "Number of the pod with ready state",
            },
            {
                "name": "Up-to-date",
                "type": "string",
                "format": "",
                "priority": 0,
                "description": (
                    "Total number of non-terminated pods targeted by this deployment that have "
                    "the desired template spec."
                ),
            },
            {
                "name": "Available",
                "type": "string",
                "format": "",
                "priority": 0,
                "description": (
                    "Total number of available pods (ready for at least minReadySeconds) "
                    "targeted by this deployment."
                ),
            },
            _AGE_COL,
        ]

        def row(o: dict) -> list:
            st, sp = o.get("status") or {}, o.get("spec") or {}
            return [
                o["metadata"]["name"],
                f"{st.get('readyReplicas', 0)}/{sp.get('replicas', 0)}",
                st.get("updatedReplicas", 0),
                st.get("availableReplicas", 0),
                _age(o["metadata"].get("creationTimestamp")),
            ]

        return cols, row
    if info.kind == "Namespace":
        cols = [
            _NAME_COL,
            {
                "name": "Status",
                "type": "string",
                "format": "",
                "priority": 0,
                "description": "The status of the namespace",
            },
            _AGE_COL,
        ]
        return cols, lambda o: [
            o["metadata"]["name"],
            (o.get("status") or {}).get("phase", ""),
            _age(o["metadata"].get("creationTimestamp")),
        ]
    return None


def render_table(
    info: ResourceInfo, items: list[Stored], list_meta: dict | None, version: str = "v1"
) -> dict:
    """A Table for one object (GET, watch event) or a list page (list_meta given)."""
    builtin = _builtin_columns(info)
    if builtin is not None:
        cols, row_fn = builtin
    elif info.printer_columns:
        pcs = info.printer_columns
        cols = [_NAME_COL] + [
            {
                "name": c["name"],
                "type": c.get("type", "string"),
                "format": c.get("format", ""),
                "description": c.get("description", ""),
                "priority": c.get("priority", 0),
            }
            for c in pcs
        ]

        def row_fn(o: dict) -> list:
            return [o["metadata"]["name"]] + [_cell(c, jsonpath_get(o, c["jsonPath"])) for c in pcs]
    else:
        cols = [_NAME_COL, _AGE_COL]

        def row_fn(o: dict) -> list:
            return [o["metadata"]["name"], _age(o["metadata"].get("creationTimestamp"))]

    rows = []
    for s in items:
        o = s.obj
        rows.append(
            {
                "cells": row_fn(o),
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": f"meta.k8s.io/{version}",
                    "metadata": o["metadata"],
                },
            }
        )
    meta: dict[str, Any] = {}
    if list_meta:
        meta = {
            k: v
            for k, v in list_meta.items()
            if k in ("resourceVersion", "continue", "remainingItemCount")
        }
    elif items:
        meta = {"resourceVersion": items[0].obj["metadata"].get("resourceVersion", "")}
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "columnDefinitions": cols,
        "rows": rows,
    }
