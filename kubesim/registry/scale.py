"""The scale subresource: an autoscaling/v1 Scale view of a deployment, a statefulset, a
replication controller or a custom resource.

Twin of ``ScaleREST`` in k8s.io/kubernetes/pkg/registry/apps/deployment/storage/storage.go and
of the custom-resource ``ScaleREST`` in apiextensions-apiserver/pkg/registry/customresource/
etcd.go: a REST storage for ``<resource>/scale`` over the same objects as the main store.

GET converts the stored object to a Scale. PUT and PATCH make the new Scale from the current
object's (a PATCH applies to it), set the object's replicas from it and write it back through
the main store's update. As upstream's ``scaleUpdatedObjectInfo``, that runs inside the
store's guaranteed update (``Rest.update_from_current``): if the object changes before the write,
the Scale is made again from the newer object, so a patch applies to exactly the state it
replaces and the resourceVersion precondition is checked against that state. The HTTP layer
only calls these methods.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubesim.api import errors
from kubesim.api.labels import selector_from_label_selector
from kubesim.api.resources import ResourceInfo
from kubesim.registry import patch as patches
from kubesim.registry.fieldmanager import IN_PROCESS_MANAGER
from kubesim.registry.rest import Rest
from kubesim.registry.strategy import get_path
from kubesim.storage.store import Stored

__all__ = ["ScaleREST"]


class ScaleREST:
    """get / update / patch of ``<resource>/scale``; every answer is a Scale dict."""

    def __init__(self, rest: Rest):
        self.rest = rest  # the main store: reads and writes go through its verbs

    def get(self, info: ResourceInfo, ns: str, name: str) -> dict:
        """GET .../scale: the object's Scale (404 when the object is missing)."""
        return _scale_of(info, self.rest.get(info, ns, name).obj)

    def update(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        body: Any,
        query: dict,
        user_agent: str = IN_PROCESS_MANAGER,
    ) -> dict:
        """PUT .../scale: set the object's replicas from ``body`` (a Scale).

        The write's managedFields entry says subresource "scale" (user_agent as for
        ``Rest.create``).

        ``spec.replicas`` must be an integer (422 otherwise); a ``metadata.resourceVersion`` in
        the body must match the object's (409 otherwise), as for any update.
        """
        return self._scale_to(info, ns, name, lambda _current: body, query, user_agent)

    def patch(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        content_type: str,
        raw: bytes,
        query: dict,
        user_agent: str = IN_PROCESS_MANAGER,
    ) -> dict:
        """PATCH .../scale: patch the current Scale (JSON patch, else merge), then update."""
        accepted = patches.accepted_patch_types(info.custom)
        ptype = content_type.split(";")[0].strip().lower()
        if ptype not in accepted:
            raise errors.unsupported_media_type(accepted)  # checked first, as handlers/patch.go

        def patched(current: dict) -> Any:
            body = json.loads(raw)
            if ptype == patches.JSON_PATCH:
                return patches.apply_json_patch(current, body)
            return patches.apply_merge_patch(current, body)

        return self._scale_to(info, ns, name, patched, query, user_agent)

    def _scale_to(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        new_scale: Callable[[dict], Any],
        query: dict,
        user_agent: str,
    ) -> dict:
        """Write the replicas of ``new_scale(current Scale)`` at the resource's spec replicas
        path; the new object's Scale.

        ``spec.replicas`` must be an integer (422 otherwise); a ``metadata.resourceVersion`` in
        the new Scale must match the object's (409 otherwise), as for any update.
        """
        path = (info.scale or {}).get("spec") or ".spec.replicas"
        keys = path.lstrip(".").split(".")

        def updated(old: Stored) -> dict:
            scale = new_scale(_scale_of(info, old.obj))
            if not isinstance(scale, dict):
                scale = {}
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int):
                raise errors.invalid(
                    "autoscaling", "Scale", name, [errors.field_required("spec.replicas")]
                )
            rv = (scale.get("metadata") or {}).get("resourceVersion")
            if rv and rv != old.obj["metadata"]["resourceVersion"]:
                raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT)
            obj = json.loads(old.full())
            cur = obj
            for k in keys[:-1]:
                cur = cur.setdefault(k, {})
            cur[keys[-1]] = replicas
            return obj

        stored = self.rest.update_from_current(
            info, ns, name, query, updated, user_agent, field_sub="scale"
        )
        return _scale_of(info, stored.obj)


def _scale_of(info: ResourceInfo, obj: dict) -> dict:
    """The autoscaling/v1 Scale of an object (scaleFromDeployment, or the CRD's scale paths)."""
    paths = info.scale or {}
    meta = obj["metadata"]
    spec_r = get_path(obj, paths.get("spec") or ".spec.replicas") or 0
    status_r = get_path(obj, paths.get("status") or ".status.replicas") or 0
    selector = None
    spec_selector = (obj.get("spec") or {}).get("selector")
    if info.kind in ("Deployment", "ReplicaSet", "StatefulSet") and not info.custom:
        # scaleFromDeployment, scaleFromReplicaSet, scaleFromStatefulSet: the spec's
        # LabelSelector as text
        selector = str(selector_from_label_selector(spec_selector))
    elif info.kind == "ReplicationController" and not info.custom:
        # scaleFromRC: the spec's selector is a plain label map
        selector = ",".join(f"{k}={v}" for k, v in sorted((spec_selector or {}).items()))
    elif paths.get("selector"):
        selector = get_path(obj, paths["selector"])
    status: dict[str, Any] = {"replicas": status_r}
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec_r},
        "status": status,
    }
