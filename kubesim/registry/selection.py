"""List/watch filters (namespace, labelSelector, fieldSelector, shardSelector) and continue tokens.

Label selectors use api/labels.py, the one implementation shared with the client side, so a
selector means the same on both ends of the wire. Field selectors support the fields each
resource declares (ResourceInfo.field_selectors), as kube-apiserver's per-kind field sets do.
Shard ranges (KEP-5866, parsed by sharding.py) match with api/shard.py, the hash shared with the
controller, as SelectionPredicate's ShardSelector does.
Continue tokens have the real server's shape: base64url of
{"v":"meta.k8s.io/v1","rv":<snapshot RV>,"start":"<last key>\\u0000"} (storage/etcd3/continue.go).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from kubesim.api import errors
from kubesim.api.labels import SelectorParseError, parse_selector
from kubesim.api.resources import ResourceInfo
from kubesim.api.shard import ShardRange
from kubesim.api.shard import matches as shard_matches
from kubesim.registry.strategy import get_path

__all__ = ["build_filter", "encode_continue", "decode_continue"]


def _parse_fields(info: ResourceInfo, text: str) -> list[tuple[str, str, bool]]:
    """fields.ParseSelector + the resource's supported-field check; (field, value, equal)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "!=" in part:
            field, value = part.split("!=", 1)
            eq = False
        elif "==" in part:
            field, value = part.split("==", 1)
            eq = True
        elif "=" in part:
            field, value = part.split("=", 1)
            eq = True
        else:
            raise errors.bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field = field.strip()
        if field not in info.field_selectors:
            if info.custom:
                allowed = ", ".join(f'"{f}"' for f in info.field_selectors)
                raise errors.bad_request(f'"{field}" is not a known field selector: only {allowed}')
            raise errors.bad_request(f"field label not supported: {field}")
        if info.converter is not None:  # a label of another version: the stored field's name
            field = info.converter.field_labels.get(field, field)
        out.append((field, value.strip(), eq))
    return out


def _field_value(obj: dict, field: str) -> str:
    if field == "source" and obj.get("kind", "Event") == "Event":
        # the event registry's field set: source.component, or the reporting controller
        # when that is empty (an events.k8s.io Event has no deprecatedSource of its own)
        v = (obj.get("source") or {}).get("component") or obj.get("reportingComponent")
    else:
        v = get_path(obj, field)
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v)


def build_filter(
    info: ResourceInfo,
    namespace: str | None,
    label_selector: str | None,
    field_selector: str | None,
    name: str | None = None,
    shard: tuple[ShardRange, ...] = (),
) -> Callable[[dict], bool] | None:
    """A predicate for Storage.watch / list filtering, or None when everything matches.

    shard: the request's shard ranges (an object passes when its hash is in one of them); they
    make the filter selective, so a paged list carries no remainingItemCount (continue.go).

    Raises 400 BadRequest for an unparsable selector or an unsupported field, before any list
    or watch starts (the real server checks this up front too).
    """
    try:
        labels = parse_selector(label_selector)
    except SelectorParseError as e:
        raise errors.bad_request(f"unable to parse requirement: {e}") from None
    fields = _parse_fields(info, field_selector) if field_selector else []
    if name:
        fields.append(("metadata.name", name, True))
    ns = namespace or None
    if labels.empty() and not fields and ns is None and not shard:
        return None

    def flt(obj: dict) -> bool:
        meta = obj["metadata"]
        if ns is not None and meta.get("namespace") != ns:
            return False
        if not labels.empty() and not labels.matches(meta.get("labels")):
            return False
        for field, value, eq in fields:
            if field == "metadata.name":
                actual = meta.get("name", "")
            elif field == "metadata.namespace":
                actual = meta.get("namespace", "")
            else:
                actual = _field_value(obj, field)
            if (actual == value) != eq:
                return False
        return not shard or shard_matches(shard, obj)

    flt.selective = not labels.empty() or bool(fields) or bool(shard)  # type: ignore[attr-defined]
    return flt


def encode_continue(rv: int, ns: str, name: str) -> str:
    start = (f"{ns}/{name}" if ns else name) + "\x00"
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str, namespaced: bool) -> tuple[int, tuple[str, str]]:
    """(snapshot RV, (namespace, name) of the last returned item); 400 when malformed."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("version")
        rv = int(data["rv"])
        start = data["start"]
        # rv -1 is the "continue at the latest RV" token an expired continue hands out.
        if not isinstance(start, str) or not start.endswith("\x00") or rv == 0:
            raise ValueError("start")
        last = start[:-1]
        if namespaced and "/" in last:
            ns, name = last.split("/", 1)
        else:
            ns, name = "", last
        return rv, (ns, name)
    except (ValueError, KeyError, TypeError, json.JSONDecodeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version "
            "meta.k8s.io/v1)"
        ) from None
