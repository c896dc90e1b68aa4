"""Foos the controller cannot act on as written, found before any request is made.

apimachinery twin: ``validation.IsValidLabelValue`` (pkg/util/validation/validation.go), the
rule kube-apiserver applies to every label value and selector value. sample-controller checks
neither case: it logs an empty ``deploymentName`` and returns, and sends a Deployment that a
real server rejects for a long Foo name, then retries it forever.

Each problem is a ``Problem``: the reason and message of the Warning Event and of the Foo's
``Ready=False`` condition. Both are written once per generation; a retry could not help, since
only a change of the Foo (its spec, or a new Foo) can fix it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from controller.apis import Foo

__all__ = [
    "ERR_INVALID_NAME",
    "ERR_INVALID_SPEC",
    "LABEL_VALUE_MAX_LENGTH",
    "MESSAGE_NO_DEPLOYMENT_NAME",
    "PROBLEM_LOG",
    "Problem",
    "foo_problem",
    "label_value_errors",
]

# ERR_INVALID_SPEC is the reason when the Foo's spec cannot be acted on: the user edits it.
ERR_INVALID_SPEC = "InvalidSpec"
# ERR_INVALID_NAME is the reason when the Foo's name cannot be used: metadata.name is
# immutable, so the fix is a new Foo under a shorter name, not an edit of the spec.
ERR_INVALID_NAME = "InvalidName"
MESSAGE_NO_DEPLOYMENT_NAME = "spec.deploymentName must be specified"

# What the controller logs about a Foo it cannot act on, by reason.
PROBLEM_LOG = {
    ERR_INVALID_SPEC: "deployment name must be specified",
    ERR_INVALID_NAME: "foo name cannot be a label value",
}

# validation.LabelValueMaxLength
LABEL_VALUE_MAX_LENGTH = 63
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class Problem(NamedTuple):
    """Why a Foo cannot be acted on: an Event/condition reason and a message for the user
    (no client-go twin: sample-controller logs these cases, or retries them)."""

    reason: str
    message: str


def label_value_errors(value: str) -> list[str]:
    """What is wrong with ``value`` as a label value; empty when it is valid
    (``validation.IsValidLabelValue``, with its messages)."""
    errors = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errors.append(f"must be no more than {LABEL_VALUE_MAX_LENGTH} characters")
    if not _LABEL_VALUE_RE.match(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return errors


def foo_problem(foo: Foo) -> Problem | None:
    """The first reason this Foo cannot get a Deployment, or None.

    The Foo's name becomes the value of the Deployment's ``controller`` label and selector
    (``new_deployment``): a name of 64-253 characters is a valid Foo name but not a label
    value, and the server would reject the Deployment.
    """
    if not (foo.get("spec") or {}).get("deploymentName"):
        return Problem(ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME)
    name = (foo.get("metadata") or {}).get("name") or ""
    errors = label_value_errors(name)
    if errors:
        return Problem(
            ERR_INVALID_NAME,
            f"metadata.name ({len(name)} characters) cannot be the value of the Deployment's "
            f"'controller' label: {'; '.join(errors)}; create the Foo under a shorter name",
        )
    return None
