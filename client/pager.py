"""Paged lists: fetch a whole collection in chunks of ``limit`` items.

client-go twin: ``k8s.io/client-go/tools/pager`` (``ListPager``). A list of 10,000 objects in one
response costs the API server and the client one huge allocation; pages of 500 keep both small.
Later pages carry only ``continue``: the server pins them to the first page's snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from client import jsonutil
from client.errors import APIError, is_expired_error

__all__ = ["DEFAULT_PAGE_SIZE", "ListFunc", "ListPager"]

DEFAULT_PAGE_SIZE = 500  # tools/pager defaultPageSize

ListFunc = Callable[[Mapping[str, Any]], dict[str, Any]]
"""One list call: options (query parameters) in, the decoded List object out."""


class ListPager:
    """Lists through ``list_func`` page by page and returns the pages joined as one List
    (client-go ``tools/pager`` ``ListPager``).

    ``full_list_if_expired`` is upstream's ``FullListIfExpired``: if a continue token expires
    mid-way (410), the whole list is fetched again unpaged at the originally requested
    resourceVersion instead of failing.
    """

    def __init__(
        self,
        list_func: ListFunc,
        page_size: int = DEFAULT_PAGE_SIZE,
        full_list_if_expired: bool = True,
    ) -> None:
        self.list_func = list_func  # called once per page
        self.page_size = page_size  # limit per page; 0 lists in one request
        self.full_list_if_expired = full_list_if_expired

    def list(self, options: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """All pages of one list; returns (list, was_paged)."""
        opts = dict(options)
        if self.page_size:
            opts["limit"] = self.page_size
        first = self.list_func(opts)
        token = (first.get("metadata") or {}).get("continue")
        if not token:
            return first, False
        pages = [first.get("items") or []]
        while token:
            page_opts = {
                k: v
                for k, v in opts.items()
                if k not in ("resourceVersion", "resourceVersionMatch")
            }
            page_opts["continue"] = token
            try:
                page = self.list_func(page_opts)
            except APIError as err:
                if not (self.full_list_if_expired and is_expired_error(err)):
                    raise
                full = {k: v for k, v in options.items() if k not in ("limit", "continue")}
                return self.list_func(full), True
            pages.append(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
        combined = dict(first)
        combined["metadata"] = dict(first.get("metadata") or {}, **{"continue": ""})
        combined["items"] = _join(pages)
        return combined, True


def _join(pages: list[Any]) -> Any:
    """The pages' items as one sequence: still undecoded if the pages' items were
    (``jsonutil.LazyItems``, so joining pages decodes nothing), else one list."""
    lazy = jsonutil.LazyItems  # looked up at call time: the module may have been reloaded
    if any(isinstance(p, lazy) for p in pages):
        return lazy.join(pages)
    return [item for page in pages for item in page]
