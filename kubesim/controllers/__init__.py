"""Stand-ins for kube-controller-manager: deployment status, namespace and CRD finalizers, GC.

What moves objects forward after an API write on a real cluster, run on one thread of tasks
fed by a storage listener (manager.py), with the garbage collector beside it (gc.py).
"""
