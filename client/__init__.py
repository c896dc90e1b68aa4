"""The client layer: what client-go's ``rest`` and apimachinery give a controller.

- ``rest``: raw-JSON REST transport and watch streams (``k8s.io/client-go/rest``).
- ``errors``: API errors and their predicates (``k8s.io/apimachinery/pkg/api/errors``).
- ``labels``: label selectors (``k8s.io/apimachinery/pkg/labels``).
- ``shard``: KEP-5866's hash ranges, FNV-1a and ``shardSelector``
  (``k8s.io/apimachinery/pkg/sharding``).
- ``flowcontrol``: the client-side token bucket (``k8s.io/client-go/util/flowcontrol``).
- ``pager``: paged lists (``k8s.io/client-go/tools/pager``).
- ``wait``: exponential backoff (``k8s.io/apimachinery/pkg/util/wait``).
- ``config``: kubeconfig and in-cluster config (``k8s.io/client-go/tools/clientcmd``).
- ``types``: typed aliases for the decoded JSON shapes the layers pass around.

The package imports nothing at import time, so ``import client.labels`` and ``client.shard``
(kubesim's only uses) do not load the transport or the official client.
"""
