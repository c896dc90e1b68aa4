"""Authentication and authorization, as kube-apiserver's handler chain does them.

Its subpackage twin is the part of k8s.io/apiserver and k8s.io/kubernetes a request passes
through before any handler runs: the authenticators (a static token, ServiceAccount tokens,
anonymous), the request-info resolver, the authorizers (system:masters, RBAC or AlwaysAllow),
and the review APIs that ask them (TokenRequest, TokenReview, the access reviews).
``filters.Auth`` is what the HTTP server calls; see kubesim/README.md.
"""
