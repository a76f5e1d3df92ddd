"""Layout and costs: the messages each block position renders to, their token
costs, and the ledger rows; all derived from the state, never hashed."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import replace
from itertools import chain
from typing import Any, cast

from ._accounting import (
    message_tokens,
)
from ._frozen import freeze_messages
from ._handles import (
    handle_text,
    member_stub,
    offload_text,
    orphan_prefix,
    tombstone_text,
)
from ._hashing import HASH_MOD
from ._ledger import UnitRow
from ._positions import is_usual
from ._records import (
    Block,
    BlockType,
    Group,
    Status,
    digest_key,
)
from ._seqtree import PrefixTree, add_sorted
from ._spec import (
    format_id_ranges,
)
from ._state import StateCore
from ._validate import _num, _tool_call_message

__all__ = ["LayoutLayer"]

#: Positions per cached run of joined messages (a rendering joins n / _CHUNK runs).
_CHUNK = 256
#: A refresh of more positions than this updates the position trees in one pass.
_BATCH_FROM = 16
#: The key of an archived group's member that renders to nothing (not the
#: handle's leaf, no answer owed to a visible call); it names no top unit, so
#: nesting the group in a new one leaves the position as it is.
_SILENT_MEMBER = ("g", False, None, False)
#: Each block type's and status's ``.value`` (the enum's property is a
#: Python-level descriptor; a ledger row reads two per registration).
_VALUE: dict[BlockType | Status, str] = {m: m.value for e in (BlockType, Status) for m in e}


class LayoutLayer(StateCore):
    """Where each block sits in the rendering and what it costs: the messages at
    every block position (content, handle, stub or nothing), kept current by
    ``_refresh``, and the ledger row of every top-level unit."""

    def _append_block(
        self, b: Block, seed: tuple[tuple[dict[str, Any], ...], int] | None = None
    ) -> None:
        self._blocks.append(b)
        self._new_position()
        self._set_record(b)
        # ``seed``: the caller already counted the message; do not tokenise twice.
        # A new block is in no group, so no tops memo is needed.
        self._refresh_one(b, seed)
        self._touch()

    def _new_position(self) -> None:
        """Room for one more block position (filled by _set_position)."""
        self._pos_msgs.append(())
        self._pos_cost.append(0)
        self._pos_key.append(())
        self._pos_tree.append(None)  # filled by _set_position, which always follows
        self._gain_tree.append(None)
        self._cont.append(0)
        self._chunks.pop((len(self._pos_msgs) - 1) // _CHUNK, None)

    def _chunk(self, c: int) -> tuple[dict[str, Any], ...]:
        """The messages of positions ``[c * _CHUNK, (c + 1) * _CHUNK)``, joined."""
        hit = self._chunks.get(c)
        if hit is None:
            out: list[dict[str, Any]] = []
            for ms in self._pos_msgs[c * _CHUNK : (c + 1) * _CHUNK]:
                out.extend(ms)
            hit = self._chunks[c] = tuple(out)
        return hit

    def _messages_upto(self, end: int, out: list[dict[str, Any]]) -> None:
        """Append the messages of positions ``[0, end)`` to ``out``."""
        full = end // _CHUNK
        empty = False
        for c in self._msg_chunks:  # the chunks that may hold messages
            if c >= full:
                break
            msgs = self._chunk(c)
            out.extend(msgs)
            empty = empty or not msgs
        if empty:  # chunks that hold none now (their positions were archived)
            self._msg_chunks = [c for c in self._msg_chunks if c >= full or self._chunk(c)]
        start = full * _CHUNK
        if end - start > _CHUNK // 8 and start + _CHUNK <= len(self._pos_msgs):
            # A leading part of a run whose positions all exist (the overflow
            # prefix ends inside one; those rarely change): a slice of the
            # joined run, not one extend per position.
            n = sum(map(len, self._pos_msgs[start:end]))
            out.extend(self._chunk(full)[:n])
            return
        if end == len(self._pos_msgs) and end > start:
            # The newest run (the normal rendering's): its messages joined as
            # far as the last rendering read them, extended by the positions
            # registered since (each turn adds a few), not read one by one.
            tail = self._tail_msgs
            if tail is not None and tail[0] == start and tail[1] <= end:
                read, msgs = tail[1], tail[2]
            else:
                read, msgs = start, ()
            if read < end:
                msgs += tuple(chain.from_iterable(self._pos_msgs[read:end]))
                self._tail_msgs = (start, end, msgs)
            out.extend(msgs)
            return
        out.extend(chain.from_iterable(self._pos_msgs[start:end]))

    def _messages_between(self, lo: int, hi: int, out: list[dict[str, Any]]) -> None:
        """Append the messages of positions ``[lo, hi)`` to ``out``."""
        for ms in self._pos_msgs[lo:hi]:
            out.extend(ms)

    def _offload_cost(self, x: Block) -> int:
        """Tokens of tool result ``x``'s position once offloaded to a placeholder."""
        text = offload_text(
            x.id, path=self.payload_path(f"{x.id}.txt"), size=x.size, sha256=x.sha256
        )
        return sum(message_tokens(m, self.tokenizer) for m in self._wrap_tool_text(x, text))

    def _gains(self) -> PrefixTree:
        """The offload-gain tree, current: the gain (position cost minus the
        placeholder's) of every visible, unrejected tool result other than
        those the guard excludes itself. ``_set_position`` only marks a
        position due; its gain is counted here, from the position's state now,
        which is its state at its last ``_set_position`` (every change of a
        block's status, form or cost goes through it). Each due position is
        counted once, so the work is the eager count's, deferred."""
        due, tree = self._gain_due, self._gain_tree
        if due:
            for p in dict.fromkeys(due):
                b = self._blocks[p]
                ok = (
                    b.type is BlockType.TOOL_RESULT
                    and b.status is Status.VISIBLE
                    and not b.rejected
                )
                tree.set(p, self._pos_cost[p] - self._offload_cost(b) if ok else None)
            del due[:]
        return tree

    def _wrap_tool_text(self, b: Block, text: str) -> tuple[dict[str, Any], ...]:
        """``text`` at a tool result's position: a tool message while its call is
        in the prompt, else ordinary context (never an orphan tool message)."""
        if self._parent_in_prompt(b):
            return ({"role": "tool", "tool_call_id": b.tool_call_id, "content": text},)
        return ({"role": "user", "content": orphan_prefix(b.id, b.name, b.parent) + text},)

    def _parent_in_prompt(self, b: Block) -> bool:
        if b.parent is None:
            return False
        return self._blocks[_num(b.parent) - 1].in_prompt

    def _position_key(self, b: Block) -> tuple[Any, ...] | bytes | str:
        """What block ``b``'s position renders from: equal keys, equal messages.

        A visible block in its usual form (a tool result answering a call in
        the prompt, any other block as itself) is keyed by its digest alone
        (:func:`digest_key`: the record's own object, no tuple per position);
        every other state by a tuple whose first item names it. A position's
        block type never changes, so the digest stands for exactly one tuple,
        ``("v", usual form, visible, sha256)``."""
        is_result = b.type is BlockType.TOOL_RESULT
        tool_form = is_result and self._parent_in_prompt(b)
        if b.status is Status.DELETED:
            return ("d", tool_form)
        if b.in_prompt:
            if b.status is Status.VISIBLE and tool_form is is_result:
                return digest_key(b)
            return ("v", tool_form, b.status, b.sha256)
        if b.group is None:
            return ("a", tool_form, b.status, b.payload, b.replacement, b.level)
        top = self._top_unit(b)
        first = self._group_span[top][0] == b.seq
        if first:  # the handle sits here: its level and text are part of the key
            g = self._groups[top]
            return ("g", tool_form, top, first, g.level, g.replacement)
        if not tool_form:  # renders to nothing whatever its top unit: a re-archive
            return _SILENT_MEMBER  # leaves the positions of nested members alone
        return ("g", tool_form, top, first)

    def _position_messages(
        self, b: Block, key: tuple[Any, ...] | bytes | str
    ) -> tuple[dict[str, Any], ...]:
        is_result = b.type is BlockType.TOOL_RESULT
        if not isinstance(key, tuple):  # visible in its usual form (see _position_key)
            kind, tool_form = "v", is_result
        else:
            kind, tool_form = key[0], key[1]
        if kind == "d":
            return (
                ({"role": "tool", "tool_call_id": b.tool_call_id, "content": tombstone_text(b.id)},)
                if tool_form
                else ()
            )
        if kind == "v":
            assert b.content is not None or b.type is BlockType.TOOL_CALL
            if is_result:
                return self._wrap_tool_text(b, b.content or "")
            if b.type is BlockType.TOOL_CALL:
                return (_tool_call_message(b.content, b.tool_calls or ()),)
            return ({"role": b.role, "content": b.content},)
        if kind == "a":
            assert b.payload is not None
            path = self.payload_path(b.payload.key)
            if b.status is Status.OFFLOADED:
                text = offload_text(b.id, path=path, size=b.payload.size, sha256=b.payload.sha256)
            else:
                text = handle_text(
                    b.id,
                    level=b.level,
                    path=path,
                    size=b.payload.size,
                    sha256=b.payload.sha256,
                    replacement=b.replacement,
                )
            if is_result:
                return self._wrap_tool_text(b, text)
            return ({"role": b.role, "content": text},)
        # Member of an archived group: the top unit's handle sits at its first
        # leaf; other members keep a stub only where a visible call needs an answer.
        top, first = cast("tuple[Any, ...]", key)[2:4]
        if first:
            text = self._group_handle(self._groups[top])
            if tool_form:
                return ({"role": "tool", "tool_call_id": b.tool_call_id, "content": text},)
            return ({"role": "user", "content": text},)
        if tool_form:
            return (
                {"role": "tool", "tool_call_id": b.tool_call_id, "content": member_stub(b.id, top)},
            )
        return ()

    def _group_handle(self, g: Group) -> str:
        return handle_text(
            g.id,
            level=g.level,
            path=self.payload_path(g.payload.key),
            size=g.payload.size,
            sha256=g.payload.sha256,
            replacement=g.replacement,
            members=format_id_ranges(list(g.members)),
        )

    def _set_position(
        self,
        b: Block,
        msgs: tuple[dict[str, Any], ...],
        cost: int,
        key: tuple[Any, ...] | bytes | str,
    ) -> None:
        """Install what block ``b``'s position renders to and costs: the one writer
        of the position caches and the overhead / conversation sums."""
        s = b.seq
        delta = cost - self._pos_cost[s - 1]
        if b.type is BlockType.SYSTEM:
            self._sys_cost += delta
        else:
            self._conv_cost += delta
        # A visible block in its usual form is held as its record; its messages
        # are built when first read (see _positions).
        lazy = not isinstance(key, tuple) and is_usual(b, msgs)
        self._pos_msgs[s - 1] = b if lazy else freeze_messages(msgs)
        self._pos_cost[s - 1] = cost
        self._pos_key[s - 1] = key
        pinned = b.status is Status.PINNED
        eligible = b.type is BlockType.TOOL_RESULT and b.status is Status.VISIBLE
        if eligible and not b.rejected:  # its gain is counted when a guard needs it
            due = self._gain_due
            if not due or due[-1] != s - 1:
                due.append(s - 1)
        batch = self._tree_batch
        if batch is None:
            self._pos_tree.set(s - 1, 0 if pinned else cost)
            self._gain_tree.set(s - 1, None)
        else:  # a long refresh: the trees are updated once at its end
            batch[0].append((s - 1, 0 if pinned else cost))
            batch[1].append((s - 1, None))
        self._cont[s - 1] = bool(msgs) and msgs[0]["role"] == "tool"
        c = (s - 1) // _CHUNK
        self._chunks.pop(c, None)
        if msgs:
            add_sorted(self._msg_chunks, c)
        tail = self._tail_msgs
        if tail is not None and tail[0] < s <= tail[1]:  # a position it joined
            self._tail_msgs = None
        ps = self._pinned_seqs
        k = bisect.bisect_left(ps, s)
        if pinned and (k == len(ps) or ps[k] != s):
            ps.insert(k, s)
        elif not pinned and k < len(ps) and ps[k] == s:
            del ps[k]

    def _refresh(self, seqs: Iterable[int]) -> None:
        """Recompute the rendered messages and costs of these block positions
        (many at once update the position trees once, at the end)."""
        order = sorted(set(seqs))
        if len(order) <= _BATCH_FROM:
            self._refresh_positions(order)
            return
        batch: tuple[list[tuple[int, int | None]], list[tuple[int, int | None]]] = ([], [])
        self._tree_batch = batch
        try:
            self._refresh_positions(order)
        finally:
            self._tree_batch = None
            self._pos_tree.set_many(batch[0])
            self._gain_tree.set_many(batch[1])

    def _refresh_positions(self, order: list[int]) -> None:
        with self._tops_memo():  # no group's parent changes during a refresh
            self._refresh_each(order)

    def _refresh_each(self, order: list[int]) -> None:
        blocks, refresh = self._blocks, self._refresh_one
        for s in order:
            refresh(blocks[s - 1])

    def _refresh_one(
        self, b: Block, known: tuple[tuple[dict[str, Any], ...], int] | None = None
    ) -> None:
        """Bring block ``b``'s position up to date with its record: its messages,
        cost, key, the record's cost and the unit's ledger row. ``known``: the
        ``(messages, cost)`` the caller already made for the position's new
        key (a new block's counted message, a rejection notice), used instead
        of building and counting them again. The one step every position
        change goes through (:meth:`_refresh`, a registration, the guard's
        rejection), so they cannot drift apart."""
        s = b.seq
        key = self._position_key(b)
        if key == self._pos_key[s - 1]:
            return
        if known is None:
            msgs = self._position_messages(b, key)
            cost = sum(message_tokens(m, self.tokenizer) for m in msgs)
        else:
            msgs, cost = known
        self._set_position(b, msgs, cost, key)
        if b.group is not None:
            self._group_prompt_changed(self._top_unit(b))
        if b.in_prompt and b.tokens != cost:
            self._set_record(replace(b, tokens=cost), hashed=False)
        if b.group is None and b.status is not Status.DELETED:
            self._set_urow(b.id)
        else:
            self._drop_urow(b.id)

    def _rendering_leaves(self, gid: str) -> list[int]:
        """The leaves of archived group ``gid`` whose position renders something
        (the handle's leaf, the stubs a visible call needs). Nesting ``gid`` in
        a new group changes no other position: a member that renders nothing
        cannot become the new group's first leaf (that is the first of all its
        leaves) and its call stays out of the prompt, so its key stays
        ``_SILENT_MEMBER``."""
        keys = self._pos_key
        return [s for s in self._leaves(gid) if keys[s - 1] != _SILENT_MEMBER]

    def _affected(self, leaves: Iterable[int]) -> set[int]:
        """Leaves plus the results of any tool-call leaf (their form depends on it)."""
        out = set(leaves)
        for s in list(out):
            b = self._blocks[s - 1]
            if b.type is BlockType.TOOL_CALL:
                out.update(_num(c) for c in self._results_of(b.id))
        return out

    def _set_urow(self, uid: str) -> None:
        """Rebuild the ledger row of top-level unit ``uid``."""
        if uid[0] == "G":
            g = self._groups[uid]
            first, newest = self._group_span[uid]
            turn = self._blocks[newest - 1].turn
            tokens, type_, level, parent, status = (
                self._group_tokens[uid],
                "group",
                g.level,
                "-",
                "archived",
            )
            archived = True
        else:
            b = self._blocks[_num(uid) - 1]
            first = newest = b.seq
            turn = b.turn
            archived = not b.in_prompt
            tokens = b.tokens if archived else self._pos_cost[b.seq - 1]
            type_, status = _VALUE[b.type], _VALUE[b.status]
            level, parent = b.level, b.parent or "-"
        prefix, suffix, ptok = self._renderer.row_parts(uid, tokens, type_, level, parent, status)
        row = UnitRow(
            first,
            turn,
            archived,
            newest,
            tokens,
            prefix,
            suffix,
            ptok,
            type_,
            level,
            parent,
            status,
        )
        self._ledger.put(uid, row, self._turn)
        if uid[0] == "G":
            self._gprompt.pop(uid, None)

    def _drop_urow(self, uid: str) -> None:
        self._ledger.drop(uid, self._turn)
        self._gprompt.pop(uid, None)

    def _group_prompt_changed(self, gid: str) -> None:
        """A leaf of top-level group ``gid`` changed its position cost."""
        self._gprompt.pop(gid, None)
        self._ledger.prompt_changed(gid)

    def _drop_group_record(self, gid: str) -> None:
        txn = self._txn
        if txn is not None and gid not in txn.records:
            txn.records[gid] = self._groups[gid]
        del self._groups[gid]
        self._acc = (self._acc - self._digests.pop_group(gid)) % HASH_MOD
        self._drop_urow(gid)

    def _unit_prompt_tokens(self, uid: str) -> int:
        if uid[0] == "B":
            return self._pos_cost[_num(uid) - 1]
        n = self._gprompt.get(uid)
        if n is None:
            pos_cost = self._pos_cost
            n = self._gprompt[uid] = sum(pos_cost[s - 1] for s in self._leaves(uid))
        return n
