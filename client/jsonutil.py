"""JSON bodies to and from plain Python values, with ``msgspec`` when it is installed.

client-go twin: the JSON serializer of ``k8s.io/apimachinery/pkg/runtime/serializer/json`` as
the dynamic client uses it (unstructured objects: maps, slices, strings, numbers).

Why not only ``json``? Decoding watch lines is a steady share of a controller's CPU, and on the
API server's own payloads ``msgspec.json`` decodes a watch line 2-2.6x and encodes a status PUT
body ~8x faster than the stdlib (``python -m bench.json_bench``). It returns exactly what
``json.loads`` returns - plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``,
integers of any size kept exact - so the informer's cache holds the same objects either way.
(``orjson`` is as fast but turns integers beyond 64 bits into floats, silently.)

Why keep ``json`` as the fallback? ``msgspec`` is a compiled extension; where no wheel exists
(another Python implementation, a brand-new CPython), the package still installs and works,
only slower. ``CODEC`` says which one is in use, for the startup log.

Both sides speak bytes: ``dumps`` returns UTF-8 JSON bytes ready for a request body (their
spacing and escaping differ between the codecs; the server does not care), ``loads`` takes
``bytes``/``bytearray``/``memoryview``/``str``. Every decode error is a ``ValueError``,
whichever codec raised it.

``loads_list`` decodes a List body with its ``items`` left encoded until each is read
(``LazyItems``): an informer's first list of 10,000 Deployments is one body, and decoding it
whole holds every object at once, managedFields and all, before the informer's transform can
drop anything. Read one at a time, each item is decoded, transformed and kept (or dropped)
before the next exists; the encoded body is all that stays meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

__all__ = ["CODEC", "LazyItems", "dumps", "loads", "loads_list"]

loads: Callable[[bytes | bytearray | memoryview | str], Any]
dumps: Callable[[Any], bytes]
loads_list: Callable[[bytes | bytearray | memoryview | str], Any]
_is_encoded: Callable[[Any], bool]  # True for an item LazyItems still has to decode


class LazyItems(Sequence[Any]):
    """A List's items, each decoded from its JSON when it is read (``loads_list``; no client-go
    twin: Go decodes a list whole, into typed objects far smaller than Python's dicts).

    A read-only sequence: ``len``, indexing and iteration work as on a list, but every read
    decodes afresh and returns a new object, which the reader then owns (changes to it are not
    seen by the next read). So read it once, as an informer's ``replace`` does, keeping what
    it needs. Items may also be objects already decoded (``join`` of pages decoded either way);
    those are handed out as they are.
    """

    __slots__ = ("_items",)

    def __init__(self, items: list[Any]) -> None:
        self._items = items  # encoded items (msgspec.Raw) or decoded objects

    @classmethod
    def join(cls, pages: Iterable[Sequence[Any]]) -> LazyItems:
        """The items of several pages, in order, still undecoded where they were."""
        out: list[Any] = []
        for page in pages:
            out.extend(page._items if isinstance(page, LazyItems) else page)
        return cls(out)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> LazyItems: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return LazyItems(self._items[index])
        item = self._items[index]
        return loads(item) if _is_encoded(item) else item

    def __iter__(self) -> Iterator[Any]:
        decode, encoded = loads, _is_encoded
        for item in self._items:
            yield decode(item) if encoded(item) else item

    def __repr__(self) -> str:
        return f"LazyItems({len(self._items)} items)"


try:
    import msgspec
except ImportError:  # pragma: no cover - exercised by tests that hide msgspec
    CODEC = "json"

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        """Decode one JSON document (``json.loads``; raises ``ValueError``)."""
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)

    def dumps(obj: Any) -> bytes:
        """Encode to JSON bytes, exactly as the client did before ``msgspec``."""
        return json.dumps(obj).encode()

    def loads_list(data: bytes | bytearray | memoryview | str) -> Any:
        """Decode a body; without msgspec a List's items are decoded at once, as ``loads``."""
        return loads(data)

    def _is_encoded(item: Any) -> bool:
        return False

else:
    CODEC = "msgspec"
    # One decoder and one encoder for the process: building them once saves their setup on
    # every body (msgspec's "reuse encoders/decoders" advice), and each call keeps its working
    # state on its own stack and buffer, so the worker threads may share them.
    loads = msgspec.json.Decoder().decode  # msgspec.DecodeError is a ValueError
    dumps = msgspec.json.Encoder().encode
    # A JSON object whose values stay encoded (msgspec.Raw: a view of the body, no copy), and a
    # JSON array whose elements do.
    _object_of_raw = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
    _array_of_raw = msgspec.json.Decoder(list[msgspec.Raw]).decode

    def _is_encoded(item: Any) -> bool:
        return type(item) is msgspec.Raw

    def loads_list(data: bytes | bytearray | memoryview | str) -> Any:
        """Decode a body as ``loads`` does, except that a List's ``items`` come back as
        ``LazyItems``: every other member is decoded, each item only when it is read.

        Anything that is not a JSON object with an ``items`` array decodes exactly as
        ``loads`` would.
        """
        try:
            members = _object_of_raw(data)
        except msgspec.ValidationError:  # valid JSON, but not an object: decode it whole
            return loads(data)
        out: dict[str, Any] = {}
        for name, raw in members.items():
            if name == "items":
                try:
                    out[name] = LazyItems(_array_of_raw(raw))
                    continue
                except msgspec.ValidationError:  # null, or not an array: as it is
                    pass
            out[name] = loads(raw)
        return out
