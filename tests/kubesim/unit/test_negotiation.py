"""kubesim.server.negotiation: Accept parsing and media type choice as kube-apiserver makes them.

Cases follow k8s.io/apiserver's negotiation package (goautoneg ordering, the endpoint's
restrictions, q=0, stream and sv parameters, isPrettyPrint) and the headers real clients send.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kubesim.api import errors
from kubesim.server.httpserver import Headers
from kubesim.server.negotiation import (
    DEFAULT_ENDPOINT,
    JSON,
    PROTOBUF,
    YAML,
    Endpoint,
    MediaType,
    negotiate,
    negotiate_error,
    negotiate_stream,
    parse_accept,
)

BUILTIN = Endpoint(None, tables=True, partial_metadata=True, server_version=True)
CUSTOM = Endpoint(frozenset((JSON, YAML)), tables=True, partial_metadata=True, server_version=True)
KUBECTL_TYPED = "application/vnd.kubernetes.protobuf,application/json"
KUBECTL_TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
METADATA_LIST = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)


def handler(accept: str | None = None, path: str = "/api/v1/namespaces", agent: str = ""):
    headers = {}
    if accept is not None:
        headers["accept"] = accept
    if agent:
        headers["user-agent"] = agent
    return SimpleNamespace(headers=Headers(headers), path=path)


def choose(accept: str | None, endpoint: Endpoint = BUILTIN, **kw) -> MediaType:
    return negotiate(handler(accept, **kw), endpoint)


def test_no_accept_header_is_json():
    assert choose(None) == MediaType(JSON)
    assert choose("") == MediaType(JSON)


def test_kubectl_typed_clients_get_protobuf_for_builtin_kinds_and_json_for_custom_ones():
    assert choose(KUBECTL_TYPED).media_type == PROTOBUF
    assert choose(KUBECTL_TYPED, CUSTOM).media_type == JSON


def test_protobuf_alone_is_not_acceptable_for_custom_resources():
    with pytest.raises(errors.ApiError) as err:
        choose(PROTOBUF, CUSTOM)
    assert err.value.code == 406
    assert err.value.body["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )


def test_q_values_order_the_clauses():
    assert choose("application/json;q=0.5,application/vnd.kubernetes.protobuf").media_type == (
        PROTOBUF
    )
    assert choose("application/yaml;q=0.9,application/json").media_type == JSON
    assert choose("*/*;q=0.1,application/yaml").media_type == YAML


def test_wildcards_pick_the_servers_first_choice():
    assert choose("*/*").media_type == JSON
    assert choose("application/*").media_type == JSON
    assert choose("text/html,*/*;q=0.8").media_type == JSON


def test_q_zero_rejects_a_type_even_under_a_wildcard():
    assert choose("application/json;q=0,*/*").media_type == YAML
    with pytest.raises(errors.ApiError):
        choose("application/json;q=0")


def test_unacceptable_types_are_406():
    with pytest.raises(errors.ApiError) as err:
        choose("text/html")
    assert err.value.code == 406 and err.value.body["reason"] == "NotAcceptable"


def test_kubectl_get_gets_a_table_and_only_in_json_or_yaml():
    mt = choose(KUBECTL_TABLE)
    assert (mt.media_type, mt.convert, mt.convert_version) == (JSON, "Table", "v1")
    assert choose("application/yaml;as=Table;g=meta.k8s.io;v=v1").convert == "Table"
    pb_table = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"
    assert choose(pb_table + ",application/json") == MediaType(JSON)
    with pytest.raises(errors.ApiError):
        choose(pb_table)


def test_table_needs_group_and_version_and_a_renderer():
    assert choose("application/json;as=Table,application/yaml").media_type == YAML
    no_tables = Endpoint(None, tables=False, partial_metadata=True)
    assert choose(KUBECTL_TABLE, no_tables) == MediaType(JSON)


def test_partial_object_metadata_in_any_serializer_even_for_custom_resources():
    mt = choose(METADATA_LIST, CUSTOM)
    assert (mt.media_type, mt.convert, mt.convert_version) == (
        PROTOBUF,
        "PartialObjectMetadataList",
        "v1",
    )
    beta = choose("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1")
    assert (beta.convert, beta.convert_version) == ("PartialObjectMetadata", "v1beta1")
    assert choose("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2,application/yaml")
    with pytest.raises(errors.ApiError):
        choose("application/json;as=Deployment;g=apps;v=v1")


def test_stream_and_server_version_parameters():
    assert choose("application/json;stream=watch").media_type == JSON
    assert choose("application/yaml;stream=watch,application/json").media_type == JSON
    assert choose("application/json;sv=v2,application/yaml").media_type == YAML
    assert choose("application/json;sv=v1").media_type == JSON


def test_watch_streams_json_or_protobuf_only():
    h = handler(PROTOBUF + ";stream=watch")
    assert negotiate_stream(h, BUILTIN).media_type == PROTOBUF
    with pytest.raises(errors.ApiError) as err:
        negotiate_stream(handler("application/yaml"), BUILTIN)
    assert err.value.body["message"] == (
        "only the following media types are accepted: application/json;stream=watch, "
        "application/vnd.kubernetes.protobuf;stream=watch"
    )


def test_pretty_from_query_accept_or_human_user_agents():
    assert choose(None, path="/api/v1/namespaces?pretty=true").pretty
    assert choose(None, path="/api/v1/namespaces?pretty=1").pretty
    assert not choose(None, path="/api/v1/namespaces?pretty=false", agent="curl/8.5.0").pretty
    assert choose(None, path="/api/v1/namespaces?pretty=", agent="curl/8.5.0").pretty
    assert choose(None, agent="curl/8.5.0").pretty
    assert choose(None, agent="Wget/1.21").pretty
    assert choose(None, agent="Mozilla/5.0 (X11; Linux x86_64)").pretty
    assert not choose(None, agent="kubectl/v1.32.4 (linux/amd64)").pretty
    assert choose("application/json;pretty=1").pretty
    assert not choose(PROTOBUF, path="/api/v1/namespaces?pretty=true").pretty  # JSON only
    assert not negotiate_stream(handler(None, agent="curl/8.5.0"), BUILTIN).pretty


def test_errors_use_the_default_restrictions():
    assert negotiate_error(handler(KUBECTL_TYPED)).media_type == PROTOBUF
    assert negotiate_error(handler(KUBECTL_TABLE)) == MediaType(JSON)
    assert negotiate_error(handler("application/json;as=Table;g=meta.k8s.io;v=v1")) is None
    assert negotiate_error(handler("text/html")) is None
    assert DEFAULT_ENDPOINT.allows(PROTOBUF, "", "", "")


def test_parse_accept_reads_parameters_like_goautoneg():
    clauses = parse_accept("application/json ; q=0.5; as=Table , text/*,*, bad/a/b, application/")
    assert [(c.type, c.subtype, c.q) for c in clauses] == [
        ("text", "*", 1.0),
        ("*", "*", 1.0),
        ("application", "json", 0.5),
    ]
    assert dict(clauses[2].params) == {"as": "Table"}
    assert parse_accept("application/json;q=abc")[0].q == 0.0
    assert parse_accept("application/json;q=0.5 ;as=Table")[0].q == 0.0  # q is not trimmed
