"""managedFields: who owns which field, kept on every write; server-side apply.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager and its managedfields internals
(k8s.io/apimachinery/pkg/util/managedfields/internal): ``FieldManager`` is the chain
``NewDefaultFieldManager`` builds, flattened into two calls:

- ``update``: every create, PUT and non-apply PATCH (structuredmerge.go's Update over
  structured-merge-diff's ``Updater.Update``): the writer takes the fields it added or changed,
  other managers lose them, and removed fields leave every set. Updates by one manager (same
  operation, apiVersion and subresource) share one entry (managedfieldsupdater.go), whose time
  moves only when the manager took a field.
- ``apply``: PATCH with application/apply-patch+yaml (``Updater.Apply``): the configuration is
  merged into the live object by the schema (fieldpath.py), the applier's set becomes exactly
  the configuration's fields, fields it applied before and no longer applies are removed unless
  another manager owns them, and a changed field another manager owns is a conflict (409) unless
  ``force``.

Around both, as the apiserver's managers do: the object's own identity fields are never owned
(stripmeta.go); status belongs to /status writes and the rest to the main resource (the
strategies' ResetFields); at most 10 Update entries, the oldest merged into "ancient-changes"
(capmanagers.go); entries sorted as ``encodeManagedFields`` sorts them. A request's own
managedFields replace the stored ones when they decode, and ``[]`` or ``[{}]`` resets them
(decodeLiveOrNew). Not mirrored, and named in kubesim/README.md's limits: lastappliedmanager.go
and lastappliedupdater.go (the client-side apply annotation's upgrade path), the probabilistic
skip of skipnonapplied.go (its probability is 1 upstream: always tracked), version conversion
of the sets (kubesim's versions share one shape).
"""

from __future__ import annotations

import json
import time
from typing import Any

from kubesim.api import errors
from kubesim.api.resources import ResourceInfo
from kubesim.registry import fieldpath as fp

__all__ = [
    "ABSENT",
    "FieldManager",
    "manager_name",
    "set_managed_fields",
    "IN_PROCESS_MANAGER",
    "MAX_UPDATE_MANAGERS",
]

# The manager of writes kubesim's own controllers make (the real ones run in
# kube-controller-manager, whose User-Agent prefix names them).
IN_PROCESS_MANAGER = "kube-controller-manager"
# capmanagers.go: DefaultMaxUpdateManagers, and the bucket the oldest are merged into
MAX_UPDATE_MANAGERS = 10
_ANCIENT = "ancient-changes"

# stripmeta.go: fields of an object's identity that no manager owns (metadata itself too)
_STRIPPED_TOP = ("f:apiVersion", "f:kind")
_STRIPPED_META = frozenset(
    {
        ".",
        *(
            "f:" + name
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


_IDENTITY = frozenset(k[2:] for k in _STRIPPED_META if k != ".")


def _view(obj: dict) -> dict:
    """The object without the fields no manager owns, so that compare does not walk them."""
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in _IDENTITY}
    return out


def _strip(s: dict) -> dict:
    """The set without the identity fields (stripMetaManager)."""
    meta = s.get("f:metadata")
    if meta is None and not any(k in s for k in _STRIPPED_TOP):
        return s
    out = {k: v for k, v in s.items() if k not in _STRIPPED_TOP}
    if meta is not None:
        kept = {k: v for k, v in meta.items() if k not in _STRIPPED_META}
        if kept:
            out["f:metadata"] = kept
        else:
            del out["f:metadata"]
    return out


_META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1."
# Types upstream marks +structType=atomic (x-kubernetes-map-type: atomic in its OpenAPI), which
# the generated built-in subset does not carry.
_ATOMIC_REFS = frozenset(
    {
        _META_V1 + "LabelSelector",
        _META_V1 + "OwnerReference",
        "io.k8s.api.core.v1.ObjectReference",
        "io.k8s.api.core.v1.LocalObjectReference",
        "io.k8s.api.rbac.v1.RoleRef",
    }
)
# Defaults of list-map key fields (the subset has no defaults): a port without a protocol is
# keyed as TCP, as upstream's schemas default it.
_KEY_DEFAULTS: dict[str, dict[str, Any]] = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
}

# The Go zero value of each built-in kind as unstructured (what a create is compared against:
# scope.Creater.New): the structs held by value are there, empty, so creating them does not
# add them as members; pointers, maps and slices are absent, but a slice without omitempty is
# there as null (a pod's containers). Custom resources start empty.
_ZERO: dict[tuple[str, str], dict] = {
    ("apps", "Deployment"): {
        "metadata": {},
        "spec": {
            "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
            "strategy": {},
        },
        "status": {},
    },
    ("", "Namespace"): {"metadata": {}, "spec": {}, "status": {}},
    ("", "Service"): {"metadata": {}, "spec": {}, "status": {"loadBalancer": {}}},
    ("", "Event"): {"metadata": {}, "involvedObject": {}, "source": {}},
    ("coordination.k8s.io", "Lease"): {"metadata": {}, "spec": {}},
    ("rbac.authorization.k8s.io", "RoleBinding"): {"metadata": {}, "roleRef": {}},
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): {"metadata": {}, "roleRef": {}},
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {
        "metadata": {},
        "spec": {"names": {}},
        "status": {"acceptedNames": {}},
    },
}

# A request without managedFields (as opposed to one sending an empty list).
ABSENT: Any = object()


_now_cache: tuple[int, str] = (0, "")


def _now() -> str:
    """metav1.Time now (RFC 3339, seconds), formatted once per second: writes come in bursts."""
    global _now_cache
    second = int(time.time())
    if _now_cache[0] != second:
        _now_cache = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return _now_cache[1]


def set_managed_fields(meta: dict, managed: Any) -> None:
    """Put back managedFields taken from an object (ABSENT: it had none)."""
    if managed is ABSENT:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = managed


def manager_name(query: dict, user_agent: str) -> str:
    """managerOrUserAgent: ``?fieldManager=``, else the User-Agent up to its first "/"."""
    return query.get("fieldManager") or user_agent.split("/", 1)[0]


class _Entry:
    """One managedFields entry. Read from a stored object, its set is decoded only when a
    write needs it, and it is written back as it was read unless the write changed it (the
    hot path: most writes touch one manager's fields)."""

    __slots__ = ("manager", "operation", "api_version", "_time", "_fields", "subresource", "raw")

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        time: str | None,
        fields: dict | None,
        subresource: str = "",
        raw: dict | None = None,
    ):
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self._time = time
        self._fields = fields
        self.subresource = subresource
        # the stored entry this one was read from; None once changed
        self.raw = raw

    @property
    def time(self) -> str | None:
        return self._time

    @time.setter
    def time(self, value: str | None) -> None:
        if value != self._time:
            self._time = value
            self.raw = None

    @property
    def fields(self) -> dict:
        if self._fields is None:
            assert self.raw is not None
            self._fields = _decoded(self.raw.get("fieldsV1") or {})
        return self._fields

    @fields.setter
    def fields(self, value: dict) -> None:
        if value is not self._fields:
            self._fields = value
            self.raw = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """BuildManagerIdentifier: an Apply entry is one per manager whatever its version."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def identifier(self) -> str:
        """The identifier's JSON, which upstream sorts conflicts by."""
        out = {"manager": self.manager, "operation": self.operation}
        if self.operation != "Apply":
            out["apiVersion"] = self.api_version
        if self.subresource:
            out["subresource"] = self.subresource
        return json.dumps(out, separators=(",", ":"))

    def printed(self) -> str:
        """printManager: how a conflict names the manager."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def encode(self) -> dict:
        """The entry as Go writes a ManagedFieldsEntry: every field is omitempty (a request
        without User-Agent or fieldManager makes an entry without manager)."""
        if self.raw is not None:
            return self.raw
        out: dict[str, Any] = {}
        if self.manager:
            out["manager"] = self.manager
        out["operation"] = self.operation
        if self.api_version:
            out["apiVersion"] = self.api_version
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = fp.to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


# Sets decoded from stored entries, by the identity of their FieldsV1 dict (stored objects
# are never changed, so a dict's set never changes); cleared at 1024 entries, since it keeps
# the dicts alive: what it is for is the few objects a burst of writes touches again and again.
_DECODED: dict[int, tuple[dict, dict]] = {}
_DECODED_MAX = 1024


def _decoded(fields_v1: dict) -> dict:
    hit = _DECODED.get(id(fields_v1))
    if hit is not None and hit[0] is fields_v1:
        return hit[1]
    s = fp.from_fields_v1(fields_v1)
    if len(_DECODED) >= _DECODED_MAX:
        _DECODED.clear()
    _DECODED[id(fields_v1)] = (fields_v1, s)
    return s


def _decode(managed: Any, trusted: bool = False) -> dict[tuple, _Entry] | None:
    """DecodeManagedFields; None when the list is not a valid one.

    trusted: the list is a stored object's (written by this module): sets decode lazily and
    unchanged entries are written back as they are.
    """
    if not isinstance(managed, list):
        return None
    out: dict[tuple, _Entry] = {}
    try:
        for item in managed:
            if not isinstance(item, dict) or item.get("operation") not in ("Apply", "Update"):
                return None
            if item.get("fieldsType", "FieldsV1") != "FieldsV1":
                return None
            if not isinstance(item.get("fieldsV1", {}), dict):
                return None
            e = _Entry(
                str(item.get("manager") or ""),
                item["operation"],
                str(item.get("apiVersion") or ""),
                item.get("time"),
                None if trusted else fp.from_fields_v1(item.get("fieldsV1") or {}),
                str(item.get("subresource") or ""),
                item if trusted else None,
            )
            if e.key in out:
                return None
            out[e.key] = e
    except ValueError:
        return None
    return out


def _is_reset(managed: Any) -> bool:
    """isResetManagedFields: an empty list, or one empty entry, clears the managedFields."""
    return isinstance(managed, list) and (managed == [] or managed == [{}])


def _encode(entries: dict[tuple, _Entry]) -> list[dict]:
    """encodeManagedFields, sorted by operation, time, manager, apiVersion, subresource."""
    items = sorted(
        entries.values(),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    return [e.encode() for e in items]


def _cap(entries: dict[tuple, _Entry]) -> None:
    """capManagersManager: beyond 10 Update entries, fold the oldest into "ancient-changes"
    (one bucket per apiVersion), keeping the time of the latest folded in."""
    updaters = sorted(
        (e for e in entries.values() if e.operation == "Update"), key=lambda e: e.time or ""
    )
    count = len(updaters)
    first_of_version: dict[str, _Entry] = {}
    for e in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        bucket_key = (_ANCIENT, "Update", e.api_version, "")
        first = first_of_version.get(e.api_version)
        if first is None:
            first_of_version[e.api_version] = e
            continue
        bucket = entries.get(bucket_key)
        if bucket is None:
            del entries[first.key]
            bucket = _Entry(_ANCIENT, "Update", e.api_version, first.time, first.fields)
            entries[bucket_key] = bucket
        bucket.fields = fp.union(bucket.fields, e.fields)
        bucket.time = e.time
        del entries[e.key]
        count -= 1


class _CustomRoot(fp.Type):
    """A custom resource's root: its schema's fields, with ObjectMeta's rules for metadata
    (the CRD handler types metadata as ObjectMeta whatever the schema says)."""

    __slots__ = ("_meta",)

    def __init__(self, inner: fp.Type, meta: fp.Type):
        super().__init__("map")
        self._meta = meta
        self._fields = {}
        self._elem = inner

    def field(self, name: str) -> fp.Type:
        if name == "metadata":
            return self._meta
        assert self._elem is not None
        return self._elem.field(name)


class FieldManager:
    """Keeps managedFields and serves apply, for every resource of a ``Registry``.

    components: the built-in kinds' OpenAPI v3 schemas by name (views/builtin_openapi.json,
    handed over by sim.py); without them every built-in field is typed by its value (maps
    granular, lists atomic). Custom resources are typed by their CRD's openAPIV3Schema.
    """

    def __init__(self, components: dict[str, dict] | None = None):
        self.types = fp.TypeSource(components or {}, _ATOMIC_REFS, _KEY_DEFAULTS)
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        for name, schema in (components or {}).items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or []:
                self._by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name
        self._custom: dict[int, tuple[dict | None, fp.Type]] = {}

    # ---- types -----------------------------------------------------------------------------

    def root(self, info: ResourceInfo) -> fp.Type:
        """The type of the resource's stored objects."""
        if info.custom:
            cached = self._custom.get(id(info))
            if cached is not None and cached[0] is info.schema:
                return cached[1]
            inner = self.types.type_of(info.schema) if info.schema else fp.DEDUCED
            t: fp.Type = _CustomRoot(inner, self.types.named(_META_V1 + "ObjectMeta"))
            self._custom[id(info)] = (info.schema, t)
            return t
        group, _, version = info.stored_api_version.rpartition("/")
        name = self._by_gvk.get((group, version, info.kind))
        return self.types.named(name) if name else fp.DEDUCED

    def _zero(self, info: ResourceInfo) -> dict:
        if info.custom:
            return {}
        return _ZERO.get((info.storage_key[0], info.kind)) or {"metadata": {}}

    def _owned(self, info: ResourceInfo, sub: str | None, s: dict | None) -> dict:
        """What a write may own: no identity fields; only status through /status, and no
        status through the main resource when status is its own (ResetFields)."""
        if not s:
            return {}
        if sub == "status":
            return fp.filter_subtree(s, "f:status")
        if sub is None and (info.status_subresource or not info.custom) and "f:status" in s:
            s = {k: v for k, v in s.items() if k != "f:status"}
        return _strip(s)

    # ---- update ----------------------------------------------------------------------------

    def update(
        self,
        info: ResourceInfo,
        live: dict | None,
        new: dict,
        manager: str,
        sub: str | None = None,
        requested: Any = ABSENT,
        entry_sub: str | None = None,
    ) -> None:
        """Set new's managedFields after a create (live None) or an update of live.

        requested: the managedFields the request carried (absent: those of live). entry_sub:
        the subresource the entry names, when not sub (a /scale write of the main resource).
        """
        meta = new["metadata"]
        base: dict[tuple, _Entry] | None
        if requested is not ABSENT and _is_reset(requested):
            base = {}
        else:
            live_managed = (live or {}).get("metadata", {}).get("managedFields")
            # (a request that sends back the stored list unchanged is as good as the stored)
            same = requested is live_managed or requested == live_managed
            base = _decode(requested, same) if requested not in (ABSENT, None) else None
            if not base:
                live_managed = (live or {}).get("metadata", {}).get("managedFields")
                base = _decode(live_managed, trusted=True) or {}
        lhs = live if live is not None else self._zero(info)
        added, modified, removed = fp.compare(_view(lhs), _view(new), self.root(info))
        changed = self._owned(info, sub, fp.union(added, modified))
        gone = self._owned(info, sub, removed)
        if changed or gone:
            touched = fp.union(changed, gone)
            for e in base.values():
                if fp.overlaps(e.fields, touched):
                    e.fields = fp.difference(e.fields, touched)
            if changed:
                where = entry_sub or sub or ""
                e = _Entry(manager, "Update", info.group_version, _now(), changed, where)
                prev = base.get(e.key)
                if prev is not None:
                    e.fields = fp.union(prev.fields, changed)
                base[e.key] = e
            base = {k: e for k, e in base.items() if e.fields}
            _cap(base)
        self._store(meta, base)

    @staticmethod
    def _store(meta: dict, entries: dict[tuple, _Entry]) -> None:
        if entries:
            meta["managedFields"] = _encode(entries)
        else:
            meta.pop("managedFields", None)

    # ---- apply -----------------------------------------------------------------------------

    def apply(
        self,
        info: ResourceInfo,
        live: dict | None,
        config: dict,
        manager: str,
        force: bool,
        sub: str | None = None,
    ) -> dict:
        """The object an apply of ``config`` by ``manager`` makes of live (None: a create),
        with its managedFields; 409 on conflicts unless force."""
        version = config.get("apiVersion")
        if version != info.group_version:
            raise errors.bad_request(
                f"Incorrect version specified in apply patch. Specified patch version: "
                f"{version or ''}, expected: {info.group_version}"
            )
        cmeta = config.get("metadata")
        if isinstance(cmeta, dict) and cmeta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        root = self.root(info)
        live_managed = (live or {}).get("metadata", {}).get("managedFields")
        entries = _decode(live_managed, trusted=True) or {}
        lhs = live if live is not None else self._zero(info)
        applied = self._owned(info, sub, fp.to_field_set(config, root))
        merged = fp.merge(lhs, config, root)
        me = _Entry(manager, "Apply", info.group_version, None, applied, sub or "")
        prev = entries.get(me.key)
        entries[me.key] = me
        if prev is not None and prev.fields:
            keep: dict = {}
            for e in entries.values():
                keep = fp.union(keep, e.fields)
            merged = fp.remove_items(merged, prev.fields, keep, root)
        added, modified, removed = fp.compare(_view(lhs), _view(merged), root)
        changed = self._owned(info, sub, fp.union(added, modified))
        gone = self._owned(info, sub, removed)
        conflicts: dict[tuple, dict] = {}
        for key, e in entries.items():
            if key != me.key:
                both = fp.intersection(e.fields, changed)
                if both:
                    conflicts[key] = both
        if conflicts and not force:
            raise _conflict_error([(entries[k], s) for k, s in conflicts.items()])
        for key, e in entries.items():
            if key != me.key:
                e.fields = fp.difference(fp.difference(e.fields, conflicts.get(key)), gone)
        me.time = _now() if (merged != lhs or prev is None) else prev.time
        entries = {k: e for k, e in entries.items() if e.fields or k == me.key}
        if not me.fields:
            del entries[me.key]
        _cap(entries)
        meta = merged.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        merged["metadata"] = meta
        self._store(meta, entries)
        return merged


def _conflict_error(conflicts: list[tuple[_Entry, dict]]) -> errors.ApiError:
    """NewConflictError (managedfields internal/conflict.go): one cause per field, the message
    listing them by manager."""
    found = sorted(
        ((e, path) for e, s in conflicts for path in fp.leaf_paths(s)),
        key=lambda c: (c[0].identifier(), c[1]),
    )
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {e.printed()}",
            "field": fp.path_string(path),
        }
        for e, path in found
    ]
    if len(found) == 1:
        e, path = found[0]
        where = fp.path_string(path)
        message = f"Apply failed with 1 conflict: conflict with {e.printed()}: {where}"
    else:
        lines: list[str] = []
        last = None
        for e, path in found:
            if e.identifier() != last:
                last = e.identifier()
                lines.append(f"conflicts with {e.printed()}:")
            lines.append(f"- {fp.path_string(path)}")
        message = f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)
    return errors.ApiError(409, errors.status(409, "Conflict", message, {"causes": causes}))
