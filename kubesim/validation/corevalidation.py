"""kube-apiserver's validation of ConfigMaps, Secrets and events.k8s.io/v1 Events.

Twin of ValidateConfigMap / ValidateConfigMapUpdate, ValidateSecret / ValidateSecretUpdate and
the events.k8s.io/v1 half of ValidateEventCreate / ValidateEventUpdate
(k8s.io/kubernetes/pkg/apis/core/validation), plus IsConfigMapKey from
k8s.io/apimachinery/pkg/util/validation. Objects arrive in their stored form (a Secret's
``stringData`` already merged into ``data``, an events.k8s.io Event converted to core/v1), so
field paths are the stored fields' names, as the real server's are. The checks common to every
Event (namespace agreement and the rest of legacyValidateEvent) live with the core Event rules.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import TYPE_CHECKING, Any

from kubesim.api import errors

if TYPE_CHECKING:
    from kubesim.api.resources import ResourceInfo

__all__ = ["config_map_key_errors", "validate"]

MAX_SECRET_SIZE = 1024 * 1024  # core.MaxSecretSize, also the bound of a ConfigMap's data
_KEY_FMT = "[-._a-zA-Z0-9]+"
_KEY = re.compile(f"^{_KEY_FMT}$")
_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    f"'{_KEY_FMT}')"
)
_IMMUTABLE_SET = "field is immutable when `immutable` is set"


def validate(info: ResourceInfo, obj: dict, old: dict | None) -> list[dict]:
    """The causes this module's rules find for a create (old None) or an update."""
    if info.custom:
        return []
    if info.group == "" and info.kind == "ConfigMap":
        return _config_map(obj, old)
    if info.group == "" and info.kind == "Secret":
        return _secret(obj, old)
    if info.group == "events.k8s.io" and info.kind == "Event":
        return _event_v1_create(obj) if old is None else _event_v1_update(obj, old)
    return []


def config_map_key_errors(key: str) -> list[str]:
    """validation.IsConfigMapKey: a key of a ConfigMap's or Secret's data."""
    msgs = []
    if len(key) > 253:
        msgs.append("must be no more than 253 characters")
    if not _KEY.match(key):
        msgs.append(_KEY_MSG)
    if key == ".":
        msgs.append("must not be '.'")
    elif key == "..":
        msgs.append("must not be '..'")
    elif key.startswith(".."):
        msgs.append("must not start with '..'")
    return msgs


def _key_causes(field: str, data: dict) -> list[dict]:
    return [
        errors.field_invalid(f"{field}[{key}]", key, msg)
        for key in data
        for msg in config_map_key_errors(key)
    ]


def _too_long(field: str) -> dict:
    return {
        "reason": "FieldValueTooLong",
        "message": f"Too long: may not be more than {MAX_SECRET_SIZE} bytes",
        "field": field,
    }


def _decoded_len(value: Any) -> int:
    try:
        return len(base64.b64decode(str(value)))
    except (binascii.Error, ValueError):
        return 0


# ---- ConfigMap --------------------------------------------------------------------------------


def _config_map(obj: dict, old: dict | None) -> list[dict]:
    causes: list[dict] = []
    if old is not None and old.get("immutable") is True:
        if obj.get("immutable") is not True:
            causes.append(errors.field_forbidden("immutable", _IMMUTABLE_SET))
        if (obj.get("data") or {}) != (old.get("data") or {}):
            causes.append(errors.field_forbidden("data", _IMMUTABLE_SET))
        if (obj.get("binaryData") or {}) != (old.get("binaryData") or {}):
            causes.append(errors.field_forbidden("binaryData", _IMMUTABLE_SET))
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    causes += _key_causes("data", data)
    causes += [
        errors.field_invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
        for key in data
        if key in binary
    ]
    causes += _key_causes("binaryData", binary)
    size = sum(len(str(v).encode()) for v in data.values())
    size += sum(_decoded_len(v) for v in binary.values())
    if size > MAX_SECRET_SIZE:
        causes.append(_too_long(""))
    return causes


# ---- Secret -----------------------------------------------------------------------------------

_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def _secret(obj: dict, old: dict | None) -> list[dict]:
    causes: list[dict] = []
    if old is not None:
        if obj.get("type") != old.get("type"):
            causes.append(errors.field_invalid("type", obj.get("type"), "field is immutable"))
        if old.get("immutable") is True:
            if obj.get("immutable") is not True:
                causes.append(errors.field_forbidden("immutable", _IMMUTABLE_SET))
            if (obj.get("data") or {}) != (old.get("data") or {}):
                causes.append(errors.field_forbidden("data", _IMMUTABLE_SET))
    data = obj.get("data") or {}
    causes += _key_causes("data", data)
    if sum(_decoded_len(v) for v in data.values()) > MAX_SECRET_SIZE:
        causes.append(_too_long("data"))
    stype = obj.get("type") or ""
    if stype == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            causes.append(
                errors.field_required("metadata.annotations[kubernetes.io/service-account.name]")
            )
    elif stype in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        (key,) = _REQUIRED_KEYS[stype]
        if key not in data:
            causes.append(errors.field_required(f"data[{key}]"))
        else:
            problem = _json_object_error(data[key])
            if problem:
                causes.append(
                    errors.field_invalid(f"data[{key}]", "<secret contents redacted>", problem)
                )
    elif stype == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            causes.append(errors.field_required("data[username]"))
            causes.append(errors.field_required("data[password]"))
    elif stype == "kubernetes.io/ssh-auth":
        if not _decoded_len(data.get("ssh-privatekey") or ""):
            causes.append(errors.field_required("data[ssh-privatekey]"))
    elif stype == "kubernetes.io/tls":
        causes += [
            errors.field_required(f"data[{k}]") for k in _REQUIRED_KEYS[stype] if k not in data
        ]
    return causes


def _json_object_error(value: Any) -> str:
    """json.Unmarshal into map[string]interface{}: "" when the bytes are a JSON object."""
    try:
        parsed = json.loads(base64.b64decode(str(value)))
    except (binascii.Error, ValueError) as e:
        return f"invalid character in JSON: {e}"
    if not isinstance(parsed, dict):
        kind = "array" if isinstance(parsed, list) else type(parsed).__name__
        return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    return ""


# ---- events.k8s.io/v1 Event -------------------------------------------------------------------


def _event_v1_create(ev: dict) -> list[dict]:
    """ValidateEventCreate's strict rules for events.k8s.io/v1 (ev in core/v1 form)."""
    causes = _series_causes(ev)
    if not ev.get("eventTime"):
        causes.append(errors.field_required("eventTime"))
    etype = ev.get("type") or ""
    if etype not in ("Normal", "Warning"):
        causes.append(errors.field_invalid("type", "", f"has invalid value: {etype}"))
    if ev.get("firstTimestamp"):
        causes.append(errors.field_invalid("firstTimestamp", "", "needs to be unset"))
    if ev.get("lastTimestamp"):
        causes.append(errors.field_invalid("lastTimestamp", "", "needs to be unset"))
    if ev.get("count"):
        causes.append(errors.field_invalid("count", "", "needs to be unset"))
    source = ev.get("source") or {}
    if source.get("component") or source.get("host"):
        causes.append(errors.field_invalid("source", "", "needs to be unset"))
    return causes


def _event_v1_update(ev: dict, old: dict) -> list[dict]:
    """ValidateEventUpdate's strict rules: a changed series is checked, the rest immutable."""
    causes = _series_causes(ev) if ev.get("series") != old.get("series") else []
    for field in (
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "reason",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ):
        if _zeroed(ev.get(field)) != _zeroed(old.get(field)):
            causes.append(errors.field_invalid(field, ev.get(field), "field is immutable"))
    return causes


def _zeroed(value: Any) -> Any:
    """Absent, null and Go zero values compare equal, as the Go structs they stand for do."""
    if value in (None, "", 0, {}):
        return None
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v not in (None, "", 0)} or None
    return value


def _series_causes(ev: dict) -> list[dict]:
    series = ev.get("series")
    if not series:
        return []
    causes = []
    if int(series.get("count") or 0) < 2:
        causes.append(errors.field_invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(errors.field_required("series.lastObservedTime"))
    return causes
