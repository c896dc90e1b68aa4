"""What kubectl reads besides objects: server-side Tables and the /openapi/v3 documents.

Twins of kube-apiserver's table convertors (pkg/printers, pkg/registry/rest/table.go,
apiextensions' printer columns) and of kube-openapi's handler3 with the documents it serves.
The controller never asks for these; ``kubectl get`` and ``kubectl explain`` do.
"""
