"""Protobuf for kubesim: the wire form kube-apiserver and kubectl use for built-in kinds.

The twin of k8s.io/apimachinery/pkg/runtime/serializer/protobuf. Content type
``application/vnd.kubernetes.protobuf``; a body is ``k8s\\x00`` + ``runtime.Unknown``
wrapping the object's message (see :mod:`kubesim.protobuf.codec`). The message tables are
generated from the Go struct tags of k8s.io/api (see :mod:`kubesim.protobuf.schema`).

- :func:`decode` / :func:`encode`: body bytes to and from the JSON object.
- :func:`has_schema`: whether a kind has a protobuf form; custom resources do not.
- :func:`encode_watch_event` / :func:`iter_watch_events`: the length-prefixed frames of a
  ``;stream=watch`` response.
"""

from kubesim.protobuf.codec import (
    CONTENT_TYPE,
    MAGIC,
    WATCH_CONTENT_TYPE,
    UnsupportedKindError,
    decode,
    decode_watch_event,
    encode,
    encode_watch_event,
    iter_watch_events,
)
from kubesim.protobuf.kinds import has_schema, message_for
from kubesim.protobuf.wire import ProtobufError

__all__ = [
    "CONTENT_TYPE",
    "MAGIC",
    "WATCH_CONTENT_TYPE",
    "ProtobufError",
    "UnsupportedKindError",
    "decode",
    "decode_watch_event",
    "encode",
    "encode_watch_event",
    "has_schema",
    "iter_watch_events",
    "message_for",
]
