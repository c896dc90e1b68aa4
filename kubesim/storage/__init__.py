"""kubesim's etcd and watch cache: objects, one resourceVersion counter, history, watchers.

The bottom layer (k8s.io/apiserver/pkg/storage: etcd3 and cacher). It knows nothing of
kinds, versions or HTTP: it stores encoded objects by key and hands events to watchers.
"""
