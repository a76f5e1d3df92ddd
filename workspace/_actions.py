"""Actions on units: resolve a block spec, then archive, delete or restore
(each checks everything first, so a refused action changes nothing)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._accounting import message_tokens
from ._atomic import atomic
from ._errors import (
    BlockStateError,
    PayloadIntegrityError,
    UnknownBlockError,
    WorkspaceArgumentError,
)
from ._handles import (
    GroupEntry,
    encode_group_payload,
    parse_group_payload,
    tombstone_text,
)
from ._records import (
    Block,
    BlockType,
    Group,
    Status,
    block_payload_bytes,
    decode_block_payload,
)
from ._register import RegisterLayer
from ._results import ArchiveResult, DeleteResult, RestoreResult
from ._spec import (
    BlockRange,
    BlockRef,
    GroupRef,
    format_id_ranges,
    parse_block_spec,
)
from ._store import sha256_hex
from ._validate import MAX_REPLACEMENT_CHARS, _num, _text_iv

__all__ = ["ActionsLayer"]


def _in_range(block_id: str, rng: Any) -> str:
    """The block an error names, with the range it was selected through
    (formatted only when the error is raised: ranges check every block)."""
    return block_id if rng is None else f"{block_id} (in range {rng})"


class ActionsLayer(RegisterLayer):
    """Archive / delete / restore transitions (the agent's and the harness's)."""

    def _resolve(self, spec: Any, action: str) -> list[str]:
        items = parse_block_spec(spec)
        n = len(self._blocks)
        units: dict[str, int] = {}
        for item in items:
            if isinstance(item, BlockRef):
                if item.n > n:
                    raise UnknownBlockError(str(item), self._no_block_detail())
                b = self._blocks[item.n - 1]
                self._check_block(b, action, explicit=True)
                units.setdefault(b.id, b.seq)
            elif isinstance(item, GroupRef):
                gid = str(item)
                g = self._groups.get(gid)
                if g is None:
                    detail = (
                        "no longer exists (it was deleted or restored)"
                        if item.n <= self._group_seq
                        else f"does not exist (groups so far: {self._group_seq})"
                    )
                    raise UnknownBlockError(gid, detail)
                if g.parent is not None:
                    top = self._top_unit(self._blocks[self._group_span[gid][0] - 1])
                    raise BlockStateError(gid, f"is archived inside {top}", f"name {top} instead")
                units.setdefault(gid, self._group_span[gid][0])
            else:
                assert isinstance(item, BlockRange)
                if item.stop > n:
                    raise UnknownBlockError(
                        f"B{item.stop}",
                        self._no_block_detail() + "; ranges must end at an existing block",
                    )
                # O(blocks in the range): a group's first and newest leaves
                # (its span) decide whether it lies inside, and each group's
                # chain of parents is walked once.
                inside: set[str] = set()
                with self._tops_memo():
                    for s in range(item.start, item.stop + 1):
                        b = self._blocks[s - 1]
                        if b.status is Status.DELETED:
                            continue  # ranges step over tombstones
                        self._check_block(b, action, explicit=False, rng=item)
                        if b.group is None:
                            units.setdefault(b.id, b.seq)
                            continue
                        top = self._top_unit(b)
                        if top in inside:
                            continue
                        lo, hi = self._group_span[top]
                        if lo < item.start or hi > item.stop:
                            held = format_id_ranges([f"B{x}" for x in self._leaves(top)])
                            raise BlockStateError(
                                top,
                                f"has members outside {item} (it holds {held})",
                                f"name {top} on its own or widen the range",
                            )
                        inside.add(top)
                        units.setdefault(top, lo)
        if not units:
            raise BlockStateError(
                str(spec), "selects no live blocks (all deleted)", "pick blocks from the dashboard"
            )
        return [u for u, _ in sorted(units.items(), key=lambda t: t[1])]

    def _check_block(self, b: Block, action: str, *, explicit: bool, rng: Any = None) -> None:
        if b.status is Status.DELETED:
            raise BlockStateError(
                b.id, "was deleted; its content is gone", "drop it from the selection"
            )
        if b.status is Status.PINNED and action in ("archive", "delete"):
            raise BlockStateError(
                _in_range(b.id, rng),
                f"is pinned (protocol-required) and cannot be {action}d",
                "leave it out of the selection" if explicit else "start or end the range around it",
            )
        if explicit and b.group is not None:
            top = self._top_unit(b)
            raise BlockStateError(b.id, f"is archived inside {top}", f"name {top} instead")
        if (
            action in ("archive", "delete")
            and b.type is BlockType.TOOL_CALL
            # every pending call belongs to one (the newest) calling block
            and next(iter(self._pending.values()), None) == b.id
        ):
            raise BlockStateError(
                _in_range(b.id, rng),
                "has tool calls still waiting for results",
                "register the results first",
            )
        if (
            action in ("archive", "delete")
            and b.type is BlockType.TOOL_RESULT
            and self._pending_tail_start() is not None
            and next(iter(self._pending.values()), None) == b.parent
        ):
            # keep_pending: the management rendering shows this batch whole.
            if action == "archive":
                raise BlockStateError(
                    _in_range(b.id, rng),
                    f"answers a call of {b.parent}, whose other calls are still waiting for "
                    "results (the batch is archived whole, once its last result arrives)",
                    "register the remaining results first, or delete it",
                )
            stone = {
                "role": "tool",
                "tool_call_id": b.tool_call_id,
                "content": tombstone_text(b.id),
            }
            grow = message_tokens(stone, self.tokenizer) - self._pos_cost[b.seq - 1]
            if self.management_floor() + max(grow, 0) > self.budget:
                raise BlockStateError(
                    _in_range(b.id, rng),
                    "would leave its tombstone no room in the management rendering, which "
                    f"keeps {b.parent}'s batch while its other calls wait",
                    "register the remaining results first",
                )
        if action == "restore" and b.in_prompt:
            raise BlockStateError(
                _in_range(b.id, rng), "is not archived", "restore archived units only"
            )

    @atomic
    def archive(self, block_id: str, replacement: str = "") -> ArchiveResult:
        """Archive blocks / groups: exact payload to the store, handle in the prompt.

        One visible block becomes an archived block (level 1, payload = its
        exact bytes). Several units become a new group ``G<n>`` one level
        above its highest member; archived members are referenced, not
        copied, so recovery walks the hierarchy back down.

        Parameters
        ----------
        block_id : str
            The units: ``"B4"``, a range ``"B3-B5"``, a list ``"B3,B7,G1"``.
        replacement : str
            Index text the handle shows in their place (a summary; may be empty).

        Returns
        -------
        ArchiveResult
            The new unit, its payload path, size and sha256, and the tokens freed.

        Raises
        ------
        BlockSpecError, UnknownBlockError, BlockStateError
            Nothing changes.
        """
        args = {"block_id": block_id, "replacement": replacement}
        with self._failure_logged("archive", args):
            result = self._archive(block_id, replacement)
        self._log(
            "archive",
            args,
            True,
            result.path,
            {
                "unit": result.unit_id,
                "members": list(result.members),
                "level": result.level,
                "size": result.size,
                "sha256": result.sha256,
                "freed_tokens": result.freed_tokens,
            },
        )
        return result

    def _archive(self, block_id: Any, replacement: Any) -> ArchiveResult:
        units = self._resolve(block_id, "archive")
        replacement = _text_iv("replacement", replacement, max_chars=MAX_REPLACEMENT_CHARS)
        if len(units) == 1 and not self._unit_visible(units[0]):
            return self._rearchive(units[0], replacement)
        before = self._sys_cost + self._conv_cost
        if len(units) == 1:
            b = self._blocks[_num(units[0]) - 1]
            # durable before the block leaves V_t
            ref = self._move_out(b, Status.ARCHIVED, tool_calls=None, replacement=replacement)
            self._refresh(self._affected([b.seq]))
            self._touch()
            return ArchiveResult(
                b.id,
                self.payload_path(ref.key),
                1,
                ref.size,
                ref.sha256,
                (b.id,),
                before - self._sys_cost - self._conv_cost,
            )
        gid = f"G{self._group_seq + 1}"
        entries: list[GroupEntry] = []
        level = 1
        for uid in units:
            if uid[0] == "G":
                g = self._groups[uid]
                entries.append(
                    GroupEntry(uid, "group", g.payload.size, g.payload.sha256, ref=g.payload.key)
                )
                level = max(level, g.level + 1)
                continue
            b = self._blocks[_num(uid) - 1]
            if b.in_prompt:
                data = block_payload_bytes(b.type, b.content, b.tool_calls)
                entries.append(GroupEntry(uid, b.type.value, len(data), sha256_hex(data), data))
            else:
                assert b.payload is not None
                entries.append(
                    GroupEntry(
                        uid, b.type.value, b.payload.size, b.payload.sha256, ref=b.payload.key
                    )
                )
                level = max(level, b.level + 1)
        key = f"{gid}.txt"
        ref = self._put(key, encode_group_payload(gid, level, entries))
        self._group_seq += 1
        group = Group(gid, tuple(units), level, ref, replacement)
        leaves: list[int] = []  # the positions to refresh
        lo, hi = len(self._blocks) + 1, 0
        tokens = 0
        for uid in units:
            if uid[0] == "G":
                self._set_record(replace(self._groups[uid], parent=gid))
                leaves.extend(self._rendering_leaves(uid))
                g_lo, g_hi = self._group_span[uid]
                lo, hi = min(lo, g_lo), max(hi, g_hi)
                tokens += self._group_tokens[uid]
                continue
            b = self._blocks[_num(uid) - 1]
            if b.in_prompt:
                b = replace(
                    b,
                    status=Status.ARCHIVED,
                    group=gid,
                    content=None,
                    tool_calls=None,
                    tokens=self._pos_cost[b.seq - 1],
                )
            else:
                b = replace(b, group=gid)
            self._set_record(b)
            leaves.append(b.seq)
            lo, hi = min(lo, b.seq), max(hi, b.seq)
            tokens += b.tokens
        self._set_record(group)
        self._group_tokens[gid] = tokens
        self._group_span[gid] = (lo, hi)
        self._payload_owner[key] = gid
        for uid in units:
            self._drop_urow(uid)  # members are no longer actionable units
        self._refresh(self._affected(leaves))
        self._set_urow(gid)
        self._touch()
        return ArchiveResult(
            gid,
            self.payload_path(key),
            level,
            ref.size,
            ref.sha256,
            tuple(units),
            before - self._sys_cost - self._conv_cost,
        )

    def _rearchive(self, uid: str, replacement: str) -> ArchiveResult:
        """Archive an archived unit again: it moves to the next level (its payload,
        the exact bytes, is unchanged; the handle shows the new level and the new
        replacement text, or keeps the old one if none is given)."""
        before = self._sys_cost + self._conv_cost
        if uid[0] == "G":
            g = self._groups[uid]
            ng = replace(g, level=g.level + 1, replacement=replacement or g.replacement)
            self._set_record(ng)
            first = self._group_span[uid][0]
            self._pos_key[first - 1] = ()  # the handle text changed: re-render it
            self._refresh([first])
            self._set_urow(uid)
            level, ref = ng.level, ng.payload
        else:
            b = self._blocks[_num(uid) - 1]
            assert b.payload is not None
            nb = replace(
                b,
                status=Status.ARCHIVED,
                level=b.level + 1,
                replacement=replacement or b.replacement,
            )
            self._set_record(nb)
            self._refresh([b.seq])
            level, ref = nb.level, b.payload
        self._touch()
        return ArchiveResult(
            uid,
            self.payload_path(ref.key),
            level,
            ref.size,
            ref.sha256,
            (uid,),
            before - self._sys_cost - self._conv_cost,
        )

    def _unit_visible(self, uid: str) -> bool:
        return uid[0] == "B" and self._blocks[_num(uid) - 1].in_prompt

    @atomic
    def delete(self, block_id: str, reason: str) -> DeleteResult:
        """Permanently remove blocks / groups and their payloads (tombstones keep IDs).

        Parameters
        ----------
        block_id : str
            The units: ``"B4"``, a range ``"B3-B5"``, a list ``"B3,G1"``.
        reason : str
            Why they are deleted (a non-empty sentence; logged).

        Returns
        -------
        DeleteResult
            The units and blocks removed, the payload keys removed, the tokens freed.

        Raises
        ------
        BlockSpecError, UnknownBlockError, BlockStateError, WorkspaceArgumentError
            Nothing changes.
        """
        args = {"block_id": block_id, "reason": reason}
        with self._failure_logged("delete", args):
            result = self._delete(block_id, reason)
        self._log(
            "delete",
            args,
            True,
            ",".join(result.units),
            {
                "blocks": list(result.blocks),
                "payloads_removed": list(result.payloads_removed),
                "freed_tokens": result.freed_tokens,
            },
        )
        return result

    def _delete(self, block_id: Any, reason: Any) -> DeleteResult:
        units = self._resolve(block_id, "delete")
        reason = _text_iv("reason", reason, max_chars=MAX_REPLACEMENT_CHARS)
        if not reason.strip():
            raise WorkspaceArgumentError(
                "reason",
                reason,
                "must be a non-empty short reason",
                "say why the content has no future task value",
            )
        return self._delete_units(units, reason)

    def _delete_units(self, units: list[str], reason: str, *, lost: bool = False) -> DeleteResult:
        """Tombstone these top-level units. ``lost`` (salvage only) also takes
        pinned blocks: their content is gone, so they cannot stay pinned."""
        before = self._sys_cost + self._conv_cost
        removed: list[str] = []
        blocks: list[int] = []

        def drop(top: str) -> None:
            # Post-order over the unit's tree (members before their group), with
            # an explicit stack: nesting depth is unbounded.
            stack: list[tuple[str, Any]] = [(top, None)]
            while stack:
                uid, it = stack[-1]
                if uid[0] == "G":
                    if it is None:
                        it = iter(self._groups[uid].members)
                        stack[-1] = (uid, it)
                    m = next(it, None)
                    if m is not None:
                        stack.append((m, None))
                        continue
                stack.pop()
                drop_one(uid)

        def drop_one(uid: str) -> None:
            if uid[0] == "G":
                g = self._groups[uid]
                self._release(g.payload.key)
                self._payload_owner.pop(g.payload.key, None)
                removed.append(g.payload.key)
                self._drop_group_record(uid)
                self._group_tokens.pop(uid, None)
                self._group_span.pop(uid, None)
                return
            b = self._blocks[_num(uid) - 1]
            if b.payload is not None:
                self._release(b.payload.key)
                self._payload_owner.pop(b.payload.key, None)
                removed.append(b.payload.key)
            if b.status is Status.PINNED:
                if not lost:  # pragma: no cover - refused by _resolve
                    raise AssertionError(b.id)
                self._pinned_cost -= self._pos_cost[b.seq - 1]
            self._set_record(
                replace(
                    b,
                    status=Status.DELETED,
                    group=None,
                    level=0,
                    content=None,
                    tool_calls=None,
                    sha256="",
                    payload=None,
                    replacement="",
                    reason=reason,
                )
            )
            blocks.append(b.seq)

        for uid in units:
            drop(uid)
        self._refresh(self._affected(blocks))
        self._touch()
        return DeleteResult(
            tuple(units),
            tuple(f"B{s}" for s in sorted(blocks)),
            tuple(removed),
            before - self._sys_cost - self._conv_cost,
        )

    @atomic
    def restore(self, block_id: str) -> RestoreResult:
        """Open archived units one level: a block returns to the prompt with its
        exact bytes (checksum verified); a group's members become top-level
        again (raw members visible, archived members keep their handles).
        Harness-level operation; the payload of the opened unit is removed.

        Parameters
        ----------
        block_id : str
            Archived units: ``"B4"``, ``"G2"``, ``"B3-B5,G1"``.

        Returns
        -------
        RestoreResult
            The units opened, the blocks back in the prompt, the tokens added.

        Raises
        ------
        BlockSpecError, UnknownBlockError, BlockStateError, PayloadIntegrityError
            Nothing changes.
        """
        args = {"block_id": block_id}
        with self._failure_logged("restore", args):
            result = self._restore(block_id)
        self._log(
            "restore",
            args,
            True,
            ",".join(result.units),
            {
                "blocks": list(result.blocks),
                "added_tokens": result.added_tokens,
            },
        )
        return result

    def _restore(self, block_id: Any) -> RestoreResult:
        units = self._resolve(block_id, "restore")
        # Read and verify everything first, so a bad payload changes nothing.
        plans: list[tuple[str, dict[str, bytes]]] = []
        for uid in units:
            if uid[0] == "B":
                b = self._blocks[_num(uid) - 1]
                assert b.payload is not None
                data = self._fetch(b.payload.key, b.payload.sha256, b.payload.size)
                plans.append((uid, {uid: data}))
            else:
                g = self._groups[uid]
                data = self._fetch(g.payload.key, g.payload.sha256, g.payload.size)
                _, _, entries = parse_group_payload(g.payload.key, data)
                inline = {e.unit_id: e.data for e in entries if e.data is not None}
                for e in entries:
                    if e.data is not None:
                        blk = self._blocks[_num(e.unit_id) - 1]
                        if sha256_hex(e.data) != blk.sha256:
                            raise PayloadIntegrityError(
                                g.payload.key, f"member {e.unit_id} does not match its block record"
                            )
                plans.append((uid, inline))  # type: ignore[arg-type]
        before = self._sys_cost + self._conv_cost
        opened: list[int] = []
        leaves: list[int] = []
        for uid, inline in plans:
            if uid[0] == "B":
                b = self._blocks[_num(uid) - 1]
                assert b.payload is not None
                content, calls = decode_block_payload(b.type, inline[uid])
                self._release(b.payload.key)
                self._payload_owner.pop(b.payload.key, None)
                self._set_record(
                    replace(
                        b,
                        status=Status.VISIBLE,
                        level=0,
                        content=content,
                        tool_calls=calls,
                        payload=None,
                        replacement="",
                    )
                )
                opened.append(b.seq)
                leaves.append(b.seq)
                continue
            g = self._groups[uid]
            leaves.extend(self._leaves(uid))
            for m in g.members:
                if m[0] == "G":
                    self._set_record(replace(self._groups[m], parent=None))
                    self._set_urow(m)
                    continue
                b = self._blocks[_num(m) - 1]
                if m in inline:
                    content, calls = decode_block_payload(b.type, inline[m])
                    b = replace(
                        b, status=Status.VISIBLE, group=None, content=content, tool_calls=calls
                    )
                    opened.append(b.seq)
                else:
                    b = replace(b, group=None)
                self._set_record(b)
            self._release(g.payload.key)
            self._payload_owner.pop(g.payload.key, None)
            self._drop_group_record(uid)
            self._group_tokens.pop(uid, None)
            self._group_span.pop(uid, None)
        self._refresh(self._affected(leaves))
        self._touch()
        return RestoreResult(
            tuple(units),
            tuple(f"B{s}" for s in sorted(opened)),
            self._sys_cost + self._conv_cost - before,
        )
