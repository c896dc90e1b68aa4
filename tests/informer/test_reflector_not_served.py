"""informer/reflector.py: a resource the server does not serve (404) is named once while it
lasts, with the likely fix, and ``last_sync_error()`` says the cache is stale until a list
succeeds again."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from client.errors import APIError
from client.objects import Object
from client.wait import ExponentialBackoff
from informer.reflector import Reflector, default_watch_error_handler
from informer.store import Indexer
from informer.testing import FakeListWatch
from tests.helpers import wait_for

NOT_SERVED = (
    "failed to list example.com/v1 foos: the server does not serve this resource (404); "
    "is its CustomResourceDefinition installed?"
)


def not_found() -> APIError:
    return APIError(404, "Not Found", "404 page not found")


class NamedListWatch(FakeListWatch):
    """FakeListWatch with the group, version and resource a ListWatch carries."""

    group, version, resource = "example.com", "v1", "foos"


class Running:
    """A reflector on its own thread, with the default handler and a fast backoff."""

    def __init__(self, lw: FakeListWatch) -> None:
        self.lw = lw
        self.reflector = Reflector(
            lw,
            Indexer(),
            name="reflector-foos",
            use_watch_list=False,
            backoff=ExponentialBackoff(initial=0.001, cap=0.005, jitter=0.0),
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.reflector.run, args=(self.stop,))
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        assert not self.thread.is_alive()


@pytest.fixture
def running() -> Iterator[list[Running]]:
    made: list[Running] = []
    yield made
    for r in made:
        r.close()


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "informer.reflector" and r.levelno >= logging.WARNING
    ]


def test_not_served_is_named_once_while_it_lasts_and_again_after_recovery(
    running: list[Running], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="informer.reflector")
    lw = NamedListWatch()
    lw.fail_next_list(*[not_found() for _ in range(5)])
    r = Running(lw)
    running.append(r)
    # the five failed lists, then the sixth that succeeds and a watch
    wait_for(lambda: lw.open_watches(), message="a watch after the failed lists")
    assert len(lw.list_calls) == 6
    assert warnings_of(caplog) == [f"reflector-foos: {NOT_SERVED}"]
    repeats = [m for m in caplog.messages if m.endswith("(still)")]
    assert len(repeats) == 4
    assert "reflector-foos: example.com/v1 foos is served again" in caplog.messages
    assert r.reflector.last_sync_error() is None

    # it fails again (the CRD deleted): the open watch fails with 404, then the relists do;
    # one more warning, for the watch
    caplog.clear()
    lw.fail_next_list(not_found(), not_found())
    lw.open_watches()[0].fail(not_found())
    wait_for(lambda: len(lw.list_calls) == 9, message="three more lists")
    wait_for(lambda: r.reflector.last_sync_error() is None, message="synced again")
    warned = warnings_of(caplog)
    assert warned == [
        "reflector-foos: failed to watch example.com/v1 foos: the server does not serve this "
        "resource (404); is its CustomResourceDefinition installed?"
    ]


class Unserved(NamedListWatch):
    """Lists answer 404 until ``served`` is set, as a server without the CRD would."""

    def __init__(self) -> None:
        super().__init__()
        self.served = threading.Event()
        self.refused = 0  # lists answered 404

    def list(self, options: Mapping[str, Any]) -> Object:
        if not self.served.is_set():
            self.refused += 1
            raise not_found()
        return super().list(options)


def test_last_sync_error_holds_while_lists_fail(running: list[Running]) -> None:
    lw = Unserved()
    r = Running(lw)
    running.append(r)
    err = wait_for(r.reflector.last_sync_error, not_yet=lambda e: False, message="a failure")
    assert isinstance(err, APIError) and err.code == 404
    # it stays failing for as long as the lists do (several more backoff rounds)
    refused = lw.refused
    wait_for(lambda: lw.refused >= refused + 3, message="more failed lists")
    assert r.reflector.last_sync_error() is not None
    lw.served.set()
    wait_for(lambda: r.reflector.last_sync_error() is None, message="a list that succeeds")


def test_a_watch_that_only_ends_is_not_a_sync_failure(running: list[Running]) -> None:
    """410 Expired ends a watch and the reflector relists; the data held was good, so
    readiness should not flap on it."""
    lw = NamedListWatch()
    r = Running(lw)
    running.append(r)
    wait_for(lambda: lw.open_watches(), message="watching")
    seen: list[BaseException | None] = []
    r.reflector.watch_error_handler = lambda refl, err: seen.append(refl.last_sync_error())
    lw.fail_next_watch(APIError(410, "Expired", "too old"))
    lw.end_watches()
    wait_for(lambda: len(lw.watch_calls) >= 2 and lw.open_watches(), message="watching again")
    assert seen and seen[-1] is None
    assert r.reflector.last_sync_error() is None


def test_other_errors_keep_their_words() -> None:
    """Only a 404 gets the CRD hint; another failure is logged as before, each time."""
    lw = NamedListWatch()
    reflector = Reflector(lw, Indexer(), name="r", use_watch_list=False)
    forbidden = APIError(403, "Forbidden", "foos is forbidden")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("informer.reflector")
    handler = Keep(level=logging.DEBUG)
    logger.addHandler(handler)
    try:
        default_watch_error_handler(reflector, forbidden)
        default_watch_error_handler(reflector, forbidden)
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records if r.levelno == logging.WARNING] == [
        "r: failed to list/watch: 403 Forbidden: foos is forbidden"
    ] * 2


def test_a_list_watch_without_a_resource_is_described_by_name() -> None:
    reflector = Reflector(FakeListWatch(), Indexer(), name="reflector-things")
    assert reflector.resource_description() == "reflector-things"
    core = NamedListWatch()
    core.group, core.version, core.resource = "", "v1", "pods"
    assert Reflector(core, Indexer()).resource_description() == "v1 pods"
