"""Events on the objects a controller manages (client-go ``tools/record``).

``recorder.py`` queues and writes Events (event.go); ``correlator.py`` decides what to write:
aggregate, count repeats, drop spam (events_cache.go).
"""

from tools.record.correlator import CorrelateResult, EventCorrelator
from tools.record.recorder import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    EventRecorder,
    EventRecorderInterface,
)

__all__ = [
    "EventRecorderInterface",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "CorrelateResult",
    "EventCorrelator",
    "EventRecorder",
]
