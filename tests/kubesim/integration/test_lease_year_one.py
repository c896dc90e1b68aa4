"""Times in year 1: what Kubernetes' own Lease test sends (``time.Time{}.Add(2 * time.Second)``).

Go writes a metav1.MicroTime with a four-digit year (``0001-01-01T00:00:02.000000Z``), and its
exact zero, ``time.Time{}``, as null; the protobuf form of such a time is a Timestamp with
negative seconds. strftime's ``%Y`` writes year 1 as ``1``, which kubesim then could not read
back for a protobuf answer (a 500).
"""

from __future__ import annotations

import json

from kubesim import protobuf
from tests.kubesim.integration.test_api import raw

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
PB = "application/vnd.kubernetes.protobuf"


def _lease(name: str, acquire: str, renew: str) -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": "e2e", "acquireTime": acquire, "renewTime": renew},
    }


def test_year_one_times_are_written_with_four_digits(sim):
    body = _lease("json", "0001-01-01T00:00:02.000000Z", "0001-01-01T00:00:05.000000Z")
    code, _, created = raw(sim, "POST", LEASES, body)
    spec = json.loads(created)["spec"]
    assert code == 201
    assert (spec["acquireTime"], spec["renewTime"]) == (
        "0001-01-01T00:00:02.000000Z",
        "0001-01-01T00:00:05.000000Z",
    )
    code, hdrs, answer = raw(sim, "GET", f"{LEASES}/json", headers={"Accept": PB})
    assert (code, hdrs["Content-Type"]) == (200, PB)
    assert protobuf.decode(answer)["spec"]["renewTime"] == "0001-01-01T00:00:05.000000Z"


def test_a_protobuf_lease_in_year_one_round_trips(sim):
    body = protobuf.encode(
        _lease("pb", "0001-01-01T00:00:02.000000Z", "0001-01-01T00:00:05.000000Z")
    )
    code, _, created = raw(sim, "POST", LEASES, body, {"Content-Type": PB, "Accept": PB})
    assert code == 201
    spec = protobuf.decode(created)["spec"]
    assert spec["acquireTime"] == "0001-01-01T00:00:02.000000Z"


def test_the_zero_time_is_null(sim):
    body = _lease("zero", "0001-01-01T00:00:00.000000Z", "0001-01-01T00:00:05.000000Z")
    code, _, created = raw(sim, "POST", LEASES, body)
    assert code == 201 and json.loads(created)["spec"]["acquireTime"] is None
