"""The canonical state hash: a sum of per-record digests modulo 2^256, so one
record's change updates it in O(1) and any order of updates gives the same hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ._records import Block, Group, record_digest

__all__ = ["HASH_MOD", "Digests", "record_hash", "state_hash_of", "accumulate"]

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


class Digests:
    """Each record's digest in the accumulator, to take out when the record
    changes: a block's as 32 bytes at its position in one flat column (zero
    bytes before its first digest, the same as no digest: nothing to take
    out), a group's in a dict. A block costs 32 bytes here, not an int object
    and a dict entry."""

    __slots__ = ("_col", "_groups")

    def __init__(self) -> None:
        self._col = bytearray()
        self._groups: dict[str, int] = {}

    def swap(self, rec: Block | Group, new: int) -> int:
        """Record ``new`` as ``rec``'s digest; return the one it replaces (0 if none)."""
        if isinstance(rec, Block):
            col, i = self._col, (rec.seq - 1) * 32
            if len(col) < i + 32:
                col.extend(bytes(i + 32 - len(col)))
            old = int.from_bytes(col[i : i + 32], "big")
            col[i : i + 32] = new.to_bytes(32, "big")
            return old
        old = self._groups.get(rec.id, 0)
        self._groups[rec.id] = new
        return old

    def pop_group(self, gid: str) -> int:
        """Forget group ``gid``'s digest and return it."""
        return self._groups.pop(gid)

    def copy(self) -> Digests:
        """An independent copy."""
        new = Digests.__new__(Digests)
        new._col, new._groups = self._col[:], self._groups.copy()
        return new
