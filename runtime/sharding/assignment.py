"""Buckets and who owns them: pure functions, computed alike by every replica.

No client-go twin (see ``runtime.sharding``). timebertt/kubernetes-controller-sharding
assigns objects on a consistent hash ring with 100 virtual nodes per shard; here the unit of
assignment is a bucket rather than an object, so that one design serves both halves of the
read path: a bucket is a contiguous 1/B of the FNV-1a 64 hash space, which is one
``shardRange()`` for the server-side filter (client.shard.bucket_range), and a short decimal
label value for the Deployment's set-based label selector.

A bucket's owner is the live member with the highest rendezvous ("highest random weight")
score, ``fmix64(fnv1a64(f"{member}\\x00{bucket}"))``: adding or removing one of N members
moves only the buckets won or lost by that member, about B/N of them, and no bucket moves
between two members that stayed (tests/runtime/test_sharding.py shows it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from client.shard import HASH_SPACE_END, ShardRange, bucket_range, fnv1a64

__all__ = [
    "BUCKET_LABEL",
    "PREFIX",
    "bucket_of",
    "bucket_of_uid",
    "decode_buckets",
    "encode_buckets",
    "owner_of",
    "assign",
    "ranges_of",
]

# the sharding labels' and annotations' prefix (runtime.sharding.membership has the others)
PREFIX = "sharding.samplecontroller.k8s.io/"
# On each Deployment the controller makes: its owner Foo's bucket, in decimal. Here, with the
# buckets, so that the gate of an unsharded process imports nothing of the membership.
BUCKET_LABEL = PREFIX + "bucket"


def bucket_of_uid(uid: str, count: int) -> int:
    """The bucket of an object whose ``metadata.uid`` is ``uid``: the b with
    ``fnv1a64(uid)`` in ``bucket_range(b, count)``. For a power of two ``count`` it is the
    top log2(count) bits of the hash."""
    return fnv1a64(uid) * count // HASH_SPACE_END


def bucket_of(obj: Mapping[str, Any], count: int) -> int:
    """The bucket of a Foo, by its uid (an owned object goes by its owner's uid instead)."""
    return bucket_of_uid(str((obj.get("metadata") or {}).get("uid") or ""), count)


_MASK64 = (1 << 64) - 1


def _mix64(h: int) -> int:
    """MurmurHash3's 64-bit finaliser (fmix64): spreads every input bit over every output bit.

    FNV-1a alone mixes its last bytes poorly into the high bits, and member names differ in a
    character or two ("replica-a", "replica-b"): without this the scores of such names rank the
    same way in most buckets, and one member may win none."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK64
    h ^= h >> 33
    return h


def _score(member: str, bucket: int) -> int:
    return _mix64(fnv1a64(f"{member}\x00{bucket}"))


def owner_of(bucket: int, members: Iterable[str]) -> str | None:
    """The member that owns ``bucket``: the highest score, ties to the smaller name."""
    best: tuple[int, str] | None = None
    for m in members:
        score = _score(m, bucket)
        if best is None or score > best[0] or (score == best[0] and m < best[1]):
            best = (score, m)
    return None if best is None else best[1]


def assign(members: Collection[str], count: int) -> dict[int, str]:
    """Every bucket's owner among ``members`` (empty when there is none)."""
    if not members:
        return {}
    return {b: owner for b in range(count) if (owner := owner_of(b, members)) is not None}


def encode_buckets(buckets: Iterable[int]) -> str:
    """The claim annotation's compact form: sorted, runs as ranges: ``"0-3,7,9"``."""
    parts: list[str] = []
    ordered = sorted(set(buckets))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def decode_buckets(text: str) -> frozenset[int]:
    """``encode_buckets`` reversed; raises ValueError for anything else."""
    buckets: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        first, sep, last = part.partition("-")
        lo = int(first)
        hi = int(last) if sep else lo
        if lo < 0 or hi < lo:
            raise ValueError(f"bad bucket range {part!r}")
        buckets.update(range(lo, hi + 1))
    return frozenset(buckets)


def ranges_of(buckets: Iterable[int], count: int) -> list[ShardRange]:
    """The buckets as hash ranges, adjacent ones merged (the shortest ``shardSelector``)."""
    merged: list[ShardRange] = []
    for b in sorted(set(buckets)):
        r = bucket_range(b, count)
        if merged and merged[-1].end == r.start:
            merged[-1] = ShardRange(merged[-1].start, r.end, r.field)
        else:
            merged.append(r)
    return merged
