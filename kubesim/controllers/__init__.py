"""Stand-ins for kube-controller-manager and a node: deployment status or the workload chain
(Deployments, ReplicaSets, Pods, ServiceAccounts), namespace and CRD finalizers, GC, and the
simulated node's scheduler and kubelet.

What moves objects forward after an API write on a real cluster, run on one thread of tasks
fed by a storage listener (manager.py), with the other controllers beside it.
"""
