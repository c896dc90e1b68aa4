"""Hand-written informers: client-go's tools/cache in Python.

Reflector -> RealFIFO | DeltaFIFO -> SharedIndexInformer -> Indexer (cache) + event handlers;
listers read the cache. Objects are plain dicts decoded from the API's JSON and must never be
mutated in place. Importing this package loads neither kubesim nor the official client's models.
"""

from informer.delta_fifo import DeltaFIFO
from informer.factory import GroupVersionResource, SharedInformerFactory
from informer.fifo import Delta, DeltaType, FIFOClosedError, Queue
from informer.lister import Lister, NamespaceLister, NotFoundError
from informer.listwatch import ListWatch
from informer.metrics import NOOP_METRICS, InformerMetrics, InformerMetricsProvider
from informer.real_fifo import RealFIFO
from informer.reflector import Reflector
from informer.shared_informer import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from informer.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    ThreadSafeStore,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)

__all__ = [
    "NAMESPACE_INDEX",
    "NOOP_METRICS",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "FIFOClosedError",
    "FilteringResourceEventHandler",
    "GroupVersionResource",
    "Indexer",
    "InformerMetrics",
    "InformerMetricsProvider",
    "ListWatch",
    "Lister",
    "NamespaceLister",
    "NotFoundError",
    "Queue",
    "RealFIFO",
    "Reflector",
    "ResourceEventHandler",
    "ResourceEventHandlerDetailedFuncs",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "ThreadSafeStore",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
]
