"""Server-side printing: the meta.k8s.io/v1 Table that ``kubectl get`` asks for.

Twin of three table convertors of kube-apiserver, chosen per resource as its registry does:

- the built-in kinds' printers (pkg/printers/internalversion/printers.go, through
  pkg/printers/storage's TableConvertor, which always generates the wide columns: those with
  ``priority: 1`` are what ``kubectl get -o wide`` adds); their columns and cells are in
  table_printers.py, and those of the kinds served by the generic store in table_kinds.py;
- the default convertor (apiserver pkg/registry/rest/table.go) for kinds without a printer
  (Role, ClusterRole, CustomResourceDefinition): Name and a "Created At" date;
- apiextensions' convertor for custom resources: Name, then the version's
  additionalPrinterColumns (or Age when it has none), cells read by JSONPath.

The handler then applies the request's TableOptions (endpoints/handlers/response.go asTable):
``?includeObject=Metadata`` (the default) puts each row's object as PartialObjectMetadata,
``Object`` the whole object and ``None`` nothing; another value is a 400. On a watch only the
first event's Table carries the column definitions (the watch encoder sets NoHeaders after
it), so ``kubectl get -w`` prints its header once.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.storage.store import Stored
from kubesim.views.table_kinds import KIND_PRINTERS
from kubesim.views.table_printers import (
    NAME_COLUMN,
    PRINTERS,
    column,
    created_at,
    human_duration,
    since,
)
from kubesim.views.table_workloads import WORKLOAD_PRINTERS

__all__ = [
    "TableOptions",
    "TableRenderer",
    "cell_for_json_value",
    "human_duration",
    "jsonpath_get",
    "render_table",
    "request_renderer",
    "since",
]

# (info, rows, list metadata or None) -> a meta.k8s.io/v1 Table: what the response writers
# call to print a list, an object or a watch event (a renderer bound to one request's options).
TableRenderer = Callable[[ResourceInfo, list[Stored], dict | None], dict]

_INCLUDE_OBJECT = ("", "Metadata", "Object", "None")


@dataclass
class TableOptions:
    """metav1.TableOptions: the query's includeObject, and NoHeaders (set by a watch)."""

    include_object: str = ""
    no_headers: bool = False

    @classmethod
    def from_query(cls, query: dict) -> TableOptions:
        """Decode and validate (ValidateTableOptions) the request's options; 400 if invalid."""
        value = query.get("includeObject", "")
        if value not in _INCLUDE_OBJECT:
            raise errors.bad_request(
                "Unable to convert to Table as requested: includeObject: Invalid value: "
                f"{json.dumps(value)}: must be 'Metadata', 'Object', 'None', or empty"
            )
        return cls(include_object=value)


def request_renderer(
    render: Callable[..., dict] | None, query: dict, watch: bool = False
) -> TableRenderer | None:
    """``render`` bound to one request's TableOptions (None stays None).

    For a watch the options are shared by every event's Table and the first one turns the
    headers off for the rest, as the watch encoder does.
    """
    if render is None:
        return None
    options = TableOptions.from_query(query)
    if not watch:
        return partial(render, options=options)

    def render_event(info: ResourceInfo, items: list[Stored], list_meta: dict | None) -> dict:
        table = render(info, items, list_meta, options=options)
        options.no_headers = True
        return table

    return render_event


# ---- custom resources (apiextensions-apiserver registry/customresource/tableconvertor) ----------

_AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
# serveDefaultColumnsIfEmpty: a version without additionalPrinterColumns prints Age.
_DEFAULT_CR_COLUMNS = [
    {
        "name": "Age",
        "type": "date",
        "description": _AGE_DESCRIPTION,
        "jsonPath": ".metadata.creationTimestamp",
    }
]

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


def _string_cell(value: Any) -> str:
    """jsonpath PrintResults of one value: JSON for maps and lists, else the value's text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _date_cell(value: str) -> str:
    """metav1.Time.UnmarshalQueryParameter, then ConvertToHumanReadableDateType."""
    if value in ("", "null"):
        return "<unknown>"
    try:
        t = _dt.datetime.fromisoformat(value)
    except ValueError:
        return "<invalid>"
    if t.tzinfo is None:
        return "<invalid>"  # RFC 3339 requires a zone
    return human_duration((_dt.datetime.now(_dt.UTC) - t).total_seconds())


def cell_for_json_value(col_type: str, value: Any) -> Any:
    """cellForJSONValue: a value of the column's type, or None (printed <none>)."""
    if value is None:
        return None
    if col_type == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value)
    if col_type == "number":
        return None if isinstance(value, bool) or not isinstance(value, (int, float)) else value
    if col_type == "boolean":
        return value if isinstance(value, bool) else None
    if col_type == "string":
        return value if isinstance(value, str) else None
    if col_type == "date":
        return _date_cell(value) if isinstance(value, str) else None
    return None


def _custom_printer(info: ResourceInfo) -> tuple[list[dict], Any]:
    pcs = info.printer_columns or _DEFAULT_CR_COLUMNS
    cols = [NAME_COLUMN] + [
        column(
            c["name"],
            c.get("type", "string"),
            c.get("description")
            or f"Custom resource definition column (in JSONPath format): {c['jsonPath']}",
            int(c.get("priority", 0)),
            c.get("format", ""),
        )
        for c in pcs
    ]

    def row(o: dict) -> list:
        cells: list[Any] = [o["metadata"]["name"]]
        for c in pcs:
            value = jsonpath_get(o, c["jsonPath"])
            if value is None:
                cells.append(None)
            elif c.get("type", "string") == "string":
                cells.append(_string_cell(value))
            else:
                cells.append(cell_for_json_value(c.get("type", ""), value))
        return cells

    return cols, row


# ---- the default convertor (apiserver registry/rest/table.go) -----------------------------------

_DEFAULT_COLUMNS = [
    NAME_COLUMN,
    column("Created At", "date", _AGE_DESCRIPTION),
]


def _default_row(o: dict) -> list:
    return [o["metadata"]["name"], created_at(o["metadata"].get("creationTimestamp"))]


# ---- the Table ----------------------------------------------------------------------------------


def _row_object(o: dict, include: str, version: str) -> dict | None:
    """asTable: the row's object as the request's includeObject asks."""
    if include == "None":
        return None
    if include == "Object":
        return o
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": o["metadata"],
    }


def render_table(
    info: ResourceInfo,
    items: list[Stored],
    list_meta: dict | None,
    version: str = "v1",
    options: TableOptions | None = None,
) -> dict:
    """A Table for one object (GET, a write's answer, a watch event) or a list (list_meta)."""
    opts = options or TableOptions()
    key = (info.group, info.kind)
    printer = (
        None
        if info.custom
        else PRINTERS.get(key) or WORKLOAD_PRINTERS.get(key) or KIND_PRINTERS.get(key)
    )
    empty_rows: list | None = []
    if info.custom:
        cols, row_fn = _custom_printer(info)
    elif printer is not None:
        cols, row_fn = printer.columns, printer.row
    else:
        cols, row_fn = _DEFAULT_COLUMNS, _default_row
        empty_rows = None  # the default convertor's rows start nil: an empty list is null
    rows = []
    for s in items:
        o = s.obj
        if opts.include_object == "Object" and o.get("apiVersion") != info.group_version:
            o = json.loads(s.at_version(info.group_version))
        rows.append({"cells": row_fn(o), "object": _row_object(o, opts.include_object, version)})
    meta: dict[str, Any] = {}
    if list_meta is not None:
        meta = {
            k: v
            for k, v in list_meta.items()
            if k in ("resourceVersion", "continue", "remainingItemCount") and v not in ("", None)
        }
    elif items:
        meta = {"resourceVersion": items[0].obj["metadata"].get("resourceVersion", "")}
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "columnDefinitions": None if opts.no_headers else [dict(c) for c in cols],
        "rows": rows if rows or list_meta is None else empty_rows,
    }
