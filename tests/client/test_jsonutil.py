"""client/jsonutil.py: whichever codec is installed, bodies decode to the dicts json gives."""

import importlib
import json
import sys
import threading

import pytest

import client.jsonutil

DOCS = [
    {"kind": "Foo", "metadata": {"name": "é-\u2028", "labels": {}}, "spec": {"replicas": 3}},
    {"big": 123456789012345678901234567890, "neg": -(2**64), "f": 1.5, "n": None, "t": True},
    [1, "two", [3.0], {"four": []}],
]


@pytest.fixture(params=["installed", "json"])
def codec(request, monkeypatch):
    """The module as imported (msgspec when installed), and again with msgspec hidden."""
    if request.param == "installed":
        yield client.jsonutil
        return
    monkeypatch.setitem(sys.modules, "msgspec", None)  # import msgspec -> ImportError
    module = importlib.reload(client.jsonutil)
    assert module.CODEC == "json"
    yield module
    monkeypatch.undo()
    importlib.reload(client.jsonutil)


@pytest.mark.parametrize("doc", DOCS)
def test_round_trip_gives_what_json_gives(codec, doc):
    data = codec.dumps(doc)
    assert isinstance(data, bytes)
    assert json.loads(data) == doc
    assert codec.loads(data) == doc
    assert codec.loads(json.dumps(doc).encode()) == doc  # the server's spacing, not ours


def test_decoded_objects_are_plain_builtins(codec):
    obj = codec.loads(b'{"a": {"b": [1, 2.5, "x", null, true]}}')
    assert type(obj) is dict and type(obj["a"]) is dict and type(obj["a"]["b"]) is list
    assert [type(v) for v in obj["a"]["b"]] == [int, float, str, type(None), bool]


def test_accepts_bytes_bytearray_memoryview_and_str(codec):
    for data in (b'{"a":1}', bytearray(b'{"a":1}'), memoryview(b'{"a":1}'), '{"a":1}'):
        assert codec.loads(data) == {"a": 1}


@pytest.mark.parametrize("bad", [b"{bad", b"", b'{"a": 1} trailing', b"\xff"])
def test_every_decode_error_is_a_value_error(codec, bad):
    with pytest.raises(ValueError):
        codec.loads(bad)


def test_shared_by_threads():
    """The worker and reflector threads share one encoder and one decoder."""
    docs = [{"metadata": {"name": f"foo-{i}"}, "spec": {"replicas": i}} for i in range(200)]
    errors: list[str] = []

    def work() -> None:
        for _ in range(20):
            for doc in docs:
                if client.jsonutil.loads(client.jsonutil.dumps(doc)) != doc:
                    errors.append(doc["metadata"]["name"])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


LIST = {
    "kind": "DeploymentList",
    "apiVersion": "apps/v1",
    "metadata": {"resourceVersion": "42", "continue": ""},
    "items": [{"metadata": {"name": f"d{i}"}, "spec": {"replicas": i}} for i in range(3)],
}


def test_a_list_read_lazily_holds_what_loads_gives(codec):
    body = json.dumps(LIST).encode()
    lazy = codec.loads_list(body)
    assert {k: v for k, v in lazy.items() if k != "items"} == {
        k: v for k, v in LIST.items() if k != "items"
    }
    items = lazy["items"]
    assert len(items) == 3 and list(items) == LIST["items"] and items[1] == LIST["items"][1]
    assert list(items[1:]) == LIST["items"][1:]


def test_lazy_items_are_decoded_on_each_read_and_belong_to_the_reader():
    items = client.jsonutil.loads_list(json.dumps(LIST).encode())["items"]
    if client.jsonutil.CODEC != "msgspec":
        pytest.skip("only msgspec decodes items lazily")
    assert isinstance(items, client.jsonutil.LazyItems)
    first = items[0]
    first["spec"]["replicas"] = 99  # the reader's own object
    assert items[0]["spec"]["replicas"] == 0 and items[0] is not first


@pytest.mark.parametrize(
    "body",
    [b"[1, 2]", b'{"items": null}', b'{"items": {"a": 1}}', b'{"kind": "Status", "code": 404}'],
)
def test_anything_but_a_list_decodes_as_loads_does(codec, body):
    assert codec.loads_list(body) == json.loads(body)


def test_invalid_json_is_a_value_error_when_read_lazily(codec):
    with pytest.raises(ValueError):
        codec.loads_list(b'{"items": [1,')


def test_pages_join_without_decoding_and_with_decoded_pages():
    page = client.jsonutil.loads_list(json.dumps(LIST).encode())["items"]
    joined = client.jsonutil.LazyItems.join([page, [{"plain": True}], page])
    assert len(joined) == 7
    assert list(joined) == LIST["items"] + [{"plain": True}] + LIST["items"]
