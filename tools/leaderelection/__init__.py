"""Leader election on a Lease (client-go ``tools/leaderelection``).

``leaderelection.py`` runs the election (``LeaderElector``); ``resourcelock.py`` reads and writes
the Lease that carries the record (``resourcelock.LeaseLock``).
"""

from tools.leaderelection.leaderelection import LeaderElectionConfig, LeaderElector
from tools.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock, micro_time

__all__ = [
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "micro_time",
]
