"""The HTTP side: sockets, routing, authentication, content negotiation, the verb handlers.

Twins of k8s.io/apiserver/pkg/server (the handler chain, apiserver.py), pkg/endpoints (request
info, negotiation, handlers, response writers, watch streaming) and of Go's net/http
(httpserver.py). The order inside, top to bottom: apiserver, handlers, watch, responses,
then negotiation, transform and request, then httpserver and tls (pyproject.toml's import
contracts check it).
"""
