"""A CRD's ``x-kubernetes-validations``: CEL rules compiled when the CRD is written, evaluated on
every write of its custom resources.

Twin of k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go (``Validator``:
the walk over the structural schema, ``self`` and, for transition rules, ``oldSelf`` correlated
through properties, map keys and the keys of ``x-kubernetes-list-type: map`` / ``set`` lists;
``message``, ``messageExpression``, ``reason``, ``fieldPath``; the field error each failure
becomes), of its compile.go (a rule must compile and evaluate to a bool, a messageExpression
to a string) and of apiextensions' CRD validation, which refuses a CRD whose rules do not
compile (``compilation failed: ...`` on the rule's path, the whole ValidationRule shown as Go's
``%#v`` prints it).

CEL itself is the cel-expr-python package (the CEL project's Python runtime around cel-cpp, with
cel-go's parser and error text); kubesim/README.md says why that one.

Deliberate differences: ``self`` and ``oldSelf`` are declared dynamic rather than typed from the
schema, so type errors (a field the schema does not have, a comparison of int with string)
surface when a rule is evaluated, not when the CRD is written; Kubernetes' own CEL library
(quantity, url, ip, cidr, isSorted, format, authorizer) is absent, the strings and optional
extensions are there; there is no cost estimate or budget; ``optionalOldSelf`` rules run only
when an old value exists (as rules without it do); ``oldSelf`` is recognised by name in the
rule's text.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

from kubesim.api import errors

__all__ = [
    "ADMISSION_VARIABLES",
    "Compiled",
    "Failure",
    "RULE_VARIABLES",
    "check_schema",
    "compile_rule",
    "evaluate",
    "has_rules",
    "validate",
]

# The variables an expression may name: a CRD rule's, and an admission matchCondition's
# (the webhook's object, oldObject and the AdmissionRequest; no authorizer here).
RULE_VARIABLES = ("self", "oldSelf")
ADMISSION_VARIABLES = ("object", "oldObject", "request")
_LOCK = threading.Lock()  # guards _ENVS and _CACHE (and compiles one expression at a time)
_ENVS: dict[tuple[str, ...], Any] = {}
_CACHE: dict[str, Compiled] = {}
# string literals, removed before looking for the oldSelf identifier
_STRINGS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass(frozen=True)
class Compiled:
    """One expression: its program, or the detail of why it does not compile."""

    program: Any
    error: str
    uses_old_self: bool


def _cel_error(e: Exception) -> str:
    """cel-cpp's status text without its code: what cel-go's issues.String() prints."""
    text = str(e)
    text = text.removeprefix("INVALID_ARGUMENT: ")
    return text.removesuffix(" [INVALID_ARGUMENT]")


def _env(variables: tuple[str, ...]) -> Any:
    """The CEL environment declaring ``variables`` (dynamic), with the strings and optional
    extensions (the caller holds _LOCK)."""
    env = _ENVS.get(variables)
    if env is None:
        env = cel.NewEnv(
            variables={name: cel.Type.DYN for name in variables},
            extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional()],
        )
        _ENVS[variables] = env
    return env


def compile_rule(
    expression: str, want: Any = None, variables: tuple[str, ...] = RULE_VARIABLES
) -> Compiled:
    """Compile (once per text, wanted type and variables); ``want``: the output type it must
    have (bool unless given)."""
    want = want if want is not None else cel.Type.BOOL
    key = f"{want.name()}\x00{','.join(variables)}\x00{expression}"
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        try:
            program = _env(variables).compile(expression)
            error = ""
            out = program.return_type()
            if out != want and out != cel.Type.DYN:
                program, error = None, f"must evaluate to a {want.name().lower()}"
        except Exception as e:  # cel-cpp raises RuntimeError; any failure is a compile error
            program, error = None, _cel_error(e)
        uses_old = bool(_OLD_SELF.search(_STRINGS.sub("", expression)))
        compiled = Compiled(program, error, uses_old)
        if len(_CACHE) > 1024:
            _CACHE.clear()
        _CACHE[key] = compiled
        return compiled


# ---- the CRD: every rule must compile ----------------------------------------------------------


def _go_rule(rule: dict) -> str:
    """apiextensions.ValidationRule as Go's %#v prints it (the value of a compile error)."""

    def pointer(value: Any, typ: str) -> str:
        if value is None:
            return f"(*{typ})(nil)"
        return f"(*{typ})(0x{id(value) & 0xFFFFFFFFFF:x})"

    return (
        "apiextensions.ValidationRule{"
        f"Rule:{errors.go_quote(str(rule.get('rule', '')))}, "
        f"Message:{errors.go_quote(str(rule.get('message', '')))}, "
        f"MessageExpression:{errors.go_quote(str(rule.get('messageExpression', '')))}, "
        f"Reason:{pointer(rule.get('reason'), 'apiextensions.FieldValueErrorReason')}, "
        f"FieldPath:{errors.go_quote(str(rule.get('fieldPath', '')))}, "
        f"OptionalOldSelf:{pointer(rule.get('optionalOldSelf'), 'bool')}"
        "}"
    )


def check_schema(schema: Any, path: str) -> list[dict]:
    """The 422 causes of rules that do not compile, anywhere in ``schema`` (at ``path``)."""
    if not isinstance(schema, dict):
        return []
    causes: list[dict] = []
    for i, rule in enumerate(schema.get("x-kubernetes-validations") or []):
        rpath = f"{path}.x-kubernetes-validations[{i}]"
        if not isinstance(rule, dict) or not str(rule.get("rule", "")).strip():
            causes.append(errors.field_required(f"{rpath}.rule", "rule is not specified"))
            continue
        compiled = compile_rule(rule["rule"])
        if compiled.error:
            detail = (
                "compilation failed: " + compiled.error
                if compiled.error.startswith("ERROR")
                else f"cel expression {compiled.error}"
            )
            causes.append(
                errors.field_invalid(f"{rpath}.rule", errors.GoStringer(_go_rule(rule)), detail)
            )
        if rule.get("messageExpression"):
            message = compile_rule(rule["messageExpression"], cel.Type.STRING)
            if message.error:
                detail = (
                    "messageExpression compilation failed: " + message.error
                    if message.error.startswith("ERROR")
                    else f"messageExpression {message.error}"
                )
                causes.append(
                    errors.field_invalid(
                        f"{rpath}.messageExpression", rule["messageExpression"], detail
                    )
                )
    for name, sub in (schema.get("properties") or {}).items():
        causes += check_schema(sub, f"{path}.properties[{name}]")
    if isinstance(schema.get("additionalProperties"), dict):
        causes += check_schema(schema["additionalProperties"], f"{path}.additionalProperties")
    if isinstance(schema.get("items"), dict):
        causes += check_schema(schema["items"], f"{path}.items")
    return causes


# ---- the custom resource: every rule must hold -------------------------------------------------


def has_rules(schema: Any) -> bool:
    """Whether any level of the schema has rules (NewValidator returns nil for none)."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    subs = list((schema.get("properties") or {}).values())
    subs += [schema.get("additionalProperties"), schema.get("items")]
    return any(has_rules(sub) for sub in subs)


def validate(schema: Any, obj: Any, old: Any) -> list[dict]:
    """The causes of the rules ``obj`` breaks (``old``: the stored object on update, else None).

    The root's path is Go's nil field.Path, printed ``<nil>``, as the custom resource
    strategy calls the validator with none.
    """
    return _walk(schema, obj, old, "")


def _walk(schema: Any, obj: Any, old: Any, path: str) -> list[dict]:
    if not isinstance(schema, dict) or obj is None:
        # null values are not validated: rules on a nullable field see only non-null values
        return []
    causes = _rules(schema, obj, old, path)
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        addl = schema.get("additionalProperties")
        old_map = old if isinstance(old, dict) else {}
        for key, value in obj.items():
            if key in props:
                causes += _walk(props[key], value, old_map.get(key), _child(path, key))
            elif isinstance(addl, dict):
                causes += _walk(addl, value, old_map.get(key), f"{path or '<nil>'}[{key}]")
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        olds = _correlate(schema, obj, old)
        for i, value in enumerate(obj):
            causes += _walk(items, value, olds[i], f"{path or '<nil>'}[{i}]")
    return causes


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _correlate(schema: dict, items: list, old: Any) -> list[Any]:
    """Each item's old value: by key for list-type map, by value for set, none for atomic."""
    olds: list[Any] = [None] * len(items)
    if not isinstance(old, list):
        return olds
    kind = schema.get("x-kubernetes-list-type")
    if kind == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []

        def key_of(item: Any) -> Any:
            return tuple(item.get(k) for k in keys) if isinstance(item, dict) else None

        by_key = {key_of(o): o for o in old}
        return [by_key.get(key_of(item)) for item in items]
    if kind == "set":
        return [item if item in old else None for item in items]
    return olds


def _rules(schema: dict, obj: Any, old: Any, path: str) -> list[dict]:
    causes: list[dict] = []
    for rule in schema.get("x-kubernetes-validations") or []:
        compiled = compile_rule(str(rule.get("rule", "")))
        if compiled.program is None:
            causes.append(_invalid(path, schema, obj, f"rule compile error: {compiled.error}"))
            continue
        if compiled.uses_old_self and old is None:
            continue  # a transition rule needs an existing value to compare with
        data = {"self": obj, "oldSelf": old} if old is not None else {"self": obj}
        result = evaluate(compiled.program, data)
        if result is True:
            continue
        text = _rule_text(rule)
        if isinstance(result, Failure):
            causes.append(_invalid(path, schema, obj, f"{result.message} evaluating rule: {text}"))
            continue
        detail = _message(rule, data) or (
            str(rule["message"]).strip() if rule.get("message") else f"failed rule: {text}"
        )
        where = path
        if rule.get("fieldPath"):
            where = _child(path, str(rule["fieldPath"]).lstrip("."))
        causes.append(_for_reason(rule.get("reason"), where, schema, obj, detail))
    return causes


def _rule_text(rule: dict) -> str:
    """ruleErrorString: the message when there is one, else the rule."""
    return str(rule.get("message") or rule.get("rule", "")).strip()


class Failure:
    """An evaluation error, worded as cel-go words the common ones."""

    def __init__(self, message: str) -> None:
        self.message = message


_NO_KEY = re.compile(r'Key not found in map : "(.*)"')


def evaluate(program: Any, data: dict) -> Any:
    """The value of a compiled program over ``data`` (plain Python), or a Failure."""
    try:
        value = program.eval(data=data)
    except Exception as e:  # cel-cpp reports an evaluation it cannot even start this way
        return Failure(str(e))
    if value.type() == cel.Type.ERROR:
        text = str(value.value())
        found = _NO_KEY.search(text)
        if found:
            return Failure(f"no such key: {found.group(1)}")
        if "divide by zero" in text:
            return Failure("division by zero")
        return Failure(text.split(": ", 1)[-1])
    return value.plain_value()


def _message(rule: dict, data: dict) -> str:
    """messageExpression's text, or "" when it fails (upstream then uses the message)."""
    source = rule.get("messageExpression")
    if not source:
        return ""
    compiled = compile_rule(str(source), cel.Type.STRING)
    if compiled.program is None:
        return ""
    value = evaluate(compiled.program, data)
    if not isinstance(value, str) or "\n" in value.strip():
        return ""
    return value.strip()


def _shown(schema: dict, obj: Any) -> bool:
    """Objects and arrays are not printed in the error (field.OmitValueType)."""
    return schema.get("type") not in ("object", "array") and not isinstance(obj, dict | list)


def _invalid(path: str, schema: dict, obj: Any, detail: str) -> dict:
    field = path or "<nil>"
    if _shown(schema, obj):
        return errors.field_invalid(field, obj, detail)
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {detail}", "field": field}


def _for_reason(reason: Any, path: str, schema: dict, obj: Any, detail: str) -> dict:
    """fieldErrorForReason: Forbidden, Required and Duplicate by the rule's reason."""
    field = path or "<nil>"
    if reason == "FieldValueForbidden":
        return errors.field_forbidden(field, detail)
    if reason == "FieldValueRequired":
        return errors.field_required(field, detail)
    if reason == "FieldValueDuplicate":
        if _shown(schema, obj):
            return errors.field_duplicate(field, obj)
        return {"reason": "FieldValueDuplicate", "message": "Duplicate value", "field": field}
    return _invalid(path, schema, obj, detail)
