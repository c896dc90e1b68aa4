"""controller-runtime's twin: the machinery any controller here runs on, Foo's and yours.

It knows no Foo (an import contract says so). Each module names its controller-runtime (or
kube-controller-manager) twin and lists what it does differently:

- ``manager``: the process around the controllers (pkg/manager): runnables, probes, metrics,
  leader election or sharding, one graceful-shutdown budget, signals;
- ``worker``: the worker loop and ``Result`` (pkg/internal/controller, pkg/reconcile);
- ``builder``, ``controller``, ``source``, ``handler``, ``predicate``, ``event``, ``reconcile``:
  controllers written the kubebuilder way, ``Builder(manager).for_(...).owns(...)
  .complete(reconciler)`` (pkg/builder, pkg/internal/controller, pkg/source, pkg/handler,
  pkg/predicate, pkg/event, pkg/reconcile);
- ``cache``, ``client``, ``controllerutil``, ``restmapper``: the informer cache started on
  first use, the Client that reads from it and writes through REST, ``create_or_update`` and
  ``set_controller_reference`` (pkg/cache, pkg/client, pkg/controller/controllerutil,
  pkg/client/apiutil);
- ``context``: the deadline a reconcile is handed, as Go hands ``ctx``;
- ``flags``, ``options``: the process flags every controller's main shares (manager.Options);
- ``healthz``, ``metrics``, ``certwatcher``, ``selfsigned``: the probe server (pkg/healthz),
  the secure metrics server (pkg/metrics/server) and its certificates (pkg/certwatcher);
- ``webhook``: the admission webhook server and its handlers (pkg/webhook,
  pkg/webhook/admission), with self-managed certificates; ``tlsserver``: the HTTPS plumbing it
  shares with the metrics server;
- ``log``, ``trace``: klog-style and JSON logging, and ``--trace``'s step-by-step lines;
- ``expectations``, ``writes``: kube-controller-manager's ControllerExpectations and
  RealPodControl, for controllers that track their own writes;
- ``sharding``: every replica working, on a share of the objects (no upstream twin yet);
- ``shutdown``, ``durations``: the shutdown budget, Go durations.
"""
