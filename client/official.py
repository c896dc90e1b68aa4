"""The official client's loaders without the rest of it, for the kubeconfigs that need them.

No client-go twin: client-go's ``tools/clientcmd`` and its auth plugins are packages a Go binary
links on their own. The official Python client's are not: ``import kubernetes.config`` (37.x)
takes a fresh interpreter from about 11 MB to 44 MB of RSS and 477 modules
(``python -m bench.import_bench``).

Who needs it: client/config.py, for a kubeconfig whose user has an ``exec`` or
``auth-provider`` plugin (or a field client/clientconfig.py does not read), and
``load_client_configuration`` for tests and tools that build an official ``ApiClient``. A
kubeconfig without plugins, and the in-cluster environment, never import it (client/pool.py,
client/clientconfig.py). What the process then uses of it:

- ``kubernetes.client.configuration.Configuration``: host, TLS, proxy, credentials;
- ``kubernetes.config``: kubeconfig loading, exec and auth-provider plugins.

Requests still go through our own pool (client/pool.py, from ``Config.from_configuration``).

What the plain import loads besides, and how it is skipped:

- ``kubernetes/__init__.py`` imports client, config, dynamic, watch, stream (websocket-client),
  utils, leaderelection and informer. The package is registered from its spec without running
  it (``_LazyPackage``); it runs on the first attribute the package lacks (``kubernetes.watch``,
  ``kubernetes.__version__``), so other code in the process still sees the whole package.
- ``kube_config``'s ``from kubernetes.client import ApiClient`` loads ``api_client.py``:
  pydantic, python-dateutil and the model package, for a class kube_config only calls to
  discover an OIDC issuer and in ``new_client_from_config``.
- its ``import oauthlib.oauth2`` and ``from requests_oauthlib import OAuth2Session``: requests
  and oauthlib, for the OIDC refresh only.

While ``kubernetes.config`` is imported, those three names are bound to stand-ins that import
the real thing when first used (an OIDC refresh works as before: tests/client/test_official.py
runs one). The stand-ins are then taken out of ``kubernetes.client`` and ``sys.modules``: only
kube_config's own globals keep them, and every later import gets the real modules.
``kubernetes.client``'s own ``__init__`` resolves its exports lazily and runs as usual.

Three standard modules were kept out the same way until the same-run measurement of issue 32
(``python -m bench.import_bench --stand-ins``) found each under the 1 MB a stand-in must save to
be worth its place: ``importlib.metadata`` (urllib3.http2's one ``version`` call, 0.69 MiB),
``multiprocessing`` (the configuration's ``cpu_count``, 0.50 MiB) and ``subprocess`` (exec and
cmd credential plugins, 0.14 MiB). They are imported as their importers ask, plainly.

The stand-ins load the real module on any other attribute, and leave ``sys.modules`` once the
import is done, so every later import of one of them is the real module.

Robust by construction: whatever is already imported (a test or a tool imported the official
client first) is used as it is, and when the light import fails (a future kube_config using
one of those names at import), the half-imported loaders are dropped and the plain import
runs. pyproject.toml pins the major version these figures and tests were taken on.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["import_loaders"]

log = logging.getLogger(__name__)


# One run of a lazy package's __init__, whichever thread asks first; reentrant, because the
# __init__ itself reads attributes of its package (``from . import x``).
_init_lock = threading.RLock()
# Lazy packages whose __init__ has started: an attribute read while it runs (its own
# ``from . import x``) is not there yet, and must not start it again.
_init_started: set[str] = set()


class _LazyPackage(types.ModuleType):
    """A package whose ``__init__`` runs on the first attribute it lacks.

    Importing a submodule (``kubernetes.config``) needs only the package's ``__path__``, which
    the spec provides; reading anything else runs the real ``__init__`` once, then answers.
    """

    def __getattr__(self, name: str) -> Any:
        with _init_lock:
            if self.__name__ not in _init_started:
                _init_started.add(self.__name__)
                spec = self.__spec__
                assert spec is not None and spec.loader is not None
                spec.loader.exec_module(self)
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


def _register_lazy_package(name: str) -> None:
    """Put ``name`` in ``sys.modules`` as a ``_LazyPackage`` unless it is imported already."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not an installed package")
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _LazyPackage
    sys.modules[name] = module


def _deferred_callable(module: str, name: str) -> Callable[..., Any]:
    """``module.name(...)``, with ``module`` imported at the first call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module}.{name}, imported when first called (client/official.py)."
    return call


class _DeferredModule(types.ModuleType):
    """Stands in for a module in an importer's globals: reading an attribute imports ``load``
    (the submodule the importer asked for) and reads it from the real module. ``names`` are
    set on the stand-in itself: what the importer reads while it is being imported."""

    def __init__(self, name: str, load: str, **names: Any) -> None:
        super().__init__(name)
        self._load = load
        vars(self).update(names)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            # what the import system asks of a module (``__path__`` for ``from x import y``)
            raise AttributeError(attr)
        importlib.import_module(self._load)
        return getattr(sys.modules[self.__name__], attr)


@contextmanager
def _in_sys_modules(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """``modules`` in ``sys.modules`` for as long as the block runs, each unless the real one is
    imported already; removed afterwards (the importers keep them in their globals)."""
    added = {name: module for name, module in modules.items() if name not in sys.modules}
    sys.modules.update(added)
    try:
        yield
    finally:
        for name, module in added.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


@contextmanager
def _stand_ins() -> Iterator[None]:
    """Bind kube_config's unused-at-load names to stand-ins while ``kubernetes.config`` is
    imported (see the module docstring); remove every stand-in afterwards."""
    import kubernetes.client

    namespace = vars(kubernetes.client)
    api_client = None
    if "ApiClient" not in namespace:
        api_client = namespace["ApiClient"] = _deferred_callable(
            "kubernetes.client.api_client", "ApiClient"
        )
    modules: dict[str, types.ModuleType] = {}
    if "requests_oauthlib" not in sys.modules:
        oauth2_session = types.ModuleType("requests_oauthlib")
        deferred = _deferred_callable("requests_oauthlib", "OAuth2Session")
        vars(oauth2_session)["OAuth2Session"] = deferred
        modules["requests_oauthlib"] = oauth2_session
    if "oauthlib" not in sys.modules:
        modules["oauthlib"] = _DeferredModule("oauthlib", "oauthlib.oauth2")
        modules["oauthlib.oauth2"] = _DeferredModule("oauthlib.oauth2", "oauthlib.oauth2")
    try:
        with _in_sys_modules(modules):
            yield
    finally:
        if api_client is not None and namespace.get("ApiClient") is api_client:
            del namespace["ApiClient"]


_LOADERS = ("kubernetes.config", "kubernetes.config.exec_provider", "kubernetes.client.rest")


def _import_all() -> None:
    for name in _LOADERS:
        importlib.import_module(name)


def import_loaders() -> None:
    """Import what the process uses of the official client (the module docstring's list) and
    nothing else it can avoid; idempotent, and a no-op once ``kubernetes.config`` is in."""
    if "kubernetes.config.kube_config" in sys.modules:
        _import_all()
        return
    try:
        _register_lazy_package("kubernetes")
        with _stand_ins():
            _import_all()
    # Any surprise: the plain import, as before.
    except Exception as err:
        log.warning("light import of the official client failed", extra={"error": str(err)})
        for name in [m for m in sys.modules if m.startswith("kubernetes.config")]:
            del sys.modules[name]
        _import_all()
