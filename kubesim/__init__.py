"""kubesim: a small in-process Kubernetes API server for tests, benchmarks and the demo.

See README.md ("kubesim") for what it serves and, plainly, what it does not do.
"""

from .request import RequestRecord
from .sim import KubeSim

__all__ = ["KubeSim", "RequestRecord"]
