"""The pure parts of the workload chain: the pod-template-hash, the rolling update's
fenceposts, quantities and QoS classes, image names as a runtime reports them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesim.controllers.deployments import max_surge, max_unavailable, pod_template_hash
from kubesim.controllers.kwok import normalize_image
from kubesim.registry.podspec import parse_quantity, pod_qos_class

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}


def test_the_pod_template_hash_is_safe_encoded_and_moves_with_the_collision_count():
    plain = pod_template_hash(TEMPLATE)
    assert plain == pod_template_hash(dict(TEMPLATE))  # a function of the template alone
    assert set(plain) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(plain) <= 10
    assert pod_template_hash(TEMPLATE, 1) != plain
    assert pod_template_hash(TEMPLATE, 1) != pod_template_hash(TEMPLATE, 2)
    assert pod_template_hash({**TEMPLATE, "spec": {"containers": []}}) != plain


def rolling(replicas: int, surge, unavailable) -> dict:
    return {
        "spec": {
            "replicas": replicas,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
            },
        }
    }


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "want"),
    [
        (4, "25%", "25%", (1, 1)),
        (10, "25%", "25%", (3, 2)),  # surge rounds up, unavailable down
        (3, "0%", "0%", (0, 1)),  # both zero would stall: one may be unavailable
        (3, 2, 5, (2, 3)),  # unavailable never above the replicas
        (0, "25%", "25%", (0, 0)),
    ],
)
def test_max_surge_and_max_unavailable_follow_resolve_fenceposts(
    replicas, surge, unavailable, want
):
    d = rolling(replicas, surge, unavailable)
    assert (max_surge(d), max_unavailable(d)) == want


def test_recreate_has_no_surge_and_no_unavailable_budget():
    d = {"spec": {"replicas": 3, "strategy": {"type": "Recreate"}}}
    assert (max_surge(d), max_unavailable(d)) == (0, 0)


def test_quantities_parse_exactly():
    assert parse_quantity("500m") == Fraction(1, 2)
    assert parse_quantity("1Gi") == 2**30
    assert parse_quantity("1e3") == 1000
    assert parse_quantity("0.5") == Fraction(1, 2)
    assert parse_quantity("bogus") == 0


def test_qos_classes():
    def spec(*resources: dict) -> dict:
        return {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)]}

    both = {"cpu": "1", "memory": "1Gi"}
    assert pod_qos_class(spec({})) == "BestEffort"
    assert pod_qos_class(spec({"requests": both, "limits": both})) == "Guaranteed"
    # equal in value, spelt differently
    assert pod_qos_class(spec({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": both})) == (
        "Guaranteed"
    )
    assert pod_qos_class(spec({"requests": both, "limits": both}, {})) == "Burstable"
    assert pod_qos_class(spec({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}})) == "Burstable"


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.25", "docker.io/library/nginx:1.25"),
        ("bitnami/kubectl", "docker.io/bitnami/kubectl:latest"),
        ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
    ],
)
def test_images_are_named_as_the_runtime_reports_them(image, want):
    assert normalize_image(image) == want
