"""The deployment controller of the "pods" mode: real ReplicaSets, scaled in the real steps.

Twin of kube-controller-manager's pkg/controller/deployment: sync.go (getNewReplicaSet, scale,
calculateStatus, cleanupDeployment), rolling.go (reconcileNewReplicaSet, reconcileOldReplicaSets,
cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate), recreate.go, progress.go
(syncRolloutStatus, the Progressing condition and its deadline) and util/deployment_util.go
(revisions, the replicas annotations, max surge and unavailable, proportions). A Deployment owns
ReplicaSets named ``<deployment>-<pod-template-hash>``; each step is one write and one
ScalingReplicaSet Event; status and conditions are computed from the ReplicaSets' status, which
the ReplicaSet controller (replicasets.py) computes from its Pods.

Deliberate differences: the pod-template-hash is FNV-32a over the template's JSON, not over
Go's deep-hash dump of the struct, so its value differs from a cluster's (its shape, alphabet
and the collision count's part do not); orphaned ReplicaSets that match a selector are not
adopted, and a ReplicaSet's controller reference is never released; rollback annotations
(``deprecated.deployment.rollback.to``) and the revision-history annotation are not written.
"""

from __future__ import annotations

import calendar
import json
import math
import time
from typing import Any

from kubesim.api import errors
from kubesim.controllers.manager import ControllerManager
from kubesim.controllers.recorder import record_event
from kubesim.registry.strategy import now_rfc3339
from kubesim.storage.store import DELETED, Event, Storage

__all__ = ["DeploymentController", "pod_template_hash"]

DEPLOYMENTS = ("apps", "deployments")
REPLICA_SETS = ("apps", "replicasets")
COMPONENT = "deployment-controller"
HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
# annotations a Deployment does not pass on to its ReplicaSets (skipCopyAnnotation)
_SKIP_COPY = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    "deployment.kubernetes.io/revision-history",
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
}
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.SafeEncodeString's

# the reasons of deployment_util.go
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


def pod_template_hash(template: dict, collision_count: int | None = None) -> str:
    """controller.ComputeHash: FNV-32a of the template, then the collision count as 8 little-
    endian bytes, the decimal digits of the sum spelt in rand.SafeEncodeString's alphabet."""
    h = 0x811C9DC5
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in str(h))


# ---- deployment_util.go -----------------------------------------------------------------------


def _replicas(obj: dict) -> int:
    return int((obj.get("spec") or {}).get("replicas") or 0)


def _status(obj: dict, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """intstrutil.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value or 0)


def _fenceposts(d: dict) -> tuple[int, int]:
    """ResolveFenceposts: max surge (rounded up) and max unavailable (rounded down); both 0
    would stall a rollout, so unavailable becomes 1."""
    ru = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = _replicas(d)
    surge = _scaled(ru.get("maxSurge"), desired, True)
    unavailable = _scaled(ru.get("maxUnavailable"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: dict) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type") == "RollingUpdate"


def max_surge(d: dict) -> int:
    return _fenceposts(d)[0] if _rolling(d) else 0


def max_unavailable(d: dict) -> int:
    if not _rolling(d) or _replicas(d) == 0:
        return 0
    return min(_fenceposts(d)[1], _replicas(d))


def _revision(rs: dict) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION) or 0)
    except ValueError:
        return 0


def _created_order(rs: dict) -> tuple[str, str]:
    """ReplicaSetsByCreationTimestamp: oldest first, then by name."""
    return (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"])


def _template_without_hash(template: dict) -> dict:
    out = json.loads(json.dumps(template))
    labels = (out.get("metadata") or {}).get("labels") or {}
    labels.pop(HASH_LABEL, None)
    meta = out.setdefault("metadata", {})
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return out


def _condition(status: dict, ctype: str) -> dict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == ctype), None)


def _set_condition(status: dict, ctype: str, cstatus: str, reason: str, message: str) -> None:
    """SetDeploymentCondition: no change for the same status and reason; the transition time
    kept while the status stays; the condition moves to the end of the list."""
    current = _condition(status, ctype)
    if current and current["status"] == cstatus and current.get("reason") == reason:
        return
    now = now_rfc3339()
    since = current["lastTransitionTime"] if current and current["status"] == cstatus else now
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != ctype]
    conditions.append(
        {
            "type": ctype,
            "status": cstatus,
            "lastUpdateTime": now,
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }
    )
    status["conditions"] = conditions


def _complete(d: dict, status: dict) -> bool:
    """DeploymentComplete."""
    want = _replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0)
    )


def _progressing(d: dict, new: dict) -> bool:
    """DeploymentProgressing: more updated, ready or available replicas, or fewer old ones."""
    old = d.get("status") or {}

    def olds(s: dict) -> int:
        return int(s.get("replicas") or 0) - int(s.get("updatedReplicas") or 0)

    return (
        int(new.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0)
        or olds(new) < olds(old)
        or int(new.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
        or int(new.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0)
    )


def _seconds_since(ts: str | None) -> float:
    if not ts:
        return 0.0
    return time.time() - calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))


class DeploymentController:
    """Syncs each Deployment against the ReplicaSets it owns, on the controllers' thread."""

    def __init__(self, storage: Storage, rest, controllers: ControllerManager):
        self.storage = storage  # read under its lock; every task runs under it
        self.rest = rest  # writes go through the REST rules (defaults, validation, events)
        self.controllers = controllers  # runs the tasks
        self.deployments = rest.registry.lookup("apps", "v1", "deployments")
        self.replica_sets = rest.registry.lookup("apps", "v1", "replicasets")
        controllers.register("deployment", self._sync, self._on_event)

    # ---- the informers' handlers (run under the storage lock: cheap) -------------------------

    def _on_event(self, ev: Event) -> None:
        if ev.key == DEPLOYMENTS and ev.type != DELETED:
            self.controllers.schedule(("deployment", ev.ns, ev.name))
        elif ev.key == REPLICA_SETS:
            # a ReplicaSet's change wakes the Deployment that controls it
            obj = ev.prev.obj if ev.type == DELETED and ev.prev else ev.obj.obj
            for ref in obj["metadata"].get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "Deployment":
                    self.controllers.schedule(("deployment", ev.ns, ref.get("name", "")))

    # ---- syncDeployment -----------------------------------------------------------------------

    def _sync(self, key: tuple) -> float | None:
        _, ns, name = key
        with self.storage.lock:
            stored = self.storage.get(DEPLOYMENTS, ns, name)
            if stored is None:
                return None
            d = json.loads(stored.full())
            rss = self._owned(d)
            if d["metadata"].get("deletionTimestamp"):
                new_rs, olds = self._new_and_old(d, rss, create=False)
                self._sync_status(d, new_rs, olds)
                return None
            spec = d.get("spec") or {}
            self._check_paused_conditions(d)
            if spec.get("paused") or self._is_scaling_event(d, rss):
                self._sync_scale(d, rss)
                return None
            if (spec.get("strategy") or {}).get("type") == "Recreate":
                return self._rollout_recreate(d, rss)
            return self._rollout_rolling(d, rss)

    def _check_paused_conditions(self, d: dict) -> None:
        """checkPausedConditions: Progressing is Unknown while paused (DeploymentPaused) and
        once resumed (DeploymentResumed), unless the rollout already timed out."""
        status = dict(d.get("status") or {})
        current = _condition(status, "Progressing")
        if current is not None and current.get("reason") == TIMED_OUT:
            return
        shown = current is not None and current.get("reason") == PAUSED
        if (d.get("spec") or {}).get("paused") and not shown:
            _set_condition(status, "Progressing", "Unknown", PAUSED, "Deployment is paused")
        elif not (d.get("spec") or {}).get("paused") and shown:
            _set_condition(status, "Progressing", "Unknown", RESUMED, "Deployment is resumed")
        else:
            return
        d["status"] = status
        self._write_status(d)

    def _owned(self, d: dict) -> list[dict]:
        """The ReplicaSets whose controller reference is this Deployment (fresh copies)."""
        uid = d["metadata"]["uid"]
        ns = d["metadata"].get("namespace", "")
        out = []
        for stored in self.storage.items(REPLICA_SETS):
            meta = stored.obj["metadata"]
            if meta.get("namespace") != ns:
                continue
            if any(
                r.get("controller") and r.get("uid") == uid
                for r in meta.get("ownerReferences") or []
            ):
                out.append(json.loads(stored.full()))
        return sorted(out, key=_created_order)

    def _is_scaling_event(self, d: dict, rss: list[dict]) -> bool:
        """isScalingEvent: an active ReplicaSet was sized for another replica count."""
        for rs in rss:
            if _replicas(rs) <= 0:
                continue
            desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS)
            if desired is not None and desired.isdigit() and int(desired) != _replicas(d):
                return True
        return False

    # ---- the new ReplicaSet -------------------------------------------------------------------

    def _new_and_old(
        self, d: dict, rss: list[dict], create: bool
    ) -> tuple[dict | None, list[dict]]:
        """getAllReplicaSetsAndSyncRevision: the ReplicaSet of the current template (created
        when ``create``), and all the others."""
        template = _template_without_hash((d.get("spec") or {}).get("template") or {})
        new_rs = next(
            (rs for rs in rss if _template_without_hash(rs["spec"]["template"]) == template), None
        )
        olds = [rs for rs in rss if rs is not new_rs]
        new_revision = max((_revision(rs) for rs in olds), default=0) + 1
        if new_rs is not None:
            return self._sync_existing_new(d, new_rs, new_revision), olds
        if not create:
            return None, olds
        return self._create_new(d, olds, new_revision), olds

    def _sync_existing_new(self, d: dict, rs: dict, new_revision: int) -> dict:
        changed = self._copy_annotations(d, rs, new_revision)
        min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
        if changed or (rs["spec"].get("minReadySeconds") or 0) != min_ready:
            if min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
            else:
                rs["spec"].pop("minReadySeconds", None)
            return self._write_rs(rs)
        status = dict(d.get("status") or {})
        needs = self._set_revision(d, str(_revision(rs)))
        if self._has_deadline(d) and _condition(status, "Progressing") is None:
            _set_condition(
                status,
                "Progressing",
                "True",
                FOUND_NEW_RS,
                f'Found new replica set "{rs["metadata"]["name"]}"',
            )
            d["status"] = status
            needs = True
        if needs:
            self._write_status(d)
        return rs

    def _create_new(self, d: dict, olds: list[dict], new_revision: int) -> dict:
        meta, spec = d["metadata"], d.get("spec") or {}
        status = dict(d.get("status") or {})
        collisions = status.get("collisionCount")
        template = json.loads(json.dumps(spec.get("template") or {}))
        h = pod_template_hash(template, collisions)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = dict(tmeta.get("labels") or {}, **{HASH_LABEL: h})
        selector = json.loads(json.dumps(spec.get("selector") or {}))
        selector["matchLabels"] = dict(selector.get("matchLabels") or {}, **{HASH_LABEL: h})
        rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "namespace": meta.get("namespace", ""),
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": meta["name"],
                        "uid": meta["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        if spec.get("minReadySeconds"):
            rs["spec"]["minReadySeconds"] = spec["minReadySeconds"]
        replicas = self._new_rs_replicas(d, olds, rs)
        rs["spec"]["replicas"] = replicas
        self._copy_annotations(d, rs, new_revision)
        rs["metadata"]["annotations"].update(self._replicas_annotations(d))
        try:
            _, stored = self.rest.create(self.replica_sets, meta.get("namespace", ""), rs, {})
        except errors.ApiError as err:
            if err.code != 409:
                raise
            # a ReplicaSet of that name with another template: count the collision and retry
            # with another hash (getNewReplicaSet's AlreadyExists branch)
            status["collisionCount"] = (collisions or 0) + 1
            d["status"] = status
            self._write_status(d)
            raise
        created = json.loads(stored.full())
        if replicas > 0:
            self._event(
                d, f"Scaled up replica set {created['metadata']['name']} from 0 to {replicas}"
            )
        self._set_revision(d, str(new_revision))
        if self._has_deadline(d):
            _set_condition(
                status,
                "Progressing",
                "True",
                NEW_RS_CREATED,
                f'Created new replica set "{created["metadata"]["name"]}"',
            )
            d["status"] = status
        self._write_status(d)
        return created

    def _copy_annotations(self, d: dict, rs: dict, new_revision: int) -> bool:
        """SetNewReplicaSetAnnotations without the replicas ones: the Deployment's own
        annotations copied, and the revision raised to ``new_revision`` when below it."""
        annotations = rs["metadata"].setdefault("annotations", {})
        changed = False
        for k, v in (d["metadata"].get("annotations") or {}).items():
            if k not in _SKIP_COPY and annotations.get(k) != v:
                annotations[k] = v
                changed = True
        if _revision(rs) < new_revision:
            annotations[REVISION] = str(new_revision)
            changed = True
        return changed

    def _replicas_annotations(self, d: dict) -> dict[str, str]:
        """SetReplicasAnnotations: the replica count the ReplicaSet was sized for, and the most
        the Deployment may run (replicas + max surge)."""
        return {
            DESIRED_REPLICAS: str(_replicas(d)),
            MAX_REPLICAS: str(_replicas(d) + max_surge(d)),
        }

    def _set_revision(self, d: dict, revision: str) -> bool:
        annotations = d["metadata"].setdefault("annotations", {})
        if annotations.get(REVISION) == revision:
            return False
        annotations[REVISION] = revision
        return True

    def _new_rs_replicas(self, d: dict, olds: list[dict], new_rs: dict) -> int:
        """NewRSNewReplicas: a rolling update adds up to max surge above the desired count."""
        if not _rolling(d):
            return _replicas(d)
        surge = _scaled(
            ((d["spec"].get("strategy") or {}).get("rollingUpdate") or {}).get("maxSurge"),
            _replicas(d),
            True,
        )
        current = sum(_replicas(rs) for rs in [*olds, new_rs])
        most = _replicas(d) + surge
        if current >= most:
            return _replicas(new_rs)
        up = min(most - current, _replicas(d) - _replicas(new_rs))
        return _replicas(new_rs) + up

    # ---- scaling ------------------------------------------------------------------------------

    def _scale_rs(self, d: dict, rs: dict, size: int, operation: str | None = None) -> bool:
        """scaleReplicaSet: resize and refresh the replicas annotations in one write; an Event
        when the size changed."""
        wanted = self._replicas_annotations(d)
        annotations = rs["metadata"].get("annotations") or {}
        resize = _replicas(rs) != size
        if not resize and all(annotations.get(k) == v for k, v in wanted.items()):
            return False
        before = _replicas(rs)
        rs["spec"]["replicas"] = size
        rs["metadata"]["annotations"] = dict(annotations, **wanted)
        rs.update(self._write_rs(rs))
        if resize:
            op = operation or ("up" if before < size else "down")
            self._event(
                d, f"Scaled {op} replica set {rs['metadata']['name']} from {before} to {size}"
            )
        return resize

    def _sync_scale(self, d: dict, rss: list[dict]) -> None:
        """sync and scale: a replicas change (or a paused Deployment) resizes without rolling."""
        new_rs, olds = self._new_and_old(d, rss, create=False)
        self._scale(d, new_rs, olds)
        self._sync_status(d, new_rs, olds)

    def _scale(self, d: dict, new_rs: dict | None, olds: list[dict]) -> None:
        active = [rs for rs in [*olds, new_rs] if rs is not None and _replicas(rs) > 0]
        if len(active) <= 1:
            # FindActiveOrLatest: the one active ReplicaSet, else the newest
            pool = (
                active
                or sorted([rs for rs in [*olds, new_rs] if rs is not None], key=_created_order)[-1:]
            )
            for rs in pool:
                self._scale_rs(d, rs, _replicas(d))
            return
        if (
            new_rs is not None
            and _replicas(new_rs) == _replicas(d)
            and (_status(new_rs, "availableReplicas") == _replicas(d))
        ):
            # IsSaturated: the old ReplicaSets go to zero
            for rs in olds:
                if _replicas(rs) > 0:
                    self._scale_rs(d, rs, 0)
            return
        if not _rolling(d):
            return
        # proportional scaling of every active ReplicaSet
        allowed = _replicas(d) + max_surge(d) if _replicas(d) > 0 else 0
        to_add = allowed - sum(_replicas(rs) for rs in active)
        if to_add > 0:
            # ReplicaSetsBySizeNewer: largest first, newer first among equals
            active.sort(key=_created_order, reverse=True)
            active.sort(key=_replicas, reverse=True)
            operation = "up"
        elif to_add < 0:
            # ReplicaSetsBySizeOlder: largest first, older first among equals
            active.sort(key=_created_order)
            active.sort(key=_replicas, reverse=True)
            operation = "down"
        else:
            return
        added = 0
        sizes = {}
        for rs in active:
            proportion = self._proportion(d, rs, to_add, added)
            sizes[rs["metadata"]["name"]] = _replicas(rs) + proportion
            added += proportion
        for i, rs in enumerate(active):
            size = sizes[rs["metadata"]["name"]]
            if i == 0:
                size = max(size + to_add - added, 0)  # leftovers to the largest
            self._scale_rs(d, rs, size, operation)

    def _proportion(self, d: dict, rs: dict, to_add: int, added: int) -> int:
        """GetProportion and getReplicaSetFraction."""
        if _replicas(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        if _replicas(d) == 0:
            fraction = -_replicas(rs)
        else:
            total = _replicas(d) + max_surge(d)
            annotated = (rs["metadata"].get("annotations") or {}).get(MAX_REPLICAS, "")
            base = int(annotated) if annotated.isdigit() else _status(d, "replicas")
            fraction = round(_replicas(rs) * total / base) - _replicas(rs) if base else 0
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    # ---- rolling.go -----------------------------------------------------------------------------

    def _rollout_rolling(self, d: dict, rss: list[dict]) -> float | None:
        new_rs, olds = self._new_and_old(d, rss, create=True)
        assert new_rs is not None  # created when missing
        everything = [*olds, new_rs]
        if self._reconcile_new(d, everything, new_rs):
            return self._sync_rollout_status(d, new_rs, olds)
        if self._reconcile_old(d, everything, [rs for rs in olds if _replicas(rs) > 0], new_rs):
            return self._sync_rollout_status(d, new_rs, olds)
        if _complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        return self._sync_rollout_status(d, new_rs, olds)

    def _reconcile_new(self, d: dict, everything: list[dict], new_rs: dict) -> bool:
        if _replicas(new_rs) == _replicas(d):
            return False
        if _replicas(new_rs) > _replicas(d):
            return self._scale_rs(d, new_rs, _replicas(d))
        others = [rs for rs in everything if rs is not new_rs]
        return self._scale_rs(d, new_rs, self._new_rs_replicas(d, others, new_rs))

    def _reconcile_old(
        self, d: dict, everything: list[dict], olds: list[dict], new_rs: dict
    ) -> bool:
        """reconcileOldReplicaSets: scale down old pods as far as availability allows, the
        unhealthy ones first."""
        if sum(_replicas(rs) for rs in olds) == 0:
            return False
        min_available = _replicas(d) - max_unavailable(d)
        new_unavailable = _replicas(new_rs) - _status(new_rs, "availableReplicas")
        max_down = sum(_replicas(rs) for rs in everything) - min_available - new_unavailable
        if max_down <= 0:
            return False
        cleaned = 0
        for rs in sorted(olds, key=_created_order):
            if cleaned >= max_down:
                break
            unhealthy = _replicas(rs) - _status(rs, "availableReplicas")
            if _replicas(rs) == 0 or unhealthy <= 0:
                continue
            down = min(max_down - cleaned, unhealthy)
            self._scale_rs(d, rs, _replicas(rs) - down)
            cleaned += down
        # scaleDownOldReplicaSetsForRollingUpdate
        available = sum(_status(rs, "availableReplicas") for rs in [*olds, new_rs])
        scaled = 0
        if available > min_available:
            total = available - min_available
            for rs in sorted(olds, key=_created_order):
                if scaled >= total:
                    break
                if _replicas(rs) == 0:
                    continue
                down = min(_replicas(rs), total - scaled)
                self._scale_rs(d, rs, _replicas(rs) - down)
                scaled += down
        return cleaned + scaled > 0

    # ---- recreate.go ----------------------------------------------------------------------------

    def _rollout_recreate(self, d: dict, rss: list[dict]) -> float | None:
        new_rs, olds = self._new_and_old(d, rss, create=False)
        scaled_down = False
        for rs in olds:
            if _replicas(rs) > 0:
                scaled_down = self._scale_rs(d, rs, 0) or scaled_down
        # old pods still running (or just scaled down): wait for them to go
        if scaled_down or any(_status(rs, "replicas") > 0 for rs in olds):
            return self._sync_rollout_status(d, new_rs, olds)
        if new_rs is None:
            new_rs, olds = self._new_and_old(d, self._owned(d), create=True)
        assert new_rs is not None
        if _replicas(new_rs) != _replicas(d):
            self._scale_rs(d, new_rs, _replicas(d))
        if _complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        return self._sync_rollout_status(d, new_rs, olds)

    # ---- status ---------------------------------------------------------------------------------

    def _calculate_status(self, d: dict, new_rs: dict | None, olds: list[dict]) -> dict:
        everything = [rs for rs in [*olds, new_rs] if rs is not None]
        available = sum(_status(rs, "availableReplicas") for rs in everything)
        total = sum(_replicas(rs) for rs in everything)
        current = d.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": d["metadata"].get("generation", 0),
            "replicas": sum(_status(rs, "replicas") for rs in everything),
            "updatedReplicas": _status(new_rs, "replicas") if new_rs else 0,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in everything),
            "availableReplicas": available,
            "unavailableReplicas": max(total - available, 0),
        }
        if self.rest.version.counts_terminating_replicas:
            terminating = _terminating(everything)
            if terminating is not None:
                status["terminatingReplicas"] = terminating
        if "collisionCount" in current:
            status["collisionCount"] = current["collisionCount"]
        # Go's omitempty int32s: zero counts are not written
        status = {k: v for k, v in status.items() if v or k == "terminatingReplicas"}
        status["conditions"] = [dict(c) for c in current.get("conditions") or []]
        if available >= _replicas(d) - max_unavailable(d):
            _set_condition(
                status, "Available", "True", MIN_AVAILABLE, "Deployment has minimum availability."
            )
        else:
            _set_condition(
                status,
                "Available",
                "False",
                MIN_UNAVAILABLE,
                "Deployment does not have minimum availability.",
            )
        return status

    def _sync_status(self, d: dict, new_rs: dict | None, olds: list[dict]) -> None:
        """syncDeploymentStatus: no progress estimate (scaling, paused, deleting)."""
        status = self._calculate_status(d, new_rs, olds)
        if status != (d.get("status") or {}):
            d["status"] = status
            self._write_status(d)

    def _sync_rollout_status(self, d: dict, new_rs: dict | None, olds: list[dict]) -> float | None:
        """syncRolloutStatus: the status, and the Progressing condition of the rollout; returns
        when to look again for a progress deadline still running."""
        status = self._calculate_status(d, new_rs, olds)
        current = _condition(d.get("status") or {}, "Progressing")
        if not self._has_deadline(d):
            status["conditions"] = [c for c in status["conditions"] if c["type"] != "Progressing"]
        complete = (
            status.get("replicas", 0) == status.get("updatedReplicas", 0)
            and current is not None
            and current.get("reason") == NEW_RS_AVAILABLE
        )
        recheck = None
        if self._has_deadline(d) and not complete:
            name = new_rs["metadata"]["name"] if new_rs else ""
            if _complete(d, status):
                _set_condition(
                    status,
                    "Progressing",
                    "True",
                    NEW_RS_AVAILABLE,
                    f'ReplicaSet "{name}" has successfully progressed.',
                )
            elif _progressing(d, status):
                message = (
                    f'ReplicaSet "{name}" is progressing.'
                    if new_rs
                    else f'Deployment "{d["metadata"]["name"]}" is progressing.'
                )
                since = (
                    current["lastTransitionTime"]
                    if current and current["status"] == "True"
                    else None
                )
                status["conditions"] = [
                    c for c in status["conditions"] if c["type"] != "Progressing"
                ]
                _set_condition(status, "Progressing", "True", RS_UPDATED, message)
                if since:
                    status["conditions"][-1]["lastTransitionTime"] = since
            elif current is not None and current.get("reason") != TIMED_OUT:
                deadline = float(d["spec"]["progressDeadlineSeconds"])
                left = deadline - _seconds_since(current.get("lastUpdateTime"))
                if left <= 0:
                    _set_condition(
                        status,
                        "Progressing",
                        "False",
                        TIMED_OUT,
                        f'ReplicaSet "{name}" has timed out progressing.',
                    )
                else:
                    recheck = left  # requeueStuckDeployment
        if status != (d.get("status") or {}):
            d["status"] = status
            self._write_status(d)
        return recheck

    def _has_deadline(self, d: dict) -> bool:
        """HasProgressDeadline: set, and not the "never" value math.MaxInt32."""
        pds = (d.get("spec") or {}).get("progressDeadlineSeconds")
        return pds is not None and pds != 2**31 - 1

    def _cleanup(self, d: dict, olds: list[dict]) -> None:
        """cleanupDeployment: delete the oldest fully scaled-down ReplicaSets beyond
        revisionHistoryLimit."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in olds if not rs["metadata"].get("deletionTimestamp")]
        extra = len(alive) - int(limit)
        for rs in sorted(alive, key=_revision)[: max(extra, 0)]:
            if (
                _status(rs, "replicas")
                or _replicas(rs)
                or rs["metadata"].get("generation", 0) > _status(rs, "observedGeneration")
            ):
                continue
            stored = self.storage.get(
                REPLICA_SETS, rs["metadata"]["namespace"], rs["metadata"]["name"]
            )
            if stored is not None:
                self.rest.delete_locked(self.replica_sets, stored, {})

    # ---- writes ---------------------------------------------------------------------------------

    def _write_rs(self, rs: dict) -> dict:
        meta = rs["metadata"]
        _, stored = self.rest.update(self.replica_sets, meta["namespace"], meta["name"], rs, {})
        return json.loads(stored.full())

    def _write_status(self, d: dict) -> None:
        """UpdateStatus: the status, and the revision annotation written with it."""
        meta = d["metadata"]
        body = json.loads(json.dumps(d))
        _, stored = self.rest.update(
            self.deployments, meta["namespace"], meta["name"], body, {}, "status"
        )
        d["metadata"] = json.loads(stored.full())["metadata"]

    def _event(self, d: dict, message: str) -> None:
        record_event(self.rest, d, "apps/v1", COMPONENT, "Normal", "ScalingReplicaSet", message)


def _terminating(rss: list[dict]) -> int | None:
    """GetTerminatingReplicaCountForReplicaSets: unknown (None) while a ReplicaSet the
    controller has seen does not report it."""
    total = 0
    for rs in rss:
        status = rs.get("status") or {}
        if not status.get("observedGeneration") and "terminatingReplicas" not in status:
            continue
        if "terminatingReplicas" not in status:
            return None
        total += int(status["terminatingReplicas"] or 0)
    return total
