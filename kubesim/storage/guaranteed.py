"""Optimistic writes: read, compute with no lock held, then compare-and-swap under the lock.

Twin of ``GuaranteedUpdate`` and ``conditionalDelete`` in k8s.io/apiserver/pkg/storage/etcd3/
store.go. kube-apiserver holds no lock while it decides what to write: it reads the object at a
revision, runs ``tryUpdate`` on it (the registry's strategy, validation and admission, webhooks
included), and asks etcd to write only if the key is still at that revision
(``OptimisticPut`` / ``OptimisticDelete``); when it is not, it reads again and calls
``tryUpdate`` again on the newer object. kubesim does the same around ``Storage.lock``, so that a
webhook may take its time, or call kubesim back (a GET, a LIST, a write of another object),
while every other request goes on.

Why this is exact: a ``Stored`` is never mutated and every write stores a new one, so "the key
still holds the very ``Stored`` we read" is etcd's "the key is still at that revision"
(a delete and re-create in between fails the check too).

Deliberate differences:

- the retries are bounded (``MAX_ATTEMPTS``); upstream's loop is not. A write that loses that
  many races in a row ends with ``Contended``, which the REST layer answers as the 409 a client
  retries (``OptimisticLockErrorMsg``), rather than keeping a request thread forever;
- ``commit`` does more than a put: the registry's side writes (a Service's IPAddress objects, a
  CRD's registration) happen in the same critical section, and it may raise ``Retry`` when
  something the attempt relied on besides the object itself changed (an allocated address);
- a dry run goes through the same loop (upstream's dry-run storage calls ``tryUpdate`` once);
  the commit then writes nothing, so the only difference is a retry a dry run never needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kubesim.storage.store import Storage, Stored

__all__ = ["MAX_ATTEMPTS", "Contended", "Retry", "guaranteed_update"]

# How many times an update is computed before it gives up. Each retry means another write to
# the same object landed while this one was computing; that many in a row is a hot loop in
# some client, and the 409 tells it what happened.
MAX_ATTEMPTS = 16

Proposed = TypeVar("Proposed")
Result = TypeVar("Result")


class Retry(Exception):
    """Raised by a commit: the state the attempt was computed from changed in a way the
    object's identity does not show (another Service took the address allocated to this one).
    The attempt is thrown away and computed again, as for a changed object."""


class Contended(Exception):
    """Every attempt found the object changed before it could be written."""


def guaranteed_update(
    storage: Storage,
    key: Any,
    ns: str,
    name: str,
    try_update: Callable[[Stored | None], Proposed],
    commit: Callable[[Stored | None, Proposed], Result],
    attempts: int = MAX_ATTEMPTS,
) -> Result:
    """Write (ns, name) of resource ``key`` from its current state, without holding the lock
    while the new state is computed.

    ``try_update(current)``: computes what to write from the object as read (None when there is
    none) with no lock held; it may call webhooks. Its errors are final: it saw the current
    state, as upstream's tryUpdate on fresh data. It must not change ``current``, and must build
    what it returns afresh on every call (a retry starts from the request again, as
    ``DefaultUpdatedObjectInfo.UpdatedObject`` copies the request's object each time).

    ``commit(current, proposed)``: runs under ``storage.lock``, only while the key still holds
    ``current``; it writes (or, for a dry run, does not) and returns the answer.
    """
    for _ in range(attempts):
        current = storage.get(key, ns, name)
        proposed = try_update(current)
        with storage.lock:
            if storage.get(key, ns, name) is not current:
                continue  # someone wrote the object meanwhile: compute again from theirs
            try:
                return commit(current, proposed)
            except Retry:
                continue
    raise Contended(f"{key} {ns}/{name}: changed under each of {attempts} attempts")
