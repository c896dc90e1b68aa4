"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch.

Twin of the patcher in k8s.io/apiserver/pkg/endpoints/handlers/patch.go, which delegates to
evanphx/json-patch and apimachinery's strategicpatch. Errors carry the statuses the real server
answers with (as recorded against a real v1.36 server): a failed ``test``, a ``remove`` of a missing
path or an unknown op is 422 without details, while ``replace`` of a missing object member
succeeds as an add (evanphx's behaviour).
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.api import errors

__all__ = [
    "MERGE",
    "JSON_PATCH",
    "STRATEGIC",
    "APPLY",
    "accepted_patch_types",
    "apply_merge_patch",
    "apply_json_patch",
    "apply_strategic_merge_patch",
]

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


def accepted_patch_types(custom: bool) -> list[str]:
    """The Content-Types a PATCH may carry, in the order kube-apiserver lists them in a 415:
    the built-in installer's, or the CRD handler's (no strategic merge for custom resources).
    Subresources (status, scale) take their resource's."""
    if custom:
        return [JSON_PATCH, MERGE, APPLY]
    return [JSON_PATCH, MERGE, STRATEGIC, APPLY]


# ---- merge patch -------------------------------------------------------------------------------


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            out[k] = apply_merge_patch(out.get(k), v)
        else:
            out[k] = copy.deepcopy(v)
    return out


# ---- JSON patch --------------------------------------------------------------------------------


class _PatchError(Exception):
    pass


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _PatchError(f"invalid JSON pointer {path!r}")
    return [_unescape(t) for t in path[1:].split("/")]


def _parent(doc: Any, tokens: list[str]) -> tuple[Any, str]:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise _PatchError("doc is missing path")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, allow_end=False)]
        else:
            raise _PatchError("doc is missing path")
    return cur, tokens[-1]


def _index(lst: list, token: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(lst)
    if not token.isdigit():
        raise _PatchError(f"invalid array index {token!r}")
    i = int(token)
    if i > len(lst) or (i == len(lst) and not allow_end):
        raise _PatchError("index out of range")
    return i


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        if last not in parent:
            raise _PatchError("doc is missing path")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False)]
    raise _PatchError("doc is missing path")


def _add(doc: Any, tokens: list[str], value: Any, replace: bool = False) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(parent, last, allow_end=False)] = value
        else:
            parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise _PatchError("doc is missing path")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise _PatchError("cannot remove the whole document")
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        if last not in parent:
            raise _PatchError(f"unable to remove nonexistent key: {last}: missing value")
        del parent[last]
    elif isinstance(parent, list):
        del parent[_index(parent, last, allow_end=False)]
    else:
        raise _PatchError("doc is missing path")
    return doc


def apply_json_patch(target: Any, ops: Any) -> Any:
    """Apply an RFC 6902 operation list to a deep copy of target; 422 on failure."""
    if not isinstance(ops, list):
        raise errors.bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    doc = copy.deepcopy(target)
    try:
        for op in ops:
            if not isinstance(op, dict):
                raise _PatchError("invalid operation")
            kind = op.get("op")
            path = _split(op.get("path", ""))
            if kind == "add":
                doc = _add(doc, path, copy.deepcopy(op.get("value")))
            elif kind == "remove":
                doc = _remove(doc, path)
            elif kind == "replace":
                # evanphx/json-patch: replacing a missing object member adds it.
                doc = _add(doc, path, copy.deepcopy(op.get("value")), replace=True)
            elif kind == "move":
                src = _split(op.get("from", ""))
                value = _get(doc, src)
                doc = _remove(doc, src)
                doc = _add(doc, path, value)
            elif kind == "copy":
                value = copy.deepcopy(_get(doc, _split(op.get("from", ""))))
                doc = _add(doc, path, value)
            elif kind == "test":
                try:
                    actual = _get(doc, path)
                except _PatchError:
                    actual = None
                if actual != op.get("value"):
                    raise _PatchError(f"testing value {op.get('path')} failed: test failed")
            else:
                raise _PatchError(f"Unexpected kind: {kind}")
    except _PatchError as e:
        raise errors.invalid_plain(
            f"the server rejected our request due to an error in our request: {e}"
        ) from None
    return doc


# ---- strategic merge patch ---------------------------------------------------------------------

# patchMergeKey of the list fields of built-in kinds we serve (from the Go struct tags); lists
# not named here are replaced wholesale, as lists without a patch strategy are.
_MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "ports": "containerPort",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "webhooks": "name",  # Mutating- and ValidatingWebhookConfiguration
}
# Lists of scalars with patchStrategy "merge" (merged as sets, order kept).
_MERGE_SETS = {"finalizers"}


def apply_strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Strategic merge patch for the built-in kinds' fields we use.

    Twin of strategicpatch.StrategicMergePatch.

    Lists with a merge key merge item by item, and new items come FIRST, as the real server puts
    them (facts: adding c to [a, b] gives [c, a, b]); ``$patch: delete`` in an item removes it;
    ``$patch: replace`` replaces a map or list; other lists are replaced wholesale.
    ``$setElementOrder``/``$retainKeys`` directives are accepted and ignored.
    """
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch body must be a JSON object")
    return _smp_map(target if isinstance(target, dict) else {}, patch)


def _smp_map(target: dict, patch: dict) -> dict:
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return {}
    out = dict(target)
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k.startswith("$retainKeys") or k == "$patch":
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            out[field] = [x for x in out.get(field) or [] if x not in (v or [])]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            cur = out.get(k)
            out[k] = _smp_map(cur if isinstance(cur, dict) else {}, v)
        elif isinstance(v, list) and k in _MERGE_KEYS and isinstance(out.get(k), list):
            out[k] = _smp_list(out[k], v, _MERGE_KEYS[k])
        elif isinstance(v, list) and k in _MERGE_SETS and isinstance(out.get(k), list):
            new = [x for x in v if x not in out[k]]
            out[k] = new + list(out[k])
        else:
            out[k] = copy.deepcopy(v)
    return out


def _smp_list(target: list, patch: list, key: str) -> list:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [copy.deepcopy(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    result = list(target)
    index = {item.get(key): i for i, item in enumerate(result) if isinstance(item, dict)}
    deleted: set = set()
    new_items = []
    for p in patch:
        if not isinstance(p, dict):
            new_items.append(copy.deepcopy(p))
            continue
        k = p.get(key)
        if p.get("$patch") == "delete":
            deleted.add(k)
            continue
        if k in index:
            result[index[k]] = _smp_map(result[index[k]], p)
        else:
            new_items.append({kk: copy.deepcopy(vv) for kk, vv in p.items() if kk != "$patch"})
    kept = [it for it in result if not (isinstance(it, dict) and it.get(key) in deleted)]
    return new_items + kept
