"""Field sets and the typed walks of server-side apply: to-set, compare, merge, remove.

Twin of kubernetes-sigs/structured-merge-diff: ``fieldpath`` (Set, PathElement, the FieldsV1
serialization of ``serialize.go``) and ``typed`` (``ToFieldSet`` in helpers, ``Compare`` in
compare.go, ``Merge`` in merge.go, ``RemoveItems`` in remove.go), with the OpenAPI-to-schema
step of k8s.io/kube-openapi's ``schemaconv`` folded into ``Type``. Pure: no storage, no HTTP;
fieldmanager.py keeps the managedFields entries with these.

A set is a tree of plain dicts keyed by serialized path elements (``f:name``, ``k:{...}``,
``v:...``, ``i:N``), the FieldsV1 encoding itself; ``"."`` marks a node that is a member of the
set (FieldsV1 writes a member without children as ``{}``, which ``from_fields_v1`` turns into
``{".": {}}``). Objects are JSON values; ``MISSING`` stands for an absent field, which upstream
tells apart from a null one.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MISSING",
    "Type",
    "TypeSource",
    "DEDUCED",
    "to_field_set",
    "compare",
    "merge",
    "remove_items",
    "union",
    "difference",
    "intersection",
    "overlaps",
    "filter_subtree",
    "from_fields_v1",
    "to_fields_v1",
    "leaf_paths",
    "path_string",
]

MEMBER = "."


class _Missing:
    """An absent value (upstream's nil value.Value), as opposed to a JSON null (None)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# ---- the schema ------------------------------------------------------------------------------


class Type:
    """One node of the schema, as structured-merge-diff's schema.Atom sees it.

    form: "map" (a struct or a map), "list" or "scalar"; "deduced" when the schema says
    nothing (x-kubernetes-preserve-unknown-fields, or an object without properties): the value
    decides, maps granular and lists atomic, as upstream's DeducedParseableType.
    """

    __slots__ = ("form", "atomic", "list_type", "keys", "key_defaults", "_fields", "_elem", "_src")

    def __init__(self, form: str, src: TypeSource | None = None, node: dict | None = None):
        self.form = form
        # an atomic map or list is replaced whole and owned as one leaf
        self.atomic = False
        # lists: "atomic", "set" or "map" (x-kubernetes-list-type)
        self.list_type = "atomic"
        # list-type map: x-kubernetes-list-map-keys, and the defaults of key fields
        self.keys: tuple[str, ...] = ()
        self.key_defaults: dict[str, Any] = {}
        self._fields: dict[str, Type] | None = None
        self._elem: Type | None = None
        # (the source and OpenAPI node the children are resolved from, lazily)
        self._src = (src, node)

    def field(self, name: str) -> Type:
        """The type of a map's field (or of its values when the field is not declared)."""
        if self.form == "deduced":
            return DEDUCED
        if self._fields is None:
            src, node = self._src
            props = (node or {}).get("properties") or {}
            self._fields = {k: src.type_of(v) for k, v in props.items()} if src else {}
        t = self._fields.get(name)
        return t if t is not None else self.elem()

    def elem(self) -> Type:
        """A list's items, or a map's values."""
        if self._elem is None:
            src, node = self._src
            node = node or {}
            sub = node.get("items") if self.form == "list" else node.get("additionalProperties")
            self._elem = src.type_of(sub) if src and isinstance(sub, dict) else DEDUCED
        return self._elem


DEDUCED = Type("deduced")
SCALAR = Type("scalar")


class TypeSource:
    """Types from OpenAPI v3 schemas: the built-in components (``#/components/schemas/...``)
    and a CRD's inline openAPIV3Schema, as kube-openapi's schemaconv reads them.

    atomic_refs: components that are atomic though their schema does not say so (the generated
    built-in subset carries no ``x-kubernetes-map-type``; upstream's types say ``+structType=
    atomic``). key_defaults: defaults of list-map key fields by component and field (the subset
    has no defaults; upstream fills a missing key from them, e.g. a port's protocol "TCP").
    """

    def __init__(
        self,
        components: dict[str, dict],
        atomic_refs: frozenset[str] = frozenset(),
        key_defaults: dict[str, dict[str, Any]] | None = None,
    ):
        self.components = components
        self.atomic_refs = atomic_refs
        self.key_defaults = key_defaults or {}
        self._by_ref: dict[str, Type] = {}
        self._by_id: dict[int, tuple[dict, Type]] = {}

    def named(self, name: str) -> Type:
        """The type of a component, by its name."""
        t = self._by_ref.get(name)
        if t is None:
            node = self.components.get(name)
            t = self._build(node, name) if node is not None else DEDUCED
            self._by_ref[name] = t
        return t

    def type_of(self, node: dict) -> Type:
        ref = _ref_name(node)
        if ref is not None:
            return self.named(ref)
        cached = self._by_id.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        t = self._build(node, None)
        # (keyed by identity: the schema dicts live as long as their CRD's ResourceInfo)
        self._by_id[id(node)] = (node, t)
        return t

    def _build(self, node: dict, ref: str | None) -> Type:
        if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("properties"):
            return DEDUCED
        kind = node.get("type")
        if kind == "array" or "items" in node:
            t = Type("list", self, node)
            list_type = node.get("x-kubernetes-list-type")
            strategy = node.get("x-kubernetes-patch-strategy") or ""
            merge_key = node.get("x-kubernetes-patch-merge-key")
            if list_type is None and "merge" in strategy.split(","):
                # schemaconv: a strategic-merge list is associative by its merge key, or a
                # set when its items are scalars
                list_type = "map" if merge_key else "set"
            t.list_type = list_type or "atomic"
            if t.list_type == "map":
                keys = node.get("x-kubernetes-list-map-keys") or ([merge_key] if merge_key else [])
                t.keys = tuple(keys)
                item_ref = _ref_name(node.get("items") or {})
                if item_ref is not None:
                    t.key_defaults = self.key_defaults.get(item_ref, {})
            t.atomic = t.list_type == "atomic"
            return t
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            values = node.get("additionalProperties")
            if not node.get("properties") and not isinstance(values, dict):
                return DEDUCED
            t = Type("map", self, node)
            t.atomic = node.get("x-kubernetes-map-type") == "atomic" or ref in self.atomic_refs
            return t
        return SCALAR


def _ref_name(node: dict) -> str | None:
    ref = node.get("$ref")
    if ref is None:
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            ref = all_of[0].get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    return None


def _form(t: Type, value: Any) -> str:
    """How a value is walked: "map", "list", "set", "assoc" or "leaf" (scalars, atomics, and
    values whose shape does not match the schema)."""
    if t.form == "deduced":
        if isinstance(value, dict):
            return "map"
        return "leaf"
    if t.atomic or t.form == "scalar":
        return "leaf"
    if t.form == "map":
        return "map" if isinstance(value, dict) or value is None or value is MISSING else "leaf"
    if isinstance(value, list) or value is None or value is MISSING:
        return "assoc" if t.list_type == "map" else "set"
    return "leaf"


# ---- path elements -----------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _item_pe(t: Type, form: str, item: Any, index: int) -> str:
    """The path element of a list item: its key fields (k:), its value (v:), or its index."""
    if form == "assoc" and isinstance(item, dict):
        key = {}
        for k in t.keys:
            if k in item:
                key[k] = item[k]
            elif k in t.key_defaults:
                key[k] = t.key_defaults[k]
        return "k:" + _json(key)
    if form == "set":
        return "v:" + _json(item)
    return f"i:{index}"


def _index_items(t: Type, form: str, items: Any) -> tuple[list[str], dict[str, Any]]:
    """The path elements of a list's items, in order, and the first item of each."""
    pes: list[str] = []
    by_pe: dict[str, Any] = {}
    for i, item in enumerate(items if isinstance(items, list) else ()):
        pe = _item_pe(t, form, item, i)
        pes.append(pe)
        by_pe.setdefault(pe, item)
    return pes, by_pe


# ---- ToFieldSet ------------------------------------------------------------------------------


def to_field_set(value: Any, t: Type) -> dict:
    """The fields a value sets (typed.ToFieldSet): every leaf, every list item of a granular
    list; a non-empty granular map is not itself a member, an empty one is a leaf."""
    form = _form(t, value)
    if form == "map" and value:
        out: dict = {}
        for k, v in value.items():
            out["f:" + k] = to_field_set(v, t.field(k))
        return out
    if form in ("assoc", "set") and value:
        out = {}
        elem = t.elem()
        for i, item in enumerate(value):
            pe = _item_pe(t, form, item, i)
            if form == "assoc" and isinstance(item, dict) and item:
                child = to_field_set(item, elem)
                child[MEMBER] = {}
                out[pe] = child
            else:
                out[pe] = {MEMBER: {}}
        return out
    return {MEMBER: {}}


# ---- Compare -----------------------------------------------------------------------------------

_Cmp = tuple[dict | None, dict | None, dict | None]


def compare(lhs: Any, rhs: Any, t: Type) -> _Cmp:
    """(added, modified, removed) between two values (typed.Compare); each a set or None.

    A map or list that appears (disappears) is itself added (removed), with everything under
    it; two empty ones compare as leaves, keeping the empty/null distinction.
    """
    if lhs is MISSING:
        return _whole(rhs, t), None, None
    if rhs is MISSING:
        return None, None, _whole(lhs, t)
    if lhs == rhs:
        return None, None, None
    lform = _form(t, lhs) if lhs is not MISSING else None
    rform = _form(t, rhs) if rhs is not MISSING else None
    form = lform or rform or "leaf"
    if (lform and rform and lform != rform) or form == "leaf" or (not lhs and not rhs):
        if lhs is MISSING:
            return {MEMBER: {}}, None, None
        if rhs is MISSING:
            return None, None, {MEMBER: {}}
        return None, {MEMBER: {}}, None
    added: dict = {}
    modified: dict = {}
    removed: dict = {}
    if form == "map":
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        for k in _ordered_union(left, right):
            a, m, r = compare(left.get(k, MISSING), right.get(k, MISSING), t.field(k))
            _attach(added, modified, removed, "f:" + k, a, m, r)
    else:
        elem = t.elem()
        _, left = _index_items(t, form, lhs)
        _, right = _index_items(t, form, rhs)
        for pe in _ordered_union(left, right):
            a, m, r = compare(left.get(pe, MISSING), right.get(pe, MISSING), elem)
            _attach(added, modified, removed, pe, a, m, r)
    if lhs is MISSING:
        added[MEMBER] = {}
    elif rhs is MISSING:
        removed[MEMBER] = {}
    return added or None, modified or None, removed or None


def _whole(value: Any, t: Type) -> dict:
    """Every path of a value that appears or disappears: its fields, as to_field_set, and
    each non-empty map or granular list as a member too (what compare inserts for them)."""
    form = _form(t, value)
    if form == "map" and value:
        out: dict = {MEMBER: {}}
        for k, v in value.items():
            out["f:" + k] = _whole(v, t.field(k))
        return out
    if form in ("assoc", "set") and value:
        out = {MEMBER: {}}
        elem = t.elem()
        for i, item in enumerate(value):
            out[_item_pe(t, form, item, i)] = _whole(item, elem)
        return out
    return {MEMBER: {}}


def overlaps(a: dict | None, b: dict | None) -> bool:
    """Do two sets share a member? (cheaper than an intersection that is thrown away)"""
    if not a or not b:
        return False
    if len(b) < len(a):
        a, b = b, a
    for k, v in a.items():
        other = b.get(k)
        if other is not None and (k == MEMBER or overlaps(v, other)):
            return True
    return False


def _ordered_union(left: dict, right: dict) -> list:
    return list(left) + [k for k in right if k not in left]


def _attach(added, modified, removed, pe, a, m, r) -> None:
    if a:
        added[pe] = a
    if m:
        modified[pe] = m
    if r:
        removed[pe] = r


# ---- Merge ---------------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, t: Type) -> Any:
    """The live object with an applied configuration merged in (typed.Merge).

    Leaves and atomic values are replaced; granular maps merge by key; granular lists by their
    items' path elements, the applied items in the applied order, and the live items the
    configuration does not name kept where they were relative to those. A null in the
    configuration removes the field (what decoding it into a Go type does).
    """
    if lhs is MISSING or rhs is MISSING:
        return rhs if lhs is MISSING else lhs
    form = _form(t, rhs)
    if form != _form(t, lhs) or form == "leaf":
        return rhs
    if form == "map":
        if not isinstance(rhs, dict):
            return rhs
        out = dict(lhs) if isinstance(lhs, dict) else {}
        for k, v in rhs.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(out.get(k, MISSING), v, t.field(k))
        return out
    if not isinstance(rhs, list):
        return rhs
    return _merge_items(lhs if isinstance(lhs, list) else [], rhs, t, form)


def _merge_items(lhs: list, rhs: list, t: Type, form: str) -> list:
    elem = t.elem()
    lpes, left = _index_items(t, form, lhs)
    rpes, right = _index_items(t, form, rhs)
    # the items both sides have, in the applied order: each is placed when its turn comes
    shared = [pe for pe in rpes if pe in left]
    out: list = []
    done: set[str] = set()
    next_shared = 0
    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        while next_shared < len(shared) and shared[next_shared] in done:
            next_shared += 1
        if li < len(lpes):
            pe = lpes[li]
            if pe in done:
                # a duplicate, or a shared item the applied order has placed already
                li += 1
                continue
            if pe not in right:
                out.append(left[pe])
                done.add(pe)
                li += 1
                continue
            if ri < len(rpes) and rpes[ri] == pe:
                out.append(merge(left[pe], right[pe], elem))
                done.add(pe)
                li += 1
                ri += 1
                continue
            if shared[next_shared] != pe:
                # a shared item whose turn has not come: placed when the applied order gets to it
                li += 1
                continue
        if ri < len(rpes):
            pe = rpes[ri]
            ri += 1
            if pe not in done:
                out.append(merge(left.get(pe, MISSING), right[pe], elem))
                done.add(pe)
        else:
            li += 1
    return out


# ---- RemoveItems ---------------------------------------------------------------------------------


def remove_items(
    value: Any, drop: dict, keep: dict | None, t: Type, protect: tuple[str, ...] = ()
) -> Any:
    """value without the members of ``drop`` that ``keep`` does not reach (typed.RemoveItems,
    with the add-back of what other managers own that Updater.prune does).

    A member of drop is removed whole unless keep has it or something under it; then only the
    parts of drop that keep does not own are removed below it, never the key fields
    (``protect``) of a list item that stays.
    """
    form = _form(t, value)
    if form == "map" and isinstance(value, dict):
        out = dict(value)
        for k in value:
            pe = "f:" + k
            sub = drop.get(pe)
            if sub is None or k in protect:
                continue
            ksub = keep.get(pe) if keep else None
            if MEMBER in sub and not ksub:
                del out[k]
            elif len(sub) > (MEMBER in sub):
                out[k] = remove_items(value[k], sub, ksub, t.field(k))
        return out
    if form in ("assoc", "set") and isinstance(value, list):
        elem = t.elem()
        items = []
        for i, item in enumerate(value):
            pe = _item_pe(t, form, item, i)
            sub = drop.get(pe)
            if sub is None:
                items.append(item)
                continue
            ksub = keep.get(pe) if keep else None
            if MEMBER in sub and not ksub:
                continue
            if len(sub) > (MEMBER in sub):
                item = remove_items(item, sub, ksub, elem, t.keys)
            items.append(item)
        return items
    return value


# ---- set algebra ---------------------------------------------------------------------------------


def union(a: dict | None, b: dict | None) -> dict:
    if not a:
        return dict(b or {})
    if not b:
        return dict(a)
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k)
        out[k] = v if cur is None else (cur if k == MEMBER else union(cur, v))
    return out


def difference(a: dict | None, b: dict | None) -> dict:
    """The members of a that are not members of b (children of a kept member stay)."""
    if not a:
        return {}
    if not b:
        return a
    out = {}
    for k, v in a.items():
        if k == MEMBER:
            if MEMBER not in b:
                out[k] = v
            continue
        other = b.get(k)
        sub = v if other is None else difference(v, other)
        if sub:
            out[k] = sub
    return out


def intersection(a: dict | None, b: dict | None) -> dict:
    if not a or not b:
        return {}
    out = {}
    for k, v in a.items():
        other = b.get(k)
        if other is None:
            continue
        if k == MEMBER:
            out[k] = v
            continue
        sub = intersection(v, other)
        if sub:
            out[k] = sub
    return out


def filter_subtree(s: dict, pe: str) -> dict:
    """Only what is under the path element ``pe`` (the reset filter of a /status write: the
    strategies' ResetFields give it everything but status)."""
    sub = s.get(pe)
    return {pe: sub} if sub else {}


# ---- FieldsV1 ------------------------------------------------------------------------------------

# Path elements sort as fieldpath's PathElement.Compare: field names, then keys, then values,
# then indexes; each kind in the order of its text (keys and values compared as their JSON,
# which agrees with upstream for the one-type keys of the kinds served). FieldsV1 is written
# in plain string order, which gives that with "." first, except for indexes (sorted before
# keys there): kubesim's sets hold them only for items of a granular list that are not objects,
# which the kinds served do not have.
_KINDS = "fkvi"


def _pe_sort_key(pe: str) -> tuple[int, str]:
    return (_KINDS.find(pe[:1]), pe)


def to_fields_v1(s: dict) -> dict:
    """The FieldsV1 object of a set: "." first, then the children in path-element order."""
    out: dict = {}
    for k in sorted(s):
        if k == MEMBER:
            if len(s) > 1:
                out[MEMBER] = {}
            continue
        v = s[k]
        # (a member without children, the common case, is written without recursing)
        out[k] = {} if len(v) == 1 and MEMBER in v else to_fields_v1(v)
    return out


def from_fields_v1(fields: Any) -> dict:
    """A set from a FieldsV1 object (ValueError when it is not one)."""
    if not isinstance(fields, dict):
        raise ValueError("FieldsV1 must be an object")
    if not fields:
        return {MEMBER: {}}
    out: dict = {}
    for k, v in fields.items():
        if k == MEMBER:
            out[MEMBER] = {}
        elif len(k) > 2 and k[1] == ":" and k[0] in _KINDS:
            out[k] = from_fields_v1(v)
        else:
            raise ValueError(f"invalid path element {k!r}")
    return out


# ---- paths as text -------------------------------------------------------------------------------


def leaf_paths(s: dict, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every member of a set as a tuple of path elements, in FieldsV1 order."""
    out: list[tuple[str, ...]] = []
    for k in sorted(s, key=_pe_sort_key):
        if k == MEMBER:
            out.append(prefix)
        else:
            out.extend(leaf_paths(s[k], prefix + (k,)))
    return out


def path_string(path: tuple[str, ...]) -> str:
    """fieldpath.Path.String(): ``.spec.containers[name="app"].image``, ``[="x"]``, ``[0]``."""
    parts = []
    for pe in path:
        kind, text = pe[:1], pe[2:]
        if kind == "f":
            parts.append("." + text)
        elif kind == "k":
            key = json.loads(text)
            inner = ",".join(f"{k}={_json(v)}" for k, v in sorted(key.items()))
            parts.append(f"[{inner}]")
        elif kind == "v":
            parts.append(f"[={text}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)
