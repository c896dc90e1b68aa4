"""RequestInfo as the real resolver computes it (requestinfo_test.go's cases, kubesim's terms)."""

from __future__ import annotations

import pytest

from kubesim.auth.requestinfo import resolve


@pytest.mark.parametrize(
    ("method", "url", "expected"),
    [
        # (verb, group, version, namespace, resource, subresource, name)
        ("GET", "/api/v1/namespaces", ("list", "", "v1", "", "namespaces", "", "")),
        ("GET", "/api/v1/namespaces/other", ("get", "", "v1", "other", "namespaces", "", "other")),
        ("GET", "/api/v1/namespaces/other/pods/foo", ("get", "", "v1", "other", "pods", "", "foo")),
        ("GET", "/api/v1/namespaces/other/pods", ("list", "", "v1", "other", "pods", "", "")),
        ("GET", "/api/v1/pods", ("list", "", "v1", "", "pods", "", "")),
        (
            "HEAD",
            "/api/v1/namespaces/other/pods/foo",
            ("get", "", "v1", "other", "pods", "", "foo"),
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=true",
            ("watch", "", "v1", "other", "pods", "", ""),
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=1",
            ("watch", "", "v1", "other", "pods", "", ""),
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=false",
            ("list", "", "v1", "other", "pods", "", ""),
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=maybe",
            ("watch", "", "v1", "other", "pods", "", ""),
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/other/pods",
            ("watch", "", "v1", "other", "pods", "", ""),
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/other/pods/foo",
            ("watch", "", "v1", "other", "pods", "", "foo"),
        ),
        ("POST", "/api/v1/namespaces/other/pods", ("create", "", "v1", "other", "pods", "", "")),
        (
            "PUT",
            "/api/v1/namespaces/other/pods/foo",
            ("update", "", "v1", "other", "pods", "", "foo"),
        ),
        (
            "PATCH",
            "/api/v1/namespaces/other/pods/foo",
            ("patch", "", "v1", "other", "pods", "", "foo"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/other/pods/foo",
            ("delete", "", "v1", "other", "pods", "", "foo"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/other/pods",
            ("deletecollection", "", "v1", "other", "pods", "", ""),
        ),
        (
            "PUT",
            "/api/v1/namespaces/other/finalize",
            ("update", "", "v1", "other", "namespaces", "finalize", "other"),
        ),
        (
            "PUT",
            "/api/v1/namespaces/other/status",
            ("update", "", "v1", "other", "namespaces", "status", "other"),
        ),
        (
            "PUT",
            "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos/a/status",
            ("update", "samplecontroller.k8s.io", "v1alpha1", "ns", "foos", "status", "a"),
        ),
        (
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            ("get", "apps", "v1", "ns", "deployments", "scale", "d"),
        ),
        (
            "POST",
            "/api/v1/namespaces/ns/serviceaccounts/sa/token",
            ("create", "", "v1", "ns", "serviceaccounts", "token", "sa"),
        ),
        # a list or watch of one name by field selector is authorized as that name
        (
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases?fieldSelector=metadata.name%3Dl",
            ("list", "coordination.k8s.io", "v1", "ns", "leases", "", "l"),
        ),
        (
            "GET",
            "/api/v1/pods?watch=true&fieldSelector=metadata.name%3D%3Dp,spec.x%3Dy",
            ("watch", "", "v1", "", "pods", "", "p"),
        ),
        (
            "GET",
            "/api/v1/pods?fieldSelector=metadata.name!%3Dp",
            ("list", "", "v1", "", "pods", "", ""),
        ),
        # the resolver knows no resources: unknown ones are resource requests all the same
        ("GET", "/api/v1/namespaces/ns/bogus", ("list", "", "v1", "ns", "bogus", "", "")),
    ],
)
def test_resource_requests(method, url, expected):
    path, _, query = url.partition("?")
    info = resolve(method, path, query)
    assert info.is_resource_request
    got = (
        info.verb,
        info.api_group,
        info.api_version,
        info.namespace,
        info.resource,
        info.subresource,
        info.name,
    )
    assert got == expected


@pytest.mark.parametrize(
    ("method", "path", "verb"),
    [
        ("GET", "/api", "get"),
        ("GET", "/api/v1", "get"),
        ("GET", "/apis", "get"),
        ("GET", "/apis/apps", "get"),
        ("GET", "/apis/apps/v1", "get"),
        ("GET", "/metrics", "get"),
        ("GET", "/healthz", "get"),
        ("POST", "/kubesim/faults", "post"),
        ("HEAD", "/version", "head"),
        ("GET", "/other/a/b/c", "get"),
    ],
)
def test_non_resource_requests(method, path, verb):
    info = resolve(method, path)
    assert not info.is_resource_request
    assert (info.verb, info.path) == (verb, path)
