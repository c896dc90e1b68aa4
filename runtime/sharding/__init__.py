"""Sharding: the Foos split across replicas that all work, on Leases and label selectors.

No client-go twin: client-go, sample-controller and controller-runtime have no sharding
(controller-runtime #2576, "dynamic controller scaling", is open). The anchor is the external
project timebertt/kubernetes-controller-sharding (a Lease per replica, labelled with its ring;
objects assigned by consistent hashing; a handover through a drain step), and KEP-5866
("Sharded List and Watch", alpha in v1.36), whose ``shardSelector`` lets the API server filter
lists and watches by the FNV-1a 64 hash of ``metadata.uid``. This package exists because a
Python process is bound to about one core: the answer to "more Foos than one replica handles" is
the Kubernetes machinery itself, not a coordinator of our own.

The parts, each in its module:

- ``assignment``: pure functions. B buckets, each a contiguous 1/B of the hash space; a bucket's
  owner by rendezvous hashing over the live members; the claim annotation's compact form;
- ``membership``: the replica's own Lease (create, renew, claim, release) and the ring's
  members as the Lease watch shows them, live by the locally observed time of their renewals;
- ``scope``: what each informer lists and watches (a ``shardSelector`` for Foos, a set-based
  label selector for Deployments) and the client-side filter for servers without the gate;
- ``sharder``: the loop that ties them together: it renews, computes the assignment, hands
  buckets over and takes them, re-scopes the informers, and gates the reconcile
  (``ActingGate``) so that no Foo is ever reconciled by two replicas at once.

docs/sharding.md tells the whole story, with the handover as a sequence diagram.
"""
