"""The REST mapper (runtime.restmapper): a resource's kind and scope, from discovery, asked once."""

from __future__ import annotations

import pytest

from client.rest import RESTClient
from runtime.restmapper import Mapping, NoResourceMatchError, RESTMapper


def test_kinds_and_scopes_from_discovery_one_request_per_group_version(sim):
    mapper = RESTMapper(RESTClient(sim.new_api_client(), user_agent="mapper-test"))
    assert mapper.mapping(("apps", "v1", "deployments")) == Mapping("Deployment", True)
    # known since the first discovery of apps/v1: no second request
    assert mapper.mapping(("apps", "v1", "deployments")).kind == "Deployment"
    assert mapper.mapping(("", "v1", "namespaces")) == Mapping("Namespace", False)
    assert mapper.mapping(("samplecontroller.k8s.io", "v1alpha1", "foos")).kind == "Foo"
    discovery = [r for r in sim.request_log if r.user_agent == "mapper-test"]
    assert len(discovery) == 3  # apps/v1, v1, samplecontroller.k8s.io/v1alpha1


def test_what_is_not_served_is_no_match(sim):
    mapper = RESTMapper(RESTClient(sim.new_api_client()))
    with pytest.raises(NoResourceMatchError, match="no matches for nothings.apps/v1"):
        mapper.mapping(("apps", "v1", "nothings"))
    # a group the server does not serve at all (its discovery is a 404)
    with pytest.raises(NoResourceMatchError):
        mapper.mapping(("nowhere.example.com", "v1", "things"))
    # subresources are no kinds
    with pytest.raises(NoResourceMatchError):
        mapper.mapping(("apps", "v1", "deployments/status"))


def test_registered_kinds_need_no_server():
    mapper = RESTMapper(None)
    mapper.register(("tutorial.example.com", "v1", "bars"), "Bar")
    assert mapper.mapping(("tutorial.example.com", "v1", "bars")) == Mapping("Bar", True)
    with pytest.raises(NoResourceMatchError):
        mapper.mapping(("", "v1", "pods"))
