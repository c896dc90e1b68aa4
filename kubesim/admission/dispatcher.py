"""``WebhookAdmission``: the mutating webhooks in order (with reinvocation), then the validating.

Twin of k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go (each webhook in
order, its JSON patch applied to the object the next one sees, ``reinvocationPolicy: IfNeeded``
webhooks called once more when a later one changed the object), validating/dispatcher.go (every
matching webhook called at once, the first error returned), generic/webhook.go's ``Dispatch``
(the webhook configurations are exempt) and pkg/admission/reinvocation.go (at most one more
round). ``failurePolicy`` decides what a failed call does: Fail answers 500 ``failed calling
webhook``, Ignore goes on as if the webhook had allowed the request.

Deliberate differences: validating errors are returned in the webhooks' order, not the order
their answers arrived; the object a webhook's patch produces is not re-defaulted (upstream runs
the scheme's defaulter on built-in kinds; kubesim's strategy defaults afterwards anyway).
"""

from __future__ import annotations

import contextvars
import copy
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from kubesim.admission import client, conditions, review
from kubesim.admission.matching import (
    ADMISSIONREGISTRATION,
    Hook,
    Invocation,
    exempt,
    hooks_of,
    should_call,
)
from kubesim.api import errors, warning
from kubesim.api.resources import Registry, ResourceInfo
from kubesim.registry import patch as patches
from kubesim.registry.admission import Attributes
from kubesim.storage.store import Storage

__all__ = ["WebhookAdmission"]

_DEFAULT_TIMEOUT = 10  # timeoutSeconds' default in admissionregistration/v1
_SIDE_EFFECT_FREE = ("None", "NoneOnDryRun")
_PATCH_HANDLER_WORDS = "the server rejected our request due to an error in our request: "


class _Outcome:
    """One call's result: an error to raise (None when allowed) and the warnings to pass on.

    Warnings are added by the request's thread, since the validating calls run on others."""

    def __init__(self, error: errors.ApiError | None = None, warnings: list[str] | None = None):
        self.error = error
        self.warnings = warnings or []


class WebhookAdmission:
    """The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of one kubesim.

    Reads the configurations from storage on every write (the real plugins watch them; a
    configuration is in effect as soon as it is stored here, where upstream's informer may
    take a moment). services: ``namespace/name[:port]`` -> ``host:port`` for service references.
    """

    def __init__(
        self, storage: Storage, registry: Registry, services: Mapping[str, str] | None = None
    ) -> None:
        self.storage = storage
        self.registry = registry
        self.services = dict(services or {})

    # ---- what the REST verbs call ------------------------------------------------------------

    def mutate(self, attrs: Attributes) -> None:
        """The mutating webhooks, in order, each on the object the last one left in
        ``attrs.obj``; then, if one changed it, once more those that asked (IfNeeded)."""
        if exempt(attrs):
            return
        hooks = self._hooks("mutatingwebhookconfigurations")
        if not hooks:
            return
        # webhooks that asked to be called again (IfNeeded) and were, before a later change
        reinvocable: set[str] = set()
        reinvoke: set[str] = set()
        for round_ in (0, 1):
            changed_any = False
            for hook in hooks:
                invocation = self._should_call(hook, attrs)
                if invocation is None or (round_ == 1 and hook.uid not in reinvoke):
                    continue
                changed, outcome = self._call_mutating(invocation, attrs)
                for text in outcome.warnings:
                    warning.add_warning(text)
                if changed:
                    changed_any = True
                    reinvoke |= reinvocable
                    reinvocable.clear()
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    reinvocable.add(hook.uid)
                if outcome.error is not None:
                    raise outcome.error
            if not changed_any:
                return

    def validate(self, attrs: Attributes) -> None:
        """The validating webhooks, all called at once; the first error in their order."""
        if exempt(attrs):
            return
        hooks = self._hooks("validatingwebhookconfigurations")
        invocations = [
            invocation
            for hook in hooks
            if (invocation := self._should_call(hook, attrs)) is not None
        ]
        if not invocations:
            return
        with ThreadPoolExecutor(max_workers=len(invocations)) as pool:
            # each call runs in a copy of the request's context: it names the requester
            futures = [
                pool.submit(contextvars.copy_context().run, self._call_validating, i, attrs)
                for i in invocations
            ]
            outcomes = [f.result() for f in futures]
        for outcome in outcomes:
            for text in outcome.warnings:
                warning.add_warning(text)
        for outcome in outcomes:
            if outcome.error is not None:
                raise outcome.error

    def _should_call(self, hook: Hook, attrs: Attributes) -> Invocation | None:
        """ShouldCallHook: the rules and selectors, then the matchConditions on the objects
        at the version the webhook would be called with."""
        invocation = should_call(hook, attrs, self._namespace_labels, self._equivalents)
        if invocation is None or not hook.spec.get("matchConditions"):
            return invocation
        obj = _convert(attrs.obj, attrs.info, invocation.info)
        old = _convert(attrs.old, attrs.info, invocation.info)
        return invocation if conditions.matches(invocation, attrs, obj, old) else None

    # ---- one call ----------------------------------------------------------------------------

    def _call_mutating(self, invocation: Invocation, attrs: Attributes) -> tuple[bool, _Outcome]:
        """callAttrMutatingHook: (whether the object changed, the outcome)."""
        hook = invocation.hook
        obj = _convert(attrs.obj, attrs.info, invocation.info)
        answer = self._post(invocation, attrs, obj, mutating=True)
        if isinstance(answer, _Outcome):
            return False, answer
        outcome = _Outcome(None, answer.warnings)
        if not answer.allowed:
            outcome.error = review.denied(hook.name, answer.result)
            return False, outcome
        if not answer.patch:
            return False, outcome
        if obj is None:
            outcome.error = errors.internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, which is not '
                "supported for this operation"
            )
            return False, outcome
        try:
            patched = patches.apply_json_patch(obj, answer.patch)
        except errors.ApiError as e:
            # the JSON patch library's own error, without the PATCH handler's 422 wording
            outcome.error = errors.internal_error(str(e).removeprefix(_PATCH_HANDLER_WORDS))
            return False, outcome
        changed = patched != obj
        attrs.obj = _convert(patched, invocation.info, attrs.info)
        return changed, outcome

    def _call_validating(self, invocation: Invocation, attrs: Attributes) -> _Outcome:
        obj = _convert(attrs.obj, attrs.info, invocation.info)
        answer = self._post(invocation, attrs, obj, mutating=False)
        if isinstance(answer, _Outcome):
            return answer
        if answer.allowed:
            return _Outcome(None, answer.warnings)
        return _Outcome(review.denied(invocation.hook.name, answer.result), answer.warnings)

    def _post(
        self, invocation: Invocation, attrs: Attributes, obj: dict | None, mutating: bool
    ) -> review.Response | _Outcome:
        """Send the review and verify the answer; an _Outcome when there is none to read
        (failurePolicy applied: Ignore allows, Fail is a 500)."""
        hook = invocation.hook
        spec = hook.spec
        if attrs.dry_run and spec.get("sideEffects") not in _SIDE_EFFECT_FREE:
            return _Outcome(review.dry_run_unsupported(hook.name))
        old = _convert(attrs.old, attrs.info, invocation.info)
        uid, body = review.new_review(invocation, attrs, obj, old)
        timeout = float(spec.get("timeoutSeconds") or _DEFAULT_TIMEOUT)
        try:
            endpoint = client.endpoint_of(spec.get("clientConfig") or {}, self.services)
            answer = client.post(endpoint, body, timeout)
        except client.CallError as e:
            return self._failed(hook, f"failed to call webhook: {e}")
        try:
            return review.verify_response(uid, mutating, answer)
        except review.BadResponse as e:
            return self._failed(hook, f"received invalid webhook response: {e}")

    @staticmethod
    def _failed(hook: Hook, reason: str) -> _Outcome:
        if hook.spec.get("failurePolicy", "Fail") == "Ignore":
            return _Outcome()  # failing open
        return _Outcome(review.calling_error(hook.name, reason))

    # ---- what matching reads -----------------------------------------------------------------

    def _hooks(self, plural: str) -> list[Hook]:
        return hooks_of(s.obj for s in self.storage.items((ADMISSIONREGISTRATION, plural)))

    def _namespace_labels(self, name: str) -> dict | None:
        stored = self.storage.get(("", "namespaces"), "", name)
        if stored is None:
            return None
        return dict(stored.obj["metadata"].get("labels") or {})

    def _equivalents(self, info: ResourceInfo) -> list[ResourceInfo]:
        """The same stored resource at its other served versions (EquivalentResourcesFor)."""
        return self.registry.by_storage_key(info.storage_key)


def _convert(obj: dict | None, source: ResourceInfo, target: ResourceInfo) -> dict | None:
    """obj, read at ``source``'s version, as ``target``'s version reads it (a fresh copy)."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    if (source.group, source.version) == (target.group, target.version):
        return out
    source.to_storage(out)
    conv = target.converter
    if conv is not None and conv.converts_output:
        out = conv.from_storage(out)
    out["apiVersion"] = target.group_version
    return out
