"""Mutating- and ValidatingWebhookConfigurations: the defaults and the checks a test would hit.

Twin of k8s.io/api/admissionregistration/v1's defaults (pkg/apis/admissionregistration/v1/
defaults.go: failurePolicy Fail, matchPolicy Equivalent, empty namespace and object selectors,
timeoutSeconds 10, reinvocationPolicy Never, a rule's scope "*", a service's port 443) and of a
subset of pkg/apis/admissionregistration/validation/validation.go
(``ValidateMutatingWebhookConfiguration``, ``ValidateValidatingWebhookConfiguration``): the
webhook name (a qualified name with at least three segments), unique names, exactly one of
``url`` and ``service``, an https URL without query or fragment, the side-effect class,
admissionReviewVersions, timeoutSeconds between 1 and 30, the enums, and rules.

``matchConditions``: at most 64, each with a unique qualified name and an expression that
compiles (validation/cel.py, with the variables object, oldObject and request) to a bool.

Deliberate difference: the rules' finer checks (a resource both ``*`` and named, subresource
wildcards) are left out.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from kubesim.api import errors
from kubesim.validation import cel, content

__all__ = ["GROUP", "default_configuration", "validate_configuration"]

GROUP = "admissionregistration.k8s.io"

_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Exact", "Equivalent"]
_REINVOCATION_POLICIES = ["Never", "IfNeeded"]
_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_SCOPES = ["*", "Cluster", "Namespaced"]
_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_REVIEW_VERSIONS = ["v1", "v1beta1"]
_MAX_MATCH_CONDITIONS = 64


def default_configuration(obj: dict, mutating: bool) -> None:
    """SetDefaults_*Webhook, in place."""
    for hook in obj.get("webhooks") or []:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def validate_configuration(obj: dict, mutating: bool) -> list[dict]:
    """The causes of a 422 for the configuration's webhooks (ObjectMeta is checked apart)."""
    causes: list[dict] = []
    seen: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        path = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            causes.append(errors.field_invalid(path, hook, "must be an object"))
            continue
        name = hook.get("name") or ""
        if name in seen:
            causes.append(errors.field_duplicate(f"{path}.name", name))
        seen.add(name)
        causes += _validate_name(f"{path}.name", name)
        causes += _validate_client_config(f"{path}.clientConfig", hook.get("clientConfig"))
        causes += _validate_rules(f"{path}.rules", hook.get("rules") or [])
        causes += _enum(f"{path}.failurePolicy", hook.get("failurePolicy"), _FAILURE_POLICIES)
        causes += _enum(f"{path}.matchPolicy", hook.get("matchPolicy"), _MATCH_POLICIES)
        if mutating:
            causes += _enum(
                f"{path}.reinvocationPolicy",
                hook.get("reinvocationPolicy"),
                _REINVOCATION_POLICIES,
            )
        side = hook.get("sideEffects")
        if side is None:
            causes.append(
                errors.field_required(
                    f"{path}.sideEffects", "must specify one of None, NoneOnDryRun"
                )
            )
        else:
            causes += _enum(f"{path}.sideEffects", side, _SIDE_EFFECTS)
        versions = hook.get("admissionReviewVersions") or []
        if not versions:
            causes.append(
                errors.field_required(
                    f"{path}.admissionReviewVersions",
                    'must specify one of "v1", "v1beta1"',
                )
            )
        elif not any(v in _REVIEW_VERSIONS for v in versions):
            causes.append(
                errors.field_invalid(
                    f"{path}.admissionReviewVersions",
                    versions,
                    'must include at least one of "v1", "v1beta1"',
                )
            )
        causes += _validate_match_conditions(
            f"{path}.matchConditions", hook.get("matchConditions") or []
        )
        timeout = hook.get("timeoutSeconds")
        if isinstance(timeout, int) and not 1 <= timeout <= 30:
            causes.append(
                errors.field_invalid(
                    f"{path}.timeoutSeconds",
                    timeout,
                    "the timeout value must be between 1 and 30 seconds",
                )
            )
    return causes


def _enum(path: str, value: object, allowed: list[str]) -> list[dict]:
    if value is None or value in allowed:
        return []
    return [errors.field_not_supported(path, value, allowed)]


def _validate_name(path: str, name: str) -> list[dict]:
    """IsFullyQualifiedName: a qualified DNS subdomain of at least three segments."""
    if not name:
        return [errors.field_required(path)]
    causes = [errors.field_invalid(path, name, m) for m in content.is_dns1123_subdomain(name)]
    if not causes and len(name.split(".")) < 3:
        causes.append(
            errors.field_invalid(path, name, "should be a domain with at least three segments")
        )
    return causes


def _validate_client_config(path: str, config: object) -> list[dict]:
    if not isinstance(config, dict) or (not config.get("url") and not config.get("service")):
        return [errors.field_required(path, "exactly one of url or service is required")]
    if config.get("url") and config.get("service"):
        return [errors.field_required(path, "exactly one of url or service is required")]
    if config.get("url"):
        url = config["url"]
        parts = urlsplit(url)
        if parts.scheme != "https":
            return [
                errors.field_invalid(f"{path}.url", url, "'https' is the only allowed URL scheme")
            ]
        if not parts.hostname:
            return [errors.field_invalid(f"{path}.url", url, "host must be specified")]
        if parts.query:
            return [errors.field_invalid(f"{path}.url", url, "query parameters are not allowed")]
        if parts.fragment:
            return [errors.field_invalid(f"{path}.url", url, "fragments are not allowed")]
        return []
    service = config["service"]
    causes = []
    for key in ("namespace", "name"):
        if not service.get(key):
            causes.append(
                errors.field_required(f"{path}.service.{key}", f"service {key} is required")
            )
    port = service.get("port")
    if isinstance(port, int) and not 1 <= port <= 65535:
        causes.append(
            errors.field_invalid(
                f"{path}.service.port",
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    return causes


def _validate_rules(path: str, rules: list) -> list[dict]:
    causes: list[dict] = []
    for i, rule in enumerate(rules):
        rpath = f"{path}[{i}]"
        if not isinstance(rule, dict):
            causes.append(errors.field_invalid(rpath, rule, "must be an object"))
            continue
        for key in ("operations", "apiGroups", "apiVersions", "resources"):
            if not rule.get(key):
                causes.append(errors.field_required(f"{rpath}.{key}"))
        for j, op in enumerate(rule.get("operations") or []):
            causes += _enum(f"{rpath}.operations[{j}]", op, _OPERATIONS)
        causes += _enum(f"{rpath}.scope", rule.get("scope"), _SCOPES)
    return causes


def _validate_match_conditions(path: str, conditions: list) -> list[dict]:
    """validateMatchConditions: names unique and qualified, expressions that compile."""
    causes: list[dict] = []
    if len(conditions) > _MAX_MATCH_CONDITIONS:
        causes.append(
            {
                "reason": "FieldValueTooMany",
                "message": f"Too many: {len(conditions)}: must have at most "
                f"{_MAX_MATCH_CONDITIONS} items",
                "field": path,
            }
        )
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        cpath = f"{path}[{i}]"
        if not isinstance(condition, dict):
            causes.append(errors.field_invalid(cpath, condition, "must be an object"))
            continue
        name = condition.get("name") or ""
        if not name:
            causes.append(errors.field_required(f"{cpath}.name"))
        elif name in names:
            causes.append(errors.field_duplicate(f"{cpath}.name", name))
        else:
            causes += [
                errors.field_invalid(f"{cpath}.name", name, m) for m in content.is_label_key(name)
            ]
        names.add(name)
        expression = condition.get("expression") or ""
        if not expression:
            causes.append(errors.field_required(f"{cpath}.expression"))
            continue
        compiled = cel.compile_rule(expression, variables=cel.ADMISSION_VARIABLES)
        if compiled.error:
            detail = (
                f"compilation failed: {compiled.error}"
                if compiled.error.startswith("ERROR")
                else f"cel expression {compiled.error}"
            )
            causes.append(errors.field_invalid(f"{cpath}.expression", expression, detail))
    return causes
