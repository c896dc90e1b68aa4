"""Content types in and out: decode request bodies, pick the response format from Accept.

Twin of k8s.io/apiserver/pkg/endpoints/handlers/negotiation (``NegotiateOutputMediaType``,
``NegotiateOutputMediaTypeStream``, ``NegotiateInputSerializer``, ``isPrettyPrint``) with the
vendored goautoneg's Accept parsing, and of ``RequestScope.AllowsMediaTypeTransform``
(handlers/rest.go), which decides what an endpoint may answer:

- the serializers, in the server's order of preference: JSON, YAML, protobuf
  (``application/vnd.kubernetes.protobuf``). Custom resources have no protobuf form; their
  endpoints restrict un-transformed answers to JSON and YAML (the CRD handler's
  ``StandardSerializers``), so ``Accept: protobuf,json`` gets JSON and protobuf alone 406;
- the transforms ``as=Table`` (JSON or YAML only, where a table renderer exists) and
  ``as=PartialObjectMetadata`` / ``PartialObjectMetadataList`` (any serializer, custom
  resources included), each in ``g=meta.k8s.io`` with ``v=v1`` or ``v=v1beta1``;
- ``pretty``: ``?pretty=true``, ``pretty=1`` in the Accept clause, or a curl, Wget or browser
  User-Agent asks for indented JSON.

Request bodies are JSON, YAML or protobuf (see :mod:`kubesim.protobuf`); a protobuf body
decodes to exactly the JSON object a JSON client sends for the same object.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qs

from kubesim import protobuf
from kubesim.api import duplicates, errors
from kubesim.api.resources import ResourceInfo
from kubesim.server.httpserver import ConnectionHandler

__all__ = [
    "DEFAULT_ENDPOINT",
    "JSON",
    "PROTOBUF",
    "YAML",
    "Endpoint",
    "MediaType",
    "decode_body",
    "endpoint_for",
    "negotiate",
    "negotiate_error",
    "negotiate_stream",
]

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = protobuf.CONTENT_TYPE
# The server's serializers in preference order (the first answers a request without Accept),
# and whether each has a stream form for watches.
_SERIALIZERS = ((JSON, True), (YAML, False), (PROTOBUF, True))
_META_VERSIONS = ("v1", "v1beta1")  # meta.k8s.io versions that Table and PartialObjectMetadata have
PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
TABLE = "Table"


@dataclass(frozen=True)
class MediaType:
    """The negotiated answer format: a serializer, an optional transform, and prettiness."""

    media_type: str  # JSON, YAML or PROTOBUF
    convert: str = ""  # "", "Table", "PartialObjectMetadata" or "PartialObjectMetadataList"
    convert_version: str = ""  # meta.k8s.io version of the transform ("v1" or "v1beta1")
    pretty: bool = False  # indented JSON (only JSON has a pretty serializer)

    @property
    def convert_api_version(self) -> str:
        return f"meta.k8s.io/{self.convert_version}"


@dataclass(frozen=True)
class Endpoint:
    """What one endpoint may answer (RequestScope.AllowsMediaTypeTransform and friends).

    standard: media types allowed without a transform; None allows every serializer.
    tables: Table transforms are served (the endpoint has a table convertor).
    partial_metadata: PartialObjectMetadata(List) transforms are served.
    server_version: ``sv=v1`` is accepted (resource scopes; not the error writer's).
    """

    standard: frozenset[str] | None = None
    tables: bool = False
    partial_metadata: bool = False
    server_version: bool = False

    def allows(self, media_type: str, kind: str, group: str, version: str) -> bool:
        if not (kind or group or version):
            return self.standard is None or media_type in self.standard
        if group != "meta.k8s.io" or version not in _META_VERSIONS:
            return False
        if kind == TABLE:
            return self.tables and media_type in (JSON, YAML)
        if kind in (PARTIAL, PARTIAL_LIST):
            return self.partial_metadata
        return False


# negotiation.DefaultEndpointRestrictions: what errors (Status) are written with.
DEFAULT_ENDPOINT = Endpoint()


def endpoint_for(info: ResourceInfo, tables: bool, transforms: bool = True) -> Endpoint:
    """The restrictions of a resource endpoint (transforms=False: /scale and other subresources
    kubesim serves without Table or metadata views)."""
    protobuf_ok = not info.custom and protobuf.has_schema(info.group_version, info.kind)
    return _ENDPOINTS[(protobuf_ok, tables and transforms, transforms)]


_ENDPOINTS = {
    (protobuf_ok, tables, transforms): Endpoint(
        None if protobuf_ok else frozenset((JSON, YAML)), tables, transforms, True
    )
    for protobuf_ok in (True, False)
    for tables in (True, False)
    for transforms in (True, False)
}


# ---- Accept -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clause:
    """One Accept entry as goautoneg parses it."""

    type: str
    subtype: str
    q: float
    params: tuple[tuple[str, str], ...]

    def matches(self, media_type: str) -> int:
        """2 exact, 1 type/*, 0 */*, -1 no match (negotiation's clauseSpecificity)."""
        mtype, _, subtype = media_type.partition("/")
        if self.type == mtype and self.subtype == subtype:
            return 2
        if self.type == mtype and self.subtype == "*":
            return 1
        if self.type == "*" and self.subtype == "*":
            return 0
        return -1


def _parse_q(text: str) -> float:
    """strconv.ParseFloat as goautoneg calls it: anything unparsable is 0."""
    if not text or text != text.strip() or "_" in text:
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def parse_accept(header: str) -> list[_Clause]:
    """goautoneg.ParseAccept: clauses sorted by quality, then specificity (its own order)."""
    clauses: list[_Clause] = []
    for raw in header.split(","):
        part = raw.strip(" ")
        media, _, params_text = part.partition(";")
        mtype, _, rest = media.partition("/")
        mtype = mtype.strip(" ")
        if not rest:
            if mtype != "*":
                continue
            subtype = "*"
        else:
            if "/" in rest:
                continue
            subtype = rest.strip(" ")
        q = 1.0
        params: list[tuple[str, str]] = []
        if params_text:
            for p in params_text.split(";"):
                key, _, value_rest = p.partition("=")
                if not value_rest:
                    continue
                value, _, extra = value_rest.partition("=")
                if extra:
                    continue
                key = key.strip(" ")
                if key == "q":
                    q = _parse_q(value)
                else:
                    params.append((key, value.strip(" ")))
        clauses.append(_Clause(mtype, subtype, q, tuple(params)))
    # Go's sort.Sort is an insertion sort for short slices; goautoneg's Less is not a strict
    # order, so the same insertion sort is what gives the same result.
    for i in range(1, len(clauses)):
        j = i
        while j > 0 and _less(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return clauses


def _less(a: _Clause, b: _Clause) -> bool:
    if a.q > b.q:
        return True
    if a.type != "*" and b.type == "*":
        return True
    return a.subtype != "*" and b.subtype == "*"


def _options(
    clause: _Clause, media_type: str, streams: bool, endpoint: Endpoint
) -> MediaType | None:
    """acceptMediaTypeOptions: the clause's parameters, or None when the endpoint refuses them."""
    kind = group = version = ""
    pretty = False
    for key, value in clause.params:
        if key == "as":
            kind = value
        elif key == "g":
            group = value
        elif key == "v":
            version = value
        elif key == "stream":
            if value and (not streams or value != "watch"):
                return None
        elif key == "sv":
            if value and not (endpoint.server_version and value == "v1"):
                return None
        elif key == "pretty":
            pretty = value == "1"
    if not endpoint.allows(media_type, kind, group, version):
        return None
    if kind or group or version:
        return MediaType(media_type, kind, version, pretty)
    return MediaType(media_type, pretty=pretty)


@lru_cache(maxsize=512)
def _negotiate(header: str, endpoint: Endpoint) -> tuple[MediaType, bool] | None:
    """NegotiateMediaTypeOptions: the first acceptable (clause, serializer), and whether that
    serializer streams; None when nothing is acceptable. Clients send a handful of distinct
    Accept headers, so the answers are cached (the result depends on nothing else)."""
    if not header:
        return MediaType(JSON), True
    clauses = parse_accept(header)
    # A serializer is rejected when its most specific matching clause has q=0 (RFC 9110).
    rejected = set()
    for media_type, _ in _SERIALIZERS:
        best = -1
        for c in clauses:
            spec = c.matches(media_type)
            if spec > best:
                best = spec
                if c.q <= 0:
                    rejected.add(media_type)
                else:
                    rejected.discard(media_type)
    for clause in clauses:
        if clause.q <= 0:
            continue
        for media_type, streams in _SERIALIZERS:
            if media_type in rejected or clause.matches(media_type) < 0:
                continue
            options = _options(clause, media_type, streams, endpoint)
            if options is not None:
                return options, streams
    return None


def is_pretty_print(h: ConnectionHandler) -> bool:
    """negotiation.isPrettyPrint: ?pretty=<bool>, else a human client's User-Agent."""
    qs = h.path.partition("?")[2]
    if "pretty" in qs:
        values = parse_qs(qs, keep_blank_values=True).get("pretty")
        if values and values[0]:
            return values[0] in ("1", "t", "T", "TRUE", "true", "True")
    agent = h.headers.get("User-Agent") or ""
    return agent.startswith(("curl", "Wget", "Mozilla/5.0"))


def _with_pretty(h: ConnectionHandler, mt: MediaType) -> MediaType:
    if mt.media_type != JSON or mt.pretty:
        return mt
    if is_pretty_print(h):
        return MediaType(mt.media_type, mt.convert, mt.convert_version, True)
    return mt


def negotiate(h: ConnectionHandler, endpoint: Endpoint) -> MediaType:
    """NegotiateOutputMediaType: the answer format from Accept, or 406 NotAcceptable."""
    found = _negotiate(h.headers.get("Accept") or "", endpoint)
    if found is None:
        raise not_acceptable([mt for mt, _ in _SERIALIZERS])
    return _with_pretty(h, found[0])


def negotiate_stream(h: ConnectionHandler, endpoint: Endpoint) -> MediaType:
    """A watch's format: negotiated as for a GET, then it must be a streaming serializer
    (NegotiateOutputMediaTypeStream): a YAML watch is 406. Watches are never pretty."""
    found = _negotiate(h.headers.get("Accept") or "", endpoint)
    if found is None or not found[1]:
        raise not_acceptable([f"{mt};stream=watch" for mt, streams in _SERIALIZERS if streams])
    mt = found[0]
    return MediaType(mt.media_type, mt.convert, mt.convert_version) if mt.pretty else mt


def negotiate_error(h: ConnectionHandler) -> MediaType | None:
    """How a Status is written (ErrorNegotiated: default restrictions, so no transforms);
    None when the Accept header allows none of the serializers (the caller writes raw JSON)."""
    found = _negotiate(h.headers.get("Accept") or "", DEFAULT_ENDPOINT)
    return None if found is None else _with_pretty(h, found[0])


def not_acceptable(accepted: list[str]) -> errors.ApiError:
    """negotiation.errNotAcceptable as a 406 Status."""
    msg = f"only the following media types are accepted: {', '.join(accepted)}"
    return errors.ApiError(406, errors.status(406, "NotAcceptable", msg))


# ---- request bodies -----------------------------------------------------------------------------


def decode_body(h: ConnectionHandler, body: bytes, info: ResourceInfo | None = None) -> Any:
    """The request body as JSON, YAML or protobuf by Content-Type (400 if undecodable, 415 if
    other). info names the expected kind in protobuf decode errors."""
    ctype = (h.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
    if ctype == PROTOBUF:
        return _decode_protobuf(body, info)
    if not body and info is not None and ctype in ("application/json", "*/*", ""):
        # an object's body (create, update) cannot be empty: the JSON serializer's error, as
        # transformDecodeError words it; optional bodies (DeleteOptions) pass no info
        raise errors.unrecognized_body(info.kind, body)
    try:
        if ctype in ("application/json", "*/*", ""):
            # (the strict decoder's duplicate keys are kept for field validation)
            return duplicates.loads(body or b"{}")
        if ctype in ("application/yaml", "application/x-yaml", "text/yaml"):
            import yaml

            return yaml.safe_load(body) or {}
    # any exception: every decode error is a 400
    except (ValueError, Exception) as e:
        raise errors.bad_request(f"error decoding request body: {e}") from None
    # a body in a format no serializer reads
    raise errors.unsupported_media_type([mt for mt, _ in _SERIALIZERS])


def _decode_protobuf(body: bytes, info: ResourceInfo | None) -> dict:
    """protobuf.Serializer.Decode plus the handler's transformDecodeError wording."""
    expected = info.kind if info is not None else "DeleteOptions"
    if not body:
        raise _unrecognized(expected, "empty data", body)
    if not body.startswith(protobuf.MAGIC):
        prefix = "[" + " ".join(str(b) for b in protobuf.MAGIC) + "]"
        msg = f"provided data does not appear to be a protobuf message, expected prefix {prefix}"
        raise _unrecognized(expected, msg, body)
    if len(body) == len(protobuf.MAGIC):
        raise _unrecognized(expected, "empty body", body)
    try:
        obj = protobuf.decode(body)
    except protobuf.UnsupportedKindError as e:
        if info is not None and not info.custom and e.kind == info.kind:
            # A built-in kind kubesim has no protobuf schema for (the real server reads it).
            raise errors.ApiError(
                415,
                errors.status(
                    415,
                    "UnsupportedMediaType",
                    f"kubesim has no protobuf schema for {e.api_version} {e.kind}; send JSON",
                ),
            ) from None
        raise _not_handled(e.kind, e.api_version, expected, info) from None
    except protobuf.ProtobufError as e:
        raise _unrecognized(expected, str(e), body) from None
    if info is not None and info.custom:
        # A kind with a schema (say a Namespace) sent to a custom resource's endpoint: the
        # decode into the endpoint's unstructured type fails as for the resource's own kind.
        raise _not_handled(str(obj.get("kind")), str(obj.get("apiVersion") or ""), expected, info)
    return obj


def _not_handled(
    kind: str, api_version: str, expected: str, info: ResourceInfo | None
) -> errors.ApiError:
    """transformDecodeError with the body's kind: why its message cannot be read."""
    if info is not None and info.custom:
        why = (
            "object *unstructured.Unstructured does not implement the protobuf marshalling "
            "interface and cannot be encoded to a protobuf message"
        )
    else:
        why = f'no kind "{kind}" is registered for version "{api_version}"'
    version = api_version.rpartition("/")[2]
    return errors.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {expected}: {why}'
    )


def _unrecognized(kind: str, why: str, body: bytes) -> errors.ApiError:
    """transformDecodeError without a kind: the message names the expected type and the data."""
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {why} "
        f"({_summarize(body, 30)})"
    )


def _summarize(data: bytes, max_length: int) -> str:
    """handlers.summarizeData: JSON-looking data as text, anything else as hex."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data.decode("utf-8", errors="replace")
        return text[:max_length] + " ..." if len(data) > max_length else text
    if len(data) > max_length:
        return data[:max_length].hex() + " ..."
    return data.hex()
