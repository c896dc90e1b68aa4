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
