"""Registration: each chat message becomes one block (a tool result through the
budget guard), with the protocol's pairing rules checked at the door."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vistalab._core import check_depth

from ._accounting import (
    CHUNK_CHARS,
    count_text,
    message_tokens,
)
from ._atomic import atomic
from ._errors import (
    BudgetConfigError,
    ProtocolOrderError,
    WorkspaceArgumentError,
)
from ._events import CallParts
from ._formats import detect_format, to_openai_messages
from ._guard import GuardLayer
from ._positions import is_usual
from ._records import (
    Block,
    BlockType,
    Status,
    ToolCall,
    block_payload_bytes,
    fresh_block,
)
from ._responses_wire import responses_to_openai
from ._sdk import plain_sdk
from ._state import locked
from ._validate import _content_iv, _num, _text_iv, _tool_call_message, _tool_calls_iv, own_text

__all__ = ["RegisterLayer"]


class RegisterLayer(GuardLayer):
    """Message registration (the transitions that grow V_t)."""

    @locked
    def register_message(self, message: Mapping[str, Any], *, pinned: bool | None = None) -> str:
        """Register one OpenAI chat message; returns its block ID.

        Dispatches on ``role``: ``system``, ``user``, ``assistant`` (with or
        without ``tool_calls``) or ``tool``. Content may be a string, None
        (assistant with tool calls) or a list of content parts: text parts
        are joined with a newline; any other part (an image, audio, a file)
        becomes an opaque stand-in line charged ``OPAQUE_PART_TOKENS`` (see
        :func:`~vistalab.workspace._accounting.opaque_part_text`). The OpenAI
        SDK's ``ChatCompletionMessage`` (and any object of that shape) is
        accepted as it is (:func:`~vistalab.workspace._sdk.plain_sdk`).

        Legacy function calling is accepted: an assistant message with
        ``function_call`` registers as a tool call with the id
        ``fc_B<n>`` (``B<n>`` its block), and a ``function`` message answers
        the pending call of that function name.

        Parameters
        ----------
        message : Mapping
            One OpenAI chat message (``role``, ``content``, ``tool_calls``,
            ``tool_call_id``), or an SDK message object.
        pinned : bool or None
            Keep it in every rendering; None takes the role's default (system
            and the first user message are pinned).

        Returns
        -------
        str
            Its block ID (``B<n>``).

        Raises
        ------
        WorkspaceArgumentError
            Not a message (unknown role, malformed content or calls).
        ProtocolOrderError
            Out of protocol order (a result with no pending call, a message
            while a call waits for its result).
        """
        message = plain_sdk(message, "message")
        if not isinstance(message, Mapping):
            raise WorkspaceArgumentError(
                "message", message, "must be a mapping (an OpenAI message)"
            )
        check_depth("message", message, error=WorkspaceArgumentError)
        role = message.get("role")
        content = _content_iv(message.get("content"), role)
        if role == "system":
            return self.register_system(content or "", pinned=True if pinned is None else pinned)
        if role == "user":
            return self.register_user(content or "", pinned=pinned)
        if role == "assistant":
            calls = message.get("tool_calls")
            legacy = message.get("function_call")
            if not calls and legacy is not None:
                calls = [
                    {"id": f"fc_B{len(self._blocks) + 1}", "type": "function", "function": legacy}
                ]
            if calls:
                if pinned:
                    raise WorkspaceArgumentError(
                        "pinned", pinned, "must be False for tool calls", "only plain messages pin"
                    )
                return self.register_tool_call(calls, content=content)
            return self.register_assistant(content or "", pinned=bool(pinned))
        if role == "tool":
            if pinned:
                raise WorkspaceArgumentError(
                    "pinned", pinned, "must be False for tool results", "only plain messages pin"
                )
            cid: Any = message.get("tool_call_id")
            return self.register_tool_result(cid, content or "", name=message.get("name"))
        if role == "function":  # legacy: answers the pending call of that name
            if pinned:
                raise WorkspaceArgumentError(
                    "pinned", pinned, "must be False for tool results", "only plain messages pin"
                )
            fname = message.get("name")
            owner = next(iter(self._pending.values()), None)
            match = [
                cid
                for cid in self._pending
                if owner is not None
                and self._blocks[_num(owner) - 1].call_names[
                    self._call_slot(self._blocks[_num(owner) - 1], cid)
                ]
                == fname
            ]
            if not match:
                raise ProtocolOrderError(
                    f"function message for {fname!r} answers no pending call of that name "
                    f"(pending: {', '.join(sorted(self._pending)) or 'none'})"
                )
            return self.register_tool_result(match[0], content or "")
        raise WorkspaceArgumentError(
            "role",
            role,
            "must be one of system, user, assistant, tool, function",
            "fix the message's role",
        )

    @locked
    def register_messages(
        self, messages: Sequence[Mapping[str, Any]] | Mapping[str, Any], *, system: Any = None
    ) -> list[str]:
        """Register messages in either wire format; returns the new block IDs.

        ``messages`` is a list of OpenAI chat messages or of Anthropic
        Messages (``{"role", "content": [blocks]}``; text, tool_use,
        tool_result with ``is_error``, thinking, redacted_thinking, image,
        document, and server tools: ``server_tool_use`` / ``mcp_tool_use`` with
        their result blocks, kept inside their assistant turn),
        or a ``{"system", "messages"}`` document; ``system`` is an Anthropic
        top-level system prompt. Anthropic turns are projected onto the
        engine's messages (:data:`PROJECTION_RULES`): a user turn's tool
        results become one block each, in order; the originals are kept so
        visible blocks render back unchanged with ``render(format="anthropic")``.
        Registration stops at the first refused message (earlier ones stay).
        The OpenAI and Anthropic SDKs' message and content-block objects are
        accepted wherever a dict is (:func:`~vistalab.workspace._sdk.plain_sdk`).

        Parameters
        ----------
        messages : sequence of dict, or dict
            OpenAI chat messages, Anthropic Messages, or a ``{"system",
            "messages"}`` document.
        system : str or list, optional
            An Anthropic top-level system prompt.

        Returns
        -------
        list of str
            The new block IDs, in order.

        Raises
        ------
        WorkspaceArgumentError
            ``messages`` is a string or bytes, a single message (a mapping
            that is not a ``{"messages": [...]}`` document), or not iterable:
            refused before anything is registered.
        """
        messages, system = plain_sdk(messages, "messages"), plain_sdk(system, "system")
        _messages_iv(messages, system)
        check_depth("messages", messages, error=WorkspaceArgumentError)
        if system is not None:
            messages = {"system": system, "messages": messages}
        if detect_format(messages) == "responses":
            # Each block keeps the items it was projected from (a model turn's
            # reasoning with its calls), for the Responses rendering.
            doc = messages.get("input", []) if isinstance(messages, Mapping) else messages
            out = []
            for m, originals in responses_to_openai(doc):
                bid = self.register_message(m)
                self._codec.record_block_items(bid, originals)
                out.append(bid)
            return out
        items = to_openai_messages(messages, codec=self._codec)
        return [self.register_message(m) for m in items]

    @atomic
    def register_system(self, content: str, *, pinned: bool = True) -> str:
        """Register a system message (pinned by default).

        Parameters
        ----------
        content : str
            The message text.
        pinned : bool
            Keep it in every rendering; a pinned block is never archived or deleted.

        Returns
        -------
        str
            Its block ID (``B<n>``).

        Raises
        ------
        ProtocolOrderError
            A tool call is still waiting for its result.
        WorkspaceArgumentError
            ``content`` is not a string or ``pinned`` not a bool.
        BudgetConfigError
            Pinning it would leave the budget unable to hold the management
            rendering.
        """
        return self._register_plain(BlockType.SYSTEM, "system", content, pinned)

    @atomic
    def register_user(self, content: str, *, pinned: bool | None = None) -> str:
        """Register a user message; the first one (the task) is pinned by default.

        Parameters
        ----------
        content : str
            The message text.
        pinned : bool or None
            Keep it in every rendering; None pins the first user message only.

        Returns
        -------
        str
            Its block ID (``B<n>``).

        Raises
        ------
        ProtocolOrderError
            A tool call is still waiting for its result.
        WorkspaceArgumentError
            ``content`` is not a string or ``pinned`` not a bool.
        BudgetConfigError
            Pinning it would leave the budget unable to hold the management
            rendering.
        """
        if pinned is None:
            pinned = not self._user_seen
        return self._register_plain(BlockType.USER, "user", content, pinned)

    @atomic
    def register_assistant(self, content: str, *, pinned: bool = False) -> str:
        """Register an assistant message without tool calls.

        Parameters
        ----------
        content : str
            The message text.
        pinned : bool
            Keep it in every rendering (default False).

        Returns
        -------
        str
            Its block ID (``B<n>``).

        Raises
        ------
        ProtocolOrderError
            A tool call is still waiting for its result.
        WorkspaceArgumentError
            ``content`` is not a string or ``pinned`` not a bool.
        BudgetConfigError
            Pinning it would leave the budget unable to hold the management
            rendering.
        """
        return self._register_plain(BlockType.ASSISTANT, "assistant", content, pinned)

    def _register_plain(self, btype: BlockType, role: str, content: Any, pinned: Any) -> str:
        content = own_text(_text_iv("content", content))
        if not isinstance(pinned, bool):
            raise WorkspaceArgumentError("pinned", pinned, "must be True or False")
        self._no_pending(role)
        msg = {"role": role, "content": content}
        cost = message_tokens(msg, self.tokenizer)
        if pinned:
            self._check_floor(extra_pinned=cost, what=f"this {btype.value}")
        seed = ((msg,), cost)
        data = content.encode("utf-8")
        self._turn += 1
        seq = len(self._blocks) + 1
        b = _new_block(
            seq,
            btype,
            role,
            self._turn,
            content,
            data,
            status=Status.PINNED if pinned else Status.VISIBLE,
            tokens=cost,
        )
        self._append_block(b, seed)
        if pinned:
            self._pinned_cost += cost
        if btype is BlockType.USER:
            self._user_seen = True
        self._log(
            "register",
            {"message": self._logged_message(b.seq, msg), "pinned": pinned},
            True,
            b.id,
            {},
        )
        return b.id

    @atomic
    def register_tool_call(
        self, tool_calls: Sequence[Mapping[str, Any]], *, content: str | None = None
    ) -> str:
        """Register an assistant message that calls tools (one block for all
        its parallel calls, so they share one fate). At most ``MAX_TOOL_CALLS``
        calls per message (a larger list is refused, naming the cap); answering
        any one of them costs O(1).

        Parameters
        ----------
        tool_calls : sequence of dict
            The calls in OpenAI format (``id``, ``type``, ``function`` with
            ``name`` and ``arguments``), or the OpenAI SDK's
            ``ChatCompletionMessageToolCall`` objects as they are.
        content : str or None
            Text the assistant wrote beside the calls.

        Returns
        -------
        str
            The tool-call block's ID (``B<n>``); each call now waits for
            :meth:`register_tool_result`.

        Raises
        ------
        ProtocolOrderError
            An earlier call is still waiting for its result.
        WorkspaceArgumentError
            Malformed calls (no id, no name, arguments not a string), or more
            than ``MAX_TOOL_CALLS`` of them.
        BudgetConfigError
            With ``keep_pending``, the management rendering could not keep
            this message while its calls wait (floor, message, placeholders
            and a rejection notice's room per call above the budget).
        """
        tool_calls = plain_sdk(tool_calls, "tool_calls")
        if content is not None:
            content = own_text(_text_iv("content", content))
        calls = _tool_calls_iv(tool_calls)
        # An id may be reused once its earlier call was answered (provider APIs
        # accept it and real traces do it); results pair with calls by order.
        self._no_pending("assistant")
        msg = _tool_call_message(content, calls)
        cost = message_tokens(msg, self.tokenizer)
        if self.keep_pending:
            self._check_pending_room(cost, [c.id for c in calls])
        self._turn += 1
        seq = len(self._blocks) + 1
        data = block_payload_bytes(BlockType.TOOL_CALL, content, calls)
        b = _new_block(
            seq,
            BlockType.TOOL_CALL,
            "assistant",
            self._turn,
            content,
            data,
            calls=calls,
            tokens=cost,
        )
        bid = b.id  # one ID string per block, shared by every index that names it
        for c in calls:
            self._call_owner[c.id] = bid
            self._pending_put(c.id, bid)
        self._pending_cost_add([c.id for c in calls])
        self._append_block(b, ((msg,), cost))
        self._log("register", {"message": self._logged_message(seq, msg, b)}, True, bid, {})
        return bid

    @atomic
    def register_tool_result(
        self, tool_call_id: str, content: str, *, name: str | None = None
    ) -> str:
        """Register the result of a pending tool call, through the budget guard.

        The guard admits a result while the candidate rendering stays under
        ``hard_limit``; otherwise it offloads the oldest visible raw tool
        results to recoverable placeholders; if the result still cannot fit
        (or could never fit in a normal rendering of ``budget`` tokens) it is
        replaced by a compact rejection notice. The block ID is returned in
        every case, so the call stays answered exactly once.

        Parameters
        ----------
        tool_call_id : str
            The ID of the pending call this result answers.
        content : str
            The tool's output (for a context tool, the text :meth:`dispatch` returned).
        name : str or None
            The function's name (default: the pending call's).

        Returns
        -------
        str
            The tool-result block's ID (``B<n>``).

        Raises
        ------
        ProtocolOrderError
            No pending call has this ID.
        WorkspaceArgumentError
            ``tool_call_id`` is empty, or ``content`` is not a string or holds
            an unpaired surrogate (a long result refused by the per-result cap
            is checked only as far as the guard read it: see
            :meth:`_register_long_result`).
        """
        if not isinstance(content, str) or len(content) <= CHUNK_CHARS:
            content = own_text(_text_iv("content", content))
        if not isinstance(tool_call_id, str) or not tool_call_id:
            raise WorkspaceArgumentError(
                "tool_call_id", tool_call_id, "must be a non-empty string", "pass the call's id"
            )
        _text_iv("tool_call_id", tool_call_id)
        if tool_call_id not in self._pending and tool_call_id in self._answered:
            raise ProtocolOrderError(
                f"tool call {tool_call_id!r} was already answered by "
                f"{self._answered[tool_call_id]}; each call gets exactly one result"
            )
        if tool_call_id not in self._pending:
            known = ", ".join(sorted(self._pending)) or "none"
            raise ProtocolOrderError(
                f"tool result for {tool_call_id!r} does not answer a pending call of the "
                f"latest tool-call block (pending: {known})"
            )
        parent_id = self._pending[tool_call_id]
        parent = self._blocks[_num(parent_id) - 1]  # a pending call's block exists
        slot = self._call_slot(parent, tool_call_id)
        call_name = parent.call_names[slot]
        # The call's own id string (equal to this one): the result's record,
        # rendering and log share it instead of holding a copy each.
        calls = parent.tool_calls  # the call itself, not the derived ID tuple (O(calls))
        tool_call_id = calls[slot].id if calls is not None else parent.call_ids[slot]
        if name is not None and not isinstance(name, str):
            raise WorkspaceArgumentError("name", name, "must be a string or None")
        seq = len(self._blocks) + 1
        # The tool message, built once: what the position renders while the
        # call is in the prompt, what a long result is counted from, and (with
        # the name, when one is given) what the event log records.
        msg = {"role": "tool", "tool_call_id": tool_call_id, "content": content}
        if len(content) > CHUNK_CHARS and parent.in_prompt:
            b, effects = self._register_long_result(seq, parent, msg, call_name)
        else:
            if len(content) > CHUNK_CHARS:  # a shorter one was checked above
                _text_iv("content", content)
            data = content.encode("utf-8")
            # The usual case (its call in the prompt): the position renders the
            # tool message, counted here once and seeded into the layout, so the
            # record is made with its cost (tokens are not hashed) and set once.
            in_prompt = parent.in_prompt
            b = _new_block(
                seq,
                BlockType.TOOL_RESULT,
                "tool",
                parent.turn,
                content,
                data,
                parent=parent_id,
                tool_call_id=tool_call_id,
                name=call_name,
                tokens=message_tokens(msg, self.tokenizer) if in_prompt else 0,
            )
            self._answer(b)
            self._append_block(b, ((msg,), b.tokens) if in_prompt else None)
            effects = self._guard(b)
        logged = msg if name is None else {**msg, "name": name}
        self._log("register", {"message": self._logged_message(b.seq, logged)}, True, b.id, effects)
        return b.id

    @locked
    def call_floor(
        self, tool_calls: Sequence[Mapping[str, Any]], *, content: str | None = None
    ) -> int:
        """The management floor once this tool-call message is registered and
        its calls wait for results: what :meth:`register_tool_call` needs the
        budget to hold (with ``keep_pending``; else the floor itself).

        Parameters
        ----------
        tool_calls : sequence of dict
            The calls, as :meth:`register_tool_call` takes them.
        content : str or None
            Text the assistant wrote beside the calls.

        Returns
        -------
        int
            Tokens: :meth:`management_floor` plus, with ``keep_pending``, the
            call message, a placeholder per call and room for a rejection
            notice per call.
        """
        tool_calls = plain_sdk(tool_calls, "tool_calls")
        if content is not None:
            content = _text_iv("content", content)
        calls = _tool_calls_iv(tool_calls)
        if not self.keep_pending:
            return self.management_floor()
        cost = message_tokens(_tool_call_message(content, calls), self.tokenizer)
        return self.management_floor() + self._pending_room(cost, [c.id for c in calls])

    def _pending_room(self, cost: int, call_ids: list[str]) -> int:
        return cost + sum(self._placeholder_cost(cid) + self._notice_reserve() for cid in call_ids)

    def _check_pending_room(self, cost: int, call_ids: list[str]) -> None:
        """Refuse a tool-call message the management rendering could not keep
        while its calls wait for results (``keep_pending``): the floor plus the
        message, a placeholder per call and room for a rejection notice per
        call must fit the budget. The placeholders are first bounded by their
        bytes: a message that fits with those bounds fits, uncounted."""
        reserve = self._notice_reserve()
        bound = cost + sum(self._placeholder_bound(cid) + reserve for cid in call_ids)
        if self.management_floor() + bound <= self.budget:
            return
        need = self._pending_room(cost, call_ids)
        floor = self.management_floor() + need
        if floor <= self.budget:
            return
        raise BudgetConfigError(
            "tool_calls",
            f"{len(call_ids)} call(s) of ~{cost:,} tokens",
            f"would make the management rendering, which keeps calls still waiting for "
            f"their results, need {floor:,} > budget {self.budget:,} tokens (floor "
            f"{self.management_floor():,}, the call message {cost:,}, placeholders and "
            f"room for a rejection notice per call {need - cost:,})",
            "raise the budget, or have the agent issue fewer or shorter calls",
        )

    def _call_slot(self, owner: Block, call_id: str) -> int:
        """Index of ``call_id`` among ``owner``'s calls: O(1) after the first
        look-up for that block (its call ids never change; the map of the
        latest calling block is kept, since only its calls can be pending)."""
        cached = self._slot_cache
        if cached is None or cached[0] != owner.id:
            slots: dict[str, int] = {}
            for i, c in enumerate(owner.call_ids):
                slots.setdefault(c, i)
            cached = self._slot_cache = (owner.id, slots)
        return cached[1][call_id]

    def _answer(self, b: Block) -> None:
        assert b.tool_call_id is not None and b.parent is not None
        self._pending_cost_drop(b.tool_call_id)
        self._pending_pop(b.tool_call_id)
        self._answered[b.tool_call_id] = b.id
        self._add_result(b.parent, b.id)

    def _register_long_result(
        self, seq: int, parent: Block, msg: dict[str, Any], call_name: str
    ) -> tuple[Block, dict[str, Any]]:
        """A long result (its call in the prompt): counted in pieces, and only
        until it passes the per-result cap, so an oversized one is refused after
        reading about cap tokens of it, not all of it, with no copy of it held
        beyond one piece. Same outcome as the ordinary path, except that a
        refused one reports a lower bound on its size (``attempted_at_least``).

        Unpaired surrogates: a result that is admitted is checked whole (the
        ordinary path's error, naming the index), as is one whose count fails
        (a tokenizer may raise on such a character). One refused by the cap is
        not read past what the refusal needed, so the check, one pass over the
        text, does not set a refusal's cost; its text reaches only the event
        log, whose JSON form escapes any unpaired surrogate (``Event.to_json``:
        valid UTF-8 that reads back to the same text), never a rendering, a
        record or the archive. ``msg``: the result's tool message."""
        tool_call_id, content = msg["tool_call_id"], msg["content"]
        head = message_tokens({**msg, "content": ""}, self.tokenizer)
        cap = self._result_cap(parent.id)
        try:
            body, exact = count_text(self.tokenizer, content, limit=cap - head)
        except Exception:
            _text_iv("content", content)  # the clear error, when the text is at fault
            raise
        if exact:
            _text_iv("content", content)
            cost = message_tokens(msg, self.tokenizer) if "[opaque " in content else head + body
            size, digest = _utf8_size_sha256(content)
        else:
            # Refused below: this record is replaced by the notice's before
            # anything can read it, so neither its payload digest nor its UTF-8
            # size is computed (the character count stands in, a lower bound).
            cost, size, digest = head + body, len(content), ""
        b = Block(
            id=f"B{seq}",
            seq=seq,
            type=BlockType.TOOL_RESULT,
            role="tool",
            turn=parent.turn,
            parent=parent.id,
            status=Status.VISIBLE,
            group=None,
            level=0,
            content=content,
            tool_calls=None,
            call_ids=(),
            call_names=(),
            tool_call_id=tool_call_id,
            name=call_name,
            size=size,
            sha256=digest,
            tokens=cost,  # not hashed: the ordinary path sets it when it counts
        )
        self._answer(b)
        self._append_block(b, ((msg,), cost))
        if exact:
            return b, self._guard(b)
        return b, self._reject(b, cost, cap, self.hard_limit, decided_by="cap", at_least=True)

    def _logged_message(
        self, seq: int, msg: dict[str, Any], usual: Block | None = None
    ) -> dict[str, Any]:
        """``msg`` for the event log: one copy of a message per block, not one in
        the log and another in the rendering cache. While block ``seq``'s
        position holds its record (messages not built yet), a tool call's is
        its text and the record's own calls (the log keeps a tool result's as
        its call id and text); otherwise the very (read-only) dict the position
        renders, when the two are equal. ``usual``: a block ``msg`` is known to
        be the usual message of (the layout held it lazily for ``(msg,)``)."""
        shown = self._pos_msgs.held(seq - 1)
        if isinstance(shown, Block):  # not built yet: the log keeps the record's parts
            if shown.type is BlockType.TOOL_CALL and (shown is usual or is_usual(shown, (msg,))):
                return CallParts((shown.content, shown.tool_calls))  # type: ignore[return-value]
            return msg
        if len(shown) == 1 and shown[0] == msg:
            return shown[0]
        return msg

    def _no_pending(self, role: str) -> None:
        if self._pending:
            owner = next(iter(self._pending.values()))
            raise ProtocolOrderError(
                f"cannot register a {role} message: {owner} has unanswered tool calls "
                f"{sorted(self._pending)}; register their results first (a failed tool "
                "can return an error string)"
            )


#: One tuple per distinct list of called function names (most blocks of a
#: session call the same few tools), bounded: beyond it a block keeps its own.
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
_NAMES_CAP = 4096


def _shared_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names``, or the equal tuple an earlier block already holds."""
    hit = _NAMES.get(names)
    if hit is not None:
        return hit
    if len(_NAMES) < _NAMES_CAP:
        _NAMES[names] = names
    return names


def _new_block(
    seq: int,
    btype: BlockType,
    role: str,
    turn: int,
    content: str | None,
    data: bytes,
    *,
    status: Status = Status.VISIBLE,
    calls: tuple[ToolCall, ...] | None = None,
    parent: str | None = None,
    tool_call_id: str | None = None,
    name: str | None = None,
    tokens: int = 0,
) -> Block:
    """The record of a newly registered message (``data``: its exact payload bytes)."""
    names = tuple([c.name for c in calls]) if calls else ()
    return fresh_block(
        seq,
        btype,
        role,
        turn,
        parent,
        status,
        content,
        calls,
        _shared_names(names),
        tool_call_id,
        name,
        len(data),
        hashlib.sha256(data).digest(),
        tokens,
    )


def _utf8_size_sha256(text: str) -> tuple[int, str]:
    """UTF-8 size and sha256 of ``text``, encoded a piece at a time (a piece
    boundary never splits a character: ``str`` slices are whole code points)."""
    h = hashlib.sha256()
    size = 0
    for i in range(0, len(text), CHUNK_CHARS):
        piece = text[i : i + CHUNK_CHARS].encode("utf-8")
        size += len(piece)
        h.update(piece)
    return size, h.hexdigest()


def _messages_iv(messages: Any, system: Any) -> None:
    """Refuse, naming ``messages``, what would be iterated wrongly: a string
    (its characters), a single message mapping (its keys) or a non-iterable."""
    fix = "pass a list of messages, e.g. [{'role': 'user', 'content': 'hello'}]"
    if isinstance(messages, (str, bytes, bytearray)):
        raise WorkspaceArgumentError(
            "messages",
            messages,
            "must be a list of messages, not text",
            fix + ", or call register_user('hello')",
        )
    if isinstance(messages, Mapping):
        if system is None and isinstance(messages.get("messages"), (list, tuple)):
            return  # a {"system", "messages"} document
        raise WorkspaceArgumentError(
            "messages",
            messages,
            "must be a list of messages (or, without system=, a {'system', 'messages'} "
            "document); a single message is a mapping",
            fix + ", or call register_message(message)",
        )
    if not isinstance(messages, Iterable):
        raise WorkspaceArgumentError("messages", messages, "must be a list of messages", fix)
