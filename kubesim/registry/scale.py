"""The scale subresource: an autoscaling/v1 Scale view of a deployment or a custom resource.

Twin of ``ScaleREST`` in k8s.io/kubernetes/pkg/registry/apps/deployment/storage/storage.go and
of the custom-resource ``ScaleREST`` in apiextensions-apiserver/pkg/registry/customresource/
etcd.go: a REST storage for ``<resource>/scale`` over the same objects as the main store.

GET converts the stored object to a Scale. PUT and PATCH read the object, set its replicas
from the new Scale and write it back through the main store's update. Upstream does that
read-modify-write inside one ``GuaranteedUpdate``; here it runs under one hold of
``Storage.lock``, so a patch applies to exactly the state it replaces and the resourceVersion
precondition is checked against that state. The HTTP layer only calls these methods.
"""

from __future__ import annotations

import json
from typing import Any

from kubesim.api import errors
from kubesim.api.labels import selector_from_label_selector
from kubesim.api.resources import ResourceInfo
from kubesim.registry import patch as patches
from kubesim.registry.fieldmanager import IN_PROCESS_MANAGER
from kubesim.registry.rest import Rest
from kubesim.registry.strategy import get_path

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
        replicas = ((body or {}).get("spec") or {}).get("replicas")
        if not isinstance(replicas, int):
            raise errors.invalid(
                "autoscaling", "Scale", name, [errors.field_required("spec.replicas")]
            )
        rv = ((body or {}).get("metadata") or {}).get("resourceVersion")
        return self._scale_to(info, ns, name, replicas, rv, query, user_agent)

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
        if content_type.split(";")[0].strip().lower() not in accepted:
            raise errors.unsupported_media_type(accepted)  # checked first, as handlers/patch.go
        with self.rest.storage.lock:
            current = self.get(info, ns, name)
            body = json.loads(raw)
            ptype = content_type.split(";")[0].strip()
            if ptype == patches.JSON_PATCH:
                new = patches.apply_json_patch(current, body)
            else:
                new = patches.apply_merge_patch(current, body)
            return self.update(info, ns, name, new, query, user_agent)

    def _scale_to(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        replicas: int,
        rv: str | None,
        query: dict,
        user_agent: str,
    ) -> dict:
        """Write ``replicas`` at the resource's spec replicas path; the new object's Scale."""
        path = (info.scale or {}).get("spec") or ".spec.replicas"
        keys = path.lstrip(".").split(".")
        with self.rest.storage.lock:
            old = self.rest.get(info, ns, name)
            if rv and rv != old.obj["metadata"]["resourceVersion"]:
                raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT)
            obj = json.loads(old.full())
            cur = obj
            for k in keys[:-1]:
                cur = cur.setdefault(k, {})
            cur[keys[-1]] = replicas
            _, stored = self.rest.update(
                info, ns, name, obj, query, user_agent=user_agent, field_sub="scale"
            )
            return _scale_of(info, stored.obj)


def _scale_of(info: ResourceInfo, obj: dict) -> dict:
    """The autoscaling/v1 Scale of an object (scaleFromDeployment, or the CRD's scale paths)."""
    paths = info.scale or {}
    meta = obj["metadata"]
    spec_r = get_path(obj, paths.get("spec") or ".spec.replicas") or 0
    status_r = get_path(obj, paths.get("status") or ".status.replicas") or 0
    selector = None
    if info.kind in ("Deployment", "ReplicaSet") and not info.custom:
        # scaleFromDeployment, scaleFromReplicaSet: the spec's selector as a string
        selector = str(selector_from_label_selector((obj.get("spec") or {}).get("selector")))
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
