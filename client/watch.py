"""What a watch delivers, and what every watch source offers.

client-go twin: ``k8s.io/apimachinery/pkg/watch`` (``watch.Interface``, ``watch.Event``) and
``meta/v1`` ``WatchEvent``, the wire form that ``watch.StreamWatcher`` decodes.
``RESTClient.stream`` returns a ``WatchStream`` (``client/rest.py``); tests feed the reflector
fakes that offer the same two things, iteration and ``close``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, TypedDict

from client.objects import Object

__all__ = ["Watch", "WatchEvent"]


class WatchEvent(TypedDict):
    """One line of a watch response (apimachinery metav1 ``WatchEvent``).

    ``type`` is ADDED, MODIFIED, DELETED, BOOKMARK (only the object's resourceVersion and
    annotations mean anything) or ERROR (the object is a ``Status``, client/objects.py). The
    decoder does not validate lines: a reader must still expect a missing or malformed
    ``object``, as the reflector does.
    """

    type: str
    object: Object


class Watch(Protocol):
    """An open watch (client-go ``watch.Interface``): iterate its events; ``close`` ends it.

    ``close`` must be safe to call from any thread and more than once: the reflector closes
    the open watch from its helper thread the moment its stop event is set.
    """

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def close(self) -> None: ...
