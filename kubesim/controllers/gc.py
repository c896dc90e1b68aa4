"""Owner-reference garbage collection: background, foreground and orphan propagation.

Twin of kube-controller-manager's garbage collector (pkg/controller/garbagecollector), reduced
to what a controller can observe:

- Background (the default): once an owner is gone, dependents whose owners are all gone are
  deleted; a dependent with other live owners only loses the dangling reference. A dependent
  whose owner uid never existed is deleted the same way.
- Foreground: the DELETE gave the owner the ``foregroundDeletion`` finalizer; the GC deletes
  the dependents first and removes the finalizer when none is left, which deletes the owner
  (a dependent is 404 by the time the owner goes).
- Orphan: the DELETE gave the owner the ``orphan`` finalizer; the GC removes the references
  to it from every dependent (the ``ownerReferences`` key entirely when it was the only one),
  then removes the finalizer.

It keeps an index owner uid -> dependents, maintained by a storage listener (under the storage
lock, so it never misses an event), and does its work as ControllerManager tasks.
"""

from __future__ import annotations

import json

from kubesim.api.resources import Registry
from kubesim.controllers.manager import ControllerManager
from kubesim.registry.rest import FOREGROUND, ORPHAN
from kubesim.storage.store import DELETED, Event, Storage

__all__ = ["GarbageCollector"]


def _refs(obj: dict | None) -> list[dict]:
    if obj is None:
        return []
    return obj["metadata"].get("ownerReferences") or []


class GarbageCollector:
    """Keeps the owner->dependents index and runs the gc tasks on the controllers' thread."""

    def __init__(
        self,
        storage: Storage,
        rest,
        registry: Registry,
        controllers: ControllerManager,
        delay: float = 0.0,
    ):
        self.storage = storage  # objects; every task runs under its lock
        self.rest = rest  # deletes and updates go through the REST rules
        self.registry = registry  # maps ownerReference apiVersion/kind to resources
        self.controllers = controllers  # runs the tasks
        self.delay = delay  # seconds between an observed change and the GC acting on it
        # owner uid -> {(skey, ns, name)}; under storage lock
        self._dependents: dict[str, set[tuple]] = {}
        controllers.register("gc-dependent", self._sync_dependent, self._on_event)
        controllers.register("gc-owner", self._sync_owner)

    # ---- index (storage listener: runs under the storage lock) -------------------------------

    def _on_event(self, ev: Event) -> None:
        loc = (ev.key, ev.ns, ev.name)
        prev_refs = _refs(ev.prev.obj if ev.prev else None)
        cur_refs = [] if ev.type == DELETED else _refs(ev.obj.obj)
        if prev_refs != cur_refs:
            for r in prev_refs:
                uid = str(r.get("uid") or "")
                deps = self._dependents.get(uid)
                if deps is not None:
                    deps.discard(loc)
                    if not deps:
                        del self._dependents[uid]
            for r in cur_refs:
                self._dependents.setdefault(str(r.get("uid") or ""), set()).add(loc)
            if cur_refs:
                self.controllers.schedule(("gc-dependent",) + loc, self.delay)
        if ev.type == DELETED:
            uid = ev.prev.obj["metadata"].get("uid")
            for dep in self._dependents.get(uid, ()):
                self.controllers.schedule(("gc-dependent",) + dep, self.delay)
            return
        meta = ev.obj.obj["metadata"]
        if meta.get("deletionTimestamp"):
            fins = meta.get("finalizers") or ()
            if FOREGROUND in fins or ORPHAN in fins:
                self.controllers.schedule(("gc-owner",) + loc, self.delay)

    def dependents_of(self, uid: str) -> list[tuple]:
        with self.storage.lock:
            return sorted(self._dependents.get(uid, ()))

    # ---- helpers -------------------------------------------------------------------------------

    def _info(self, skey):
        infos = self.registry.by_storage_key(skey)
        return infos[0] if infos else None

    def _owner_state(self, ref: dict, ns: str) -> str:
        """ "alive", "foreground" (being deleted in foreground) or "absent" (gone or never was)."""
        info = self.registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        if info is None:
            return "absent"
        owner = self.storage.get(
            info.storage_key, ns if info.namespaced else "", ref.get("name", "")
        )
        if owner is None or owner.obj["metadata"].get("uid") != ref.get("uid"):
            return "absent"
        meta = owner.obj["metadata"]
        if meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or ()):
            return "foreground"
        return "alive"

    def _write_refs(self, info, stored, refs: list[dict]) -> None:
        obj = json.loads(stored.full())
        if refs:
            obj["metadata"]["ownerReferences"] = refs
        else:
            obj["metadata"].pop("ownerReferences", None)
        self.rest.commit_update(info, stored, obj, None, False)

    # ---- tasks ---------------------------------------------------------------------------------

    def _sync_dependent(self, key: tuple) -> float | None:
        """attemptToDeleteItem: delete a dependent whose owners are all gone, or are being
        deleted in the foreground."""
        _, skey, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(skey, ns, name)
            info = self._info(skey)
            if stored is None or info is None:
                return None
            refs = _refs(stored.obj)
            if not refs:
                return None
            states = [self._owner_state(r, ns) for r in refs]
            if "alive" in states:
                dangling = [r for r, s in zip(refs, states, strict=True) if s == "absent"]
                if dangling:
                    self._write_refs(info, stored, [r for r in refs if r not in dangling])
                return None
            if stored.obj["metadata"].get("deletionTimestamp"):
                return None
            policy = "Foreground" if "foreground" in states else "Background"
            self.rest.delete_locked(info, stored, {"propagationPolicy": policy})
        return None

    def _sync_owner(self, key: tuple) -> float | None:
        """Process an owner being deleted with the foregroundDeletion or orphan finalizer."""
        _, skey, ns, name = key
        with self.storage.lock:
            owner = self.storage.get(skey, ns, name)
            info = self._info(skey)
            if owner is None or info is None:
                return None
            meta = owner.obj["metadata"]
            fins = list(meta.get("finalizers") or [])
            uid = meta.get("uid")
            deps = [
                (d, stored)
                for d in sorted(self._dependents.get(uid, ()))
                if (stored := self.storage.get(*d)) is not None
            ]
            if ORPHAN in fins:
                for (dkey, _, _), dep in deps:
                    dinfo = self._info(dkey)
                    self._write_refs(dinfo, dep, [r for r in _refs(dep.obj) if r.get("uid") != uid])
                fins.remove(ORPHAN)
            elif FOREGROUND in fins:
                if deps:
                    for (dkey, _, _), dep in deps:
                        if not dep.obj["metadata"].get("deletionTimestamp"):
                            dinfo = self._info(dkey)
                            self.rest.delete_locked(dinfo, dep, {"propagationPolicy": "Foreground"})
                    if any(self.storage.get(*d) is not None for d, _ in deps):
                        return 0.05  # dependents still finalizing: look again soon
                fins.remove(FOREGROUND)
            else:
                return None
            obj = json.loads(owner.full())
            obj["metadata"]["finalizers"] = fins
            if not fins:
                obj["metadata"].pop("finalizers")
            self.rest.commit_update(info, owner, obj, None, False)
        return None
