"""The informer cache (runtime.cache): informers made and started on first use, reads from them."""

from __future__ import annotations

import threading

import pytest

from client.errors import APIError, is_not_found
from client.rest import RESTClient, resource_path
from runtime.context import background
from tests.helpers import wait_for
from tests.runtime.helpers import CONFIGMAPS, SECRETS, configmap, new_manager, running

# As envtest: no default ServiceAccount or kube-root-ca.crt in each namespace, so a list of
# ConfigMaps holds the test's own only.
pytestmark = pytest.mark.kubesim(namespace_defaults=False)


@pytest.fixture
def api(sim) -> RESTClient:
    return RESTClient(sim.new_api_client())


def create(api: RESTClient, body: dict, namespace: str = "default") -> dict:
    return api.request("POST", resource_path(*CONFIGMAPS, namespace), body=body)


def test_a_read_of_a_kind_nothing_watches_starts_its_informer_and_waits_for_it(sim, api):
    create(api, configmap("a", {"k": "v"}))
    manager = new_manager(sim)
    cache = manager.get_cache()
    with running(manager):
        # nothing asked for configmaps at set-up: no informer
        assert cache.kinds() == []
        got = cache.get(background(), CONFIGMAPS, "default", "a")
        assert got["data"] == {"k": "v"}
        assert cache.kinds() == [CONFIGMAPS]
        assert cache.informer_for(CONFIGMAPS).has_synced()
        # a copy: changing it changes nothing in the cache
        got["data"]["k"] = "changed"
        assert cache.get(background(), CONFIGMAPS, "default", "a")["data"] == {"k": "v"}
        # and later objects arrive through the watch
        create(api, configmap("b"))
        wait_for(
            lambda: (
                sorted(o["metadata"]["name"] for o in cache.list(background(), CONFIGMAPS))
                == ["a", "b"]
            ),
            message="b in the cache",
        )


def test_a_missing_object_is_the_apis_404(sim):
    manager = new_manager(sim)
    cache = manager.get_cache()
    with running(manager):
        with pytest.raises(APIError) as err:
            cache.get(background(), SECRETS, "default", "nope")
    assert is_not_found(err.value)
    assert err.value.message == 'secrets "nope" not found'
    assert err.value.status["reason"] == "NotFound"
    # made in setup, the cache is the manager's one cache
    assert manager.get_cache() is cache


def test_the_cache_is_made_before_the_start(sim):
    manager = new_manager(sim)
    with running(manager):
        # a cache made now would never be started
        with pytest.raises(RuntimeError, match="after the manager started"):
            manager.get_cache()


def test_a_read_before_the_start_waits_for_it(sim, api):
    create(api, configmap("early"))
    manager = new_manager(sim)
    cache = manager.get_cache()
    got: list = []
    reader = threading.Thread(
        target=lambda: got.append(cache.get(background(), CONFIGMAPS, "default", "early")),
        daemon=True,
    )
    reader.start()
    with running(manager):
        reader.join(10)
    assert got and got[0]["metadata"]["name"] == "early"


def test_a_read_that_cannot_sync_in_time_is_a_timeout(sim):
    sim.faults.fail_fraction(1.0, 500, verbs=["list", "watch"], resources=["secrets"])
    manager = new_manager(sim)
    cache = manager.get_cache()
    cache.sync_timeout = 0.3
    with running(manager):
        with pytest.raises(APIError) as err:
            cache.get(background(), SECRETS, "default", "x")
    assert (err.value.code, err.value.reason) == (504, "Timeout")


def test_list_by_namespace_labels_and_indexed_fields(sim, api):
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "other"}})
    create(api, configmap("a", {"owner": "x"}, labels={"tier": "web"}))
    create(api, configmap("b", {"owner": "y"}, labels={"tier": "db"}))
    create(
        api,
        {**configmap("c", {"owner": "x"}), "metadata": {"name": "c", "namespace": "other"}},
        "other",
    )
    manager = new_manager(sim)
    cache = manager.get_cache()
    cache.index_field(CONFIGMAPS, "data.owner", lambda o: [o.get("data", {}).get("owner", "")])
    ctx = background()

    def names(**kw) -> list[str]:
        return sorted(o["metadata"]["name"] for o in cache.list(ctx, CONFIGMAPS, **kw))

    with running(manager):
        cache.get_informer(ctx, CONFIGMAPS)
        assert names() == ["a", "b", "c"]
        assert names(namespace="default") == ["a", "b"]
        assert names(labels="tier=web") == ["a"]
        assert names(labels={"tier": "db"}) == ["b"]
        assert names(matching_fields={"data.owner": "x"}) == ["a", "c"]
        assert names(namespace="other", matching_fields={"data.owner": "x"}) == ["c"]
        assert names(namespace="default", matching_fields={"data.owner": "y"}) == ["b"]
        with pytest.raises(KeyError, match="field:data.nope does not exist"):
            names(matching_fields={"data.nope": "x"})
        # the informer has started: an index cannot be added any more
        with pytest.raises(RuntimeError):
            cache.index_field(CONFIGMAPS, "data.late", lambda o: [])
