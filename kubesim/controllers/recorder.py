"""Events the stand-in controllers record: core/v1 Events, as client-go's recorder writes them.

Twin of k8s.io/client-go/tools/record (the legacy recorder kube-controller-manager's controllers
use: ``recorder.Eventf(obj, type, reason, message)``) and, for the scheduler, of
k8s.io/client-go/tools/events (events.k8s.io/v1, with an action and a reporting instance).
Both end in the same storage, since kubesim keeps events.k8s.io Events as core/v1 ones.

Deliberate difference: no aggregation or series: every call is a new Event with count 1 (the
recorder's correlator would fold repeats of one message into a count).

Like the recorder, recording never fails the caller: an Event the API refuses (its namespace
is being deleted, say) is dropped.
"""

from __future__ import annotations

import datetime as _dt
import time

from kubesim.api import errors

__all__ = ["record_event", "record_events_v1"]


def _involved(obj: dict, api_version: str) -> dict:
    meta = obj["metadata"]
    return {
        "kind": obj.get("kind", ""),
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": api_version,
        "resourceVersion": meta.get("resourceVersion", ""),
    }


def record_event(
    rest, obj: dict, api_version: str, component: str, etype: str, reason: str, message: str
) -> None:
    """One core/v1 Event on ``obj`` from ``component`` (source and reportingComponent)."""
    meta = obj["metadata"]
    ns = meta.get("namespace") or "default"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        # the recorder's name: the object's name and the time in nanoseconds, in hex
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": ns},
        "involvedObject": _involved(obj, api_version),
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": etype,
        "reportingComponent": component,
        "reportingInstance": "",
    }
    _create(rest, rest.registry.lookup("", "v1", "events"), ns, event)


def record_events_v1(
    rest, obj: dict, api_version: str, controller: str, reason: str, action: str, note: str
) -> None:
    """One events.k8s.io/v1 Event (type Normal) on ``obj``, as the new events API's recorder
    writes it: eventTime to the microsecond, the reporting controller and its instance."""
    meta = obj["metadata"]
    ns = meta.get("namespace") or "default"
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": ns},
        "eventTime": now,
        "reportingController": controller,
        "reportingInstance": f"{controller}-kubesim",
        "action": action,
        "reason": reason,
        "regarding": _involved(obj, api_version),
        "note": note,
        "type": "Normal",
    }
    _create(rest, rest.registry.lookup("events.k8s.io", "v1", "events"), ns, event)


def _create(rest, info, ns: str, event: dict) -> None:
    try:
        rest.create(info, ns, event, {})
    except errors.ApiError:
        pass  # dropped, as the recorder drops an Event its sink refuses
