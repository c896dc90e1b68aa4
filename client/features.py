"""client-go's feature gates, set through ``KUBE_FEATURE_<name>`` environment variables.

client-go twin: ``k8s.io/client-go/features`` (``known_features.go`` for the gates and their
defaults, ``envvar.go`` for how the environment sets them, ``features.go`` for
``FeatureGates``/``ReplaceFeatureGates``).

As upstream, the environment is read once, on the first ``enabled`` call, and a gate is set only
by a value ``strconv.ParseBool`` accepts (``1``/``t``/``true``/... and ``0``/``f``/``false``/...);
any other value is logged and the gate keeps its default. A process therefore behaves like a Go
controller built on client-go 1.35+ given the same environment:
``KUBE_FEATURE_WatchListClient=false`` turns streaming lists off in both.

Only the gate this project implements is known: ``WatchListClient`` (beta, on by default since
client-go 1.35, kubernetes#134180). Asking for any other name is a programming error
(``KeyError``), as upstream panics on an unregistered feature.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "WATCH_LIST_CLIENT",
    "EnvVarFeatureGates",
    "FeatureSpec",
    "feature_gates",
    "parse_bool",
    "replace_feature_gates",
]

log = logging.getLogger(__name__)

WATCH_LIST_CLIENT = "WatchListClient"
"""Reflectors list with a streaming watch (``sendInitialEvents=true``) instead of a paged LIST."""

_ENV_PREFIX = "KUBE_FEATURE_"

# Go's strconv.ParseBool, which envvar.go applies to every KUBE_FEATURE_ value.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``: the spellings client-go accepts; ValueError otherwise."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"invalid syntax: {text!r} is not one of 1, t, true, 0, f, false")


@dataclass(frozen=True)
class FeatureSpec:
    """A gate's default and maturity (component-base ``featuregate.FeatureSpec``)."""

    default: bool
    pre_release: str  # "Alpha", "Beta" or "GA", for logs only


KNOWN_FEATURES: Mapping[str, FeatureSpec] = {
    WATCH_LIST_CLIENT: FeatureSpec(default=True, pre_release="Beta"),
}
"""client-go ``defaultKubernetesFeatureGates``, for the gates this project implements."""


class EnvVarFeatureGates:
    """Gates whose state comes from the environment (client-go ``envVarFeatureGates``).

    ``environ`` defaults to ``os.environ``; tests pass a dict and install the result with
    ``replace_feature_gates``.
    """

    def __init__(
        self,
        known: Mapping[str, FeatureSpec] = KNOWN_FEATURES,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._known = dict(known)  # every feature this process knows, with its default
        self._environ = environ  # None: os.environ, read at the first enabled()
        self._lock = threading.Lock()  # guards _from_env while it is filled
        self._from_env: dict[str, bool] | None = None  # features the environment set; None: unread

    def enabled(self, feature: str) -> bool:
        """Whether ``feature`` is on: the environment's value if it set one, else the default."""
        if feature not in self._known:
            raise KeyError(f"feature {feature!r} is not registered in client.features")
        from_env = self._read_environment()
        if feature in from_env:
            return from_env[feature]
        return self._known[feature].default

    def _read_environment(self) -> dict[str, bool]:
        with self._lock:
            if self._from_env is None:
                environ = os.environ if self._environ is None else self._environ
                state: dict[str, bool] = {}
                for feature in self._known:
                    text = environ.get(_ENV_PREFIX + feature)
                    if text is None:
                        continue
                    try:
                        state[feature] = parse_bool(text)
                    except ValueError as err:
                        # envvar.go: utilruntime.HandleError, and the default stands.
                        log.error("cannot set feature gate %r to %r, due to %s", feature, text, err)
                        continue
                    log.info(
                        "feature gate %s set to %s from the environment", feature, state[feature]
                    )
                self._from_env = state
            return self._from_env


_gates_lock = threading.Lock()  # guards _gates
_gates = EnvVarFeatureGates()  # the process's gates, as client-go's package-level featureGates


def feature_gates() -> EnvVarFeatureGates:
    """The process's feature gates (client-go ``features.FeatureGates()``)."""
    with _gates_lock:
        return _gates


def replace_feature_gates(gates: EnvVarFeatureGates) -> EnvVarFeatureGates:
    """Install other gates and return the previous ones (client-go ``ReplaceFeatureGates``);
    tests put the previous ones back when they are done."""
    global _gates
    with _gates_lock:
        previous, _gates = _gates, gates
    return previous
