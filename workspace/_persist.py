"""Persistence: save and load a workspace (crash-safe, verified), and rebuild
one by replaying its event log; one constructor from recorded configuration."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self, overload

from vistalab._core._limits import json_loads

from ._bulk import bulk_build
from ._dashboard import DashboardConfig
from ._disk_store import _TEMP, DiskStore, read_regular_file
from ._errors import (
    PathEscapeError,
    PayloadIntegrityError,
    ReplayMismatchError,
    SnapshotError,
    SnapshotWriteError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import Event, EventLogFile, read_event_log
from ._fork import ForkLayer
from ._formats import AnthropicCodec
from ._records import (
    Block,
    BlockType,
    Group,
    Status,
)
from ._snapshot import SNAPSHOT_FORMAT, SNAPSHOT_VERSION, check_snapshot, content_problem
from ._state import locked
from ._store import MemoryStore, PayloadStore, atomic_write
from ._tokenizers import Tokenizer
from ._validate import _num, log_path_iv, output_file_iv

__all__ = ["PersistLayer", "Loss", "Salvage"]


@dataclass(frozen=True, slots=True)
class Loss:
    """One unit a salvage had to give up.

    Attributes
    ----------
    unit : str
        The top-level unit removed (``B7`` or ``G2``); it becomes tombstones.
    blocks : tuple of str
        Every block whose content went with it.
    key : str
        The payload key that failed (empty for edited in-prompt content).
    problem : str
        What was wrong (missing file, checksum mismatch, not a regular file, ...).
    """

    unit: str
    blocks: tuple[str, ...]
    key: str
    problem: str


@dataclass(frozen=True, slots=True)
class Salvage:
    """What :meth:`Workspace.salvage` recovered: the workspace (intact units
    as saved, lost ones tombstoned, one ``lose`` event per loss) and the exact
    list of what was lost.

    Attributes
    ----------
    workspace : Workspace
        The workspace loaded from the snapshot, every intact unit as saved.
    lost : tuple of Loss
        One entry per unit that could not be recovered (empty: nothing lost).
    """

    workspace: Any
    lost: tuple[Loss, ...]


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
            keep_pending=cfg.get("keep_pending", True),
        )

    @classmethod
    def replay(
        cls,
        events: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        verify: bool = True,
        allow_store_under: str | os.PathLike[str] | None = None,
    ) -> Self:
        """Rebuild a workspace by re-executing an event log.

        The ``init`` event gives the configuration; by default payloads go to
        a fresh in-memory store with the recorded root, so handles (and hence
        token counts) are identical. The log of a loaded workspace starts with
        an ``init`` event holding the snapshot it was loaded from; its payloads
        are read from ``store`` (default: the recorded folder when it exists,
        opened only under the rule of :meth:`load`: it must lie under
        ``allow_store_under``, by default the log file's own folder, so an
        untrusted log cannot make replay open or clean a folder elsewhere; for
        events passed in memory the recorded folder is opened only under
        ``allow_store_under`` when it is given). With ``verify`` every event's
        resulting hash and outcome must match.

        Parameters
        ----------
        events : str, PathLike or iterable of Event or dict
            The log: a JSONL file (``log_path``), ``ws.events``, or plain dicts.
        store : PayloadStore, optional
            Where payloads go (or, for a loaded workspace's log, are read from).
        tokenizer : Tokenizer, optional
            The tokenizer instance, when the recorded one is a custom object.
        verify : bool
            Check every event's resulting hash and outcome (default True).
        allow_store_under : str or PathLike, optional
            The folder a loaded workspace's recorded store may be in (default:
            the log file's folder; for events in memory, no restriction).

        Returns
        -------
        Workspace
            The workspace the log describes.

        Raises
        ------
        ReplayMismatchError
            At the first event whose hash differs.
        SnapshotError
            The init event names a store folder outside ``allow_store_under``
            (nothing was opened).
        """
        allow = None if allow_store_under is None else _path_iv("allow_store_under",
                                                                  allow_store_under)
        with bulk_build():
            return cls._replay(events, store, tokenizer, verify, allow)

    @classmethod
    def _replay(
        cls,
        events: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
        store: PayloadStore | None,
        tokenizer: Tokenizer | None,
        verify: bool,
        allow: str | None = None,
    ) -> Self:
        it = iter(read_event_log(events))
        try:
            first = next(it, None)
        except WorkspaceArgumentError as exc:
            if exc.parameter != "source":
                raise
            raise WorkspaceArgumentError("events", exc.value, exc.rule, exc.fix) from None
        if first is None or first.op != "init":
            raise WorkspaceArgumentError(
                "events", "log", "must start with an init event", "pass a log written by Workspace"
            )
        cfg = dict(first.args["config"])
        root = cfg.get("store_root", "mem://archive")
        snapshot = first.args.get("snapshot")
        if snapshot is not None:  # the log of a loaded workspace starts from its snapshot
            if store is None:
                from_file = isinstance(events, (str, os.PathLike))
                if from_file or allow is not None:
                    # the snapshot rule: a log names a store only under a folder the
                    # caller allows (by default the log file's own folder)
                    src = os.fspath(events) if from_file else "the event log"  # type: ignore[arg-type]
                    store = _default_store(src, str(root), allow if allow is not None
                                           else os.path.dirname(os.path.abspath(src)))
                else:
                    store = DiskStore(root) if os.path.isdir(root) else MemoryStore(root)
            ws = cls._from_snapshot("the event log's init event", snapshot, store, tokenizer)
            ws._event_base = first.seq
        else:
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
            elif ev.op == "lose":
                self._lose(list(a["units"]), a["reason"])
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
        Payloads released by delete and restore since the last save are removed
        from the store only after this snapshot is durable, so at every instant
        the newest snapshot on disk loads (older snapshots may need
        :meth:`salvage`). Missing parent folders are created.

        Parameters
        ----------
        path : str or PathLike
            The snapshot file to write (replaced atomically).

        Raises
        ------
        WorkspaceArgumentError
            ``path`` cannot hold a snapshot, refused before anything is
            written: not a text path, a folder, a FIFO or device, under
            /proc, /sys or /dev, inside a file, or in a folder that cannot be
            written or created.
        SnapshotWriteError
            The write failed anyway (a full disk, a folder made read-only
            meanwhile); an ``OSError`` with the original ``errno``. Nothing
            changed: an earlier snapshot at ``path`` and its payloads are
            intact.
        """
        text = output_file_iv("path", _path_iv("path", path), parents=True)
        doc = self._snapshot_doc()
        try:
            atomic_write(Path(text), json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        except OSError as exc:
            raise SnapshotWriteError(text, exc.strerror or str(exc), errno=exc.errno) from exc
        self._saved = True
        left: set[str] = set()
        for key in sorted(self._doomed):
            if key not in self._payload_owner:
                try:
                    self._remove_payload(key)
                except OSError:  # the snapshot is durable; the file goes at the next save
                    left.add(key)
        self._doomed = left

    def _snapshot_doc(self) -> dict[str, Any]:
        return {
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
            # Original Anthropic blocks (signatures, image data) of registered
            # messages: wire detail, not state; written only when there are some.
            **({"wire": self._codec.to_plain()} if self._codec.originals else {}),
        }

    @overload
    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        store: PayloadStore | None = ...,
        tokenizer: Tokenizer | None = ...,
        log_path: str | os.PathLike[str] | None = ...,
        repair: Literal[False] = ...,
        allow_store_under: str | os.PathLike[str] | None = ...,
    ) -> Self: ...

    @overload
    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        store: PayloadStore | None = ...,
        tokenizer: Tokenizer | None = ...,
        log_path: str | os.PathLike[str] | None = ...,
        repair: Literal[True],
        allow_store_under: str | os.PathLike[str] | None = ...,
    ) -> Salvage: ...

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        log_path: str | os.PathLike[str] | None = None,
        repair: bool = False,
        allow_store_under: str | os.PathLike[str] | None = None,
    ) -> Self | Salvage:
        """Rebuild a saved workspace, verifying every field, every block's content
        hash, the canonical hash and every live payload.

        ``store`` defaults to a :class:`DiskStore` at the recorded root when
        that folder exists (else an in-memory store, which must then be
        passed explicitly for archived units to verify). The loaded
        workspace's event log starts with an ``init`` event holding the
        snapshot, so ``Workspace.replay(ws.events, store=...)`` rebuilds it.
        With ``repair=True`` this is :meth:`salvage`: it returns a
        :class:`Salvage` (the workspace and the exact list of what was lost).

        A snapshot is untrusted input: every field is checked before any folder
        is opened, and the default store (the recorded ``store_root``) is opened
        only if that folder lies under ``allow_store_under`` (default: the
        snapshot's own folder); pass ``store=`` to choose the store yourself.
        Payload files the snapshot does not reference and that are numbered past
        it (a run killed before saving) are moved into the store's
        ``.orphaned`` subfolder and listed in ``set_aside_payloads``.

        Parameters
        ----------
        path : str or PathLike
            The snapshot file :meth:`save` wrote.
        store : PayloadStore, optional
            Where the archived payloads are (default: the recorded folder).
        tokenizer : Tokenizer, optional
            The tokenizer instance, when the recorded one is a custom object.
        log_path : str or PathLike, optional
            Append the loaded workspace's events to this JSONL file.
        repair : bool
            Load what is intact instead of refusing a damaged snapshot.
        allow_store_under : str or PathLike, optional
            The folder the recorded ``store_root`` must lie under (default: the
            snapshot's own folder).

        Returns
        -------
        Workspace or Salvage
            The workspace as saved; with ``repair=True`` a :class:`Salvage`.

        Raises
        ------
        SnapshotError
            Naming the file, the record (block, group or field) and the problem;
            use ``repair=True`` / :meth:`salvage` to load what is intact.
        PayloadIntegrityError, PathEscapeError
            A live payload is missing, damaged or not a regular file.
        """
        if not isinstance(repair, bool):
            raise WorkspaceArgumentError("repair", repair, "must be True or False")
        ws, lost = cls._open(
            path, store, tokenizer, log_path, repair=repair, allow=allow_store_under
        )
        return Salvage(ws, tuple(lost)) if repair else ws

    @classmethod
    def salvage(
        cls,
        path: str | os.PathLike[str],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        log_path: str | os.PathLike[str] | None = None,
        allow_store_under: str | os.PathLike[str] | None = None,
    ) -> Salvage:
        """Load what is intact of a saved workspace and list exactly what is not.

        Every top-level unit whose payload (at any level of its hierarchy) is
        missing, damaged or not a regular file, and every block whose saved
        content no longer matches its sha256, is tombstoned (logged as one
        ``lose`` event each); everything else loads as saved.

        Parameters
        ----------
        path : str or PathLike
            The snapshot file :meth:`save` wrote.
        store : PayloadStore, optional
            Where the archived payloads are (default: the recorded folder).
        tokenizer : Tokenizer, optional
            The tokenizer instance, when the recorded one is a custom object.
        log_path : str or PathLike, optional
            Append the salvaged workspace's events to this JSONL file.
        allow_store_under : str or PathLike, optional
            The folder the recorded ``store_root`` must lie under (default: the
            snapshot's own folder).

        Returns
        -------
        Salvage
            The workspace and the exact list of what was lost.

        Raises
        ------
        SnapshotError
            The file itself is unreadable or its records are inconsistent
            (nothing can be salvaged from a broken structure).
        """
        ws, lost = cls._open(
            path, store, tokenizer, log_path, repair=True, allow=allow_store_under
        )
        return Salvage(ws, tuple(lost))

    @classmethod
    def _open(
        cls,
        path: Any,
        store: PayloadStore | None,
        tokenizer: Tokenizer | None,
        log_path: Any,
        *,
        repair: bool,
        allow: Any = None,
    ) -> tuple[Self, list[Loss]]:
        src = _path_iv("path", path)
        if allow is not None:
            allow = _path_iv("allow_store_under", allow)
        log = log_path_iv(log_path)
        if store is not None and not isinstance(store, PayloadStore):
            raise WorkspaceArgumentError(
                "store", store, "must implement the PayloadStore protocol", "use DiskStore"
            )
        _clean_temp_siblings(Path(src))
        with bulk_build():
            return cls._open_doc(src, store, tokenizer, log, repair=repair, allow=allow)

    @classmethod
    def _open_doc(
        cls,
        src: str,
        store: PayloadStore | None,
        tokenizer: Tokenizer | None,
        log: Any,
        *,
        repair: bool,
        allow: str | None = None,
    ) -> tuple[Self, list[Loss]]:
        doc = _read_snapshot(src)
        check_snapshot(src, doc)  # every field checked before any folder is opened
        root = doc["config"]["store_root"]
        if store is None and isinstance(root, str) and root:
            store = _default_store(src, root, allow)
        ws = cls._from_snapshot(src, doc, store, tokenizer, set_aside=True)
        lost = ws._damage(src, repair=repair)
        try:
            ws._check_floor(extra_pinned=0, what=None)
        except WorkspaceError as exc:
            raise SnapshotError(
                src, "the pinned blocks", f"do not fit the budget ({exc})"
            ) from None
        if log is not None:
            ws._log_fh = EventLogFile(log)
        return ws, lost

    @classmethod
    def _from_snapshot(
        cls,
        src: str,
        doc: Any,
        store: PayloadStore | None,
        tokenizer: Tokenizer | None,
        *,
        set_aside: bool = False,
    ) -> Self:
        """The workspace a checked snapshot describes (payloads not read), its log
        one ``init`` event holding the snapshot."""
        blocks, groups = check_snapshot(src, doc)
        try:
            ws = cls._from_config(doc["config"], store=store, tokenizer=tokenizer)
        except (WorkspaceError, TypeError, KeyError) as exc:
            raise SnapshotError(src, "the config", f"is not usable ({exc})") from None
        wire = doc.get("wire")
        if wire is not None:
            problem = AnthropicCodec.plain_problem(wire)
            if problem is not None:
                raise SnapshotError(src, "the wire originals", problem)
        ws._events.clear()
        ws._install(doc, blocks, groups)
        if wire is not None:
            ws._codec.update_plain(wire)
        if ws.state_hash() != doc["state_hash"]:
            raise SnapshotError(
                src,
                "the records",
                "do not reproduce the saved state_hash (the file was edited or damaged)",
                "use Workspace.salvage only if you trust the records",
            )
        ws._saved = True
        ws._claim_own_payloads(set_aside=set_aside)
        ws._event_base = doc["event_count"]
        ws._log("init", {"config": ws.config(), "snapshot": doc}, True, "", {})
        return ws

    def _claim_own_payloads(self, *, set_aside: bool) -> None:
        """Take ownership of this workspace's payloads in the store it re-opens:
        those the snapshot references, and those numbered past it (B<n> beyond
        its blocks, G<n> beyond its group counter), which only this workspace's
        unsaved work after the save can have written (a crash before the next
        save). With ``set_aside`` (``load``) and a store that can (``DiskStore``)
        those are moved into its ``.orphaned`` subfolder, listed in
        ``set_aside_payloads``: left in place, a later run that registers past
        that ID without archiving it would find the file there, foreign, and
        could never archive that block. Otherwise (replay, stores without
        ``set_aside``) they are claimed, so this workspace may replace them.
        Every other payload in the folder stays protected (see
        ``PayloadConflictError``)."""
        n_blocks = len(self._blocks)
        owned = set(self._payload_owner)
        mover = getattr(self.store, "set_aside", None) if set_aside else None
        moved: list[str] = []
        for key in self.store.keys():
            n = _num(key.removesuffix(".txt"))
            if n > (n_blocks if key[0] == "B" else self._group_seq):
                if mover is not None and key not in owned:
                    moved.append(mover(key))
                    continue
                owned.add(key)
        self.set_aside_payloads = tuple(moved)
        self._own_keys |= owned
        claim = getattr(self.store, "claim", None)  # optional PayloadStore member
        if claim is not None:
            claim(sorted(owned))

    def _install(self, doc: Mapping[str, Any], blocks: list[Block], groups: list[Group]) -> None:
        self._turn = doc["turn"]
        self._group_seq = doc["group_seq"]
        self._user_seen = doc["user_seen"]
        for b in blocks:
            self._blocks.append(b)
            self._new_position()
            self._set_record(b)
            if b.type is BlockType.TOOL_CALL:
                for c in b.call_ids:
                    self._call_owner[c] = b.id
            if b.type is BlockType.TOOL_RESULT and b.parent is not None:
                self._add_result(b.parent, b.id)
            if b.payload is not None:
                self._payload_owner[b.payload.key] = b.id
        for g in groups:
            self._set_record(g)
            self._payload_owner[g.payload.key] = g.id
        for gid in self._groups:
            leaves = self._leaves(gid)
            self._group_span[gid] = (min(leaves), max(leaves))
            self._group_tokens[gid] = sum(self._blocks[s - 1].tokens for s in leaves)
        self._pending = dict(doc["pending"])
        self._answered = dict(doc["answered"])
        self._refresh(range(1, len(self._blocks) + 1))
        # Pinned costs are counted from the content, never taken from the file.
        self._pinned_cost = sum(
            self._pos_cost[b.seq - 1] for b in self._blocks if b.status is Status.PINNED
        )
        for gid, g in self._groups.items():
            if g.parent is None:
                self._set_urow(gid)
        self._touch()

    def _top_of(self, uid: str) -> str:
        if uid[0] == "B":
            return self._top_unit(self._blocks[_num(uid) - 1])
        while self._groups[uid].parent is not None:
            uid = self._groups[uid].parent  # type: ignore[assignment]
        return uid

    def _damage(self, src: str, *, repair: bool) -> list[Loss]:
        """Every block whose content fails its hash and every live payload that
        cannot be read back exactly; raise the first, or tombstone them all."""
        found: dict[str, tuple[str, str]] = {}  # top unit -> (key, problem)
        for b in self._blocks:
            problem = content_problem(b)
            if problem:
                if not repair:
                    raise SnapshotError(src, f"block {b.id}", problem, "use Workspace.salvage")
                found.setdefault(b.id, ("", f"block {b.id} {problem}"))
        for key, uid in sorted(self._payload_owner.items()):
            try:
                ref = self._unit_payload(uid)
                self._fetch(key, ref.sha256, ref.size)
            except (PayloadIntegrityError, PathEscapeError) as exc:
                if not repair:
                    raise
                found.setdefault(self._top_of(uid), (key, str(exc)))
        lost: list[Loss] = []
        for top in sorted(found, key=lambda u: self._leaves(u)[0]):
            key, problem = found[top]
            leaves = tuple(f"B{s}" for s in self._leaves(top))
            self._lose([top], problem)
            self._log("lose", {"units": [top], "reason": problem}, True, top, {"key": key})
            lost.append(Loss(top, leaves, key, problem))
        return lost

    def _lose(self, units: list[str], reason: str) -> None:
        self._delete_units(units, f"lost: {reason}"[:2000], lost=True)


def _default_store(src: str, root: str, allow: str | None) -> PayloadStore:
    """The store a snapshot names, opened only if its folder lies under ``allow``
    (default: the snapshot's own folder): an untrusted snapshot can make load
    read (and clean temp files in) only a folder its caller allows."""
    if "://" in root and not root.startswith("file://"):
        return MemoryStore(root)  # a display root (mem://archive): nothing on disk
    base = os.path.realpath(allow if allow is not None else os.path.dirname(os.path.abspath(src)))
    real = os.path.realpath(root)
    if os.path.commonpath([base, real]) != base:
        raise SnapshotError(
            src,
            "config.store_root",
            f"names the folder {root!r}, outside {base} (the folder a snapshot's store may "
            "be in: the snapshot's own folder unless allow_store_under= says otherwise); "
            "nothing was opened",
            f"if you trust this snapshot pass store=DiskStore({root!r}) or "
            "allow_store_under=<a folder holding it>",
        )
    return DiskStore(root) if os.path.isdir(root) else MemoryStore(root)


def _path_iv(name: str, path: Any) -> str:
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise WorkspaceArgumentError(
            name, path, "must be a file path (str or PathLike)", "pass e.g. 'state.json'"
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text or "\x00" in text:
        raise WorkspaceArgumentError(
            name, path, "must be a non-empty text path without NUL bytes", "pass e.g. 'state.json'"
        )
    return text


def _clean_temp_siblings(path: Path) -> None:
    """Remove temp files an interrupted save of this snapshot left beside it: only
    regular files (a folder or symlink that merely has such a name is not the
    engine's and is left alone), and a file that cannot be removed (a read-only
    folder) is left too; the load itself does not depend on it."""
    folder = path.parent
    prefix = f".{path.name}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and _TEMP.match(name):
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.lstat(folder / name).st_mode):
                    os.unlink(folder / name)


def _read_snapshot(src: str) -> Any:
    """The snapshot's JSON; a FIFO, device or folder is refused without blocking."""
    data, problem = read_regular_file(src)
    if data is None:
        raise SnapshotError(src, "the file", problem)
    try:
        return json_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SnapshotError(src, "the file", f"is not valid UTF-8 JSON ({exc})") from None
