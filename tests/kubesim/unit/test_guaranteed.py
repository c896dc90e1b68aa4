"""kubesim/storage/guaranteed.py: compute with no lock held, write only if nothing changed."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from kubesim.storage.guaranteed import MAX_ATTEMPTS, Contended, Retry, guaranteed_update
from kubesim.storage.store import Storage, Stored

KEY = ("", "configmaps")


def put(storage: Storage, value: str) -> Stored:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}, "data": {"v": value}}
    return storage.put(KEY, "ns", "c", obj)


def write(storage: Storage, old: Stored | None, new: dict) -> Stored:
    return storage.put(KEY, "ns", "c", new)


def appended(suffix: str) -> Callable[[Stored | None], dict]:
    """A try_update that appends suffix to data.v of the object it is given."""

    def try_update(old: Stored | None) -> dict:
        assert old is not None
        value = old.obj["data"]["v"] + suffix
        return {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "c"},
            "data": {"v": value},
        }

    return try_update


def test_an_update_of_an_unchanged_object_is_written_at_once():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    seen: list[str] = []

    def try_update(old: Stored | None) -> dict:
        assert old is not None
        seen.append(old.obj["data"]["v"])
        return appended("b")(old)

    stored = guaranteed_update(
        storage, KEY, "ns", "c", try_update, lambda o, n: write(storage, o, n)
    )
    assert stored.obj["data"]["v"] == "ab"
    assert seen == ["a"]


def test_a_write_that_lands_while_computing_makes_the_update_start_again_from_it():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    seen: list[str] = []

    def try_update(old: Stored | None) -> dict:
        assert old is not None
        seen.append(old.obj["data"]["v"])
        if len(seen) == 1:
            put(storage, "x")  # another writer, while this one computes
        return appended("b")(old)

    stored = guaranteed_update(
        storage, KEY, "ns", "c", try_update, lambda o, n: write(storage, o, n)
    )
    assert seen == ["a", "x"]  # computed again on the newer object: its write is not lost
    assert stored.obj["data"]["v"] == "xb"
    assert storage.get(KEY, "ns", "c") is stored


def test_a_delete_and_create_in_between_is_a_change_too():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    calls = 0

    def try_update(old: Stored | None) -> dict:
        nonlocal calls
        calls += 1
        if calls == 1:
            storage.remove(KEY, "ns", "c")
            put(storage, "a")  # the same content, another object
        return appended("b")(old)

    guaranteed_update(storage, KEY, "ns", "c", try_update, lambda o, n: write(storage, o, n))
    assert calls == 2


def test_errors_of_the_computation_are_final_and_nothing_is_written():
    storage = Storage(initial_rv=0)
    before = put(storage, "a")

    def refuse(old: Stored | None) -> dict:
        raise ValueError("denied")

    def commit(old: Stored | None, new: dict) -> Stored:
        raise AssertionError("no commit after a refusal")

    with pytest.raises(ValueError, match="denied"):
        guaranteed_update(storage, KEY, "ns", "c", refuse, commit)
    assert storage.get(KEY, "ns", "c") is before


def test_a_commit_may_ask_for_another_attempt():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    commits = 0

    def commit(old: Stored | None, new: dict) -> Stored:
        nonlocal commits
        commits += 1
        if commits == 1:
            raise Retry()
        return write(storage, old, new)

    stored = guaranteed_update(storage, KEY, "ns", "c", appended("b"), commit)
    assert commits == 2 and stored.obj["data"]["v"] == "ab"


def test_an_object_that_changes_under_every_attempt_ends_in_contended():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    calls = 0

    def always_raced(old: Stored | None) -> dict:
        nonlocal calls
        calls += 1
        put(storage, str(calls))
        return appended("b")(old)

    with pytest.raises(Contended):
        guaranteed_update(storage, KEY, "ns", "c", always_raced, lambda o, n: write(storage, o, n))
    assert calls == MAX_ATTEMPTS


def test_a_missing_object_is_passed_as_none_and_must_stay_missing():
    storage = Storage(initial_rv=0)
    seen: list[Stored | None] = []

    def create(old: Stored | None) -> dict:
        seen.append(old)
        if len(seen) == 1:
            put(storage, "someone else's")
            return {
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "metadata": {"name": "c"},
                "data": {"v": "mine"},
            }
        return appended("+mine")(old)

    stored = guaranteed_update(storage, KEY, "ns", "c", create, lambda o, n: write(storage, o, n))
    assert seen[0] is None and seen[1] is not None
    assert stored.obj["data"]["v"] == "someone else's+mine"


def test_the_computation_holds_no_lock():
    storage = Storage(initial_rv=0)
    put(storage, "a")
    other_thread_wrote = threading.Event()

    def try_update(old: Stored | None) -> dict:
        if not other_thread_wrote.is_set():
            # another thread takes the storage lock and writes while this one computes
            writer = threading.Thread(target=lambda: (put(storage, "x"), other_thread_wrote.set()))
            writer.start()
            writer.join(5)
            assert other_thread_wrote.is_set(), "the writer waited for a lock held by the update"
        return appended("b")(old)

    stored = guaranteed_update(
        storage, KEY, "ns", "c", try_update, lambda o, n: write(storage, o, n)
    )
    assert stored.obj["data"]["v"] == "xb"
