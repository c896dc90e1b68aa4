"""client.pager: ListPager joins the pages of a list, and falls back to one full list when a
continue token expires (client-go ``tools/pager``), against a fake paged list function."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from client import jsonutil
from client.errors import APIError
from client.pager import DEFAULT_PAGE_SIZE, ListPager


class PagedList:
    """A collection served in pages of ``limit`` items, like the API server without its watch
    cache; a continue token is the index of the next item. Records every call's options."""

    def __init__(self, count: int, resource_version: str = "42") -> None:
        self.items = [{"metadata": {"name": f"o{i}"}} for i in range(count)]
        self.resource_version = resource_version
        self.calls: list[dict[str, Any]] = []
        self.fail_continue: APIError | None = None  # raised for every continue request

    def __call__(self, options: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append(dict(options))
        token = options.get("continue")
        if token and self.fail_continue is not None:
            raise self.fail_continue
        start = int(token or 0)
        limit = options.get("limit")
        page = self.items[start : start + limit] if limit else self.items[start:]
        end = start + len(page)
        more = bool(limit) and end < len(self.items)
        return {
            "kind": "FooList",
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "metadata": {
                "resourceVersion": self.resource_version,
                "continue": str(end) if more else "",
            },
            "items": page,
        }


def names(lst: dict[str, Any]) -> list[str]:
    return [i["metadata"]["name"] for i in lst["items"]]


def expired() -> APIError:
    return APIError(
        410,
        "Expired",
        "The provided continue parameter is too old",
        {"kind": "Status", "code": 410, "reason": "Expired"},
    )


def test_pages_are_joined_into_one_list():
    lister = PagedList(7)
    result, paged = ListPager(lister, page_size=3).list({"resourceVersion": "0"})
    assert paged
    assert names(result) == [f"o{i}" for i in range(7)]
    assert result["kind"] == "FooList"
    assert result["metadata"] == {"resourceVersion": "42", "continue": ""}
    assert lister.calls == [
        {"resourceVersion": "0", "limit": 3},
        {"limit": 3, "continue": "3"},
        {"limit": 3, "continue": "6"},
    ]


def test_later_pages_carry_the_token_instead_of_the_resource_version():
    # the server pins later pages to the first page's snapshot; a resourceVersion with a token
    # is an error there. Selectors and the limit stay on every page.
    lister = PagedList(4)
    options = {
        "resourceVersion": "40",
        "resourceVersionMatch": "NotOlderThan",
        "labelSelector": "a",
    }
    ListPager(lister, page_size=2).list(options)
    assert lister.calls == [
        {**options, "limit": 2},
        {"labelSelector": "a", "limit": 2, "continue": "2"},
    ]
    # the caller's options are not modified
    assert options == {
        "resourceVersion": "40",
        "resourceVersionMatch": "NotOlderThan",
        "labelSelector": "a",
    }


def test_one_page_is_returned_as_it_came():
    lister = PagedList(2)
    result, paged = ListPager(lister).list({})
    assert not paged
    assert names(result) == ["o0", "o1"]
    assert lister.calls == [{"limit": DEFAULT_PAGE_SIZE}]


def test_page_size_zero_lists_in_one_request():
    lister = PagedList(1200)
    result, paged = ListPager(lister, page_size=0).list({"resourceVersion": "0"})
    assert not paged and len(result["items"]) == 1200
    assert lister.calls == [{"resourceVersion": "0"}]


def test_expired_continue_token_falls_back_to_a_full_list():
    lister = PagedList(7)
    lister.fail_continue = expired()
    result, paged = ListPager(lister, page_size=3).list({"resourceVersion": "0"})
    assert paged
    assert names(result) == [f"o{i}" for i in range(7)]  # the full list, not page 1 plus it
    assert lister.calls == [
        {"resourceVersion": "0", "limit": 3},
        {"limit": 3, "continue": "3"},
        {"resourceVersion": "0"},  # unpaged, at the resourceVersion the caller asked for
    ]


def test_expired_continue_token_is_an_error_without_full_list_if_expired():
    lister = PagedList(7)
    lister.fail_continue = expired()
    with pytest.raises(APIError) as err:
        ListPager(lister, page_size=3, full_list_if_expired=False).list({})
    assert err.value.code == 410
    assert len(lister.calls) == 2


def test_other_errors_on_a_later_page_are_raised():
    lister = PagedList(7)
    lister.fail_continue = APIError(500, "InternalError", "etcd is down")
    with pytest.raises(APIError) as err:
        ListPager(lister, page_size=3).list({})
    assert err.value.code == 500
    assert len(lister.calls) == 2  # no full list: only an expired token is worked around


def test_pages_decoded_lazily_stay_undecoded_when_joined():
    lister = PagedList(7)

    def lazy_pages(options: Mapping[str, Any]) -> dict[str, Any]:
        page = lister(options)
        return jsonutil.loads_list(json.dumps(page).encode())

    result, paged = ListPager(lazy_pages, page_size=3).list({"resourceVersion": "0"})
    assert paged
    if jsonutil.CODEC == "msgspec":
        assert isinstance(result["items"], jsonutil.LazyItems)
    assert names(result) == [f"o{i}" for i in range(7)]
