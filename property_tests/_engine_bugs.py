"""Deliberately broken engines (used only by the tests): each breaks one of the
paper's workspace invariants in one small way, so the differential test can be
shown to find it (paper, Methodology: "Workspace invariants", "Structure
preservation"). Each is a subclass of the reference engine that changes one
transition, the way a real regression would."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from vistalab.workspace import Workspace
from vistalab.workspace._frozen import freeze
from vistalab.workspace._handles import rejection_text
from vistalab.workspace._records import PayloadRef
from vistalab.workspace._store import sha256_hex


class OffByOneGuard(Workspace):
    """The budget guard admits a tool result that leaves the candidate one token
    over the hard limit (``<=`` against ``hard_limit + 1``)."""

    def _guard(self, b: Any) -> dict[str, Any]:
        self.hard_limit += 1
        try:
            return super()._guard(b)
        finally:
            self.hard_limit -= 1


class OffloadPayloadNotWritten(Workspace):
    """The guard's offload path records the payload reference but never writes
    the bytes to the store (the archive paths still write theirs)."""

    def _offload(self, x: Any) -> None:
        def no_write(key: str, data: bytes) -> PayloadRef:
            return PayloadRef(key, len(data), sha256_hex(data))

        self._put = no_write  # type: ignore[method-assign]
        try:
            super()._offload(x)
        finally:
            del self._put


class IdReusedAfterDelete(Workspace):
    """Deleting the newest block forgets it, so the next registration gets its ID."""

    def _delete_units(self, units: list[str], reason: str, *, lost: bool = False) -> Any:
        out = super()._delete_units(units, reason, lost=lost)
        b = self._blocks[-1]
        if b.status.value == "deleted":
            cost = self._pos_cost[-1]
            if b.type.value == "system":
                self._sys_cost -= cost
            else:
                self._conv_cost -= cost
            self._blocks.pop()
            self._pos_msgs.pop()
            self._pos_cost.pop()
            self._pos_key.pop()
            self._touch()
        return out


class ResultOrphanedByGroupArchive(Workspace):
    """A group archive that takes a tool call does not re-render the call's
    results left outside the group: they stay ``tool`` messages whose call is
    gone from the prompt (an orphaned tool result)."""

    def _archive(self, block_id: Any, replacement: Any) -> Any:
        try:
            several = len(self._resolve(block_id, "archive")) > 1
        except Exception:  # noqa: BLE001 - let the real method refuse it
            several = False
        if not several:
            return super()._archive(block_id, replacement)
        self._affected = lambda leaves: set(leaves)  # type: ignore[method-assign]
        try:
            return super()._archive(block_id, replacement)
        finally:
            del self._affected


class DashboardRowOtherCount(Workspace):
    """The ledger prints a visible unit's ~Tok from another count: the content's
    length in characters divided by four (the rule of thumb), not the
    tokenizer's count of the rendered message that the checks use."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        real = self._renderer.row_parts

        def row_parts(uid: str, tokens: int, type_: str, level: int, parent: str,
                      status: str) -> tuple[str, str, int]:
            if uid[0] == "B" and status in ("visible", "pinned"):
                b = self._blocks[int(uid[1:]) - 1]
                tokens = (len(b.content or "") + 3) // 4 + 3
            return real(uid, tokens, type_, level, parent, status)

        self._renderer.row_parts = row_parts  # type: ignore[method-assign]


#: Each injected bug by name, with the invariant it breaks.
BUGS = {
    "guard_off_by_one": (OffByOneGuard, "budget"),
    "offload_payload_not_written": (OffloadPayloadNotWritten, "recoverability"),
    "id_reused_after_delete": (IdReusedAfterDelete, "stable_ids"),
    "result_orphaned_by_group_archive": (ResultOrphanedByGroupArchive, "protocol"),
    "dashboard_row_other_count": (DashboardRowOtherCount, "dashboard"),
}


# ---------------------------------------------------------------- what the agent sees
# Bugs in the texts the agent reads, each in one part of them (paper, Implementation
# Details, "Dashboard format"; "Context Stream"; eq. archive-contract; eq. overflow):
# the engine's own records stay right, only what it shows is wrong, so only a
# comparison of the rendered texts can find them.


def _patched_row(ws: Any, uid: str, **changes: Any) -> None:
    """Rebuild ``uid``'s ledger row with some printed fields changed."""
    row = ws._ledger.rows.get(uid)
    if row is None:
        return
    row = row._replace(**changes)
    prefix, suffix, ptok = ws._renderer.row_parts(
        uid, row.tokens, row.type, row.level, row.parent, row.status
    )
    ws._ledger.put(uid, row._replace(prefix=prefix, suffix=suffix, piece_tokens=ptok), ws._turn)


class ArchivedAgeRestarts(Workspace):
    """An archived block's row takes the turn it was archived in, so its age
    restarts at 0r (the paper's Age is the root-turn distance of the block)."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if row is not None and row.archived and uid[0] == "B":
            _patched_row(self, uid, turn=self._turn)


class OffloadedShownArchived(Workspace):
    """A block the guard offloaded is listed with status ``archived`` instead of
    ``offloaded_placeholder`` (the agent cannot tell the guard's move from its own)."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if row is not None and row.status == "offloaded_placeholder":
            _patched_row(self, uid, status="archived")


class ArchivedRowShowsHandleCost(Workspace):
    """An archived block's ~Tok is the cost of its handle in the prompt, not the
    tokens it held when it left the prompt (what archiving it freed)."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if row is not None and row.archived and uid[0] == "B":
            _patched_row(self, uid, tokens=self._pos_cost[int(uid[1:]) - 1])


class GroupHandleOtherPayload(Workspace):
    """A group's handle prints the payload path of the group made before it
    (its size and checksum stay right): ``read_path`` of it gives other bytes."""

    def _group_handle(self, g: Any) -> str:
        n = int(g.id[1:])
        if n < 2:
            return super()._group_handle(g)
        text = super()._group_handle(g)
        return text.replace(f"/{g.id}.txt]", f"/G{n - 1}.txt]")


class MergedUserTextDropped(Workspace):
    """The Anthropic request keeps only the last text of a user turn that merges
    several user messages (an overwrite where an append was meant): the task
    vanishes when the dashboard or another user message follows it."""

    def render(self, format: str = "openai") -> Any:
        r = super().render(format)
        if format != "anthropic":
            return r
        msgs = []
        for m in r.messages:
            content = m.get("content")
            if m.get("role") == "user" and isinstance(content, (list, tuple)):
                texts = [i for i, b in enumerate(content) if b.get("type") == "text"]
                if len(texts) > 1:
                    content = [b for i, b in enumerate(content) if i not in texts[:-1]]
                    m = freeze({**m, "content": content})
            msgs.append(m)
        return replace(r, messages=tuple(msgs))


class ToolTextTabsAsSpaces(Workspace):
    """A tool result's text is "cleaned" on its way to the prompt: tabs become
    spaces (the same length in characters and bytes, other content)."""

    def _wrap_tool_text(self, b: Any, text: str) -> Any:
        return super()._wrap_tool_text(b, text.replace("\t", " "))


class ManagementLargestFirst(Workspace):
    """The management (overflow) dashboard lists its rows largest first instead
    of by ID, as every ledger of the paper does."""

    def render(self, format: str = "openai") -> Any:
        r = super().render(format)
        if r.mode == "normal":
            return r
        head, sep, rest = r.dashboard.partition("-" * 60 + "\n")
        if not sep:
            return r
        body, close = rest.rsplit("\n", 1) if "\n" in rest else ("", rest)
        lines = body.split("\n") if body else []
        rows = [ln for ln in lines if ln[:1] in "BG" and not ln.startswith("(")]
        notes = [ln for ln in lines if ln not in rows]
        rows.sort(key=lambda ln: -int(ln[6:12].replace(",", "")))
        text = head + sep + "".join(x + "\n" for x in notes + rows) + close
        if text == r.dashboard:
            return r
        msgs = list(r.messages)
        last = msgs[-1]
        if isinstance(last.get("content"), str):
            msgs[-1] = freeze({**last, "content": text})
        else:  # the Anthropic form: the dashboard is the last text block
            content = list(last["content"])
            content[-1] = freeze({**content[-1], "text": text})
            msgs[-1] = freeze({**last, "content": content})
        return replace(r, messages=tuple(msgs), dashboard=text)


#: Bugs in what the agent sees, by the part of it they break: the differential
#: test must find each within 500 sequences (``test_engine_texts.py``).
TEXT_BUGS = {
    "age": (ArchivedAgeRestarts, "dashboard"),
    "status": (OffloadedShownArchived, "dashboard"),
    "tok": (ArchivedRowShowsHandleCost, "dashboard"),
    "handle_path": (GroupHandleOtherPayload, "recoverability"),
    "anthropic_merged_turn": (MergedUserTextDropped, "protocol"),
    "tool_text_same_length": (ToolTextTabsAsSpaces, "fidelity"),
    "management_rendering": (ManagementLargestFirst, "dashboard"),
}


# ---------------------------------------------------------------- more of what the agent sees
# Five more bugs, each in a part of the texts the seven above do not touch: the
# ledger's Parent and Level columns, the budget line's figures, a placeholder's
# size, a tombstone, the tool definitions and the Anthropic ids of a reused call.


class ParentShownAsPrevious(Workspace):
    """A tool result's row names the block registered just before it as its
    parent (right for the first result of a call, wrong for the others)."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if row is not None and uid[0] == "B" and row.parent != "-":
            _patched_row(self, uid, parent=f"B{int(uid[1:]) - 1}")


class ArchivedLevelStale(Workspace):
    """An archived block's row shows the level it had before it was archived
    (read before the archive raised it)."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if row is not None and uid[0] == "B" and row.status == "archived" and row.level > 0:
            _patched_row(self, uid, level=row.level - 1)


class BudgetLineConversationWithDashboard(Workspace):
    """The budget line's conversation figure counts the dashboard too (the total
    and the other figures stay right)."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        real = self._renderer._head

        def head(*, conversation: int, dashboard: int, **rest: Any) -> str:
            return real(conversation=conversation + dashboard, dashboard=dashboard, **rest)

        self._renderer._head = head  # type: ignore[method-assign]


class PlaceholderSizeInCharacters(Workspace):
    """The offload placeholder prints the result's size in characters, not bytes
    (the same for ASCII text, smaller for anything else)."""

    def _position_messages(self, b: Any, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        msgs = super()._position_messages(b, key)
        if key[0] != "a" or b.status.value != "offloaded_placeholder":
            return msgs
        text = self.store.get(b.payload.key).decode("utf-8")
        size, chars = f"size={b.payload.size:,}B", f"size={len(text):,}B"
        return tuple({**m, "content": m["content"].replace(size, chars)} for m in msgs)


class TombstoneNamesTheCall(Workspace):
    """A deleted result's tombstone names its call's block instead of itself."""

    def _position_messages(self, b: Any, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        msgs = super()._position_messages(b, key)
        if key[0] != "d" or not msgs or b.parent is None:
            return msgs
        return tuple({**m, "content": m["content"].replace(f"{b.id} ", f"{b.parent} ", 1)}
                     for m in msgs)


class DeleteReasonOptional(Workspace):
    """The delete tool's schema no longer requires a reason (the paper's tool
    definition requires one; the engine still refuses a call without it)."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        tools = []
        for t in self._tools:
            if t["function"]["name"] == "context_workspace_delete":
                fn = dict(t["function"])
                params = dict(fn["parameters"])
                params["required"] = ["block_id"]
                fn["parameters"] = params
                t = freeze({**t, "function": fn})
            tools.append(t)
        self._tools = tuple(tools)


class AnthropicResultKeepsReusedId(Workspace):
    """A reused call id is renamed on its ``tool_use`` but its ``tool_result``
    keeps the OpenAI id (so it answers the earlier call of that id)."""

    def render(self, format: str = "openai") -> Any:
        r = super().render(format)
        if format != "anthropic":
            return r
        import re

        renamed = re.compile(r"(.+)_B[0-9]+(?:_[0-9]+)?\Z")
        msgs = []
        for m in r.messages:
            content = m.get("content")
            if m.get("role") == "user" and isinstance(content, (list, tuple)):
                blocks = []
                for blk in content:
                    hit = renamed.match(str(blk.get("tool_use_id", "")))
                    if blk.get("type") == "tool_result" and hit:
                        blk = freeze({**blk, "tool_use_id": hit.group(1)})
                    blocks.append(blk)
                m = freeze({**m, "content": blocks})
            msgs.append(m)
        return replace(r, messages=tuple(msgs))


#: More bugs in what the agent sees, in parts the seven of ``TEXT_BUGS`` leave
#: alone, with the invariant the first divergence found names (a tombstone naming
#: another block is read back as that block's position: the rendering's
#: structure, "protocol"; a changed tool schema changes the request's tokens
#: first: "budget"); each must be found within 500 sequences too.
MORE_TEXT_BUGS = {
    "ledger_parent": (ParentShownAsPrevious, "dashboard"),
    "ledger_level": (ArchivedLevelStale, "dashboard"),
    "budget_line": (BudgetLineConversationWithDashboard, "dashboard"),
    "placeholder_size": (PlaceholderSizeInCharacters, "recoverability"),
    "tombstone": (TombstoneNamesTheCall, "protocol"),
    "tool_definitions": (DeleteReasonOptional, "budget"),
    "anthropic_renamed_ids": (AnthropicResultKeepsReusedId, "protocol"),
}


# ---------------------------------------------------------------- held-out style
# Bugs written after the search, the way a reviewer's held-out engines would be:
# each in a part of what the agent sees that none of the nineteen above breaks
# (paper, Implementation Details: "Dashboard format", "Context-management
# protocol"; Methodology: "Context Stream", eq. archive-contract, eq. overflow).


class RejectionCapOneHigh(Workspace):
    """A rejection notice's "largest admissible now" is one token above the
    guard's per-result cap (the other figures stay right)."""

    def _reject(self, b: Any, new_cost: int, cap: int, limit: int, **kw: Any) -> Any:
        if kw.get("notice") is None and self._pending_tail_start() is None:
            current = (kw.get("total") if kw.get("total") is not None
                       else self._candidate_total()) - new_cost
            kw["notice"] = rejection_text(current=current, limit=limit, attempted=new_cost,
                                          cap=cap + 1, at_least=kw.get("at_least", False))
        return super()._reject(b, new_cost, cap, limit, **kw)


class ManagementPinnedNewestFirst(Workspace):
    """The management rendering (cache_prefix) puts the pinned blocks after its
    cached prefix newest first."""

    def _management_prefix(self, room: int) -> tuple[list[dict[str, Any]], int, int]:
        out, extra, s = super()._management_prefix(room)
        after = [q for q in self._pinned_seqs if q > s]
        if len(after) < 2:
            return out, extra, s
        n = sum(len(self._pos_msgs[q - 1]) for q in after)
        head = out[: len(out) - n]
        for q in reversed(after):
            head.extend(self._pos_msgs[q - 1])
        return head, extra, s


class NestedGroupLevelLow(Workspace):
    """The handle of a group that holds another group prints its level one too low."""

    def _group_handle(self, g: Any) -> str:
        text = super()._group_handle(g)
        if any(m[0] == "G" for m in g.members):
            text = text.replace(f" level={g.level} ", f" level={g.level - 1} ", 1)
        return text


class GroupSizeInCharacters(Workspace):
    """A group's handle prints its payload's size in characters (a block's
    handle stays right)."""

    def _group_handle(self, g: Any) -> str:
        text = super()._group_handle(g)
        chars = len(self.store.get(g.payload.key).decode("utf-8"))
        return text.replace(f"size={g.payload.size:,}B", f"size={chars:,}B", 1)


class ManagementBudgetShowsHardLimit(Workspace):
    """The management dashboard's budget line prints the hard limit where B
    belongs (the normal dashboard stays right)."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        real = self._renderer.management

        def management(rows: Any, notes: Any, *, budget: int, **rest: Any) -> Any:
            return real(rows, notes, budget=self.hard_limit, **rest)

        self._renderer.management = management  # type: ignore[method-assign]


class ReplacementCutShort(Workspace):
    """A block's archive handle keeps only the first 12 characters of the
    agent's replacement text."""

    def _position_messages(self, b: Any, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        msgs = super()._position_messages(b, key)
        if key[0] != "a" or len(b.replacement) <= 12:
            return msgs
        cut = b.replacement[:12]
        return tuple({**m, "content": m["content"].replace(b.replacement, cut)} for m in msgs)


class LatePinnedShownSystem(Workspace):
    """A pinned user message registered after the task is listed with type
    ``system`` in its row."""

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        row = self._ledger.rows.get(uid)
        if (row is not None and uid[0] == "B" and int(uid[1:]) > 2 and row.status == "pinned"
                and row.type == "user_message"):
            _patched_row(self, uid, type="system")


class RestoredAgeRestarts(Workspace):
    """A restored block's row takes the turn it was restored in (age 0r)."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        self._restored_at: dict[str, int] = {}

    def _restore(self, block_id: Any) -> Any:
        out = super()._restore(block_id)
        for uid in out.blocks:
            self._restored_at[uid] = self._turn
            self._set_urow(uid)
        return out

    def _set_urow(self, uid: str) -> None:
        super()._set_urow(uid)
        at = getattr(self, "_restored_at", {}).get(uid)
        row = self._ledger.rows.get(uid)
        if at is not None and row is not None and not row.archived:
            _patched_row(self, uid, turn=at)


class GroupMemberTombstoneNamesGroup(Workspace):
    """A result deleted with its group leaves a tombstone naming the group."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        self._deleted_in: dict[str, str] = {}

    def _delete_units(self, units: list[str], reason: str, *, lost: bool = False) -> Any:
        for u in units:
            if u[0] == "G":
                self._deleted_in.update((f"B{s}", u) for s in self._leaves(u))
        return super()._delete_units(units, reason, lost=lost)

    def _position_messages(self, b: Any, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        msgs = super()._position_messages(b, key)
        g = getattr(self, "_deleted_in", {}).get(b.id)
        if key[0] != "d" or not msgs or g is None:
            return msgs
        return tuple({**m, "content": m["content"].replace(f"[{b.id} ", f"[{g} ", 1)}
                     for m in msgs)


class FoldedCountOneHigh(Workspace):
    """The ledger's folded line counts one archived unit more than it folds."""

    def _folding(self) -> Any:
        out = super()._folding()
        if out[2] is None:
            return out
        note = re.sub(r"\(\+([0-9]+) older", lambda m: f"(+{int(m.group(1)) + 1} older", out[2])
        return (out[0], out[1], note, out[3])


class ArchiveDescriptionReworded(Workspace):
    """The archive tool's description says "archives" for "archive" once."""

    def __init__(self, budget: int, **kw: Any) -> None:
        super().__init__(budget, **kw)
        tools = []
        for t in self._tools:
            if t["function"]["name"] == "context_workspace_archive":
                fn = dict(t["function"])
                fn["description"] = fn["description"].replace("archive", "archives", 1)
                t = freeze({**t, "function": fn})
            tools.append(t)
        self._tools = tuple(tools)


class AnthropicMergedAssistantReversed(Workspace):
    """The Anthropic request merges consecutive assistant messages with the
    later one's text first."""

    def render(self, format: str = "openai") -> Any:
        r = super().render(format)
        if format != "anthropic":
            return r
        roles = [m["role"] for m in super().render("openai").messages]
        if not any(a == b == "assistant" for a, b in zip(roles, roles[1:], strict=False)):
            return r
        msgs = []
        for m in r.messages:
            content = m.get("content")
            if m.get("role") == "assistant" and isinstance(content, (list, tuple)):
                texts = [blk for blk in content if blk.get("type") == "text"]
                if len(texts) > 1:
                    rest = [blk for blk in content if blk.get("type") != "text"]
                    m = freeze({**m, "content": [*reversed(texts), *rest]})
            msgs.append(m)
        return replace(r, messages=tuple(msgs))


class EvenOffloadLevelTwo(Workspace):
    """The guard's placeholder of an even-numbered block prints level=2."""

    def _position_messages(self, b: Any, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        msgs = super()._position_messages(b, key)
        if key[0] != "a" or b.status.value != "offloaded_placeholder" or b.seq % 2:
            return msgs
        return tuple({**m, "content": m["content"].replace(" level=1 ", " level=2 ", 1)}
                     for m in msgs)


class OrphanPrefixWithoutName(Workspace):
    """A result whose call was deleted is shown without its tool's name in the
    orphan prefix."""

    def _wrap_tool_text(self, b: Any, text: str) -> Any:
        msgs = super()._wrap_tool_text(b, text)
        if (b.parent is None or not b.name or msgs[0]["role"] != "user"
                or self._blocks[int(b.parent[1:]) - 1].status.value != "deleted"):
            return msgs
        return ({**msgs[0], "content": msgs[0]["content"].replace(f" of {b.name}", "", 1)},)


#: Bugs in the style of a held-out set (each changes one thing the agent sees,
#: in a part the bugs above leave alone), with the invariant the first
#: divergence names; each must be found within 500 sequences, on a sequence the
#: real engine passes (``test_engine_texts.py``).
#: Each bug with the invariant its divergence is reported under; a bug that shifts
#: token figures may first show in the request's total (budget) or in the
#: dashboard's figures, depending on the (time-bounded) shrink's sequence.
HELD_OUT_STYLE_BUGS = {
    "rejection_cap": (RejectionCapOneHigh, "budget"),
    "management_pinned_order": (ManagementPinnedNewestFirst, "protocol"),
    "group_handle_size": (GroupSizeInCharacters, "recoverability"),
    "management_budget_figure": (ManagementBudgetShowsHardLimit, "dashboard"),
    "replacement_truncated": (ReplacementCutShort, ("budget", "dashboard")),
    "pinned_row_type": (LatePinnedShownSystem, "dashboard"),
    "age_after_restore": (RestoredAgeRestarts, "dashboard"),
    "folded_count": (FoldedCountOneHigh, "dashboard"),
    "tool_description": (ArchiveDescriptionReworded, "protocol"),
    "anthropic_assistant_merge": (AnthropicMergedAssistantReversed, "protocol"),
    "offload_level": (EvenOffloadLevelTwo, "fidelity"),
    "orphan_prefix": (OrphanPrefixWithoutName, ("budget", "dashboard")),
}
