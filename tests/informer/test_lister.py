"""informer.lister: cache-only reads by namespace, name and label selector."""

from __future__ import annotations

import pytest

from client.labels import SelectorParseError, parse_selector
from informer.lister import Lister, NotFoundError
from informer.store import NAMESPACE_INDEX, Indexer, meta_namespace_index_func


def obj(name, ns="default", **labels):
    meta = {"name": name}
    if ns:
        meta["namespace"] = ns
    if labels:
        meta["labels"] = labels
    return {"metadata": meta}


def names(objs):
    return sorted(o["metadata"]["name"] for o in objs)


@pytest.fixture
def lister():
    idx = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for o in [
        obj("web-1", app="web", tier="front"),
        obj("web-2", app="web"),
        obj("db-1", app="db", tier="back"),
        obj("other-web", "other", app="web"),
        obj("node-1", None, role="worker"),
    ]:
        idx.add(o)
    return Lister(idx, "foos", "samplecontroller.k8s.io")


def test_list_all_and_by_selector(lister):
    assert len(lister.list()) == 5
    assert len(lister.list("")) == 5
    assert names(lister.list("app=web")) == ["other-web", "web-1", "web-2"]
    assert names(lister.list(parse_selector("app in (web,db),tier"))) == ["db-1", "web-1"]
    assert names(lister.list("app!=web")) == ["db-1", "node-1"]  # != also matches a missing key
    assert names(lister.list("!app")) == ["node-1"]


def test_invalid_selector_string_raises(lister):
    with pytest.raises(SelectorParseError):
        lister.list("app in (web")


def test_get_returns_the_cached_object(lister):
    o = lister.get("default", "web-1")
    assert o is lister.indexer.get_by_key("default/web-1")
    assert lister.get("", "node-1")["metadata"]["name"] == "node-1"  # cluster-scoped


def test_get_missing_raises_not_found_with_details(lister):
    with pytest.raises(NotFoundError) as info:
        lister.get("default", "nope")
    err = info.value
    assert isinstance(err, LookupError)
    assert (err.resource, err.namespace, err.name) == (
        "foos.samplecontroller.k8s.io",
        "default",
        "nope",
    )
    assert str(err) == 'foos.samplecontroller.k8s.io "nope" not found'
    with pytest.raises(NotFoundError):
        lister.get("other", "web-1")  # exists, but in another namespace


def test_namespace_lister(lister):
    ns = lister.by_namespace("default")
    assert names(ns.list()) == ["db-1", "web-1", "web-2"]
    assert names(ns.list("app=web")) == ["web-1", "web-2"]
    assert ns.get("db-1")["metadata"]["labels"]["tier"] == "back"
    with pytest.raises(NotFoundError):
        ns.get("other-web")
    assert lister.by_namespace("empty").list() == []


def test_core_group_resource_name():
    err = NotFoundError("pods", "ns", "p")
    assert str(err) == 'pods "p" not found'
    assert (
        Lister(Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func}), "pods").resource
        == "pods"
    )
