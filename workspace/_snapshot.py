"""Saved-state documents: the fields a snapshot must have, checked one by one
before anything is built from it, so a damaged or edited file gets one error
naming the record and the problem (never a KeyError or an assertion later)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._errors import SnapshotError
from ._records import Block, BlockType, Group, Status, block_payload_bytes
from ._store import sha256_hex

__all__ = ["SNAPSHOT_FORMAT", "SNAPSHOT_VERSION", "check_snapshot", "content_problem"]

SNAPSHOT_FORMAT = "vista-workspace"
SNAPSHOT_VERSION = 1
_SHA = re.compile(r"[0-9a-f]{64}\Z")
_BID = re.compile(r"B[1-9][0-9]*\Z")
_GID = re.compile(r"G[1-9][0-9]*\Z")

_TOP: dict[str, Any] = {
    "config": dict,
    "turn": int,
    "group_seq": int,
    "user_seen": bool,
    "pending": dict,
    "answered": dict,
    "blocks": list,
    "groups": list,
    "event_count": int,
    "state_hash": str,
}
_BLOCK: dict[str, Any] = {
    "id": str,
    "seq": int,
    "type": str,
    "role": str,
    "turn": int,
    "parent": (str, type(None)),
    "status": str,
    "group": (str, type(None)),
    "level": int,
    "call_ids": list,
    "call_names": list,
    "tool_call_id": (str, type(None)),
    "name": (str, type(None)),
    "size": int,
    "sha256": str,
    "payload": (list, type(None)),
    "replacement": str,
    "rejected": bool,
    "reason": str,
    "content": (str, type(None)),
    "tool_calls": (list, type(None)),
    "tokens": int,
}
_GROUP: dict[str, Any] = {
    "id": str,
    "members": list,
    "level": int,
    "payload": list,
    "replacement": str,
    "parent": (str, type(None)),
}
_CONFIG: dict[str, Any] = {
    "budget": int,
    "hard_limit": int,
    "tokenizer": str,
    "task_tools": list,
    "protocol": bool,
    "dashboard": dict,
    "store_root": str,
}


def _fields(path: str, where: str, d: Any, spec: Mapping[str, Any]) -> None:
    if not isinstance(d, Mapping):
        raise SnapshotError(path, where, f"must be an object, got {type(d).__name__}")
    for key, types in spec.items():
        if key not in d:
            raise SnapshotError(path, where, f"lacks the field {key!r}")
        value = d[key]
        bad_bool = types is int and isinstance(value, bool)
        if bad_bool or not isinstance(value, types):
            raise SnapshotError(path, where, f"field {key!r} has a bad value {value!r:.60}")
        if types is int and value < 0:
            raise SnapshotError(path, where, f"field {key!r} must be >= 0 (got {value})")


def content_problem(b: Block) -> str:
    """Why a block's in-prompt content does not match its record, or ''."""
    if not b.in_prompt:
        return ""
    if b.content is None and b.type is not BlockType.TOOL_CALL:
        return "is in the prompt but has no content"
    data = block_payload_bytes(b.type, b.content, b.tool_calls)
    if len(data) != b.size or sha256_hex(data) != b.sha256:
        return "has content that does not match its recorded size and sha256 (edited?)"
    return ""


def check_snapshot(path: str, doc: Any) -> tuple[list[Block], list[Group]]:
    """Check every field and cross-reference of a snapshot; the records.

    Content hashes are not checked here (see :func:`content_problem`), so a
    salvage can list them as losses.

    Raises
    ------
    SnapshotError
        Naming the first bad record and its problem.
    """
    if not isinstance(doc, Mapping) or doc.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(path, "the file", "is not a vista-workspace snapshot")
    version = doc.get("version")
    if version != SNAPSHOT_VERSION:
        raise SnapshotError(
            path,
            "the file",
            f"has version {version!r}; this engine reads version {SNAPSHOT_VERSION}",
            "load it with the vista-lab release that wrote it",
        )
    _fields(path, "the file", doc, _TOP)
    _fields(path, "the config", doc["config"], _CONFIG)
    blocks: list[Block] = []
    for i, d in enumerate(doc["blocks"]):
        where = f"block {i + 1}"
        _fields(path, where, d, _BLOCK)
        if d["id"] != f"B{i + 1}" or d["seq"] != i + 1:
            raise SnapshotError(
                path, where, f"has id {d['id']!r} / seq {d['seq']}; expected B{i + 1}"
            )
        where = f"block {d['id']}"
        try:
            b = Block.from_plain(dict(d))
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise SnapshotError(path, where, f"has a bad field ({exc})") from None
        if b.payload is not None and (
            not _SHA.match(b.payload.sha256) or b.payload.key != f"{b.id}.txt"
        ):
            raise SnapshotError(path, where, "has a malformed payload reference")
        if b.status is Status.DELETED and (b.content is not None or b.payload is not None):
            raise SnapshotError(path, where, "is deleted but still has content or a payload")
        if not b.in_prompt and b.status is not Status.DELETED and b.group is None:
            if b.payload is None:
                raise SnapshotError(path, where, f"is {b.status.value} without a payload")
        if b.status is not Status.DELETED and not _SHA.match(b.sha256):
            raise SnapshotError(path, where, "has a malformed sha256")
        if b.turn > doc["turn"]:
            raise SnapshotError(path, where, f"has turn {b.turn} > the workspace's {doc['turn']}")
        blocks.append(b)
    n = len(blocks)
    for b in blocks:
        where = f"block {b.id}"
        if b.type is BlockType.TOOL_RESULT:
            p = b.parent
            if p is None or not _BID.match(p) or int(p[1:]) >= b.seq:
                raise SnapshotError(path, where, f"has a bad parent {p!r}")
            parent = blocks[int(p[1:]) - 1]
            if parent.type is not BlockType.TOOL_CALL or b.tool_call_id not in parent.call_ids:
                raise SnapshotError(path, where, f"does not answer a call of {p}")
        elif b.parent is not None:
            raise SnapshotError(path, where, "has a parent but is not a tool result")
        if b.type is BlockType.TOOL_CALL and (
            len(b.call_ids) != len(b.call_names) or not b.call_ids
        ):
            raise SnapshotError(path, where, "has mismatched call ids and names")
    groups: list[Group] = []
    gids: set[str] = set()
    for i, d in enumerate(doc["groups"]):
        where = f"group {i + 1} of the list"
        _fields(path, where, d, _GROUP)
        try:
            g = Group.from_plain(dict(d))
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise SnapshotError(path, where, f"has a bad field ({exc})") from None
        where = f"group {g.id}"
        if not _GID.match(g.id) or int(g.id[1:]) > doc["group_seq"] or g.id in gids:
            raise SnapshotError(path, where, "has a bad or repeated ID")
        if g.payload.key != f"{g.id}.txt" or not _SHA.match(g.payload.sha256) or g.level < 1:
            raise SnapshotError(path, where, "has a malformed payload reference or level")
        gids.add(g.id)
        groups.append(g)
    by_id = {g.id: g for g in groups}
    for g in groups:
        where = f"group {g.id}"
        if g.parent is not None and (g.parent not in by_id or g.id not in by_id[g.parent].members):
            raise SnapshotError(path, where, f"names parent {g.parent!r}, which does not hold it")
        if len(g.members) < 1:
            raise SnapshotError(path, where, "has no members")
        for m in g.members:
            if isinstance(m, str) and _BID.match(m) and int(m[1:]) <= n:
                if blocks[int(m[1:]) - 1].group != g.id:
                    raise SnapshotError(path, where, f"lists {m}, whose record names another group")
            elif not (isinstance(m, str) and m in by_id and by_id[m].parent == g.id):
                raise SnapshotError(path, where, f"has a bad member {m!r}")
    for b in blocks:
        if b.group is not None and (b.group not in by_id or b.id not in by_id[b.group].members):
            raise SnapshotError(
                path, f"block {b.id}", f"names group {b.group!r}, which does not hold it"
            )
    for name in ("pending", "answered"):
        for cid, bid in doc[name].items():
            if not isinstance(bid, str) or not _BID.match(bid) or int(bid[1:]) > n:
                raise SnapshotError(path, f"field {name!r}", f"maps {cid!r} to a bad block {bid!r}")
    return blocks, groups
