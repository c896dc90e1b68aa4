"""Schema tables for the Kubernetes protobuf messages: how a message maps to its JSON form.

Each message is written as a few lines of a small notation, one field a line, in the order
the Go struct declares them (which is also the order Go's JSON encoder writes the keys)::

    <field number> <json name> <type>[flags]

``type`` is a scalar (``string int32 int64 bool bytes``), one of the Kubernetes value types
(``time`` metav1.Time, ``microtime`` metav1.MicroTime, ``quantity`` resource.Quantity,
``intstr`` intstr.IntOrString, ``rawext`` runtime.RawExtension, ``fieldsv1``
metav1.FieldsV1, ``jsonschema`` a CRD's JSONSchemaProps, see
:mod:`kubesim.protobuf.jsonschema`) or a message name; ``[T]`` is a repeated field and
``{T}`` a ``map<string, T>``. Message names are looked up in the table's own group first, then in
``meta`` and ``core``; ``group.Name`` names one explicitly. Flags, from the Go field:

``*``  a pointer: written only when set, and kept in JSON even when zero (``replicas: 0``);
``!``  no ``omitempty`` in the json tag: a zero value still appears in JSON;
``^``  an embedded struct (``json:",inline"``): its fields sit in the parent JSON object.

A line may end in `` ~key``: the field's ``patchStrategy`` is ``merge``; a list of objects is
merged item by item on ``key`` (``patchMergeKey``), a list of scalars (no key) as a set. The
protobuf codec ignores it; the strategic merge patch reads it (registry/patch.py).

Field numbers, names, types, pointers, json tags and patch strategies are the struct tags of
k8s.io/api's and k8s.io/apimachinery's ``types.go``: public facts of the API. The tables of
every group kubectl links are generated from a kubectl binary of the served release
(hack/gen_protobuf_tables.py writes :mod:`kubesim.protobuf.schema_generated`); only the two
groups it does not link are written by hand (:mod:`kubesim.protobuf.schema_extensions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SCALARS = frozenset({"string", "int32", "int64", "bool", "bytes"})
VALUE_TYPES = frozenset(
    {"time", "microtime", "quantity", "intstr", "rawext", "fieldsv1", "jsonschema"}
)
_SEARCH_GROUPS = ("meta", "core")
_LINE = re.compile(
    r"^(\d+)\s+(\w+)\s+(\[\w+(?:\.\w+)?\]|\{\w+(?:\.\w+)?\}|\w+(?:\.\w+)?)([*!^]*)(?:\s+~(\w*))?$"
)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message: where it is on the wire and how it looks in JSON."""

    number: int
    json: str
    type: str  # a scalar, a value type, or "message"
    message: str | None  # qualified message name when type == "message"
    label: str  # "", "repeated" or "map"
    pointer: bool
    omitempty: bool
    inline: bool
    merge_key: str | None = None  # patchStrategy merge: "" for a set of scalars, else the key


@dataclass(frozen=True, slots=True)
class Message:
    """A message's fields in Go declaration order, and by number for reading the wire."""

    name: str
    fields: tuple[Field, ...]
    by_number: dict[int, Field] = field(compare=False)
    wire_order: tuple[Field, ...] = field(compare=False)  # ascending numbers, as gogo writes


MESSAGES: dict[str, Message] = {}


def _parse(group: str, name: str, text: str, names: set[str]) -> Message:
    fields = []
    for raw_line in text.strip().splitlines():
        line = raw_line.strip()
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"{group}.{name}: cannot read schema line {line!r}")
        number, json_name, type_text, flags, merge_key = match.groups()
        label = ""
        if type_text[0] == "[":
            label, type_text = "repeated", type_text[1:-1]
        elif type_text[0] == "{":
            label, type_text = "map", type_text[1:-1]
        message = None
        if type_text in SCALARS or type_text in VALUE_TYPES:
            type_name = type_text
        else:
            type_name, message = "message", _resolve(group, type_text, names)
        fields.append(
            Field(
                number=int(number),
                json=json_name,
                type=type_name,
                message=message,
                label=label,
                pointer="*" in flags,
                omitempty="!" not in flags,
                inline="^" in flags,
                merge_key=merge_key,
            )
        )
    by_number = {f.number: f for f in fields}
    if len(by_number) != len(fields):
        raise ValueError(f"{group}.{name}: a field number is used twice")
    wire_order = tuple(sorted(fields, key=lambda f: f.number))
    return Message(f"{group}.{name}", tuple(fields), by_number, wire_order)


def _resolve(group: str, type_text: str, names: set[str]) -> str:
    if "." in type_text:
        candidates = [type_text]
    else:
        candidates = [f"{g}.{type_text}" for g in (group, *_SEARCH_GROUPS)]
    for candidate in candidates:
        if candidate in names:
            return candidate
    raise ValueError(f"{group}: unknown message type {type_text!r}")


def register(tables: dict[str, dict[str, str]]) -> None:
    """Parse ``{group: {message name: notation}}`` and add the messages to :data:`MESSAGES`.

    All groups are given at once so that references across groups resolve.
    """
    names = {f"{g}.{n}" for g, messages in tables.items() for n in messages} | set(MESSAGES)
    for group, messages in tables.items():
        for name, text in messages.items():
            MESSAGES[f"{group}.{name}"] = _parse(group, name, text, names)
