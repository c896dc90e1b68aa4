"""Content types in and out: decode request bodies, pick the response format from Accept.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/negotiation (``NegotiateInputSerializer`` and
``NegotiateOutputMediaType``). kubesim speaks JSON and YAML, and renders meta.k8s.io Tables
(``Accept: application/json;as=Table``) for kubectl get; any other ``as=`` (such as
PartialObjectMetadata) is not served, so the client's next choice is tried.
"""

from __future__ import annotations

import json
from typing import Any

from . import errors
from .httpserver import ConnectionHandler

__all__ = ["decode_body", "negotiate"]


def decode_body(h: ConnectionHandler, body: bytes) -> Any:
    """The request body as JSON or YAML by Content-Type (400 if undecodable, 415 if other)."""
    ctype = (h.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
    try:
        if ctype in ("application/json", "*/*", ""):
            return json.loads(body or b"{}")
        if ctype in ("application/yaml", "application/x-yaml", "text/yaml"):
            import yaml

            return yaml.safe_load(body) or {}
    except (ValueError, Exception) as e:  # noqa: BLE001 - any decode error is a 400
        raise errors.bad_request(f"error decoding request body: {e}") from None
    raise errors.unsupported_media_type(ctype)


def negotiate(h: ConnectionHandler, tables: bool) -> str:
    """ "json", "yaml" or "table" from the Accept header; 406 when none is acceptable.

    tables: whether Table responses can be rendered (the server has a table renderer).
    """
    accept = h.headers.get("Accept")
    if not accept:
        return "json"
    for item in accept.split(","):
        mt, *params = [p.strip() for p in item.split(";")]
        mt = mt.lower()
        pmap = dict(p.split("=", 1) for p in params if "=" in p)
        if pmap.get("as") == "Table":
            if mt in ("application/json", "*/*") and tables:
                return "table"
            continue
        if pmap.get("as"):
            continue  # PartialObjectMetadata etc.: not served, try the next option
        if mt in ("application/json", "application/*", "*/*", "application/json-seq"):
            return "json"
        if mt in ("application/yaml",):
            return "yaml"
    raise errors.not_acceptable(accept)
