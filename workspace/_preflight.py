"""Preflight and rendering: the candidate C~_t with its dashboard, the budget
check, the normal rendering and the management rendering on overflow."""

from __future__ import annotations

import bisect
import operator
from typing import Any

from ._accounting import (
    MESSAGE_FRAMING,
    REPLY_PRIMING,
    message_tokens,
)
from ._dashboard import DASHBOARD_ROLE, LedgerRow
from ._errors import UnknownNameError, WorkspaceArgumentError
from ._formats import FORMATS, extend_tool_use_ids, openai_to_anthropic
from ._frozen import FrozenDict, freeze
from ._handles import (
    SHORTEST_REJECTION,
    pending_text,
)
from ._layout import LayoutLayer
from ._ledger import CHUNK, Ledger
from ._protocol import (
    CONTEXT_TOOL_NAMES,
)
from ._records import (
    Block,
    BlockType,
)
from ._responses_wire import openai_to_responses
from ._results import Candidate, Rendering, normal_rendering, replace_rendering, with_token_columns
from ._state import locked
from ._validate import _num

__all__ = ["PreflightLayer"]


#: Placeholder costs remembered at most (a turn asks for its calls' ids).
_PLACEHOLDER_MEMO = 4096


#: The names of the schemas of one tools tuple (a workspace's tools never change).
_NAMES_OF: dict[int, tuple[tuple[dict[str, Any], ...], tuple[str, ...]]] = {}


def _tool_names(tools: tuple[dict[str, Any], ...]) -> tuple[str, ...]:
    """``tuple(t["function"]["name"] for t in tools)``, remembered for the last
    few tools tuples seen (held, so an id is never reused while remembered)."""
    hit = _NAMES_OF.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    names = tuple(t["function"]["name"] for t in tools)
    if len(_NAMES_OF) >= 64:
        _NAMES_OF.clear()
    _NAMES_OF[id(tools)] = (tools, names)
    return names


def _age_getter(turns: tuple[int, ...], old: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """``(turns, lo, hi, pick, offsets)``: ``pick`` takes the entries of a
    chunk's rows (of ``turns``, within ``lo .. hi``) from a slice starting at
    turn ``lo``, always as a tuple (``offsets``: each row's turn minus ``lo``).
    A chunk that only gained rows at its end since ``old`` (the newest chunk
    does, every registration) extends its offsets by theirs."""
    n = len(turns)
    if n == 1:
        return turns, turns[0], turns[0], tuple, (0,)
    if old is not None and 0 < len(old[0]) < n and turns[: len(old[0])] == old[0]:
        new = turns[len(old[0]) :]
        lo = old[1]
        if min(new) >= lo:
            offsets = old[4] + tuple([t - lo for t in new])
            return turns, lo, max(old[2], *new), operator.itemgetter(*offsets), offsets
    lo = min(turns)
    offsets = tuple([t - lo for t in turns])
    return turns, lo, max(turns), operator.itemgetter(*offsets), offsets


class PreflightLayer(LayoutLayer):
    """The candidate rendering C~_t, preflight against B, and the management
    rendering on overflow (eq. overflow)."""

    def _ledger_row(self, uid: str) -> LedgerRow:
        r = self._ledger.rows[uid]
        return LedgerRow(uid, r.tokens, self._turn - r.turn, r.type, r.level, r.parent, r.status)

    def _fold(self) -> tuple[Any, str | None]:
        """The archived units folded into one summary line (all but the newest
        ``archived_rows``) and that line (see :meth:`_folding`)."""
        fold = self._folding()
        return fold[1], fold[2]

    def _folding(self) -> tuple[int, Any, str | None, Ledger | None]:
        """The fold of the archived rows: (archived-set version, folded units,
        summary line, a ledger of the folded rows whose sums the candidate's
        count subtracts). The ledger keeps the split up to date row by row;
        the summary line is rewritten only when an archived row changed."""
        led = self._ledger
        cached = self._fold_cache
        if cached is not None and cached[0] == led.archived_version:
            return cached
        fold = led.fold
        assert fold is not None
        if not fold.folded:
            out: tuple[int, Any, str | None, Ledger | None] = (
                led.archived_version,
                set(),
                None,
                None,
            )
        else:
            note = (
                f"(+{len(fold.folded)} older archived units folded: {fold.summary()}; "
                f"~{fold.tokens:,} tok)"
            )
            out = (led.archived_version, fold.folded.keys(), note, fold.sums)
        self._fold_cache = out
        return out

    def _chunks_count(self) -> int:
        return (len(self._blocks) + CHUNK - 1) // CHUNK

    def _candidate(self) -> Candidate:
        """The candidate rendering's dashboard, assembled from the ledger's
        chunks (O(units), read in sequence), and its token count summed from
        the rows' cached pieces (independently of the ledger's running sums,
        which :meth:`_fast_total` uses)."""
        cached = self._candidate_cache
        if cached is not None and cached.version == self._version and cached.dashboard is not None:
            return cached
        led = self._ledger
        hidden, note = self._fold()
        parts: list[str] = []
        tokens = 0
        if note is not None:
            text, n = self._renderer.note_piece(note)
            parts.append(text)
            tokens += n
        turn = self._turn
        # A row of turn t shows the age field of turn - t: entry base + t of the
        # reversed tables, so a chunk's rows (turns lo .. hi) read one slice,
        # picked by the chunk's own itemgetter (built once per chunk text).
        texts, toks, top = self._renderer.age_columns(turn)
        base = top - turn
        getters = self._age_getters
        for c in led.shown_chunks():
            pieces, turns, ptok = led.chunk_text(c, hidden)
            if turns:
                got = getters.get(c)
                if got is None or got[0] is not turns:
                    got = getters[c] = _age_getter(turns, got)
                _, lo, hi, pick, _ = got
                if base + lo >= 0 and hi <= turn:
                    ages = pick(texts[base + lo : base + hi + 1])
                    tokens += ptok + sum(pick(toks[base + lo : base + hi + 1]))
                else:  # a row past the table (never for a consistent state): per row
                    fwd, fwd_tokens = self._renderer.age_table(turn)
                    ages = tuple(fwd[turn - t] for t in turns)
                    tokens += ptok + sum(fwd_tokens[turn - t] for t in turns)
                # pieces has one more entry than turns: piece, age, ..., piece
                row = [pieces[-1]] * (2 * len(pieces) - 1)
                row[::2] = pieces
                row[1::2] = ages
                parts += row
            else:
                parts.append(pieces[-1])
        overhead = self.overhead_tokens
        conversation = self._conv_cost + self._pending_cost()
        dash = self._renderer.ledger_body(
            "".join(parts),
            tokens,
            budget=self.budget,
            overhead=overhead,
            conversation=conversation,
        )
        cand = Candidate(
            version=self._version,
            total=overhead + conversation + dash.message_tokens,
            overhead=overhead,
            conversation=conversation,
            dashboard=dash.text,
            dashboard_tokens=dash.message_tokens,
        )
        self._candidate_cache = cand
        return cand

    def _candidate_counts(self) -> Candidate:
        """The candidate's figures without its dashboard text when the
        tokenizer is additive (from the ledger's running sums: what preflight
        and the overflow rendering need), else the full candidate."""
        cached = self._candidate_cache
        if cached is not None and cached.version == self._version:
            return cached
        split = self._fast_split()
        if split is None:
            return self._candidate()
        overhead, conversation, dash = split
        cand = Candidate(
            version=self._version,
            total=overhead + conversation + dash,
            overhead=overhead,
            conversation=conversation,
            dashboard=None,
            dashboard_tokens=dash,
        )
        self._candidate_cache = cand
        return cand

    def _candidate_total(self) -> int:
        """|C~_t|, what preflight compares with B: from the incremental sums when
        possible, else from the full candidate (which render() needs anyway)."""
        cached = self._candidate_cache
        if cached is not None and cached.version == self._version:
            return cached.total
        tc = self._total_cache
        if tc is not None and tc[0] == self._version:
            return tc[1]
        # The split is kept (the candidate's counts), so the rendering that
        # usually follows a guard's check does not sum the rows again.
        total = self._candidate_counts().total
        self._total_cache = (self._version, total)
        return total

    def _fast_total(self) -> int | None:
        """|C~_t| from the maintained row sums (see :meth:`_fast_split`)."""
        split = self._fast_split()
        return None if split is None else sum(split)

    def _fast_split(self) -> tuple[int, int, int] | None:
        """(overhead, conversation, dashboard) tokens of the candidate from the
        maintained row sums (the age sum advanced turn by turn), plus, when
        archived rows fold, a pass over the archived units only (the fold note
        and the folded rows); None for a tokenizer that is not additive."""
        if not self._renderer.additive:
            return None
        led, turn = self._ledger, self._turn
        body = led.piece_tokens + led.age_tokens(turn)
        _, _, note, folded = self._folding()
        if note is not None:
            assert folded is not None
            body += self._renderer.note_piece(note)[1]
            body -= folded.piece_tokens + folded.age_tokens(turn)
        overhead = self.overhead_tokens
        conversation = self._conv_cost + self._pending_cost()
        dash = self._renderer.ledger_tokens(
            body,
            budget=self.budget,
            overhead=overhead,
            conversation=conversation,
        )
        return overhead, conversation, dash

    def _pending_msgs(self) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": cid, "content": pending_text(cid)}
            for cid in self._pending
        ]

    def _pending_cost(self) -> int:
        """Tokens of the placeholders answering the pending calls, kept as a
        running sum (O(1) per call registered or answered). The sum names the
        dict it describes and its size, so a replaced ``_pending`` (a fork's
        copy, a loaded snapshot) is recounted once."""
        c = self._pending_sum
        if c is not None and c[0] is self._pending and c[1] == len(self._pending):
            return c[2]
        total = sum(self._placeholder_cost(cid) for cid in self._pending)
        self._pending_sum = (self._pending, len(self._pending), total)
        return total

    def _placeholder_cost(self, cid: str) -> int:
        """Tokens of the placeholder answering pending call ``cid``: asked for
        when the call is registered (its room, the running sum) and answered,
        so it is counted once per id (a bounded memo: ids of past turns go)."""
        memo = self._placeholder_memo
        n = memo.get(cid)
        if n is None:
            if len(memo) >= _PLACEHOLDER_MEMO:
                memo.clear()
            n = memo[cid] = message_tokens(
                {"role": "tool", "tool_call_id": cid, "content": pending_text(cid)},
                self.tokenizer,
            )
        return n

    def _placeholder_bound(self, cid: str) -> int:
        """At least :meth:`_placeholder_cost` of ``cid``, without tokenising the
        placeholder's text: its UTF-8 bytes bound its count (the Tokenizer
        contract, ``count(text) <= len(text.encode("utf-8"))``)."""
        text = pending_text(cid)
        if "[opaque " in text:  # an opaque-part line costs more than its bytes
            return self._placeholder_cost(cid)
        return MESSAGE_FRAMING + self.tokenizer.count("tool") + len(text.encode("utf-8"))

    def _pending_tail_start(self) -> int | None:
        """The position (0-based) of the tool-call block whose calls are still
        pending, when the management rendering keeps it (``keep_pending``);
        every position after it is one of its results."""
        if not self.keep_pending or not self._pending:
            return None
        # every pending call belongs to the newest calling block
        return _num(next(iter(self._pending.values()))) - 1

    def _pending_tail_need(self) -> int:
        """What the management rendering needs for the pending batch: its
        call block and results so far, a placeholder per pending call, and per
        pending call what the guard's shortest rejection notice may cost beyond
        that placeholder (0 with the shipped tokenizers: the notice is shorter),
        so a result that would not fit can always be rejected (see
        :meth:`_guard`)."""
        p = self._pending_tail_start()
        if p is None:
            return 0
        shown = self._pos_tree.total(p, len(self._blocks)) + self._pending_cost()
        return shown + len(self._pending) * self._notice_reserve()

    def _notice_reserve(self) -> int:
        """Tokens the shortest rejection notice (:data:`SHORTEST_REJECTION`)
        may cost beyond a pending placeholder, bounded over call ids (a longer
        id lengthens the placeholder only)."""
        if self._notice_bound is None:

            def cost(text: str) -> int:
                return message_tokens(
                    {"role": "tool", "tool_call_id": "", "content": text}, self.tokenizer
                )

            self._notice_bound = max(0, cost(SHORTEST_REJECTION) - cost(pending_text("")))
        return self._notice_bound

    def _pending_cost_add(self, cids: list[str]) -> None:
        """Update the running sum for calls just added to ``_pending``. A
        single call (then the only pending one: a tool-call message waits for
        no earlier call) leaves the sum describing the pending calls before
        it, so its placeholder is counted when the sum is first read, which,
        when its result arrives before any rendering, is never."""
        if len(cids) == 1:
            return
        c = self._pending_sum
        if c is not None and c[0] is self._pending and c[1] == len(self._pending) - len(cids):
            add = sum(self._placeholder_cost(cid) for cid in cids)
            self._pending_sum = (self._pending, len(self._pending), c[2] + add)
        else:
            self._pending_sum = None

    def _pending_cost_drop(self, cid: str) -> None:
        """Update the running sum for a call about to leave ``_pending``."""
        c = self._pending_sum
        if c is not None and c[0] is self._pending and c[1] == len(self._pending):
            self._pending_sum = (self._pending, c[1] - 1, c[2] - self._placeholder_cost(cid))
        else:
            self._pending_sum = None

    @property
    def mode(self) -> str:
        """``"overflow"`` if the candidate rendering exceeds the budget, else ``"normal"``."""
        with self._lock:
            return "overflow" if self._candidate_total() > self.budget else "normal"

    @locked
    def render(self, format: str = "openai") -> Rendering:
        """Assemble C_t = preflight(render(V_t) + handles(A_t) + D_t, B).

        Normal mode returns the ordinary rendering. If it would exceed the
        budget, returns the management rendering instead: protocol, pinned
        blocks and a dashboard whose ledger lists the largest visible units
        (the rest folded), with task tools refused until room is freed.
        Either way ``tokens <= budget``.

        ``format="anthropic"`` gives the same rendering as an Anthropic
        Messages request (see :func:`openai_to_anthropic`): visible messages
        registered in that format come back with their original blocks, and a
        ``cache_control`` breakpoint ends the stable prefix. A call whose id an
        earlier call already used (OpenAI allows it once answered) gets a
        unique ``tool_use`` id derived from its block (see
        :func:`anthropic_tool_use_ids`), and its result the same
        ``tool_use_id``; the OpenAI rendering keeps the ids as registered.

        ``format="responses"`` gives it as OpenAI Responses input items: a
        message registered from items comes back as those items (a model
        turn's reasoning items, with ``encrypted_content``, before its
        ``function_call`` items: one block, so they are kept, archived and
        restored together), anything else as message, ``function_call`` or
        ``function_call_output`` items; ``tools`` as Responses function tools.

        ``format="gemini"`` gives it as Gemini ``generateContent`` contents
        (:func:`~vistalab.workspace.openai_to_gemini`): ``messages`` are the
        contents (a content registered with :func:`register_gemini` comes back
        as its original parts, thought signatures included), ``system`` the
        ``systemInstruction`` parts, ``tools`` one ``{"functionDeclarations"}``
        tool.

        Parameters
        ----------
        format : str
            ``"openai"`` (default, chat messages), ``"anthropic"`` (Messages),
            ``"responses"`` (Responses input items) or ``"gemini"`` (Gemini
            contents).

        Returns
        -------
        Rendering
            ``messages`` and ``tools`` to send, ``tokens`` (never above the
            budget), ``mode`` (``normal`` or ``overflow``), the ``dashboard`` text
            and the token split.
        """
        if not isinstance(format, str) or format not in FORMATS:
            raise UnknownNameError("render format", format, FORMATS)
        r = self._render_openai()
        if format == "openai":
            return r
        if format == "responses":
            req = openai_to_responses(r.messages, r.tools, originals=self._items_lookup())
            return replace_rendering(
                r,
                format="responses",
                messages=tuple(freeze(m) for m in req["input"]),
                tools=tuple(freeze(t) for t in req.get("tools", ())),
            )
        if format == "gemini":
            from ._gemini import gemini_request

            greq = gemini_request(r.messages, r.tools, codec=self._codec)
            return replace_rendering(
                r,
                format="gemini",
                messages=tuple(freeze(c) for c in greq["contents"]),
                tools=tuple(freeze(t) for t in greq.get("tools", ())),
                system=tuple(freeze(p) for p in greq.get("systemInstruction", {}).get("parts", ())),
            )
        ids = self._tool_use_ids(r.messages, r.mode)
        req = openai_to_anthropic(r.messages, r.tools, codec=self._codec, tool_use_ids=ids)
        return replace_rendering(
            r,
            format="anthropic",
            messages=tuple(freeze(m) for m in req["messages"]),
            tools=tuple(freeze(t) for t in req.get("tools", ())),
            system=tuple(freeze(b) for b in req.get("system", ())),
        )

    def _items_lookup(self) -> Any:
        """A rendered message's original Responses items: those of the block
        whose position rendered it (found by identity: rendered messages are
        the position messages themselves), when that block is visible and
        unchanged (not archived, offloaded, deleted or replaced by the guard's
        rejection notice)."""
        codec, pos_msgs, keys = self._codec, self._pos_msgs, self._pos_key
        source: dict[int, str] = {}
        for b in self._blocks:
            key = keys[b.seq - 1]
            if (not isinstance(key, tuple) or key[:1] == ("v",)) and not b.rejected:
                for m in pos_msgs[b.seq - 1]:
                    source[id(m)] = b.id

        def lookup(m: Any) -> list[dict[str, Any]] | None:
            return codec.block_items(source.get(id(m)))

        return lookup

    def _tool_use_ids(
        self, messages: tuple[dict[str, Any], ...], mode: str
    ) -> list[dict[str, str] | None] | None:
        """Per rendered message, its call ids renamed for the Anthropic request
        (None when no call id was ever reused)."""
        blocks = self._blocks
        renames, used = self._anth_renames, self._anth_used
        for b in blocks[self._anth_done :]:  # only the blocks registered since
            if b.type is BlockType.TOOL_CALL:
                extend_tool_use_ids(b.id, b.call_ids, used, renames)
        self._anth_done = len(blocks)
        if not renames:
            return None
        # Rendered messages are the position messages themselves (or, for a
        # call still waiting, a placeholder answering a pending call): find
        # each message's block by identity, not by where it sits. Only the
        # calls renamed and the results answering them can need a new id.
        pos_msgs = self._pos_msgs
        source: dict[int, Block] = {}
        for renamed in {o for o, _ in renames}:
            seqs = [_num(renamed), *(_num(c) for c in self._results_of(renamed))]
            for seq in seqs:
                for m in pos_msgs[seq - 1]:
                    source[id(m)] = blocks[seq - 1]
        # A normal rendering ends with the placeholders answering the pending
        # calls, then the dashboard; so does an overflow one that keeps the
        # pending batch (keep_pending; else it stops before such a call).
        n, k = len(messages), len(self._pending)
        ends_pending = mode == "normal" or self._pending_tail_start() is not None
        placeholders = {id(m) for m in messages[n - 1 - k : n - 1]} if ends_pending else set()
        out: list[dict[str, str] | None] = []
        for m in messages:
            src = source.get(id(m))
            if m.get("tool_calls") and src is not None:
                pairs = [(src.id, c["id"]) for c in m["tool_calls"]]
            elif m.get("role") == "tool":
                cid = m["tool_call_id"]
                owner: str | None
                if src is not None:
                    owner = src.parent
                elif id(m) in placeholders:
                    owner = self._pending.get(cid)
                else:  # a result of a call that kept its ids
                    owner = None
                pairs = [(owner or "", cid)]
            else:
                pairs = []
            ids = {cid: renames[(o, cid)] for o, cid in pairs if (o, cid) in renames}
            out.append(ids or None)
        return out

    def _render_openai(self) -> Rendering:
        cand = self._candidate_counts()
        if cand.total <= self.budget and cand.dashboard is None:
            cand = self._candidate()
        # block_tokens and prompt_tokens are built from these if read (O(units)).
        columns = self._ledger.token_columns(self._unit_prompt_tokens)
        head: list[dict[str, Any]] = [self._protocol_msg] if self._protocol_msg else []
        common: dict[str, Any] = dict(
            tools=self._tools,
            budget=self.budget,
            candidate_tokens=cand.total,
            overhead_tokens=cand.overhead,
            conversation_tokens=cand.conversation,
            dashboard_tokens=cand.dashboard_tokens,
            block_tokens={},
            prompt_tokens={},
            turn=self._turn,
        )
        if cand.total <= self.budget:
            assert cand.dashboard is not None
            msgs = head
            self._messages_upto(len(self._pos_msgs), msgs)
            msgs.extend(freeze(m) for m in self._pending_msgs())
            msgs.append(FrozenDict(role=DASHBOARD_ROLE, content=cand.dashboard))
            # The per-unit figures are built from the columns, the state hash
            # from its inputs, each when first read.
            del common["block_tokens"], common["prompt_tokens"]
            return normal_rendering(
                columns,
                (self._config_digest, self._turn, self._acc),
                messages=tuple(msgs),
                tokens=cand.total,
                mode="normal",
                dashboard=cand.dashboard,
                allowed_tools=_tool_names(self._tools),
                **common,
            )
        common["state_hash"] = self._hash_of(self._turn, self._acc)  # state_hash(), our lock
        return with_token_columns(self._management(cand, head, common), columns)

    def _management(
        self, cand: Candidate, head: list[dict[str, Any]], common: dict[str, Any]
    ) -> Rendering:
        pinned_msgs: list[dict[str, Any]] = []
        pinned_cost = 0
        for seq in self._pinned_seqs:
            pinned_msgs.extend(self._pos_msgs[seq - 1])
            pinned_cost += self._pos_cost[seq - 1]
        fixed = self._fixed_tools + REPLY_PRIMING + self._protocol_cost + pinned_cost
        # The batch still waiting for results stays, whole, after everything
        # else (the pending invariant; protocol validity: its calls are answered
        # by what arrived and by placeholders). The floor reserved its room.
        tail: list[dict[str, Any]] = []
        p = self._pending_tail_start()
        if p is not None:
            self._messages_between(p, len(self._blocks), tail)
            tail.extend(freeze(m) for m in self._pending_msgs())
            fixed += self._pos_tree.total(p, len(self._blocks)) + self._pending_cost()
        # The ledger's index gives every figure below in O(rows printed): the
        # visible units by size and in runs of positions, the archived units in
        # position order, and the sums of both.
        led = self._ledger
        ix = led.index
        assert ix is not None
        uid_at = led.uid_at
        archived_note = ""
        arch = ix.archived
        if arch:
            archived_note = f"(+{len(arch)} archived units: {arch.summary()}; ~{arch.tokens:,} tok)"
        k = min(self.dashboard_config.management_rows, ix.visible)
        # The k largest (ties: older first), listed in position order, as the
        # overflow heading says (the paper's ledger is by ID, "Dashboard format").
        ranked = ix.largest(k)
        while True:
            top = sorted(ranked[:k])
            units = [uid_at(f) for f in top]
            shown = [self._ledger_row(u) for u in units]
            rows = [led.rows[u] for u in units]
            notes = []
            if ix.visible > k:
                notes.append(
                    f"(+{ix.visible - k} more visible units: {ix.visible_summary(top, uid_at)}; "
                    f"~{ix.visible_tokens - sum(r.tokens for r in shown):,} tok)"
                )
            if archived_note:
                notes.append(archived_note)
            dash = self._renderer.management(
                shown,
                notes,
                budget=self.budget,
                used=cand.total,
                overhead=cand.overhead,
                conversation=cand.conversation,
                dashboard=cand.dashboard_tokens,
                pieces=[(r.prefix, r.suffix, r.piece_tokens) for r in rows],
            )
            total = fixed + dash.message_tokens
            if total <= self.budget or k == 0:
                break
            k //= 2
        # The configuration-time floor guarantees the row-less form fits.
        assert total <= self.budget, (total, self.budget)
        if self.cache_prefix:
            body, extra, _ = self._management_prefix(self.budget - total)
            total += extra
        else:
            body = pinned_msgs
        # body is a new list: extend it in place (a copy touches every message)
        body[:0] = head
        body += tail
        body.append(FrozenDict(role=DASHBOARD_ROLE, content=dash.text))
        return Rendering(
            messages=tuple(body),
            tokens=total,
            mode="overflow",
            dashboard=dash.text,
            allowed_tools=CONTEXT_TOOL_NAMES,
            **common,
        )

    def _management_prefix(self, room: int) -> tuple[list[dict[str, Any]], int, int]:
        """The conversation's longest leading run of positions that fits in
        ``room`` extra tokens, then the pinned blocks after it.

        The request the agent saw just before the overflow began with the same
        positions, so a provider's prompt cache still holds them (the management
        rendering no longer throws the conversation prefix away). A tool-call
        position and the tool messages after it are taken whole or not at all,
        and the run stops before a call still waiting for results, so the
        rendering stays protocol-valid. Pinned positions are already paid for
        in the floor; returns the messages, the extra tokens they add and the
        number of leading positions shown.
        """
        s = self._prefix_cut(room)
        p = self._pending_tail_start()
        if p is not None:
            # The kept batch follows the prefix: a prefix ending in an assistant
            # message would merge with the batch's turn (Anthropic merges
            # consecutive assistant messages, Responses reads consecutive model
            # items as one turn), rewriting it; end the prefix before it.
            pinned, pos_msgs = self._pinned_seqs, self._pos_msgs
            if bisect.bisect_right(pinned, s) == len(pinned):  # no pinned block after it
                while 0 < s and (not pos_msgs[s - 1] or pos_msgs[s - 1][-1]["role"] == "assistant"):
                    s -= 1
        out: list[dict[str, Any]] = []
        self._messages_upto(s, out)
        extra = self._pos_tree.total(0, s)
        pos_msgs, pinned = self._pos_msgs, self._pinned_seqs
        for seq in pinned[bisect.bisect_right(pinned, s) :]:
            out.extend(pos_msgs[seq - 1])
        return out, extra, s

    def _prefix_cut(self, room: int) -> int:
        """How many leading positions the walk over whole units shows in
        ``room`` tokens. Position costs are non-negative, so the units that fit
        one after another are the ones whose running total stays within room:
        found by one search of the position tree, then moved back to the start
        of the unit it falls in, and before a call still waiting for results."""
        n = len(self._blocks)
        j, _ = self._pos_tree.first_reaching(0, n, room + 1)
        s = n if j is None else j
        cont = self._cont
        while 0 < s < n and cont[s]:
            s -= 1
        if self._pending:  # every pending call belongs to the newest calling block
            s = min(s, _num(next(iter(self._pending.values()))) - 1)
        return s

    def _prefix_cut_estimate(self) -> int:
        """Leading positions an overflow rendering would show now, estimated with
        the worst-case management dashboard (so never more than it shows)."""
        room = self.budget - self.management_floor()
        return self._prefix_cut(max(room, 0))

    @locked
    def dashboard(self) -> str:
        """The dashboard text the agent sees now (management form in overflow).

        Returns
        -------
        str
            The ``<context_workspace_status>`` message's text; its rows as
            records are :attr:`ledger_rows`.
        """
        return self.render().dashboard

    @property
    @locked
    def ledger_rows(self) -> tuple[LedgerRow, ...]:
        """The dashboard's ledger as records: one row per actionable unit, in
        the dashboard's order, with exactly its columns (ID, ~Tok, Age, Type,
        Level, Parent, Status; the paper's "Dashboard format").

        Every unit is listed, including those the dashboard does not print
        row by row: archived units folded into its summary line (all but the
        newest ``DashboardConfig.archived_rows``) and, in overflow, the visible
        units past ``DashboardConfig.management_rows``. In a normal rendering
        with nothing folded, ``parse_ledger_rows(ws.dashboard())`` equals this.

        Returns
        -------
        tuple of LedgerRow
            ``unit_id`` (``B<n>`` or ``G<n>``), ``tokens`` (~Tok), ``age`` in
            turns, ``type``, ``level``, ``parent`` and ``status``
            (``visible``, ``archived``, ...), as the dashboard prints them.
        """
        led = self._ledger
        return tuple(self._ledger_row(u) for c in led.occupied() for u in led.chunk(c).uids)

    @locked
    def gate(self, tool_name: str) -> str | None:
        """None if ``tool_name`` may run now, else the refusal notice to return
        as its result (task tools are refused in overflow mode, eq. overflow).

        Parameters
        ----------
        tool_name : str
            The tool about to run.

        Returns
        -------
        str or None
            None when it may run; else the notice to register as its result.

        Raises
        ------
        WorkspaceArgumentError
            ``tool_name`` is not a non-empty string (None would read as "allowed").
        """
        if not isinstance(tool_name, str) or not tool_name:
            raise WorkspaceArgumentError(
                "tool_name",
                tool_name,
                "must be a non-empty string, the name of the tool about to run",
                "pass the tool's name, e.g. ws.gate('fetch')",
            )
        if tool_name in CONTEXT_TOOL_NAMES:
            return None
        total = self._candidate_total()
        if total <= self.budget:
            return None
        return (
            f"[refused] {tool_name} is disabled: the context (~{total:,} tokens) exceeds the "
            f"budget ({self.budget:,}). Free at least ~{total - self.budget:,} tokens with "
            "context_workspace_archive or context_workspace_delete, then call it again."
        )
