"""Regenerates kubesim/views/builtin_openapi.json, the schemas of the built-in kinds kubesim serves.

Not used at run time. kube-apiserver publishes, per group-version, OpenAPI schemas generated
from the Go types and their doc comments (k8s.io/api ``types_swagger_doc_generated.go``).
kubesim serves a compact subset of the same facts: the kinds it serves, the types under them
that ``kubectl explain`` users walk into (Deployment down to the pod template's containers,
ObjectMeta, the RBAC rules, the CRD spec), with each field's description and type. A field
whose type is left out is kept as an ``object`` leaf with its description, so every field of
an included type is listed; only its own subfields are not.

The descriptions and types are read from the ``lightkube-models`` package (dataclasses
generated from the Kubernetes OpenAPI document, one module per group-version, with every
field's description in the docstring), which keeps them close to the server's text without
hand copying. Run, after ``pip download lightkube-models --no-deps`` and unzipping the wheel:

    python -m kubesim.views.openapi_gen path/to/lightkube/models \\
        > kubesim/views/builtin_openapi.json

Differences from the real documents, all deliberate: line breaks inside descriptions are
joined into spaces; integer formats (int32/int64), enum lists, defaults and list/map-type
extensions are not reproduced; alpha fields are included as the package lists them.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

# lightkube module -> OpenAPI definition prefix (the Go package path, reversed domain first).
_PACKAGES = {
    "meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "apps_v1": "io.k8s.api.apps.v1",
    "core_v1": "io.k8s.api.core.v1",
    "coordination_v1": "io.k8s.api.coordination.v1",
    "rbac_v1": "io.k8s.api.rbac.v1",
    "events_v1": "io.k8s.api.events.v1",
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "admissionregistration_v1": "io.k8s.api.admissionregistration.v1",
}

# The types given full schemas; every other model type a field refers to becomes a leaf.
_INCLUDE = {
    "meta_v1": [
        "ObjectMeta",
        "ListMeta",
        "LabelSelector",
        "LabelSelectorRequirement",
        "ManagedFieldsEntry",
        "OwnerReference",
        "Status",
        "StatusDetails",
        "StatusCause",
    ],
    "apps_v1": [
        "Deployment",
        "DeploymentList",
        "DeploymentSpec",
        "DeploymentStatus",
        "DeploymentStrategy",
        "DeploymentCondition",
        "RollingUpdateDeployment",
        "ReplicaSet",
        "ReplicaSetList",
        "ReplicaSetSpec",
        "ReplicaSetStatus",
        "ReplicaSetCondition",
    ],
    "core_v1": [
        "Pod",
        "PodList",
        "PodStatus",
        "PodCondition",
        "PodIP",
        "HostIP",
        "ContainerStatus",
        "ContainerState",
        "ContainerStateRunning",
        "ContainerStateWaiting",
        "ContainerStateTerminated",
        "Toleration",
        "PodTemplateSpec",
        "PodSpec",
        "Container",
        "ContainerPort",
        "EnvVar",
        "ResourceRequirements",
        "VolumeMount",
        "Volume",
        "LocalObjectReference",
        "ObjectReference",
        "Namespace",
        "NamespaceList",
        "NamespaceSpec",
        "NamespaceStatus",
        "NamespaceCondition",
        "Event",
        "EventList",
        "EventSource",
        "EventSeries",
        "ServiceAccount",
        "ServiceAccountList",
        "Service",
        "ServiceList",
        "ServiceSpec",
        "ServicePort",
        "ServiceStatus",
        "ConfigMap",
        "ConfigMapList",
        "Secret",
        "SecretList",
        "Node",
        "NodeList",
        "NodeSpec",
        "NodeStatus",
        "NodeCondition",
        "NodeAddress",
        "Taint",
    ],
    "coordination_v1": ["Lease", "LeaseList", "LeaseSpec"],
    "rbac_v1": [
        "Role",
        "RoleList",
        "ClusterRole",
        "ClusterRoleList",
        "RoleBinding",
        "RoleBindingList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
        "PolicyRule",
        "RoleRef",
        "Subject",
        "AggregationRule",
    ],
    "events_v1": ["Event", "EventList", "EventSeries"],
    "apiextensions_v1": [
        "CustomResourceDefinition",
        "CustomResourceDefinitionList",
        "CustomResourceDefinitionSpec",
        "CustomResourceDefinitionNames",
        "CustomResourceDefinitionVersion",
        "CustomResourceDefinitionStatus",
        "CustomResourceDefinitionCondition",
        "CustomResourceValidation",
        "CustomResourceColumnDefinition",
        "CustomResourceSubresources",
        "CustomResourceSubresourceScale",
    ],
    "admissionregistration_v1": [
        "MutatingWebhookConfiguration",
        "MutatingWebhookConfigurationList",
        "MutatingWebhook",
        "ValidatingWebhookConfiguration",
        "ValidatingWebhookConfigurationList",
        "ValidatingWebhook",
        "RuleWithOperations",
        "WebhookClientConfig",
        "ServiceReference",
        "MatchCondition",
    ],
}

# Kinds (x-kubernetes-group-version-kind) per module: (group, version).
_GROUP_VERSIONS = {
    "apps_v1": ("apps", "v1"),
    "core_v1": ("", "v1"),
    "coordination_v1": ("coordination.k8s.io", "v1"),
    "rbac_v1": ("rbac.authorization.k8s.io", "v1"),
    "events_v1": ("events.k8s.io", "v1"),
    "apiextensions_v1": ("apiextensions.k8s.io", "v1"),
    "admissionregistration_v1": ("admissionregistration.k8s.io", "v1"),
}
_KINDS = {
    "apps_v1": ["Deployment", "ReplicaSet"],
    "core_v1": [
        "Pod",
        "Namespace",
        "Event",
        "ServiceAccount",
        "Service",
        "ConfigMap",
        "Secret",
        "Node",
    ],
    "coordination_v1": ["Lease"],
    "rbac_v1": ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"],
    "events_v1": ["Event"],
    "apiextensions_v1": ["CustomResourceDefinition"],
    "admissionregistration_v1": [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ],
}

_META = _PACKAGES["meta_v1"]
# Named scalar-like types and their schemas (descriptions shortened from apimachinery's).
_NAMED = {
    "Time": (
        f"{_META}.Time",
        {
            "description": "Time is a wrapper around time.Time which supports correct marshaling "
            "to YAML and JSON.  Wrappers are provided for many of the factory methods that the "
            "time package offers.",
            "format": "date-time",
            "type": "string",
        },
    ),
    "MicroTime": (
        f"{_META}.MicroTime",
        {
            "description": "MicroTime is version of Time with microsecond level precision.",
            "format": "date-time",
            "type": "string",
        },
    ),
    "FieldsV1": (
        f"{_META}.FieldsV1",
        {
            "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in "
            "JSON format. The exact format is defined in sigs.k8s.io/structured-merge-diff",
            "type": "object",
        },
    ),
    "IntOrString": (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        {
            "description": "IntOrString is a type that can hold an int32 or a string.  When used "
            "in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner "
            "type.  This allows you to have, for example, a JSON field that can accept a name "
            "or number.",
            "format": "int-or-string",
            "type": "string",
        },
    ),
    "Quantity": (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        {
            "description": "Quantity is a fixed-point representation of a number, serialized "
            "as a string such as 100m, 1.5Gi or 2 (a decimal or binary SI suffix, or an "
            "exponent).",
            "type": "string",
        },
    ),
    "RawExtension": (
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        {
            "description": "RawExtension is used to hold extensions in external versions: any "
            "embedded JSON object.",
            "type": "object",
        },
    ),
}


# The patch metadata of list fields (the Go struct tags patchStrategy / patchMergeKey and the
# +listType markers). kubectl apply computes its strategic merge patch from these when the
# server publishes a schema for the kind, so a list missing here would be patched as a whole.
def _merge_list(key: str, *map_keys: str, strategy: str = "merge") -> dict:
    return {
        "x-kubernetes-list-map-keys": list(map_keys or (key,)),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": key,
        "x-kubernetes-patch-strategy": strategy,
    }


_EXTENSIONS: dict[tuple[str, str, str], dict] = {
    ("meta_v1", "ObjectMeta", "finalizers"): {
        "x-kubernetes-list-type": "set",
        "x-kubernetes-patch-strategy": "merge",
    },
    ("meta_v1", "ObjectMeta", "ownerReferences"): _merge_list("uid"),
    ("meta_v1", "ObjectMeta", "managedFields"): {"x-kubernetes-list-type": "atomic"},
    ("meta_v1", "LabelSelector", "matchExpressions"): {"x-kubernetes-list-type": "atomic"},
    ("apps_v1", "DeploymentSpec", "strategy"): {"x-kubernetes-patch-strategy": "retainKeys"},
    ("apps_v1", "DeploymentStatus", "conditions"): _merge_list("type"),
    ("core_v1", "PodSpec", "volumes"): _merge_list("name", strategy="merge,retainKeys"),
    ("core_v1", "PodSpec", "containers"): _merge_list("name"),
    ("core_v1", "PodSpec", "initContainers"): _merge_list("name"),
    ("core_v1", "PodSpec", "ephemeralContainers"): _merge_list("name"),
    ("core_v1", "PodSpec", "imagePullSecrets"): _merge_list("name"),
    ("core_v1", "PodSpec", "hostAliases"): _merge_list("ip"),
    ("core_v1", "PodSpec", "topologySpreadConstraints"): _merge_list(
        "topologyKey", "topologyKey", "whenUnsatisfiable"
    ),
    ("core_v1", "PodSpec", "resourceClaims"): _merge_list("name", strategy="merge,retainKeys"),
    ("core_v1", "PodSpec", "schedulingGates"): _merge_list("name"),
    ("core_v1", "Container", "ports"): _merge_list("containerPort", "containerPort", "protocol"),
    ("core_v1", "Container", "env"): _merge_list("name"),
    ("core_v1", "Container", "volumeMounts"): _merge_list("mountPath"),
    ("core_v1", "Container", "volumeDevices"): _merge_list("devicePath"),
    ("core_v1", "ServiceSpec", "ports"): _merge_list("port", "port", "protocol"),
    ("core_v1", "ServiceAccount", "secrets"): {
        "x-kubernetes-patch-merge-key": "name",
        "x-kubernetes-patch-strategy": "merge",
    },
    ("core_v1", "NamespaceStatus", "conditions"): _merge_list("type"),
    ("core_v1", "ServiceStatus", "conditions"): _merge_list("type"),
}

_PRIMITIVES = {"str": "string", "int": "integer", "bool": "boolean", "float": "number"}
_ITEM = re.compile(r"^\* \*\*(\w+)\*\* ``(.+?)`` - ?(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The type's description and each field's, from lightkube's docstring layout."""
    head, _, params = doc.partition("**parameters**")
    description = " ".join(line.strip() for line in head.splitlines() if line.strip())
    fields: dict[str, str] = {}
    current = None
    for raw in params.splitlines():
        line = raw.strip()
        m = _ITEM.match(line)
        if m:
            current = m.group(1)
            fields[current] = m.group(3).strip()
        elif line and current is not None:
            fields[current] = (fields[current] + " " + line).strip()
    return description, fields


def _load(models: Path) -> dict[str, dict[str, Any]]:
    """Per module: class name -> (docstring, [(field, annotation text)]) and type aliases."""
    out: dict[str, dict[str, Any]] = {}
    for mod in set(_PACKAGES) | {"util_intstr", "resource", "runtime"}:
        tree = ast.parse((models / f"{mod}.py").read_text())
        classes: dict[str, Any] = {}
        aliases: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                anns = [
                    (st.target.id, ast.literal_eval(st.annotation))
                    for st in node.body
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
                ]
                classes[node.name] = (ast.get_docstring(node) or "", anns)
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                aliases[node.targets[0].id] = ast.unparse(node.value)
        out[mod] = {"classes": classes, "aliases": aliases}
    return out


class _Builder:
    def __init__(self, models: dict[str, dict[str, Any]]):
        self.models = models
        self.schemas: dict[str, dict] = {}
        self.included = {(m, c) for m, cs in _INCLUDE.items() for c in cs}

    def _ref(self, name: str) -> dict:
        return {"$ref": f"#/components/schemas/{name}"}

    def type_schema(self, mod: str, text: str) -> dict:
        """The schema of one annotation (without description)."""
        text = text.strip()
        m = re.fullmatch(r"Optional\[(.*)\]", text)
        if m:
            return self.type_schema(mod, m.group(1))
        m = re.fullmatch(r"List\[(.*)\]", text)
        if m:
            item = self.type_schema(mod, m.group(1))
            if "allOf" in item:
                item = dict(item, default={})
            elif item.get("type") == "string":
                item = dict(item, default="")
            return {"type": "array", "items": item}
        if text in ("dict", "Dict"):
            return {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
        if text in _PRIMITIVES:
            return {"type": _PRIMITIVES[text]}
        if text in ("Any", "JSON"):
            return {}
        target_mod, _, name = text.rpartition(".")
        target_mod = target_mod or mod
        if name in _NAMED:
            schema_name, schema = _NAMED[name]
            self.schemas[schema_name] = schema
            return {"allOf": [self._ref(schema_name)]}
        alias = self.models[target_mod]["aliases"].get(name)
        if alias is not None:
            return {"type": "object"} if alias in ("Dict", "dict") else {}
        if (target_mod, name) in self.included:
            return {"allOf": [self._ref(f"{_PACKAGES[target_mod]}.{name}")]}
        return {"type": "object"}  # a type left out: a leaf

    def build(self, mod: str, cls: str) -> None:
        doc, anns = self.models[mod]["classes"][cls]
        description, field_docs = _parse_docstring(doc)
        props: dict[str, dict] = {}
        required = []
        for name, ann in anns:
            prop = self.type_schema(mod, ann)
            if field_docs.get(name):
                prop = dict(prop, description=field_docs[name])
            prop.update(_EXTENSIONS.get((mod, cls, name), {}))
            props[name] = prop
            if not ann.startswith("Optional["):
                required.append(name)
        schema: dict[str, Any] = {"description": description, "type": "object"}
        if props:
            schema["properties"] = dict(sorted(props.items()))
        if required:
            schema["required"] = required
        if mod in _KINDS:
            kind = cls[: -len("List")] if cls.endswith("List") else cls
            if kind in _KINDS[mod]:
                group, version = _GROUP_VERSIONS[mod]
                schema["x-kubernetes-group-version-kind"] = [
                    {"group": group, "kind": cls, "version": version}
                ]
        self.schemas[f"{_PACKAGES[mod]}.{cls}"] = schema


def main(argv: list[str]) -> int:
    models = _load(Path(argv[1]))
    b = _Builder(models)
    for mod, classes in _INCLUDE.items():
        for cls in classes:
            b.build(mod, cls)
    for mod, cls, field in _EXTENSIONS:  # a renamed or dropped field must not go unnoticed
        assert field in b.schemas[f"{_PACKAGES[mod]}.{cls}"]["properties"], (mod, cls, field)
    json.dump(dict(sorted(b.schemas.items())), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
