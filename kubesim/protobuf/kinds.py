"""Which apiVersion/kind has a protobuf message, and which message it is.

kube-apiserver speaks protobuf for the built-in kinds it registers in its scheme. Custom
resources have no protobuf form (apiextensions-apiserver: "CRDs explicitly do not support
protobuf"), nor does meta.k8s.io Table (``+protobuf=false``); :func:`message_for` answers
``None`` for them.
"""

from __future__ import annotations

from kubesim.protobuf.schema import MESSAGES, register
from kubesim.protobuf.schema_extensions import EXTENSIONS
from kubesim.protobuf.schema_generated import GENERATED

# The generated tables (hack/gen_protobuf_tables.py, from the struct tags of a kubectl of the
# release kubesim answers as) are the one source for every group kubectl links; only the two
# groups it does not link are written by hand (schema_extensions.py).
register({**GENERATED, **EXTENSIONS})


def _kinds(api_version: str, group: str, names: list[str]) -> dict[tuple[str, str], str]:
    return {(api_version, name): f"{group}.{name}" for name in names}


def _table_kinds() -> dict[tuple[str, str], str]:
    """Every object kind of the served group versions' tables: a message with ObjectMeta at
    field 1 and a ``<Kind>List`` beside it (how go-to-protobuf lays out a top-level kind)."""
    out: dict[tuple[str, str], str] = {}
    for api_version, table in _TABLE_OF_GROUP_VERSION.items():
        for qualified, message in MESSAGES.items():
            group, _, name = qualified.partition(".")
            first = message.by_number.get(1)
            if group != table or first is None or first.message != "meta.ObjectMeta":
                continue
            if f"{table}.{name}List" in MESSAGES:
                out[(api_version, name)] = qualified
                out[(api_version, f"{name}List")] = f"{table}.{name}List"
    return out


# group version -> the table (group name in the schema notation) of its messages
_TABLE_OF_GROUP_VERSION = {
    "v1": "core",
    "admissionregistration.k8s.io/v1": "admissionregistration",
    "apiextensions.k8s.io/v1": "apiextensions",
    "apiregistration.k8s.io/v1": "apiregistration",
    "apps/v1": "apps",
    "autoscaling/v2": "autoscaling_v2",
    "batch/v1": "batch",
    "certificates.k8s.io/v1": "certificates",
    "coordination.k8s.io/v1": "coordination",
    "discovery.k8s.io/v1": "discovery",
    "events.k8s.io/v1": "events",
    "flowcontrol.apiserver.k8s.io/v1": "flowcontrol",
    "networking.k8s.io/v1": "networking",
    "node.k8s.io/v1": "node",
    "policy/v1": "policy",
    "rbac.authorization.k8s.io/v1": "rbac",
    "resource.k8s.io/v1": "resource",
    "scheduling.k8s.io/v1": "scheduling",
    "storage.k8s.io/v1": "storage",
}

# The kinds that are not a stored object with a list beside it: subresources, reviews, lists.
KINDS: dict[tuple[str, str], str] = {
    **_table_kinds(),
    **_kinds("v1", "core", ["Binding"]),
    ("v1", "List"): "meta.List",
    **_kinds("autoscaling/v1", "autoscaling", ["Scale"]),
    **_kinds(
        "authentication.k8s.io/v1",
        "authentication",
        ["TokenRequest", "TokenReview", "SelfSubjectReview"],
    ),
    **_kinds(
        "authorization.k8s.io/v1",
        "authorization",
        [
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
        ],
    ),
    **_kinds(
        "meta.k8s.io/v1",
        "meta",
        ["PartialObjectMetadata", "PartialObjectMetadataList", "WatchEvent"],
    ),
    ("meta.k8s.io/v1beta1", "PartialObjectMetadata"): "meta.PartialObjectMetadata",
    ("meta.k8s.io/v1beta1", "PartialObjectMetadataList"): "meta_v1beta1.PartialObjectMetadataList",
}

# Kinds that every group version registers (metav1.AddToGroupVersion): a typed client of
# apps/v1 sends its DeleteOptions as apiVersion apps/v1, and errors are Status in any group.
ANY_VERSION: dict[str, str] = {
    "Status": "meta.Status",
    "DeleteOptions": "meta.DeleteOptions",
    "CreateOptions": "meta.CreateOptions",
    "WatchEvent": "meta.WatchEvent",
}


def message_for(api_version: str, kind: str) -> str | None:
    """The message of ``api_version``/``kind``, or ``None`` when it has no protobuf form."""
    return KINDS.get((api_version, kind)) or ANY_VERSION.get(kind)


def has_schema(api_version: str, kind: str) -> bool:
    """Whether objects of this kind can be read and written as protobuf."""
    return message_for(api_version, kind) is not None
