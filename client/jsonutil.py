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
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["CODEC", "dumps", "loads"]

loads: Callable[[bytes | bytearray | memoryview | str], Any]
dumps: Callable[[Any], bytes]

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

else:
    CODEC = "msgspec"
    # One decoder and one encoder for the process: building them once saves their setup on
    # every body (msgspec's "reuse encoders/decoders" advice), and each call keeps its working
    # state on its own stack and buffer, so the worker threads may share them.
    loads = msgspec.json.Decoder().decode  # msgspec.DecodeError is a ValueError
    dumps = msgspec.json.Encoder().encode
