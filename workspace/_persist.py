"""Persistence: save and load a workspace (crash-safe, verified), and rebuild
one by replaying its event log; one constructor from recorded configuration."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Self

from ._dashboard import DashboardConfig
from ._errors import (
    ReplayMismatchError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import Event, read_event_log
from ._fork import ForkLayer
from ._records import (
    Block,
    BlockType,
    Group,
    Status,
)
from ._state import locked
from ._store import MemoryStore, PayloadStore, atomic_write
from ._tokenizers import Tokenizer

__all__ = ["PersistLayer", "SNAPSHOT_FORMAT", "SNAPSHOT_VERSION"]

SNAPSHOT_FORMAT = "vista-workspace"
SNAPSHOT_VERSION = 1


class PersistLayer(ForkLayer):
    """Snapshots and event-log replay."""

    @classmethod
    def _from_config(
        cls,
        cfg: Mapping[str, Any],
        *,
        store: PayloadStore | None,
        tokenizer: Tokenizer | None = None,
        log_path: str | os.PathLike[str] | None = None,
    ) -> Self:
        """The one constructor from recorded configuration (``config()``), used by
        ``replay`` and ``load``."""
        return cls(
            cfg["budget"],
            tokenizer=tokenizer if tokenizer is not None else cfg["tokenizer"],
            store=store,
            hard_limit=cfg["hard_limit"],
            task_tools=cfg["task_tools"],
            protocol=cfg["protocol"],
            dashboard=DashboardConfig(**cfg["dashboard"]),
            include_read_path_tool=cfg.get("include_read_path_tool", False),
            log_path=log_path,
            cache_prefix=cfg.get("cache_prefix", True),
        )

    @classmethod
    def replay(
        cls,
        events: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        verify: bool = True,
    ) -> Self:
        """Rebuild a workspace by re-executing an event log.

        The ``init`` event gives the configuration; by default payloads go to
        a fresh in-memory store with the recorded root, so handles (and hence
        token counts) are identical. With ``verify`` every event's resulting
        hash and outcome must match the log.

        Raises
        ------
        ReplayMismatchError
            At the first event whose hash differs.
        """
        it = iter(read_event_log(events))
        first = next(it, None)
        if first is None or first.op != "init":
            raise WorkspaceArgumentError(
                "events", "log", "must start with an init event", "pass a log written by Workspace"
            )
        cfg = dict(first.args["config"])
        root = cfg.get("store_root", "mem://archive")
        ws = cls._from_config(
            cfg, store=store if store is not None else MemoryStore(root), tokenizer=tokenizer
        )
        if verify and ws.state_hash() != first.state_hash:
            raise ReplayMismatchError(first.seq, first.state_hash, ws.state_hash())
        for ev in it:
            ok = ws._apply_event(ev)
            if verify:
                if ok != ev.ok:
                    raise ReplayMismatchError(ev.seq, ev.state_hash, ws.state_hash() + " (outcome)")
                if ws.state_hash() != ev.state_hash:
                    raise ReplayMismatchError(ev.seq, ev.state_hash, ws.state_hash())
        return ws

    def _apply_event(self, ev: Event) -> bool:
        a = ev.args
        try:
            if ev.op == "register":
                self.register_message(a["message"], pinned=a.get("pinned"))
            elif ev.op == "archive":
                self.archive(a["block_id"], a.get("replacement", ""))
            elif ev.op == "delete":
                self.delete(a["block_id"], a["reason"])
            elif ev.op == "restore":
                self.restore(a["block_id"])
            elif ev.op == "read":
                self.read_path(a["path"], a.get("selector"))
            else:
                raise WorkspaceArgumentError("op", ev.op, "is not a replayable event kind")
        except WorkspaceError:
            if ev.op == "register":
                raise
            return False
        return True

    @locked
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the full state as JSON, crash-safely (temp file, fsync, rename).

        Archived bytes stay in the payload store; :meth:`load` checks them.
        """
        doc = {
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "config": self.config(),
            "turn": self._turn,
            "group_seq": self._group_seq,
            "user_seen": self._user_seen,
            "pending": dict(self._pending),
            "answered": dict(self._answered),
            "blocks": [b.to_plain() for b in self._blocks],
            "groups": [g.to_plain() for g in self._groups.values()],
            "event_count": self._event_base + len(self._events),
            "state_hash": self.state_hash(),
        }
        atomic_write(Path(path), json.dumps(doc, ensure_ascii=False).encode("utf-8"))

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        log_path: str | os.PathLike[str] | None = None,
    ) -> Self:
        """Rebuild a saved workspace; verifies the canonical hash and every payload.

        ``store`` defaults to a :class:`DiskStore` at the recorded root when
        that folder exists (else an in-memory store, which must then be
        passed explicitly for archived units to verify).
        """
        from ._store import DiskStore

        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise WorkspaceArgumentError(
                "path", str(path), "must be a readable snapshot", f"({exc})"
            ) from None
        if not isinstance(doc, dict) or doc.get("format") != SNAPSHOT_FORMAT:
            raise WorkspaceArgumentError("path", str(path), "is not a vista-workspace snapshot")
        cfg = dict(doc["config"])
        root = cfg["store_root"]
        if store is None:
            store = DiskStore(root) if os.path.isdir(root) else MemoryStore(root)
        ws = cls._from_config(cfg, store=store, tokenizer=tokenizer)
        ws._events.clear()
        ws._event_state.clear()
        ws._event_base = int(doc.get("event_count", 0))
        ws._restore_snapshot(doc)
        if log_path is not None:
            ws._log_fh = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        if ws.state_hash() != doc["state_hash"]:
            raise ReplayMismatchError(-1, doc["state_hash"], ws.state_hash())
        for key, uid in ws._payload_owner.items():
            ws._fetch(key, ws._unit_payload(uid).sha256)
        return ws

    def _restore_snapshot(self, doc: dict[str, Any]) -> None:
        self._turn = int(doc["turn"])
        self._group_seq = int(doc["group_seq"])
        self._user_seen = bool(doc["user_seen"])
        for d in doc["blocks"]:
            b = Block.from_plain(d)
            self._blocks.append(b)
            self._pos_msgs.append(())
            self._pos_cost.append(0)
            self._pos_key.append(())
            self._set_record(b)
            if b.type is BlockType.TOOL_CALL:
                self._children[b.id] = []
                for c in b.call_ids:
                    self._call_owner[c] = b.id
            if b.type is BlockType.TOOL_RESULT and b.parent is not None:
                self._children.setdefault(b.parent, []).append(b.id)
            if b.payload is not None:
                self._payload_owner[b.payload.key] = b.id
            if b.status is Status.PINNED:
                self._pinned_cost += b.tokens
        for d in doc["groups"]:
            g = Group.from_plain(d)
            self._set_record(g)
            self._payload_owner[g.payload.key] = g.id
        for gid in self._groups:
            leaves = self._leaves(gid)
            self._group_span[gid] = (min(leaves), max(leaves))
            self._group_tokens[gid] = sum(self._blocks[s - 1].tokens for s in leaves)
        self._pending = dict(doc["pending"])
        self._answered = dict(doc["answered"])
        self._refresh(range(1, len(self._blocks) + 1))
        for gid, g in self._groups.items():
            if g.parent is None:
                self._set_urow(gid)
        self._touch()
