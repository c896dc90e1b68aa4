"""The e2e suite's own plumbing, checked in the default suite without a real cluster.

- capability detection (capabilities.py) against kubesim in each deployment controller mode,
  and the node rules against nodes as kubelets report them;
- the time budget (budget.py): waits are cut to what is left of pytest-timeout's budget and say
  so, and the budget follows pytest-timeout's own timer;
- who a token is (identity.py) on servers with and without SelfSubjectReview.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from pathlib import Path

import pytest

from client.errors import APIError
from kubesim import KubeSim
from tests.e2e import cluster as cluster_module
from tests.e2e.budget import BUDGET, Budget
from tests.e2e.capabilities import Capabilities, detect, node_problem, schedulable_nodes
from tests.e2e.cluster import Cluster, wait_for
from tests.e2e.conftest import check_available_timeout
from tests.e2e.identity import service_account_username, token_claims, who_am_i
from tests.e2e.report import Report

# -- capabilities -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, kind, gc, nodes",
    [
        ({"deployment_controller": "full", "deployment_status_delay": 0.01}, "full", True, 1),
        ({"deployment_controller": "no-nodes"}, "no-nodes", True, 0),
        ({"deployment_controller": "none", "garbage_collector": False}, "none", False, 0),
    ],
    ids=["full", "no-nodes", "none"],
)
def test_detect_tells_the_three_kinds_of_cluster_apart(tmp_path: Path, options, kind, gc, nodes):
    with KubeSim(token=uuid.uuid4().hex, **options) as sim:
        c = Cluster("kubesim", sim.write_kubeconfig(tmp_path / "k"), tmp_path, has_rbac=False)
        window = 1.0
        started = time.monotonic()
        can = detect(c, timeout=window)
        took = time.monotonic() - started
    assert (can.kind, can.garbage_collector, len(can.schedulable_nodes)) == (kind, gc, nodes)
    assert can.pods_become_available == (kind == "full")
    assert (can.why_not_available == "") == (kind == "full")
    # a cluster with kube-controller-manager answers at once; a bare one costs the window, once
    assert took < window + 1.0 if kind == "none" else took < window
    assert f"-> kind {kind!r}" in can.describe()


def _node(name: str, ready: str = "True", **spec) -> dict:
    return {
        "metadata": {"name": name},
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady"}]},
    }


@pytest.mark.parametrize(
    "node, problem",
    [
        (_node("a"), None),
        (_node("a", taints=[{"key": "k", "effect": "PreferNoSchedule"}]), None),
        (_node("a", unschedulable=True), "cordoned (spec.unschedulable)"),
        (_node("a", ready="False"), "not Ready (KubeletReady)"),
        ({"metadata": {"name": "a"}, "spec": {}}, "not Ready (no condition)"),
        (
            _node(
                "a",
                taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
            ),
            "taint node-role.kubernetes.io/control-plane:NoSchedule",
        ),
        (
            _node("a", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoExecute"}]),
            "taint dedicated=gpu:NoExecute",
        ),
    ],
    ids=[
        "ready",
        "prefer-no-schedule",
        "cordoned",
        "not-ready",
        "no-status",
        "control-plane",
        "no-execute",
    ],
)
def test_node_problem(node, problem):
    assert node_problem(node) == problem


class FakeAdmin:
    """A RESTClient stand-in answering GETs from a table (a value, or an APIError to raise)."""

    def __init__(self, answers: dict):
        self.answers = answers
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, path: str, params=None, body=None, **_) -> dict:
        self.calls.append((method, path))
        answer = self.answers[(method, path)]
        if isinstance(answer, Exception):
            raise answer
        return answer


def _api_error(code: int) -> APIError:
    return APIError.from_response(code, "x", {}, json.dumps({"code": code}).encode())


def test_schedulable_nodes_names_the_usable_and_says_what_keeps_the_rest_out():
    nodes = [_node("a"), _node("b", unschedulable=True), _node("c", ready="Unknown")]
    fake = type("C", (), {"admin": FakeAdmin({("GET", "/api/v1/nodes"): {"items": nodes}})})
    usable, note = schedulable_nodes(fake)  # type: ignore[arg-type]
    assert usable == ("a",)
    assert note == "1 of 3 (a); b: cordoned (spec.unschedulable); c: not Ready (KubeletReady)"
    forbidden = type("C", (), {"admin": FakeAdmin({("GET", "/api/v1/nodes"): _api_error(403)})})
    assert schedulable_nodes(forbidden)[0] == ()  # type: ignore[arg-type]
    assert "cannot list nodes (403" in schedulable_nodes(forbidden)[1]  # type: ignore[arg-type]


def test_report_lists_what_each_cluster_ruled_out():
    report = Report()
    report.probed("envtest", Capabilities(False, False, (), "no nodes", 10.0))
    report.probed("kind", Capabilities(True, True, ("n",), "1 of 1 (n)", 0.1))
    report.skip_assertion("envtest", "test_a", "X happens", "no Y")
    report.skip_assertion("envtest", "test_b", "X happens", "no Y")
    lines = report.lines()
    assert lines[0].startswith("envtest: deployment controller: no; garbage collector: no")
    assert lines[1:4] == ["  not asserted: X happens", "    why: no Y", "    in: test_a, test_b"]
    assert lines[4].startswith("kind: ") and lines[5] == "  every assertion made"


# -- the budget -------------------------------------------------------------------------------


def test_budget_cuts_a_wait_to_what_is_left_and_keeps_a_reserve_for_teardown():
    budget = Budget()
    assert budget.clamp(500) == (500, "")  # no timer: nothing to keep to
    budget.start(120)
    seconds, note = budget.clamp(500)
    assert 109 < seconds <= 110  # 10 s left for teardown
    assert "cut from 500s" in note and "120s pytest-timeout" in note
    assert budget.clamp(30) == (30, "")
    budget.in_teardown = True
    assert 118 < budget.clamp(500)[0] <= 119  # teardown may use all but the last second
    budget.start(10)
    assert 7.9 < budget.clamp(500)[0] <= 8  # a short budget keeps a fifth back
    budget.stop()
    assert budget.left() is None


def test_a_wait_longer_than_the_budget_fails_in_time_with_its_own_message(monkeypatch):
    budget = Budget()
    budget.start(1.0)  # 0.8 s for the body
    monkeypatch.setattr(cluster_module, "BUDGET", budget)
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        wait_for(lambda: False, timeout=180, message="the Foo available")
    assert time.monotonic() - started < 1.0
    assert "waiting for the Foo available (cut from 180s to the 0." in str(failed.value)
    assert "left of this test's 1s pytest-timeout)" in str(failed.value)


@pytest.mark.timeout(7)
def test_the_budget_follows_pytest_timeouts_own_timer():
    assert BUDGET.timeout == 7
    left = BUDGET.left()
    assert left is not None and 5.0 < left <= 5.6  # 7 s, less the 1.4 s teardown reserve


def test_an_available_timeout_not_below_the_test_timeout_is_refused():
    check_available_timeout(None, 120)
    check_available_timeout("90", 120)
    check_available_timeout("500", None)  # no per-test timeout: nothing to keep to
    with pytest.raises(pytest.UsageError, match="E2E_AVAILABLE_TIMEOUT=180 is not below"):
        check_available_timeout("180", 120)
    with pytest.raises(pytest.UsageError, match="not a number"):
        check_available_timeout("3m", 120)


# -- identity ---------------------------------------------------------------------------------


def _jwt(claims: dict) -> str:
    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


SA = "system:serviceaccount:sample-controller-system:sample-controller"
TOKEN = _jwt(
    {
        "sub": SA,
        "kubernetes.io": {
            "namespace": "sample-controller-system",
            "serviceaccount": {"name": "sample-controller", "uid": "u"},
        },
    }
)


def test_token_claims_are_decoded_without_verification():
    assert service_account_username(token_claims(TOKEN)) == SA
    with pytest.raises(ValueError, match="not a JWT"):
        token_claims("admin-token")
    with pytest.raises(ValueError, match="not a ServiceAccount token"):
        service_account_username({"sub": "admin"})
    with pytest.raises(ValueError, match="disagrees"):
        service_account_username(
            {"sub": SA, "kubernetes.io": {"namespace": "x", "serviceaccount": {"name": "y"}}}
        )


REVIEW = {"status": {"userInfo": {"username": SA}}}
SERVED = {"resources": [{"name": "selfsubjectreviews"}, {"name": "tokenreviews"}]}
OLD = {"resources": [{"name": "tokenreviews"}]}  # authentication.k8s.io/v1 before 1.28


def _discovery(v1=OLD, v1beta1=None, v1alpha1=None) -> dict:
    answers = {}
    for version, answer in (("v1", v1), ("v1beta1", v1beta1), ("v1alpha1", v1alpha1)):
        path = f"/apis/authentication.k8s.io/{version}"
        answers[("GET", path)] = answer if answer is not None else _api_error(404)
    return answers


def test_who_am_i_asks_the_newest_self_subject_review_served():
    post = ("POST", "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews")
    fake = FakeAdmin({**_discovery(v1beta1=SERVED), post: REVIEW})  # 1.27
    who = who_am_i(fake, TOKEN)  # type: ignore[arg-type]
    assert (who.username, who.from_server) == (SA, True)
    assert who.source == "SelfSubjectReview authentication.k8s.io/v1beta1"
    assert fake.calls[-1] == post


def test_who_am_i_falls_back_to_the_tokens_claims_on_1_24():
    fake = FakeAdmin(_discovery())  # 1.24: only tokenreviews in v1, no beta or alpha
    who = who_am_i(fake, TOKEN)  # type: ignore[arg-type]
    assert (who.username, who.from_server) == (SA, False)
    assert who.source == "the token's claims (SelfSubjectReview not served)"
    assert all(method == "GET" for method, _ in fake.calls)  # nothing was posted


def test_who_am_i_falls_back_when_the_review_is_refused():
    post = ("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews")
    fake = FakeAdmin({**_discovery(v1=SERVED), post: _api_error(403)})
    who = who_am_i(fake, TOKEN)  # type: ignore[arg-type]
    assert (who.username, who.from_server) == (SA, False)
    assert who.source == "the token's claims (SelfSubjectReview refused (v1: 403))"
