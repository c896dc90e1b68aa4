"""The REST verbs over storage: get, list, watch, create, update, patch, delete, /scale.

Twin of k8s.io/apiserver/pkg/registry/generic/registry (the generic Store) and of the per-kind
strategies in k8s.io/kubernetes/pkg/registry. Every read-check-write happens here: computed
with no lock held (admission webhooks included), stored by a compare-and-swap under the
storage lock (storage/guaranteed.py); the HTTP layer above only decodes, calls and encodes.
"""
