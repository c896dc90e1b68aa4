"""A webhook's ``matchConditions``: CEL expressions that must all be true for it to be called.

Twin of k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go (``Match``:
any false condition skips the webhook, whatever the others say; otherwise an evaluation error
follows ``failurePolicy``: Fail refuses the request, Ignore skips the webhook) and of the
check in generic/webhook.go's ShouldCallHook that turns Fail into a 403 Forbidden on the
request's resource. The variables are upstream's ``object``, ``oldObject`` and ``request``
(the AdmissionRequest without its objects), at the version the webhook is called with.

Deliberate difference: there is no ``authorizer`` variable (a condition naming it is refused
when the configuration is written, as an undeclared reference).
"""

from __future__ import annotations

from kubesim.admission import review
from kubesim.admission.matching import Invocation
from kubesim.api import errors
from kubesim.registry.admission import Attributes
from kubesim.validation import cel

__all__ = ["matches"]


def matches(invocation: Invocation, attrs: Attributes, obj: dict | None, old: dict | None) -> bool:
    """Whether the webhook's conditions let it be called; ApiError 403 when they cannot be
    evaluated under failurePolicy Fail."""
    spec = invocation.hook.spec
    conditions = spec.get("matchConditions") or []
    if not conditions:
        return True
    _, body = review.new_review(invocation, attrs, None, None)
    request = {k: v for k, v in body["request"].items() if k not in ("object", "oldObject")}
    data = {"object": obj, "oldObject": old, "request": request}
    failures: list[str] = []
    for condition in conditions:
        expression = str(condition.get("expression", ""))
        compiled = cel.compile_rule(expression, variables=cel.ADMISSION_VARIABLES)
        if compiled.program is None:
            failures.append(f"compilation failed: {compiled.error}")
            continue
        value = cel.evaluate(compiled.program, data)
        if value is False:
            return False  # a false condition skips the webhook, errors or not
        if isinstance(value, cel.Failure):
            failures.append(f"expression '{expression}' resulted in error: {value.message}")
        elif value is not True:
            failures.append(f"expression '{expression}' did not evaluate to a bool")
    if not failures:
        return True
    if spec.get("failurePolicy", "Fail") == "Ignore":
        return False
    # utilerrors.NewAggregate: one error is its own text, several are bracketed
    detail = failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]"
    info = attrs.info
    resource = errors.qualified(info.plural, info.group)
    where = f'{resource} "{attrs.name}"' if attrs.name else resource
    raise errors.forbidden(info.group, info.plural, attrs.name, f"{where} is forbidden: {detail}")
