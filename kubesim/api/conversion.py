"""Objects between the version a client speaks and the form kubesim stores.

Twin of the scheme's conversion and decode-time defaulting (k8s.io/kubernetes/pkg/apis/*/v1
``conversion.go`` and ``defaults.go``): a request body is converted to the stored form before
the REST layer sees it, and a stored object is converted back to the version of the request
on the way out. Most resources need nothing (a ``ResourceInfo`` without a converter). Two do:

- ``events.k8s.io/v1`` Events are stored as core/v1 Events (the apiserver keeps one Event
  storage and converts: ``regarding`` <-> ``involvedObject``, ``note`` <-> ``message``,
  ``reportingController`` <-> ``reportingComponent``, ``deprecatedSource`` <-> ``source``,
  ``deprecatedFirstTimestamp``/``deprecatedLastTimestamp``/``deprecatedCount`` <->
  ``firstTimestamp``/``lastTimestamp``/``count``; pkg/apis/events/v1/conversion.go);
- core/v1 ConfigMaps and Secrets: ``data`` values must be strings (ConfigMap) or base64
  (Secret, ConfigMap ``binaryData``), as Go's JSON decoder of ``string`` and ``[]byte`` wants,
  and empty maps are not kept (``omitempty``);
- core/v1 Secrets: ``stringData`` is merged into ``data`` on every write
  (Convert_v1_Secret_To_core_Secret) and ``type`` defaults to Opaque (SetDefaults_Secret).

Where the apiserver writes a Go struct, the converted object is given the exact JSON shape Go
writes for it (field order, omitempty, ``null`` for unset times) by a round trip through the
protobuf codec's schema tables, whose decoder produces precisely that shape.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, ClassVar

from kubesim import protobuf
from kubesim.api import errors
from kubesim.protobuf.codec import decode_message, encode_message

__all__ = [
    "CONFIGMAP_V1",
    "EVENTS_V1",
    "SECRET_V1",
    "Converter",
    "go_shape",
]


class Converter:
    """Conversion of one resource version to and from its stored form (identity here)."""

    storage_api_version = ""  # apiVersion of the stored objects ("": the resource's own)
    converts_output = False  # whether stored objects differ from what clients read
    field_labels: ClassVar[dict[str, str]] = {}  # field selector label -> stored field

    def to_storage(self, obj: dict) -> dict:
        """The object to store for a request body (or patched object) at this version."""
        return obj

    def from_storage(self, obj: dict) -> dict:
        """The object clients read at this version, for a stored object."""
        return obj


def go_shape(message: str, obj: dict) -> dict:
    """``obj`` as Go's encoding/json writes the struct ``message`` names (a protobuf schema
    message such as "core.Event"): fields in declaration order, omitempty applied, unknown
    keys dropped. Raises ProtobufError (or ValueError/TypeError) for values of the wrong type."""
    return decode_message(message, encode_message(message, obj))


# ---- events.k8s.io/v1 <-> core/v1 -------------------------------------------------------------

# events.k8s.io/v1 field -> core/v1 field, for the fields that are renamed.
_EVENT_RENAMES = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_EVENT_SAME = ("eventTime", "series", "reportingInstance", "action", "reason", "related", "type")
_EVENT_BACK = {core: ev for ev, core in _EVENT_RENAMES.items()}


class _EventsV1(Converter):
    """events.k8s.io/v1 Event <-> the stored core/v1 Event (Convert_v1_Event_To_core_Event)."""

    storage_api_version = "v1"
    converts_output = True
    # events.k8s.io/v1 field selectors -> the core Event fields they select on
    # (AddFieldLabelConversionsForEvent in pkg/apis/events/v1).
    field_labels: ClassVar[dict[str, str]] = {
        "reason": "reason",
        "regarding.kind": "involvedObject.kind",
        "regarding.namespace": "involvedObject.namespace",
        "regarding.name": "involvedObject.name",
        "regarding.uid": "involvedObject.uid",
        "regarding.apiVersion": "involvedObject.apiVersion",
        "regarding.resourceVersion": "involvedObject.resourceVersion",
        "regarding.fieldPath": "involvedObject.fieldPath",
        "reportingController": "reportingComponent",
        "source": "source",
        "type": "type",
        "metadata.namespace": "metadata.namespace",
        "metadata.name": "metadata.name",
    }

    def to_storage(self, obj: dict) -> dict:
        meta = obj.get("metadata")
        body: dict[str, Any] = {}
        for ev, value in obj.items():
            if ev in _EVENT_RENAMES:
                body[_EVENT_RENAMES[ev]] = value
            elif ev in _EVENT_SAME:
                body[ev] = value
        try:
            shaped = go_shape("core.Event", body)
        except (protobuf.ProtobufError, ValueError, TypeError, AttributeError) as e:
            raise _cannot_handle("Event", str(e)) from None
        # metadata stays as sent: the REST layer checks and completes it
        return _typed("v1", meta if meta is not None else {}, shaped)

    def from_storage(self, obj: dict) -> dict:
        ev: dict[str, Any] = {}
        for field, value in obj.items():
            if field in _EVENT_BACK:
                ev[_EVENT_BACK[field]] = value
            elif field in _EVENT_SAME:
                ev[field] = value
        try:
            shaped = go_shape("events.Event", ev)
        except (protobuf.ProtobufError, ValueError, TypeError, AttributeError):
            shaped = ev  # a stored core Event with odd values: serve it converted, unshaped
        # metadata as stored, as every other read serves it
        return _typed("events.k8s.io/v1", obj.get("metadata") or {}, shaped)


def _typed(api_version: str, meta: Any, fields: dict) -> dict:
    """An Event dict: kind, apiVersion and metadata first, then the other fields in order."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": api_version, "metadata": meta}
    out.update((k, v) for k, v in fields.items() if k != "metadata")
    return out


class _ConfigMapV1(Converter):
    """core/v1 ConfigMap decoding: string data, base64 binaryData, empty maps dropped."""

    def to_storage(self, obj: dict) -> dict:
        data = obj.get("data")
        if data is not None:
            if not isinstance(data, dict):
                raise _cannot_handle(
                    "ConfigMap", _unmarshal_error(data, "ConfigMap.data", "map[string]string")
                )
            for value in data.values():
                if not isinstance(value, str):
                    raise _cannot_handle(
                        "ConfigMap", _unmarshal_error(value, "ConfigMap.data", "string")
                    )
        binary = obj.get("binaryData")
        if binary is not None:
            obj["binaryData"] = _base64_map("ConfigMap", "binaryData", binary)
        _drop_empty(obj, "data", "binaryData")
        return obj


class _SecretV1(Converter):
    """core/v1 Secret decoding: base64 data, stringData merged into data, type defaulted."""

    def to_storage(self, obj: dict) -> dict:
        data = obj.get("data")
        merged = _base64_map("Secret", "data", data) if data is not None else {}
        string_data = obj.pop("stringData", None)
        if string_data is not None:
            if not isinstance(string_data, dict):
                raise _cannot_handle(
                    "Secret",
                    _unmarshal_error(string_data, "Secret.stringData", "map[string]string"),
                )
            for key, value in string_data.items():
                if not isinstance(value, str):
                    raise _cannot_handle(
                        "Secret", _unmarshal_error(value, "Secret.stringData", "string")
                    )
                merged[key] = base64.b64encode(value.encode()).decode()
        obj["data"] = merged
        _drop_empty(obj, "data")
        if not obj.get("type"):
            obj["type"] = "Opaque"
        return obj


def _base64_map(kind: str, field: str, value: Any) -> dict[str, str]:
    """A map[string][]byte field: every value valid base64, re-encoded canonically."""
    if not isinstance(value, dict):
        raise _cannot_handle(kind, _unmarshal_error(value, f"{kind}.{field}", "map[string][]uint8"))
    out = {}
    for key, item in value.items():
        if not isinstance(item, str):
            raise _cannot_handle(kind, _unmarshal_error(item, f"{kind}.{field}", "[]uint8"))
        out[key] = _canonical_base64(kind, item)
    return out


def _drop_empty(obj: dict, *fields: str) -> None:
    """Go's omitempty: an empty map is not written, so it is not stored either."""
    for f in fields:
        if f in obj and not obj[f]:
            del obj[f]


def _cannot_handle(kind: str, why: str) -> errors.ApiError:
    return errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {why}')


def _unmarshal_error(value: Any, field: str, go_type: str) -> str:
    """encoding/json's UnmarshalTypeError text for a JSON value of the wrong type."""
    if isinstance(value, bool):
        what = "bool"
    elif isinstance(value, int | float):
        what = "number"
    elif isinstance(value, str):
        what = "string"
    elif isinstance(value, list):
        what = "array"
    elif value is None:
        what = "null"
    else:
        what = "object"
    return f"json: cannot unmarshal {what} into Go struct field {field} of type {go_type}"


_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _canonical_base64(kind: str, text: str) -> str:
    """A []byte field's JSON value decoded as Go's base64.StdEncoding does (CR/LF skipped,
    padding required) and re-encoded canonically; 400 with Go's CorruptInputError offset."""
    src = text.encode("utf-8", errors="surrogatepass")
    bad = _corrupt_offset(src)
    if bad is not None:
        raise _cannot_handle(kind, f"illegal base64 data at input byte {bad}")
    try:
        raw = base64.b64decode(src.replace(b"\n", b"").replace(b"\r", b""), validate=True)
    except (binascii.Error, ValueError):
        raise _cannot_handle(kind, "illegal base64 data at input byte 0") from None
    return base64.b64encode(raw).decode()


def _corrupt_offset(src: bytes) -> int | None:
    """Where Go's StdEncoding.Decode reports corrupt input (decodeQuantum), or None."""
    si = 0
    n = len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return si - j
            ch = src[si]
            si += 1
            if ch in _B64_ALPHABET:
                j += 1
                continue
            if ch in (0x0A, 0x0D):
                continue
            if ch != 0x3D:  # not '='
                return si - 1
            if j in (0, 1):
                return si - 1
            if j == 2:
                while si < n and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    return n
                if src[si] != 0x3D:
                    return si - 1
                si += 1
            while si < n and src[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                return si
            return None


EVENTS_V1 = _EventsV1()
CONFIGMAP_V1 = _ConfigMapV1()
SECRET_V1 = _SecretV1()
