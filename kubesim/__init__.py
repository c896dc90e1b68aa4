"""kubesim: a small in-process Kubernetes API server for tests, benchmarks and the demo.

See kubesim/README.md for its layers, what it serves and, plainly, what it does not do.
"""

from kubesim.server.request import RequestRecord
from kubesim.sim import KubeSim

__all__ = ["KubeSim", "RequestRecord"]
