"""The ``source`` field selector of Events: source.component, else the reporting controller.

The event registry's field set (pkg/registry/core/event) selects ``source`` on
``source.component`` and, when that is empty, on ``reportingController``: an events.k8s.io
Event, which has no deprecatedSource of its own, is found by the controller that reported it.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from tests.kubesim.integration.test_api import raw

EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"


def _names(sim, path: str, selector: str) -> list[str]:
    code, _, body = raw(sim, "GET", f"{path}?fieldSelector={quote(selector)}")
    assert code == 200, body
    return sorted(i["metadata"]["name"] for i in json.loads(body)["items"])


def test_source_falls_back_to_the_reporting_controller(sim):
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "reported"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctrl",
        "reportingInstance": "ctrl-1",
        "action": "Sync",
        "reason": "Synced",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
    }
    assert raw(sim, "POST", EVENTS_V1, event)[0] == 201
    core = {
        "metadata": {"name": "legacy"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Synced",
        "source": {"component": "kubelet"},
        "reportingComponent": "example.com/ctrl",
    }
    assert raw(sim, "POST", CORE_EVENTS, core)[0] == 201
    # source.component wins where it is set; the reporting controller where it is not
    assert _names(sim, CORE_EVENTS, "source=example.com/ctrl") == ["reported"]
    assert _names(sim, CORE_EVENTS, "source=kubelet") == ["legacy"]
    # and the same through events.k8s.io/v1, whose "source" label selects the same field
    assert _names(sim, EVENTS_V1, "source=example.com/ctrl") == ["reported"]
