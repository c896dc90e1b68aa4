"""kubesim: a small in-process Kubernetes API server for tests, benchmarks and the demo.

See kubesim/README.md for its layers, what it serves and, plainly, what it does not do.

``KubeSim`` and ``RequestRecord`` are loaded on first use (PEP 562), not with the package:
pytest imports ``kubesim.pytest_plugin`` through its entry point in every session of a project
that has kubesim installed, and that must not cost the half second the server's modules take
to import when the session uses no kubesim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesim.server.request import RequestRecord
    from kubesim.sim import KubeSim

__all__ = ["KubeSim", "RequestRecord"]


def __getattr__(name: str) -> Any:
    if name == "KubeSim":
        from kubesim.sim import KubeSim

        return KubeSim
    if name == "RequestRecord":
        from kubesim.server.request import RequestRecord

        return RequestRecord
    raise AttributeError(f"module 'kubesim' has no attribute {name!r}")
