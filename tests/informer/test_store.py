"""informer.store: keys, the thread-safe indexed store, tombstones."""

from __future__ import annotations

import threading

import pytest

from informer.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexerError,
    KeyFuncError,
    ThreadSafeStore,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)


def obj(name, namespace="default", labels=None, rv="1"):
    meta = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"metadata": meta}


def by_label_app(o):
    app = (o["metadata"].get("labels") or {}).get("app")
    return [app] if app else []


def names(objs):
    return sorted(o["metadata"]["name"] for o in objs)


# -- keys ------------------------------------------------------------------------------------------


def test_key_func_namespaced_and_cluster_scoped():
    assert meta_namespace_key_func(obj("a", "ns1")) == "ns1/a"
    assert meta_namespace_key_func(obj("node-1", None)) == "node-1"
    assert meta_namespace_key_func({"metadata": {"name": "x", "namespace": ""}}) == "x"


def test_key_func_tombstone_and_explicit_key():
    assert meta_namespace_key_func(DeletedFinalStateUnknown("ns/a", obj("a", "ns"))) == "ns/a"
    assert meta_namespace_key_func(DeletedFinalStateUnknown("ns/gone", None)) == "ns/gone"
    assert meta_namespace_key_func("ns/b") == "ns/b"


@pytest.mark.parametrize("bad", [{}, {"metadata": {}}, {"metadata": {"name": ""}}, None, 42])
def test_key_func_rejects_objects_without_name(bad):
    with pytest.raises(KeyFuncError):
        meta_namespace_key_func(bad)


def test_split_key():
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    with pytest.raises(ValueError):
        split_meta_namespace_key("a/b/c")


def test_namespace_index_func():
    assert meta_namespace_index_func(obj("a", "ns")) == ["ns"]
    assert meta_namespace_index_func(obj("a", None)) == [""]
    assert meta_namespace_index_func(DeletedFinalStateUnknown("ns/a", obj("a", "ns"))) == ["ns"]


def test_tombstone_is_a_value():
    a = DeletedFinalStateUnknown("ns/a", None)
    assert a == DeletedFinalStateUnknown("ns/a", None)
    with pytest.raises(AttributeError):
        a.key = "other"  # frozen


# -- Indexer ---------------------------------------------------------------------------------------


@pytest.fixture
def indexer():
    return Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "app": by_label_app})


def test_add_get_update_delete(indexer):
    a1 = obj("a", rv="1")
    indexer.add(a1)
    assert indexer.get(obj("a")) is a1  # the very object: no copies
    assert indexer.get_by_key("default/a") is a1
    a2 = obj("a", rv="2")
    indexer.update(a2)
    assert indexer.get_by_key("default/a") is a2
    assert len(indexer) == 1
    indexer.delete(a2)
    assert indexer.get_by_key("default/a") is None
    indexer.delete(a2)  # deleting a missing key is fine
    assert indexer.list() == [] and indexer.list_keys() == []


def test_add_or_update_returns_the_replaced_object(indexer):
    a1, a2 = obj("a", labels={"app": "web"}, rv="1"), obj("a", labels={"app": "db"}, rv="2")
    assert indexer.add_or_update(a1) is None
    assert indexer.add_or_update(a2) is a1
    assert indexer.get_by_key("default/a") is a2
    assert names(indexer.by_index("app", "db")) == ["a"] and indexer.by_index("app", "web") == []


def test_delete_by_tombstone_removes_recorded_key(indexer):
    indexer.add(obj("a"))
    indexer.delete(DeletedFinalStateUnknown("default/a", None))
    assert indexer.list_keys() == []
    assert indexer.by_index(NAMESPACE_INDEX, "default") == []


def test_list_and_list_keys(indexer):
    for n in ("a", "b"):
        indexer.add(obj(n))
    indexer.add(obj("c", "other"))
    assert sorted(indexer.list_keys()) == ["default/a", "default/b", "other/c"]
    assert names(indexer.list()) == ["a", "b", "c"]


def test_namespace_index(indexer):
    indexer.add(obj("a", "ns1"))
    indexer.add(obj("b", "ns1"))
    indexer.add(obj("c", "ns2"))
    assert names(indexer.by_index(NAMESPACE_INDEX, "ns1")) == ["a", "b"]
    assert sorted(indexer.index_keys(NAMESPACE_INDEX, "ns2")) == ["ns2/c"]
    assert sorted(indexer.list_index_func_values(NAMESPACE_INDEX)) == ["ns1", "ns2"]
    assert names(indexer.index(NAMESPACE_INDEX, obj("zzz", "ns1"))) == ["a", "b"]
    assert indexer.by_index(NAMESPACE_INDEX, "nope") == []


def test_index_follows_updates_and_drops_empty_values(indexer):
    indexer.add(obj("a", labels={"app": "web"}))
    indexer.add(obj("b", labels={"app": "web"}))
    assert names(indexer.by_index("app", "web")) == ["a", "b"]
    indexer.update(obj("a", labels={"app": "db"}))
    assert names(indexer.by_index("app", "web")) == ["b"]
    assert names(indexer.by_index("app", "db")) == ["a"]
    indexer.update(obj("b", labels={}))  # leaves the index entirely
    assert indexer.by_index("app", "web") == []
    assert indexer.list_index_func_values("app") == ["db"]
    indexer.delete(obj("a"))
    assert indexer.list_index_func_values("app") == []


def test_a_value_goes_from_one_key_to_many_and_back_without_losing_or_repeating_one(indexer):
    """One key per value is held compactly and more are promoted: every step reads the same."""
    web = {"app": "web"}
    indexer.add(obj("a", labels=web))
    indexer.update(obj("a", labels=web, rv="2"))  # the same key again: still one
    assert indexer.index_keys("app", "web") == ["default/a"]
    indexer.add(obj("b", labels=web))
    indexer.add(obj("c", labels=web))
    assert sorted(indexer.index_keys("app", "web")) == ["default/a", "default/b", "default/c"]
    assert names(indexer.index("app", obj("x", labels=web))) == ["a", "b", "c"]
    indexer.delete(obj("b"))
    indexer.delete(obj("a"))
    assert names(indexer.by_index("app", "web")) == ["c"]
    indexer.delete(obj("c"))
    assert indexer.list_index_func_values("app") == []
    # a single key removed by another key's delete is not touched
    indexer.add(obj("d", labels=web))
    indexer.delete(obj("e"))
    assert indexer.index_keys("app", "web") == ["default/d"]
    indexer.replace([obj("f", labels=web), obj("g", labels=web), obj("h", labels={"app": "db"})])
    assert sorted(indexer.index_keys("app", "web")) == ["default/f", "default/g"]
    assert indexer.index_keys("app", "db") == ["default/h"]


def test_an_index_value_naming_one_object_costs_far_less_than_a_set():
    """The Foo controller's deployment-name index has a value per Foo, each naming one Foo (a
    set of one was 216 bytes): an object in two indices costs under 250 bytes (it was ~330)."""
    import tracemalloc

    objs = [
        {"metadata": {"name": f"foo-{i:04d}", "namespace": "ns"}, "spec": {"d": f"d-{i:04d}"}}
        for i in range(500)
    ]
    # the index values made beforehand: what is measured is the store, not the index function
    values = {id(o): [f"ns/{o['spec']['d']}"] for o in objs}
    store = Indexer(
        indexers={NAMESPACE_INDEX: meta_namespace_index_func, "d": lambda o: values[id(o)]}
    )
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for o in objs:
            store.add(o)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    per_object = sum(d.size_diff for d in after.compare_to(before, "filename")) / len(objs)
    assert per_object < 250
    assert store.by_index("d", "ns/d-0007") == [objs[7]]


def test_unknown_index_is_an_error(indexer):
    with pytest.raises(IndexerError):
        indexer.by_index("missing", "x")
    with pytest.raises(IndexerError):
        indexer.index_keys("missing", "x")
    with pytest.raises(IndexerError):
        indexer.index("missing", obj("a"))
    assert indexer.list_index_func_values("missing") == []


def test_replace_rebuilds_items_and_indices(indexer):
    indexer.add(obj("old", "ns1", labels={"app": "web"}))
    indexer.replace([obj("n1", "ns2", labels={"app": "db"}), obj("n2", "ns2")], "10")
    assert sorted(indexer.list_keys()) == ["ns2/n1", "ns2/n2"]
    assert indexer.by_index(NAMESPACE_INDEX, "ns1") == []
    assert names(indexer.by_index(NAMESPACE_INDEX, "ns2")) == ["n1", "n2"]
    assert indexer.by_index("app", "web") == []
    assert names(indexer.by_index("app", "db")) == ["n1"]


def test_add_indexers_indexes_existing_items_and_rejects_conflicts():
    idx = Indexer()
    idx.add(obj("a", labels={"app": "web"}))
    idx.add_indexers({"app": by_label_app})
    assert names(idx.by_index("app", "web")) == ["a"]
    with pytest.raises(IndexerError):
        idx.add_indexers({"app": by_label_app})
    assert set(idx.get_indexers()) == {"app"}


def test_add_rejects_unkeyable_object(indexer):
    with pytest.raises(KeyFuncError):
        indexer.add({"spec": {}})
    assert indexer.list() == []


def test_resync_is_a_no_op(indexer):
    indexer.add(obj("a"))
    indexer.resync()
    assert indexer.list_keys() == ["default/a"]


def test_thread_safe_store_key_api():
    s = ThreadSafeStore({NAMESPACE_INDEX: meta_namespace_index_func})
    s.add("ns/a", obj("a", "ns"))
    s.update("ns/a", obj("a", "ns2"))  # object moved namespace under the same key
    assert s.index_keys(NAMESPACE_INDEX, "ns") == []
    assert s.index_keys(NAMESPACE_INDEX, "ns2") == ["ns/a"]
    s.delete("ns/a")
    assert len(s) == 0 and s.list_index_func_values(NAMESPACE_INDEX) == []


def test_concurrent_writers_and_readers_keep_indices_consistent(indexer):
    """Items and indices must agree at every moment a reader looks (one lock for both)."""
    stop = threading.Event()
    errors: list[str] = []

    def writer(prefix):
        for i in range(300):
            indexer.add(obj(f"{prefix}-{i % 20}", labels={"app": f"v{i % 3}"}, rv=str(i)))
            if i % 7 == 0:
                indexer.delete(obj(f"{prefix}-{(i + 5) % 20}"))

    def reader():
        while not stop.is_set():
            for value in indexer.list_index_func_values("app"):
                for o in indexer.by_index("app", value):
                    if o["metadata"]["labels"]["app"] != value:
                        errors.append(f"{o['metadata']['name']} indexed under {value}")

    readers = [threading.Thread(target=reader, name=f"reader-{i}") for i in range(2)]
    writers = [threading.Thread(target=writer, args=(p,), name=f"writer-{p}") for p in "xyz"]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert errors == []
    total = sum(len(indexer.index_keys("app", v)) for v in indexer.list_index_func_values("app"))
    assert total == len(indexer.list_keys())


def test_index_function_that_raises_leaves_items_and_indices_unchanged():
    """An index function rejecting an object must not half-apply the write: a key left in an index
    after its item is gone would make every later by_index on that value fail."""

    def by_tier(o):
        labels = o["metadata"].get("labels") or {}
        if labels.get("tier") == "bad":
            raise ValueError("tier cannot be indexed")
        return [labels["tier"]] if "tier" in labels else []

    idx = Indexer(
        indexers={NAMESPACE_INDEX: meta_namespace_index_func, "app": by_label_app, "tier": by_tier}
    )
    good = obj("a", "ns1", labels={"app": "web", "tier": "front"})
    idx.add(good)
    with pytest.raises(ValueError):
        idx.update(obj("a", "ns1", labels={"app": "db", "tier": "bad"}))
    with pytest.raises(ValueError):
        idx.add_or_update(obj("b", "ns1", labels={"tier": "bad"}))
    assert idx.get_by_key("ns1/a") is good and idx.list_keys() == ["ns1/a"]
    assert idx.by_index(NAMESPACE_INDEX, "ns1") == [good]
    assert idx.by_index("app", "web") == [good] and idx.by_index("app", "db") == []
    assert idx.by_index("tier", "front") == [good]
    idx.delete(good)
    assert idx.list_keys() == []
    assert all(idx.list_index_func_values(name) == [] for name in (NAMESPACE_INDEX, "app", "tier"))
    # the bulk writes are all-or-nothing too
    idx.add(good)
    with pytest.raises(ValueError):
        idx.replace([obj("c", "ns1", labels={"tier": "bad"})])
    assert idx.list() == [good] and idx.by_index("tier", "front") == [good]
    with pytest.raises(KeyError):
        idx.add_indexers(
            {
                "name": lambda o: [o["metadata"]["name"]],
                "broken": lambda o: [o["metadata"]["missing"]],
            }
        )
    assert set(idx.get_indexers()) == {NAMESPACE_INDEX, "app", "tier"}
    assert idx.list_index_func_values("name") == []
