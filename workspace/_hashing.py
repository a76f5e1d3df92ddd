"""The canonical state hash: a sum of per-record digests modulo 2^256, so one
record's change updates it in O(1) and any order of updates gives the same hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from ._records import _RARE_DEFAULTS, _RARE_GET, Block, BlockType, Group, Status, record_digest

__all__ = ["HASH_MOD", "Digests", "record_hash", "state_hash_of", "accumulate"]

HASH_MOD = 1 << 256
_DOMAIN = b"vista-workspace-v1\0"


def record_hash(rec: Block | Group) -> int:
    """The digest a record adds to the accumulator (a block's content is not in
    it: its ``sha256`` is)."""
    if type(rec) is Block:
        text = _block_json(rec)
        if text is not None:
            return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest(), "big")
    plain = rec.to_plain(with_content=False) if isinstance(rec, Block) else rec.to_plain()
    return record_digest(plain)


_esc = json.encoder.encode_basestring_ascii  # a StrEnum member is written as its value
_INT, _STR, _OPT = {int}, {str}, {str, type(None)}
#: The keys of ``Block.to_plain(with_content=False)``, sorted as the canonical
#: JSON writes them (``property_tests/test_workspace_record_json.py`` checks
#: :func:`_block_json` against ``canonical_json`` of ``to_plain``).
#: Each status and block type as :func:`_esc` writes it.
_ESC_ENUM: dict[Status | BlockType, str] = {m: _esc(m) for e in (Status, BlockType) for m in e}
_BLOCK_KEYS = (
    "call_ids call_names group id kind level name parent payload reason rejected "
    "replacement role seq sha256 size status tool_call_id turn type"
).split()


def _block_json(b: Block) -> str | None:
    """``canonical_json(b.to_plain(with_content=False))``, written directly for a
    block whose fields have their plain types (every block the engine makes),
    else None (the caller encodes the plain data). Each field is read once
    (the rare four in one read of the slot that holds them; see ``_Rare``),
    then checked and written."""
    rare = _RARE_GET(b)
    p, rep, rej, reason = _RARE_DEFAULTS if rare is None else rare
    seq, turn, level, size = b.seq, b.turn, b.level, b.size
    bid, role, sha = b.id, b.role, b.sha256
    cids, names = b.call_ids, b.call_names
    g, n, par, cid = b.group, b.name, b.parent, b.tool_call_id
    status, btype = b.status, b.type
    # The type checks run in C (a set of the fields' types).
    if (
        set(map(type, (seq, turn, level, size))) != _INT
        or set(map(type, (bid, role, sha, rep, reason))) != _STR
        or not set(map(type, cids + names)) <= _STR
        or not set(map(type, (g, n, par, cid))) <= _OPT
        or type(rej) is not bool
        or type(status) is not Status
        or type(btype) is not BlockType
        or (p is not None and (type(p.key), type(p.size), type(p.sha256)) != (str, int, str))
    ):
        return None
    group = "null" if g is None else _esc(g)
    name = "null" if n is None else _esc(n)
    parent = "null" if par is None else _esc(par)
    call_id = "null" if cid is None else _esc(cid)
    payload = "null" if p is None else f"[{_esc(p.key)},{p.size!r},{_esc(p.sha256)}]"
    return (
        f'{{"call_ids":[{",".join(map(_esc, cids))}],'
        f'"call_names":[{",".join(map(_esc, names))}],'
        f'"group":{group},"id":{_esc(bid)},"kind":"block","level":{level!r},'
        f'"name":{name},"parent":{parent},"payload":{payload},'
        f'"reason":{_esc(reason)},"rejected":{"true" if rej else "false"},'
        f'"replacement":{_esc(rep)},"role":{_esc(role)},"seq":{seq!r},'
        f'"sha256":{_esc(sha)},"size":{size!r},"status":{_ESC_ENUM[status]},'
        f'"tool_call_id":{call_id},"turn":{turn!r},"type":{_ESC_ENUM[btype]}}}'
    )


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
