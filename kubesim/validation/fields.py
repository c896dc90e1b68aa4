"""Unknown fields: found by schema, pruned, and reported for server-side field validation.

Twins: the strict JSON decoding of built-in kinds (sigs.k8s.io/json's UnmarshalStrict, behind
k8s.io/apimachinery/pkg/runtime/serializer/json's strict serializer) and, for custom resources,
apiextensions-apiserver's pruning with ``ReturnPruned`` plus ObjectMeta's unknown-field paths
(customresource_handler.go's unstructuredSchemaCoercer). Go decodes a built-in body into its
struct, which drops what the struct does not declare; kubesim stores JSON, so it has to walk
the schema to find and drop the same fields. Each is reported as the path Go names it by,
``spec.template.spec.containers[0].bogus``, in the order the body has them.

What the request then gets is the handlers' business (registry/rest.py): under
``fieldValidation=Strict`` an error, under Warn (the default) a ``Warning`` header per field,
under Ignore nothing; the fields are dropped in every case.

Built-in kinds are checked against the generated OpenAPI schemas of views/ (handed in by
sim.py: this layer sits below the views). Those are a subset: where the generator stopped at
a plain ``type: object``, anything is accepted, as kubesim cannot tell what Go would drop.
"""

from __future__ import annotations

from typing import Any

from kubesim.api.resources import ResourceInfo

__all__ = ["UnknownFields", "prune_unknown"]

_REF = "#/components/schemas/"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# What a custom resource keeps at its root (and in an embedded resource) beside its schema.
_ROOT_KEEP = ("apiVersion", "kind")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune_unknown(
    value: Any,
    schema: dict | None,
    resolve: dict[str, dict],
    *,
    open_objects: bool,
    path: str = "",
    found: list[str] | None = None,
) -> list[str]:
    """Drop from ``value`` (in place) every field ``schema`` does not declare; their paths.

    resolve: schemas by name, for ``$ref`` (and ``allOf: [$ref]``, as the v3 documents wrap
    references). open_objects: a ``type: object`` without properties accepts anything (the
    generated built-in subset); for a custom resource's structural schema it declares nothing,
    so everything in it is pruned.
    """
    found = [] if found is None else found
    schema = _resolve(schema, resolve)
    if schema is None:
        return found
    if isinstance(value, dict):
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields")) or addl is True
        if props is None and addl is None and (open_objects or preserve):
            return found
        embedded = schema.get("x-kubernetes-embedded-resource")
        for key in list(value):
            sub_path = _join(path, key)
            if embedded and key in _ROOT_KEEP:
                continue
            if embedded and key == "metadata":
                meta = resolve.get(_OBJECT_META)
                prune_unknown(
                    value[key], meta, resolve, open_objects=True, path=sub_path, found=found
                )
                continue
            sub = props.get(key) if props else None
            if sub is None and isinstance(addl, dict):
                sub = addl
            if sub is None:
                if not preserve:
                    found.append(sub_path)
                    del value[key]
                continue
            prune_unknown(
                value[key], sub, resolve, open_objects=open_objects, path=sub_path, found=found
            )
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                prune_unknown(
                    item,
                    items,
                    resolve,
                    open_objects=open_objects,
                    path=f"{path}[{i}]",
                    found=found,
                )
    return found


def _resolve(schema: Any, resolve: dict[str, dict]) -> dict | None:
    """Follow ``$ref`` and a one-element ``allOf`` to the schema they name."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            schema = resolve.get(ref[len(_REF) :])
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in schema:
            schema = all_of[0]
            continue
        return schema
    return None


class UnknownFields:
    """callable(info, obj) -> the unknown fields' paths, after dropping them from obj.

    ``obj`` is the body at the request's version (before conversion to the stored form), with
    kind and apiVersion set. Built-in kinds are looked up by group, version and kind in
    ``schemas`` (the generated OpenAPI definitions); a custom resource uses its CRD's
    openAPIV3Schema, and its metadata ObjectMeta's schema. A kind with no schema is not
    checked.
    """

    def __init__(self, schemas: dict[str, dict]):
        self._schemas = schemas  # definitions by name, io.k8s.api.apps.v1.Deployment, ...
        self._by_gvk: dict[tuple[str, str, str], str] = {}  # (group, version, kind) -> name
        for name, schema in schemas.items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or []:
                self._by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name

    def __call__(self, info: ResourceInfo, obj: dict) -> list[str]:
        if info.custom:
            return self._custom(info, obj)
        name = self._by_gvk.get((info.group, info.version, info.kind))
        if name is None:
            return []
        return prune_unknown(obj, self._schemas[name], self._schemas, open_objects=True)

    def _custom(self, info: ResourceInfo, obj: dict) -> list[str]:
        found: list[str] = []
        schema = info.schema
        for key in list(obj):
            if key in _ROOT_KEEP:
                continue
            if key == "metadata":
                meta = self._schemas.get(_OBJECT_META)
                prune_unknown(
                    obj[key], meta, self._schemas, open_objects=True, path=key, found=found
                )
                continue
            if not schema or schema.get("x-kubernetes-preserve-unknown-fields"):
                continue
            sub = (schema.get("properties") or {}).get(key)
            if sub is None:
                found.append(key)
                del obj[key]
                continue
            prune_unknown(obj[key], sub, self._schemas, open_objects=False, path=key, found=found)
        return found
