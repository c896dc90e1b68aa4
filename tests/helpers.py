"""What the test suites share: where the repository's files are, and ``wait_for``.

The Foo and Deployment group/version/resource triples are not repeated here: tests import the
controller's own (``controller.foo_controller.FOO_GVR`` and ``DEPLOYMENT_GVR``), so a test cannot
agree with itself while the controller talks about another resource. The kubesim fixtures come
from kubesim's pytest plugin; ``tests/conftest.py`` installs ``CRD`` in them by default.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from client.errors import is_not_found

__all__ = ["CRD", "ROOT", "foreign_deployment", "wait_for"]

ROOT = Path(__file__).resolve().parents[1]  # the repository checkout
CRD = ROOT / "crds" / "foo-crd.yaml"  # the Foo CRD as the project ships it

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.01,
    message: str | Callable[[], str] = "",
    not_yet: Callable[[Exception], bool] = is_not_found,
) -> T:
    """Poll ``predicate`` until it returns something truthy, and return that value.

    This is how a test waits for another thread, process or server instead of sleeping: the wait
    ends as soon as the condition holds, and a condition that never holds fails the test within
    ``timeout`` seconds with ``message`` and the last value seen, not by hanging into the suite's
    timeout. ``message`` may be a callable, for a description built from what the predicate saw.

    An exception for which ``not_yet`` is true counts as "not yet" and is kept as the last value;
    by default that is a 404 from the API (the object is not created yet, or not deleted yet in
    the other direction). Any other exception propagates at once: a bug should not look like a
    slow condition. The predicate runs at least once, however small the timeout.
    """
    deadline = time.monotonic() + timeout
    while True:
        last: object
        try:
            last = predicate()
        except Exception as err:
            if not not_yet(err):
                raise
            last = err
        else:
            if last:
                return cast(T, last)
        if time.monotonic() >= deadline:
            what = message() if callable(message) else message
            what = what or getattr(predicate, "__qualname__", repr(predicate))
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def foreign_deployment(name: str) -> dict[str, Any]:
    """A Deployment someone else made (no ownerReference, 2 replicas): what a Foo naming it
    must never touch."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"owner": "someone-else"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "x", "image": "busybox:1"}]},
            },
        },
    }
