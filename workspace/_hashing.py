"""The canonical state hash: a sum of per-record digests modulo 2^256, so one
record's change updates it in O(1) and any order of updates gives the same hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ._records import Block, Group, record_digest

__all__ = ["HASH_MOD", "record_hash", "state_hash_of", "accumulate"]

HASH_MOD = 1 << 256
_DOMAIN = b"vista-workspace-v1\0"


def record_hash(rec: Block | Group) -> int:
    """The digest a record adds to the accumulator (a block's content is not in
    it: its ``sha256`` is)."""
    plain = rec.to_plain(with_content=False) if isinstance(rec, Block) else rec.to_plain()
    return record_digest(plain)


def accumulate(records: Iterable[Block | Group]) -> int:
    """The accumulator of these records, computed from scratch."""
    acc = 0
    for rec in records:
        acc = (acc + record_hash(rec)) % HASH_MOD
    return acc


def state_hash_of(config_digest: int, turn: int, acc: int) -> str:
    """Hex sha256 of (config, turn, record accumulator): the canonical W_t hash."""
    h = hashlib.sha256(_DOMAIN)
    h.update(config_digest.to_bytes(32, "big"))
    h.update(turn.to_bytes(8, "big"))
    h.update(acc.to_bytes(32, "big"))
    return h.hexdigest()
