"""The reference context workspace W_t = (V_t, A_t): registration, archive /
delete / restore transitions, the budget guard, preflight and rendering."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import heapq
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from ._accounting import (
    REPLY_PRIMING,
    canonical_json,
    message_tokens,
    tools_tokens,
)
from ._dashboard import DASHBOARD_ROLE, DashboardConfig, DashboardRenderer, LedgerRow
from ._errors import (
    BlockStateError,
    BudgetConfigError,
    PayloadIntegrityError,
    ProtocolOrderError,
    ReplayMismatchError,
    UnknownBlockError,
    UnknownNameError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import Event, read_event_log
from ._handles import (
    GroupEntry,
    encode_group_payload,
    handle_text,
    member_stub,
    offload_text,
    orphan_prefix,
    parse_group_payload,
    pending_text,
    rejection_text,
    tombstone_text,
)
from ._protocol import (
    ARCHIVE_TOOL,
    CONTEXT_TOOL_NAMES,
    DELETE_TOOL,
    PROTOCOL_TEXT,
    READ_PATH_TOOL,
    budget_notice,
    context_tool_schemas,
)
from ._records import (
    Block,
    BlockType,
    Group,
    PayloadRef,
    Status,
    ToolCall,
    block_payload_bytes,
    decode_block_payload,
    record_digest,
)
from ._spec import (
    BlockRange,
    BlockRef,
    ByteRange,
    GroupRef,
    LineRange,
    MemberSelector,
    apply_range,
    format_id_ranges,
    parse_block_spec,
    parse_selector,
)
from ._store import MemoryStore, PayloadStore, atomic_write, sha256_hex, verify_payload
from ._tokenizers import Tokenizer, get_tokenizer

__all__ = [
    "Workspace",
    "Rendering",
    "ArchiveResult",
    "DeleteResult",
    "RestoreResult",
    "MAX_REPLACEMENT_CHARS",
]

#: Longest replacement (index) text accepted for an archive handle.
MAX_REPLACEMENT_CHARS = 2000
_HASH_MOD = 1 << 256
_SNAPSHOT_FORMAT = "vista-workspace"
_SNAPSHOT_VERSION = 1


# ----------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Rendering:
    """What the model receives at one turn, after preflight (eq. workspace-render).

    Attributes
    ----------
    messages : tuple of dict
        OpenAI chat messages, protocol-valid. Shared with the engine's cache:
        treat as read-only (``as_request()`` returns deep copies).
    tools : tuple of dict
        Tool schemas sent with the request: task tools then context tools,
        in both modes (so prompt caches survive an overflow).
    tokens : int
        |C_t|: tokens of this request; ``tokens <= budget`` always.
    budget : int
        B.
    mode : str
        ``"normal"`` if the candidate fits (|C~_t| <= B), else ``"overflow"``
        (the management rendering, eq. overflow).
    candidate_tokens : int
        |C~_t|: tokens of the ordinary rendering, what preflight compared
        with B and what the dashboard's budget line prints.
    overhead_tokens, conversation_tokens, dashboard_tokens : int
        The dashboard's split of ``candidate_tokens``: tool schemas, protocol,
        system blocks and reply priming / everything else / the candidate
        dashboard message.
    dashboard : str
        The dashboard text in this rendering (the management dashboard in
        overflow mode).
    block_tokens : dict
        ~Tok of every actionable unit, as the ledger prints it: the prompt
        cost of a visible unit, the last visible cost of an archived one.
    prompt_tokens : dict
        Tokens each actionable unit costs in the candidate rendering now
        (content, or handle plus protocol stubs when archived).
    allowed_tools : tuple of str
        Tools the agent may call this turn (context tools only in overflow).
    state_hash : str
        Canonical hash of the workspace this rendering shows.
    turn : int
        Root-turn counter at rendering time.
    """

    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    tokens: int
    budget: int
    mode: str
    candidate_tokens: int
    overhead_tokens: int
    conversation_tokens: int
    dashboard_tokens: int
    dashboard: str
    block_tokens: dict[str, int]
    prompt_tokens: dict[str, int]
    allowed_tools: tuple[str, ...]
    state_hash: str
    turn: int

    def as_request(self) -> dict[str, Any]:
        """``{"messages": [...], "tools": [...]}`` as independent plain data."""
        return json.loads(json.dumps({"messages": list(self.messages), "tools": list(self.tools)}))


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """Outcome of one archive action.

    Attributes
    ----------
    unit_id : str
        The archived block (single block) or the new group ``G<n>``.
    path : str
        Payload path to read for recovery.
    level : int
        Compression level of the new unit.
    size : int
        Payload bytes.
    sha256 : str
        Hex sha256 of the payload.
    members : tuple of str
        Units folded into the new unit (the block itself for one block).
    freed_tokens : int
        Net prompt tokens freed (content out, handle in; the dashboard row
        change is not included).
    """

    unit_id: str
    path: str
    level: int
    size: int
    sha256: str
    members: tuple[str, ...]
    freed_tokens: int


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """Outcome of one delete action: the units removed, every block that became
    a tombstone, the payload keys removed and the net prompt tokens freed."""

    units: tuple[str, ...]
    blocks: tuple[str, ...]
    payloads_removed: tuple[str, ...]
    freed_tokens: int


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """Outcome of one restore: units opened one level, blocks back in the
    prompt, and the net prompt tokens added."""

    units: tuple[str, ...]
    blocks: tuple[str, ...]
    added_tokens: int


@dataclass(frozen=True, slots=True)
class _Candidate:
    version: int
    total: int
    overhead: int
    conversation: int
    dashboard: str
    dashboard_tokens: int
    units: tuple[str, ...]  # top-level units in position order
    archived: tuple[str, ...]


# ----------------------------------------------------------------- engine


class Workspace:
    """A context workspace with a hard token budget.

    Parameters
    ----------
    budget : int
        B, the hard bound on every rendering's tokens.
    tokenizer : str or Tokenizer
        ``"cl100k_base"`` (default, offline) or ``"approx"``, or an instance.
    store : PayloadStore, optional
        Where archived payloads go; default an in-memory store.
    hard_limit : int, optional
        Ceiling the budget guard keeps the candidate rendering under when it
        admits tool results (default ``2 * budget``). Between ``budget`` and
        ``hard_limit`` the agent is in overflow mode and makes room itself;
        past it the guard offloads old raw tool results or rejects the new one.
    task_tools : sequence of dict
        The agent's ordinary (environment) tool schemas, OpenAI format; they
        are counted in the overhead and refused in overflow mode.
    protocol : bool
        Prepend the paper's context-management protocol and budget notice as
        a system message (default True).
    dashboard : DashboardConfig, optional
        Ledger layout.
    include_read_path_tool : bool
        Also expose a ``read_path`` tool schema (default False: recovery is
        an ordinary file read).
    log_path : str or PathLike, optional
        Append every event to this JSONL file as it happens.

    Raises
    ------
    BudgetConfigError
        If ``budget`` cannot hold the management rendering.
    """

    def __init__(
        self,
        budget: int,
        *,
        tokenizer: str | Tokenizer = "cl100k_base",
        store: PayloadStore | None = None,
        hard_limit: int | None = None,
        task_tools: Sequence[Mapping[str, Any]] = (),
        protocol: bool = True,
        dashboard: DashboardConfig | None = None,
        include_read_path_tool: bool = False,
        log_path: str | os.PathLike[str] | None = None,
    ) -> None:
        cfg = _workspace_iv(
            budget, hard_limit, task_tools, protocol, dashboard, include_read_path_tool, store
        )
        self.budget: int = cfg["budget"]
        self.hard_limit: int = cfg["hard_limit"]
        self.tokenizer: Tokenizer = get_tokenizer(tokenizer)
        self.store: PayloadStore = store if store is not None else MemoryStore()
        self.protocol: bool = cfg["protocol"]
        self.dashboard_config: DashboardConfig = cfg["dashboard"]
        self._task_tools: tuple[dict[str, Any], ...] = cfg["task_tools"]
        self._include_read_path = cfg["include_read_path_tool"]
        self._tools: tuple[dict[str, Any], ...] = self._task_tools + tuple(
            context_tool_schemas(include_read_path=self._include_read_path)
        )
        self._renderer = DashboardRenderer(self.tokenizer, self.dashboard_config)

        # The state W_t.
        self._blocks: list[Block] = []
        self._groups: dict[str, Group] = {}
        self._group_seq = 0
        self._turn = 0
        self._pending: dict[str, str] = {}  # unanswered call id -> tool_call block id
        self._call_owner: dict[str, str] = {}  # every call id ever -> tool_call block id
        self._answered: dict[str, str] = {}  # call id -> tool_result block id
        self._children: dict[str, list[str]] = {}  # tool_call block -> result blocks
        self._payload_owner: dict[str, str] = {}  # store key -> unit id
        self._user_seen = False

        # Incremental canonical hash: sum of record digests (order is in the records).
        self._digests: dict[str, int] = {}
        self._acc = 0
        self._config_plain = self._config_for_hash()
        self._config_digest = record_digest(self._config_plain)

        # Render caches (derived, never hashed).
        self._pos_msgs: list[tuple[dict[str, Any], ...]] = []
        self._pos_cost: list[int] = []
        self._pos_key: list[tuple[Any, ...]] = []
        self._sys_cost = 0  # positions of system blocks (overhead)
        self._conv_cost = 0  # every other position
        self._group_tokens: dict[str, int] = {}
        self._group_span: dict[str, tuple[int, int]] = {}  # first, newest leaf seq
        self._urow: dict[str, tuple[Any, ...]] = {}
        self._order: list[str] | None = []
        self._version = 0
        self._candidate_cache: _Candidate | None = None
        self._pinned_cost = 0
        # Incremental preflight (additive tokenizers, no folded rows): the ledger
        # body costs the sum of its rows' cached pieces plus one age piece per
        # row, so these sums give |C~_t| without walking the units.
        self._rows_ptok = 0  # sum of row prefix + suffix tokens
        self._rows_archived = 0  # rows of archived units
        self._row_turns: dict[int, int] = {}  # row turn -> rows with that turn
        self._age_tokens_cache: tuple[int, int] | None = None  # (turn, age tokens)
        self._total_cache: tuple[int, int] | None = None  # (version, |C~_t|)
        self._gprompt: dict[str, int] = {}  # top-level group -> prompt tokens of its leaves

        self._fixed_tools = tools_tokens(self._tools, self.tokenizer)
        self._protocol_msg: dict[str, Any] | None = None
        self._protocol_cost = 0
        if self.protocol:
            text = PROTOCOL_TEXT + "\n\n" + budget_notice(self.budget)
            self._protocol_msg = {"role": "system", "content": text}
            self._protocol_cost = message_tokens(self._protocol_msg, self.tokenizer)
        self._mgmt_dash_bound = self._renderer.worst_case_management_bytes(self.budget)
        # Smallest dashboard a normal rendering can carry (head and one row).
        self._dash_floor = self._renderer.ledger(
            (LedgerRow("B1", 0, 0, "tool_result", 0, "-", "visible"),),
            (),
            budget=self.budget,
            overhead=0,
            conversation=0,
        ).message_tokens
        self._check_floor(extra_pinned=0, what=None)

        # Event log.
        self._events: list[Event] = []
        self._event_state: list[tuple[int, int]] = []  # (turn, hash accumulator) per event
        # A substituted fork's log rewrite, applied when the old events are read:
        # (first event, end, [(event, new content, digest change)]).
        self._rewrite: tuple[int, int, tuple[tuple[int, str, int], ...]] | None = None
        self._event_base = 0
        self._log_fh: IO[str] | None = None
        if log_path is not None:
            self._log_fh = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        self._log("init", {"config": self.config()}, True, "", {})

    # ============================================================ config
    def config(self) -> dict[str, Any]:
        """The construction parameters as plain data (recorded in the ``init`` event)."""
        return {
            "budget": self.budget,
            "hard_limit": self.hard_limit,
            "tokenizer": self.tokenizer.name,
            "task_tools": [dict(t) for t in self._task_tools],
            "protocol": self.protocol,
            "dashboard": self.dashboard_config.to_plain(),
            "include_read_path_tool": self._include_read_path,
            "store_root": self.store.root,
        }

    def _config_for_hash(self) -> dict[str, Any]:
        cfg = self.config()
        # Where the store lives is not part of W_t: the same workspace on
        # another machine or in memory hashes the same.
        del cfg["store_root"]
        return {"kind": "config", **cfg}

    @property
    def overhead_tokens(self) -> int:
        """Tool schemas + protocol + system blocks + reply priming."""
        return self._fixed_tools + REPLY_PRIMING + self._protocol_cost + self._sys_cost

    def management_floor(self) -> int:
        """Upper bound on the smallest management rendering; must stay <= budget."""
        return (
            self._fixed_tools
            + REPLY_PRIMING
            + self._protocol_cost
            + self._pinned_cost
            + self._mgmt_dash_bound
        )

    def _check_floor(self, *, extra_pinned: int, what: str | None) -> None:
        floor = self.management_floor() + extra_pinned
        if floor <= self.budget:
            return
        parts = (
            f"tool schemas {self._fixed_tools:,}, protocol {self._protocol_cost:,}, pinned "
            f"{self._pinned_cost + extra_pinned:,}, worst-case management dashboard "
            f"{self._mgmt_dash_bound:,}, reply priming {REPLY_PRIMING}"
        )
        if what is None:
            raise BudgetConfigError(
                "budget",
                self.budget,
                f"must be at least {floor:,} tokens so the overflow (management) rendering "
                f"always fits ({parts})",
                "raise the budget, drop task tool schemas or set protocol=False",
            )
        raise BudgetConfigError(
            "pinned",
            True,
            f"would make the management rendering need {floor:,} > budget {self.budget:,} "
            f"tokens ({parts})",
            f"register {what} unpinned or raise the budget",
        )

    # ============================================================ hashing
    def _set_record(self, rec: Block | Group, *, hashed: bool = True) -> None:
        if isinstance(rec, Block):
            self._blocks[rec.seq - 1] = rec
        else:
            self._groups[rec.id] = rec
        if hashed:
            plain = rec.to_plain(with_content=False) if isinstance(rec, Block) else rec.to_plain()
            new = record_digest(plain)
            old = self._digests.get(rec.id, 0)
            self._acc = (self._acc - old + new) % _HASH_MOD
            self._digests[rec.id] = new

    def _drop_group_record(self, gid: str) -> None:
        del self._groups[gid]
        self._acc = (self._acc - self._digests.pop(gid)) % _HASH_MOD
        self._drop_urow(gid)

    def state_hash(self) -> str:
        """Canonical sha256 of W_t: blocks, groups, payload checksums, turn and config.

        Stable across processes and platforms (canonical JSON). The store's
        location and the ID counters are not part of it, so archiving a unit
        and restoring it gives back the same hash (the paper's Q_undo).
        """
        return self._hash_of(self._turn, self._acc)

    def _hash_of(self, turn: int, acc: int) -> str:
        h = hashlib.sha256(b"vista-workspace-v1\0")
        h.update(self._config_digest.to_bytes(32, "big"))
        h.update(turn.to_bytes(8, "big"))
        h.update(acc.to_bytes(32, "big"))
        return h.hexdigest()

    def recompute_state_hash(self) -> str:
        """The canonical hash recomputed from scratch (checks the incremental one)."""
        acc = 0
        for b in self._blocks:
            acc = (acc + record_digest(b.to_plain(with_content=False))) % _HASH_MOD
        for g in self._groups.values():
            acc = (acc + record_digest(g.to_plain())) % _HASH_MOD
        saved = self._acc
        self._acc = acc
        try:
            return self.state_hash()
        finally:
            self._acc = saved

    # ============================================================ accessors
    @property
    def blocks(self) -> tuple[Block, ...]:
        """Every registered block in order, tombstones included."""
        return tuple(self._blocks)

    @property
    def groups(self) -> dict[str, Group]:
        """Live archive groups by ID."""
        return dict(self._groups)

    @property
    def events(self) -> tuple[Event, ...]:
        """The event log so far (``init`` first)."""
        self._apply_rewrite()
        return tuple(self._events)

    @property
    def event_count(self) -> int:
        """Sequence number the next event will get (the log's length)."""
        return self._event_base + len(self._events)

    def events_since(self, seq: int) -> tuple[Event, ...]:
        """Events with sequence number ``>= seq`` (without copying the older log)."""
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise WorkspaceArgumentError(
                "seq", seq, "must be a non-negative integer", "pass len(ws.events) from earlier"
            )
        start = max(0, seq - self._event_base)
        if self._rewrite is not None and start < self._rewrite[1]:
            self._apply_rewrite()
        return tuple(self._events[start:])

    @property
    def turn(self) -> int:
        """Root-turn counter (advances with every non-tool-result registration)."""
        return self._turn

    @property
    def pending_calls(self) -> tuple[str, ...]:
        """Tool-call IDs still waiting for a registered result."""
        return tuple(self._pending)

    def block(self, block_id: str) -> Block:
        """The block record for ``B<n>``."""
        n = _block_number(block_id)
        if n is None or n > len(self._blocks):
            raise UnknownBlockError(str(block_id), self._no_block_detail())
        return self._blocks[n - 1]

    def payload_path(self, key: str) -> str:
        """Display path of a store key."""
        return f"{self.store.root}/{key}"

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The context tools in OpenAI function-calling format (fresh copies)."""
        return context_tool_schemas(include_read_path=self._include_read_path)

    @property
    def tools(self) -> tuple[dict[str, Any], ...]:
        """Every schema sent with a request: task tools, then context tools."""
        return self._tools

    def _no_block_detail(self) -> str:
        n = len(self._blocks)
        return (
            f"does not exist (the newest block is B{n})" if n else "does not exist (no blocks yet)"
        )

    # ============================================================ registration
    def register_message(self, message: Mapping[str, Any], *, pinned: bool | None = None) -> str:
        """Register one OpenAI chat message; returns its block ID.

        Dispatches on ``role``: ``system``, ``user``, ``assistant`` (with or
        without ``tool_calls``) or ``tool``. Content may be a string, None
        (assistant with tool calls) or a list of ``{"type": "text"}`` parts,
        which are joined.
        """
        if not isinstance(message, Mapping):
            raise WorkspaceArgumentError(
                "message", message, "must be a mapping (an OpenAI message)"
            )
        role = message.get("role")
        content = _content_iv(message.get("content"), role)
        if role == "system":
            return self.register_system(content or "", pinned=True if pinned is None else pinned)
        if role == "user":
            return self.register_user(content or "", pinned=pinned)
        if role == "assistant":
            calls = message.get("tool_calls")
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
        raise WorkspaceArgumentError(
            "role", role, "must be one of system, user, assistant, tool", "fix the message's role"
        )

    def register_system(self, content: str, *, pinned: bool = True) -> str:
        """Register a system message (pinned by default)."""
        return self._register_plain(BlockType.SYSTEM, "system", content, pinned)

    def register_user(self, content: str, *, pinned: bool | None = None) -> str:
        """Register a user message; the first one (the task) is pinned by default."""
        if pinned is None:
            pinned = not self._user_seen
        return self._register_plain(BlockType.USER, "user", content, pinned)

    def register_assistant(self, content: str, *, pinned: bool = False) -> str:
        """Register an assistant message without tool calls."""
        return self._register_plain(BlockType.ASSISTANT, "assistant", content, pinned)

    def _register_plain(self, btype: BlockType, role: str, content: Any, pinned: Any) -> str:
        content = _text_iv("content", content)
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
        b = Block(
            id=f"B{seq}",
            seq=seq,
            type=btype,
            role=role,
            turn=self._turn,
            parent=None,
            status=Status.PINNED if pinned else Status.VISIBLE,
            group=None,
            level=0,
            content=content,
            tool_calls=None,
            call_ids=(),
            call_names=(),
            tool_call_id=None,
            name=None,
            size=len(data),
            sha256=sha256_hex(data),
            tokens=cost,
        )
        self._append_block(b, seed)
        if pinned:
            self._pinned_cost += cost
        if btype is BlockType.USER:
            self._user_seen = True
        self._log(
            "register",
            {"message": {"role": role, "content": content}, "pinned": pinned},
            True,
            b.id,
            {},
        )
        return b.id

    def register_tool_call(
        self, tool_calls: Sequence[Mapping[str, Any]], *, content: str | None = None
    ) -> str:
        """Register an assistant message that calls tools (one block for all
        its parallel calls, so they share one fate)."""
        if content is not None:
            content = _text_iv("content", content)
        calls = _tool_calls_iv(tool_calls)
        for c in calls:
            if c.id in self._call_owner:
                raise ProtocolOrderError(
                    f"tool call id {c.id!r} was already used by {self._call_owner[c.id]}; "
                    "call ids must be unique within a conversation"
                )
        self._no_pending("assistant")
        self._turn += 1
        seq = len(self._blocks) + 1
        bid = f"B{seq}"
        data = block_payload_bytes(BlockType.TOOL_CALL, content, calls)
        msg = _tool_call_message(content, calls)
        cost = message_tokens(msg, self.tokenizer)
        b = Block(
            id=bid,
            seq=seq,
            type=BlockType.TOOL_CALL,
            role="assistant",
            turn=self._turn,
            parent=None,
            status=Status.VISIBLE,
            group=None,
            level=0,
            content=content,
            tool_calls=calls,
            call_ids=tuple(c.id for c in calls),
            call_names=tuple(c.name for c in calls),
            tool_call_id=None,
            name=None,
            size=len(data),
            sha256=sha256_hex(data),
            tokens=cost,
        )
        for c in calls:
            self._call_owner[c.id] = bid
            self._pending[c.id] = bid
        self._children[bid] = []
        self._append_block(b, ((msg,), cost))
        self._log(
            "register",
            {
                "message": {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [c.to_openai() for c in calls],
                }
            },
            True,
            bid,
            {},
        )
        return bid

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
        """
        content = _text_iv("content", content)
        if not isinstance(tool_call_id, str) or not tool_call_id:
            raise WorkspaceArgumentError(
                "tool_call_id", tool_call_id, "must be a non-empty string", "pass the call's id"
            )
        if tool_call_id in self._answered:
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
        parent = self.block(parent_id)
        call_name = parent.call_names[parent.call_ids.index(tool_call_id)]
        if name is not None and not isinstance(name, str):
            raise WorkspaceArgumentError("name", name, "must be a string or None")
        original = content
        seq = len(self._blocks) + 1
        data = content.encode("utf-8")
        b = Block(
            id=f"B{seq}",
            seq=seq,
            type=BlockType.TOOL_RESULT,
            role="tool",
            turn=parent.turn,
            parent=parent_id,
            status=Status.VISIBLE,
            group=None,
            level=0,
            content=content,
            tool_calls=None,
            call_ids=(),
            call_names=(),
            tool_call_id=tool_call_id,
            name=call_name,
            size=len(data),
            sha256=sha256_hex(data),
            tokens=0,
        )
        del self._pending[tool_call_id]
        self._answered[tool_call_id] = b.id
        self._children[parent_id].append(b.id)
        self._append_block(b)
        effects = self._guard(b)
        self._log(
            "register",
            {
                "message": {
                    "role": "tool",
                    "tool_call_id": tool_call_id,
                    "content": original,
                    **({"name": name} if name is not None else {}),
                }
            },
            True,
            b.id,
            effects,
        )
        return b.id

    def _no_pending(self, role: str) -> None:
        if self._pending:
            owner = next(iter(self._pending.values()))
            raise ProtocolOrderError(
                f"cannot register a {role} message: {owner} has unanswered tool calls "
                f"{sorted(self._pending)}; register their results first (a failed tool "
                "can return an error string)"
            )

    def _append_block(
        self, b: Block, seed: tuple[tuple[dict[str, Any], ...], int] | None = None
    ) -> None:
        self._blocks.append(b)
        self._pos_msgs.append(())
        self._pos_cost.append(0)
        self._pos_key.append(())
        self._set_record(b)
        if seed is None:
            self._refresh([b.seq])
        else:  # the caller already counted the message; do not tokenise twice
            msgs, cost = seed
            self._pos_msgs[-1], self._pos_cost[-1] = msgs, cost
            self._pos_key[-1] = self._position_key(b)
            if b.type is BlockType.SYSTEM:
                self._sys_cost += cost
            else:
                self._conv_cost += cost
            self._set_urow(b.id)
        self._touch()

    # ============================================================ budget guard
    def _guard(self, b: Block) -> dict[str, Any]:
        """Admit, offload older raw results, or reject ``b`` (just registered)."""
        new_cost = self._pos_cost[b.seq - 1]
        parent_cost = self._pos_cost[_num(b.parent) - 1] if b.parent else 0
        # A result that could never sit in a normal rendering of B tokens is
        # useless to admit: the agent could only archive it unseen.
        cap = self.budget - (
            self._fixed_tools
            + REPLY_PRIMING
            + self._protocol_cost
            + self._pinned_cost
            + parent_cost
            + self._dash_floor
        )
        if new_cost > cap:
            return self._reject(b, new_cost, cap, self.hard_limit)
        total = self._candidate_total()
        if total <= self.hard_limit:
            return {"admitted": True}
        # Plan on exact message costs (oldest raw results first), then check
        # the exact total, which also sees the ledger rows change.
        eligible = (
            x
            for x in self._blocks
            if x.type is BlockType.TOOL_RESULT
            and x.status is Status.VISIBLE
            and not x.rejected
            and x.seq != b.seq
        )
        offloaded: list[str] = []
        excess = total - self.hard_limit
        plan: list[Block] = []
        gain = 0
        for x in eligible:
            plan.append(x)
            gain += self._pos_cost[x.seq - 1] - self._offload_cost(x)
            if gain >= excess:
                break
        while True:
            if gain < excess:
                out = self._reject(b, new_cost, cap, self.hard_limit, total=total)
                if offloaded:
                    out["offloaded"] = offloaded
                return out
            for x in plan:
                self._offload(x)
                offloaded.append(x.id)
            total = self._candidate_total()
            if total <= self.hard_limit:
                return {"admitted": True, "offloaded": offloaded}
            excess = total - self.hard_limit
            plan, gain = [], 0
            for x in eligible:
                plan.append(x)
                gain += self._pos_cost[x.seq - 1] - self._offload_cost(x)
                if gain >= excess:
                    break

    def _offload_cost(self, x: Block) -> int:
        text = offload_text(
            x.id, path=self.payload_path(f"{x.id}.txt"), size=x.size, sha256=x.sha256
        )
        return sum(message_tokens(m, self.tokenizer) for m in self._wrap_tool_text(x, text))

    def _offload(self, x: Block) -> None:
        key = f"{x.id}.txt"
        data = block_payload_bytes(x.type, x.content, x.tool_calls)
        ref = self._put(key, data)  # durable before the content leaves the prompt
        self._set_record(
            replace(
                x,
                status=Status.OFFLOADED,
                level=1,
                content=None,
                payload=ref,
            )
        )
        self._payload_owner[key] = x.id
        self._refresh([x.seq])
        self._touch()

    def _reject(
        self, b: Block, new_cost: int, cap: int, limit: int, *, total: int | None = None
    ) -> dict[str, Any]:
        current = (total if total is not None else self._candidate_total()) - new_cost
        notice = rejection_text(current=current, limit=limit, attempted=new_cost, cap=cap)
        data = notice.encode("utf-8")
        self._set_record(
            replace(b, content=notice, size=len(data), sha256=sha256_hex(data), rejected=True)
        )
        self._refresh([b.seq])
        self._touch()
        return {
            "admitted": False,
            "rejected": True,
            "attempted_tokens": new_cost,
            "current_tokens": current,
            "limit": limit,
        }

    # ============================================================ rendering cache
    def _touch(self) -> None:
        self._version += 1

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

    def _top_unit(self, b: Block) -> str:
        if b.group is None:
            return b.id
        gid = b.group
        while True:
            p = self._groups[gid].parent
            if p is None:
                return gid
            gid = p

    def _position_key(self, b: Block) -> tuple[Any, ...]:
        tool_form = b.type is BlockType.TOOL_RESULT and self._parent_in_prompt(b)
        if b.status is Status.DELETED:
            return ("d", tool_form)
        if b.in_prompt:
            return ("v", tool_form, b.status, b.sha256)
        if b.group is None:
            return ("a", tool_form, b.status, b.payload, b.replacement)
        top = self._top_unit(b)
        return ("g", tool_form, top, self._group_span[top][0] == b.seq)

    def _position_messages(self, b: Block, key: tuple[Any, ...]) -> tuple[dict[str, Any], ...]:
        kind, tool_form = key[0], key[1]
        is_result = b.type is BlockType.TOOL_RESULT
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
        top, first = key[2], key[3]
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

    def _refresh(self, seqs: Iterable[int]) -> None:
        """Recompute the rendered messages and costs of these block positions."""
        for s in sorted(set(seqs)):
            b = self._blocks[s - 1]
            key = self._position_key(b)
            if key == self._pos_key[s - 1]:
                continue
            msgs = self._position_messages(b, key)
            cost = sum(message_tokens(m, self.tokenizer) for m in msgs)
            old = self._pos_cost[s - 1]
            if b.type is BlockType.SYSTEM:
                self._sys_cost += cost - old
            else:
                self._conv_cost += cost - old
            self._pos_msgs[s - 1] = msgs
            self._pos_cost[s - 1] = cost
            self._pos_key[s - 1] = key
            if b.group is not None:
                self._gprompt.pop(self._top_unit(b), None)
            if b.in_prompt and b.tokens != cost:
                self._set_record(replace(b, tokens=cost), hashed=False)
            if b.group is None and b.status is not Status.DELETED:
                self._set_urow(b.id)
            else:
                self._drop_urow(b.id)

    def _affected(self, leaves: Iterable[int]) -> set[int]:
        """Leaves plus the results of any tool-call leaf (their form depends on it)."""
        out = set(leaves)
        for s in list(out):
            b = self._blocks[s - 1]
            if b.type is BlockType.TOOL_CALL:
                out.update(_num(c) for c in self._children.get(b.id, ()))
        return out

    def _leaves(self, unit_id: str) -> list[int]:
        if unit_id.startswith("B"):
            return [_num(unit_id)]
        out: list[int] = []
        for m in self._groups[unit_id].members:
            out.extend(self._leaves(m))
        return out

    # ============================================================ candidate / preflight
    # Ledger rows are cached per top-level unit and rebuilt only when the unit
    # changes; a turn then costs one age look-up and three appends per row.
    # Row tuple: (first leaf seq, turn, archived?, newest leaf seq, ~Tok,
    #             prefix, suffix, piece tokens, type, level, parent, status)
    def _set_urow(self, uid: str) -> None:
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
            type_, level, parent, status = b.type.value, b.level, b.parent or "-", b.status.value
        prefix, suffix, ptok = self._renderer.row_parts(uid, tokens, type_, level, parent, status)
        old = self._urow.get(uid)
        if old is not None:
            self._row_out(old)
        row = self._urow[uid] = (
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
        self._row_in(row)
        if uid[0] == "G":
            self._gprompt.pop(uid, None)
        if old is None or old[0] != first:
            order = self._order
            if (
                order is not None
                and old is None
                and (not order or self._urow[order[-1]][0] < first)
            ):
                order.append(uid)
            else:
                self._order = None

    def _drop_urow(self, uid: str) -> None:
        row = self._urow.pop(uid, None)
        if row is not None:
            self._row_out(row)
            self._order = None
        self._gprompt.pop(uid, None)

    def _row_in(self, row: tuple[Any, ...]) -> None:
        self._rows_ptok += row[7]
        self._rows_archived += row[2]
        t = row[1]
        self._row_turns[t] = self._row_turns.get(t, 0) + 1
        cached = self._age_tokens_cache
        if cached is not None:
            if cached[0] == self._turn:
                n = self._renderer.age_piece(self._turn - t)[1]
                self._age_tokens_cache = (cached[0], cached[1] + n)
            else:
                self._age_tokens_cache = None

    def _row_out(self, row: tuple[Any, ...]) -> None:
        self._rows_ptok -= row[7]
        self._rows_archived -= row[2]
        t = row[1]
        left = self._row_turns[t] - 1
        if left:
            self._row_turns[t] = left
        else:
            del self._row_turns[t]
        cached = self._age_tokens_cache
        if cached is not None:
            if cached[0] == self._turn:
                n = self._renderer.age_piece(self._turn - t)[1]
                self._age_tokens_cache = (cached[0], cached[1] - n)
            else:
                self._age_tokens_cache = None

    def _age_tokens(self) -> int:
        """Tokens of every row's age piece; ages shift with each new turn, so the
        sum is rebuilt from the per-turn row counts once per turn."""
        cached = self._age_tokens_cache
        turn = self._turn
        if cached is not None and cached[0] == turn:
            return cached[1]
        age_piece = self._renderer.age_piece
        n = sum(cnt * age_piece(turn - t)[1] for t, cnt in self._row_turns.items())
        self._age_tokens_cache = (turn, n)
        return n

    def _unit_order(self) -> list[str]:
        """Top-level units in position order (by first leaf)."""
        if self._order is None:
            urow = self._urow
            self._order = sorted(urow, key=lambda u: urow[u][0])
        return self._order

    def _ledger_row(self, uid: str) -> LedgerRow:
        r = self._urow[uid]
        return LedgerRow(uid, r[4], self._turn - r[1], r[8], r[9], r[10], r[11])

    def _candidate(self) -> _Candidate:
        cached = self._candidate_cache
        if cached is not None and cached.version == self._version:
            return cached
        order = self._unit_order()
        urow = self._urow
        keep = self.dashboard_config.archived_rows
        archived = [u for u in order if urow[u][2]]
        hidden: set[str] = set()
        notes: list[str] = []
        if len(archived) > keep:
            shown = set(heapq.nlargest(keep, archived, key=lambda u: urow[u][3])) if keep else set()
            folded = [u for u in archived if u not in shown]
            hidden = set(folded)
            notes.append(
                f"(+{len(folded)} older archived units folded: {_id_summary(folded)}; "
                f"~{sum(urow[u][4] for u in folded):,} tok)"
            )
        parts: list[str] = []
        tokens = 0
        for note in notes:
            text, n = self._renderer.note_piece(note)
            parts.append(text)
            tokens += n
        age_piece = self._renderer.age_piece
        turn = self._turn
        for u in order:
            if u in hidden:
                continue
            r = urow[u]
            age, n = age_piece(turn - r[1])
            parts.append(r[5])
            parts.append(age)
            parts.append(r[6])
            tokens += r[7] + n
        overhead = self.overhead_tokens
        conversation = self._conv_cost + self._pending_cost()
        dash = self._renderer.ledger_body(
            "".join(parts),
            tokens,
            budget=self.budget,
            overhead=overhead,
            conversation=conversation,
        )
        cand = _Candidate(
            version=self._version,
            total=overhead + conversation + dash.message_tokens,
            overhead=overhead,
            conversation=conversation,
            dashboard=dash.text,
            dashboard_tokens=dash.message_tokens,
            units=tuple(order),
            archived=tuple(archived),
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
        total = self._fast_total()
        if total is None:
            return self._candidate().total
        self._total_cache = (self._version, total)
        return total

    def _fast_total(self) -> int | None:
        """|C~_t| from the maintained row sums in O(1) (O(rows) once per turn for
        the ages), or None where it does not apply: a tokenizer that is not
        additive, or folded archived rows (the fold note's text changes)."""
        if not self._renderer.additive or self._rows_archived > self.dashboard_config.archived_rows:
            return None
        overhead = self.overhead_tokens
        conversation = self._conv_cost + self._pending_cost()
        dash = self._renderer.ledger_tokens(
            self._rows_ptok + self._age_tokens(),
            budget=self.budget,
            overhead=overhead,
            conversation=conversation,
        )
        return overhead + conversation + dash

    def _unit_prompt_tokens(self, uid: str) -> int:
        if uid[0] == "B":
            return self._pos_cost[_num(uid) - 1]
        n = self._gprompt.get(uid)
        if n is None:
            pos_cost = self._pos_cost
            n = self._gprompt[uid] = sum(pos_cost[s - 1] for s in self._leaves(uid))
        return n

    def _pending_msgs(self) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": cid, "content": pending_text(cid)}
            for cid in self._pending
        ]

    def _pending_cost(self) -> int:
        return sum(message_tokens(m, self.tokenizer) for m in self._pending_msgs())

    @property
    def mode(self) -> str:
        """``"overflow"`` if the candidate rendering exceeds the budget, else ``"normal"``."""
        return "overflow" if self._candidate_total() > self.budget else "normal"

    def render(self) -> Rendering:
        """Assemble C_t = preflight(render(V_t) + handles(A_t) + D_t, B).

        Normal mode returns the ordinary rendering. If it would exceed the
        budget, returns the management rendering instead: protocol, pinned
        blocks and a dashboard whose ledger lists the largest visible units
        (the rest folded), with task tools refused until room is freed.
        Either way ``tokens <= budget``.
        """
        cand = self._candidate()
        pos_cost, urow = self._pos_cost, self._urow
        gp = self._unit_prompt_tokens
        prompt_tokens = {u: pos_cost[urow[u][0] - 1] if u[0] == "B" else gp(u) for u in cand.units}
        block_tokens = {u: urow[u][4] for u in cand.units}
        head: list[dict[str, Any]] = [self._protocol_msg] if self._protocol_msg else []
        common: dict[str, Any] = dict(
            tools=self._tools,
            budget=self.budget,
            candidate_tokens=cand.total,
            overhead_tokens=cand.overhead,
            conversation_tokens=cand.conversation,
            dashboard_tokens=cand.dashboard_tokens,
            block_tokens=block_tokens,
            prompt_tokens=prompt_tokens,
            state_hash=self.state_hash(),
            turn=self._turn,
        )
        if cand.total <= self.budget:
            msgs = head
            for m in self._pos_msgs:
                msgs.extend(m)
            msgs.extend(self._pending_msgs())
            msgs.append({"role": DASHBOARD_ROLE, "content": cand.dashboard})
            return Rendering(
                messages=tuple(msgs),
                tokens=cand.total,
                mode="normal",
                dashboard=cand.dashboard,
                allowed_tools=tuple(t["function"]["name"] for t in self._tools),
                **common,
            )
        return self._management(cand, head, common)

    def _management(
        self, cand: _Candidate, head: list[dict[str, Any]], common: dict[str, Any]
    ) -> Rendering:
        pinned_msgs: list[dict[str, Any]] = []
        pinned_cost = 0
        for b in self._blocks:
            if b.status is Status.PINNED:
                pinned_msgs.extend(self._pos_msgs[b.seq - 1])
                pinned_cost += self._pos_cost[b.seq - 1]
        fixed = self._fixed_tools + REPLY_PRIMING + self._protocol_cost + pinned_cost
        urow = self._urow
        visible = [u for u in cand.units if not urow[u][2]]
        vis_tokens = sum(urow[u][4] for u in visible)
        archived_note = ""
        if cand.archived:
            archived_note = (
                f"(+{len(cand.archived)} archived units: {_id_summary(list(cand.archived))}; "
                f"~{sum(urow[u][4] for u in cand.archived):,} tok)"
            )
        k = min(self.dashboard_config.management_rows, len(visible))
        # Largest first (ties: older first), shown in position order.
        ranked = heapq.nsmallest(k, visible, key=lambda u: (-urow[u][4], urow[u][0]))
        while True:
            top = set(ranked[:k])
            shown = [self._ledger_row(u) for u in visible if u in top]
            notes = []
            if len(visible) > k:
                rest = [u for u in visible if u not in top]
                notes.append(
                    f"(+{len(rest)} more visible units: {_id_summary(rest)}; "
                    f"~{vis_tokens - sum(r.tokens for r in shown):,} tok)"
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
            )
            total = fixed + dash.message_tokens
            if total <= self.budget or k == 0:
                break
            k //= 2
        # The configuration-time floor guarantees the row-less form fits.
        assert total <= self.budget, (total, self.budget)
        msgs = head + pinned_msgs + [{"role": DASHBOARD_ROLE, "content": dash.text}]
        return Rendering(
            messages=tuple(msgs),
            tokens=total,
            mode="overflow",
            dashboard=dash.text,
            allowed_tools=CONTEXT_TOOL_NAMES,
            **common,
        )

    def dashboard(self) -> str:
        """The dashboard text the agent sees now (management form in overflow)."""
        return self.render().dashboard

    def gate(self, tool_name: str) -> str | None:
        """None if ``tool_name`` may run now, else the refusal notice to return
        as its result (task tools are refused in overflow mode, eq. overflow)."""
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

    # ============================================================ resolution
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
                spans: dict[str, list[int]] = {}
                for s in range(item.start, item.stop + 1):
                    b = self._blocks[s - 1]
                    if b.status is Status.DELETED:
                        continue  # ranges step over tombstones
                    self._check_block(b, action, explicit=False, rng=item)
                    if b.group is None:
                        units.setdefault(b.id, b.seq)
                        continue
                    top = self._top_unit(b)
                    if top not in spans:
                        spans[top] = self._leaves(top)
                    leaves = spans[top]
                    if min(leaves) < item.start or max(leaves) > item.stop:
                        held = format_id_ranges([f"B{x}" for x in leaves])
                        raise BlockStateError(
                            top,
                            f"has members outside {item} (it holds {held})",
                            f"name {top} on its own or widen the range",
                        )
                    units.setdefault(top, self._group_span[top][0])
        if not units:
            raise BlockStateError(
                str(spec), "selects no live blocks (all deleted)", "pick blocks from the dashboard"
            )
        return [u for u, _ in sorted(units.items(), key=lambda t: t[1])]

    def _check_block(self, b: Block, action: str, *, explicit: bool, rng: Any = None) -> None:
        where = f" (in range {rng})" if rng is not None else ""
        if b.status is Status.DELETED:
            raise BlockStateError(
                b.id, "was deleted; its content is gone", "drop it from the selection"
            )
        if b.status is Status.PINNED and action in ("archive", "delete"):
            raise BlockStateError(
                b.id + where,
                f"is pinned (protocol-required) and cannot be {action}d",
                "leave it out of the selection" if explicit else "start or end the range around it",
            )
        if explicit and b.group is not None:
            top = self._top_unit(b)
            raise BlockStateError(b.id, f"is archived inside {top}", f"name {top} instead")
        if (
            action in ("archive", "delete")
            and b.type is BlockType.TOOL_CALL
            and any(c in self._pending for c in b.call_ids)
        ):
            raise BlockStateError(
                b.id + where,
                "has tool calls still waiting for results",
                "register the results first",
            )
        if action == "restore" and b.in_prompt:
            raise BlockStateError(b.id + where, "is not archived", "restore archived units only")

    # ============================================================ actions (raise)
    def archive(self, block_id: str, replacement: str = "") -> ArchiveResult:
        """Archive blocks / groups: exact payload to the store, handle in the prompt.

        One visible block becomes an archived block (level 1, payload = its
        exact bytes). Several units become a new group ``G<n>`` one level
        above its highest member; archived members are referenced, not
        copied, so recovery walks the hierarchy back down.

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
            raise BlockStateError(
                units[0],
                "is already archived",
                "archive it together with other blocks or groups to make a coarser handle",
            )
        before = self._sys_cost + self._conv_cost
        if len(units) == 1:
            b = self._blocks[_num(units[0]) - 1]
            key = f"{b.id}.txt"
            data = block_payload_bytes(b.type, b.content, b.tool_calls)
            ref = self._put(key, data)  # durable before the block leaves V_t
            self._set_record(
                replace(
                    b,
                    status=Status.ARCHIVED,
                    level=1,
                    content=None,
                    tool_calls=None,
                    payload=ref,
                    replacement=replacement,
                )
            )
            self._payload_owner[key] = b.id
            self._refresh(self._affected([b.seq]))
            self._touch()
            return ArchiveResult(
                b.id,
                self.payload_path(key),
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
        leaves: list[int] = []
        tokens = 0
        for uid in units:
            if uid[0] == "G":
                self._set_record(replace(self._groups[uid], parent=gid))
                leaves.extend(self._leaves(uid))
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
            tokens += b.tokens
        self._set_record(group)
        self._group_tokens[gid] = tokens
        self._group_span[gid] = (min(leaves), max(leaves))
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

    def _unit_visible(self, uid: str) -> bool:
        return uid[0] == "B" and self._blocks[_num(uid) - 1].in_prompt

    def delete(self, block_id: str, reason: str) -> DeleteResult:
        """Permanently remove blocks / groups and their payloads (tombstones keep IDs).

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
        before = self._sys_cost + self._conv_cost
        removed: list[str] = []
        blocks: list[int] = []

        def drop(uid: str) -> None:
            if uid[0] == "G":
                g = self._groups[uid]
                for m in g.members:
                    drop(m)
                self.store.delete(g.payload.key)
                self._payload_owner.pop(g.payload.key, None)
                removed.append(g.payload.key)
                self._drop_group_record(uid)
                self._group_tokens.pop(uid, None)
                self._group_span.pop(uid, None)
                return
            b = self._blocks[_num(uid) - 1]
            if b.payload is not None:
                self.store.delete(b.payload.key)
                self._payload_owner.pop(b.payload.key, None)
                removed.append(b.payload.key)
            if b.status is Status.PINNED:  # pragma: no cover - refused by _resolve
                raise AssertionError(b.id)
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

    def restore(self, block_id: str) -> RestoreResult:
        """Open archived units one level: a block returns to the prompt with its
        exact bytes (checksum verified); a group's members become top-level
        again (raw members visible, archived members keep their handles).
        Harness-level operation; the payload of the opened unit is removed.

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
                data = self._fetch(b.payload.key, b.payload.sha256)
                plans.append((uid, {uid: data}))
            else:
                g = self._groups[uid]
                data = self._fetch(g.payload.key, g.payload.sha256)
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
                self.store.delete(b.payload.key)
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
            self.store.delete(g.payload.key)
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

    @contextlib.contextmanager
    def _failure_logged(self, action: str, args: dict[str, Any]) -> Iterator[None]:
        """A refused action is logged (ok=False, with the reason) and re-raised; the
        state is untouched, so the log still replays to the same hash."""
        try:
            yield
        except WorkspaceError as exc:
            self._log(action, args, False, str(exc), {})
            raise

    # ============================================================ payload I/O
    def _put(self, key: str, data: bytes) -> PayloadRef:
        """Store ``data`` under ``key``; the reference records the engine's own
        size and sha256 of these exact bytes, never what the store reports, so a
        store that writes other bytes cannot vouch for them (reads then fail)."""
        ref = PayloadRef(key, len(data), sha256_hex(data))
        self.store.put(key, data)  # returns only when durable
        return ref

    def _fetch(self, key: str, sha256: str) -> bytes:
        """The payload's bytes, verified here against the checksum the engine
        recorded (the store's own check is not relied on)."""
        return verify_payload(key, self.store.get(key), sha256)

    # ============================================================ reading
    def read_path(self, path: str, selector: Any = None) -> bytes:
        """Exact bytes of a payload (or the selected part), checksum verified.

        ``selector``: None (whole payload, the paper's read_path(h, {})),
        ``"bytes=START:STOP"``, ``"lines=FIRST-LAST"`` or ``"member=B7"``
        (one block of a group, found by walking nested groups down).

        Raises
        ------
        PathEscapeError
            The path is outside the archive folder or not a payload name.
        PayloadIntegrityError
            The payload was deleted, is missing or fails its checksum.
        WorkspaceArgumentError
            Malformed selector.
        """
        args = {
            "path": path if isinstance(path, str) else repr(path),
            "selector": selector if isinstance(selector, (str, type(None))) else repr(selector),
        }
        with self._failure_logged("read", args):
            data = self._read(path, selector)
        self._log(
            "read",
            args,
            True,
            f"{len(data)} bytes",
            {"size": len(data), "sha256": sha256_hex(data)},
        )
        return data

    def _read(self, path: Any, selector: Any) -> bytes:
        sel = parse_selector(selector)
        key = self.store.key_of(path)
        owner = self._payload_owner.get(key)
        if owner is None:
            raise PayloadIntegrityError(
                key, "is not a live payload of this workspace (deleted, restored or never written)"
            )
        ref = self._unit_payload(owner)
        data = self._fetch(key, ref.sha256)
        if sel is None:
            return data
        if isinstance(sel, (ByteRange, LineRange)):
            return apply_range(data, sel)
        assert isinstance(sel, MemberSelector)
        return self._member_bytes(owner, key, data, sel.block_id)

    def _unit_payload(self, uid: str) -> PayloadRef:
        if uid[0] == "G":
            return self._groups[uid].payload
        p = self._blocks[_num(uid) - 1].payload
        assert p is not None
        return p

    def _member_bytes(self, uid: str, key: str, data: bytes, block_id: str) -> bytes:
        if uid[0] == "B":
            if uid == block_id:
                return data
            raise WorkspaceArgumentError(
                "selector",
                f"member={block_id}",
                f"names a block that is not in {uid}",
                f"member= selects blocks of a group payload; {key} holds only {uid}",
            )
        _, _, entries = parse_group_payload(key, data)
        for e in entries:
            if e.unit_id == block_id and e.data is not None:
                return e.data
        for e in entries:
            if e.ref is None:
                continue
            if e.unit_id == block_id:
                return self._fetch(e.ref, e.sha256)
            if e.unit_id[0] == "G" and block_id in {f"B{s}" for s in self._leaves(e.unit_id)}:
                sub = self._fetch(e.ref, e.sha256)
                return self._member_bytes(e.unit_id, e.ref, sub, block_id)
        raise WorkspaceArgumentError(
            "selector",
            f"member={block_id}",
            f"names a block that is not in {uid}",
            f"{uid} holds {format_id_ranges([f'B{s}' for s in self._leaves(uid)])}",
        )

    def recover(self, block_id: str) -> bytes:
        """The exact original bytes of any live block, wherever they are now.

        Visible blocks are encoded from the prompt; archived ones are read
        from the store by walking from the top-level handle down the
        hierarchy (checksums verified at every level). Deleted blocks raise.
        """
        b = self.block(block_id)
        if b.status is Status.DELETED:
            raise BlockStateError(b.id, "was deleted; its content cannot be recovered")
        if b.in_prompt:
            return block_payload_bytes(b.type, b.content, b.tool_calls)
        top = self._top_unit(b)
        ref = self._unit_payload(top)
        return self._read(self.payload_path(ref.key), MemberSelector(b.id))

    # ============================================================ agent-facing tools
    def context_workspace_archive(self, block_id: str, replacement: str = "") -> str:
        """Agent tool: archive blocks; returns the payload path or an error string."""
        try:
            return self.archive(block_id, replacement).path
        except WorkspaceError as exc:
            return f"Error: {exc}"

    def context_workspace_delete(self, block_id: str, reason: str) -> str:
        """Agent tool: delete blocks; returns a confirmation or an error string."""
        try:
            res = self.delete(block_id, reason)
        except WorkspaceError as exc:
            return f"Error: {exc}"
        return (
            f"Deleted {','.join(res.units)} ({len(res.blocks)} blocks, freed "
            f"~{res.freed_tokens:,} tokens). Deleted content cannot be recovered."
        )

    def read_path_tool(self, path: str, selector: str = "") -> str:
        """Agent tool: payload text (undecodable bytes shown as escapes) or an error string."""
        try:
            return self.read_path(path, selector or None).decode("utf-8", "backslashreplace")
        except WorkspaceError as exc:
            return f"Error: {exc}"

    def dispatch(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run a context tool call from a model response; always returns a string.

        ``arguments`` is the call's JSON string (or an already-parsed mapping).
        Unknown tools, malformed JSON and wrong argument names come back as
        error strings and change nothing.
        """
        tools = {
            ARCHIVE_TOOL: (self.context_workspace_archive, ("block_id",), ("replacement",)),
            DELETE_TOOL: (self.context_workspace_delete, ("block_id", "reason"), ()),
        }
        if self._include_read_path:
            tools[READ_PATH_TOOL] = (self.read_path_tool, ("path",), ("selector",))
        if name not in tools:
            return f"Error: {UnknownNameError('context tool', str(name), tools)}"
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return f"Error: arguments of {name} are not valid JSON ({exc.msg} at {exc.pos})"
        else:
            parsed = arguments
        if not isinstance(parsed, Mapping):
            return f"Error: arguments of {name} must be a JSON object"
        fn, required, optional = tools[name]
        missing = [k for k in required if k not in parsed]
        extra = [k for k in parsed if k not in required + optional]
        if missing or extra:
            return (
                f"Error: {name} takes {', '.join(required + optional)}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unexpected {', '.join(map(str, extra))}" if extra else "")
            )
        return fn(**parsed)  # type: ignore[operator, no-any-return]

    # ============================================================ fork
    def fork(
        self,
        *,
        store: PayloadStore | None = None,
        substitute: Mapping[str, str] | None = None,
    ) -> Workspace:
        """An independent copy of this workspace: the same state, canonical hash,
        event log and renderings, made without re-tokenising or re-hashing the
        history (only substituted texts are counted and hashed).

        Block and group records are immutable and shared; the lists and dicts
        that index them are copied (O(blocks), at C speed), and the tokenizer
        and the dashboard's token caches are shared. Later changes to either
        workspace never show in the other. The copy writes no event-log file.

        Parameters
        ----------
        store : PayloadStore, optional
            The copy's payload store; it must have this store's ``root``
            (handles show the path, so it is part of every token count). Live
            payloads are read from this workspace (checksums verified) and
            written to it. Default: a new :class:`MemoryStore`, allowed only
            when this workspace's store is one (a disk root in the handles with
            payloads in memory would mislead a reader). Passing this very store
            shares it; then only one of the two workspaces may archive,
            delete or restore afterwards (payload keys would collide).
        substitute : mapping of block ID to str, optional
            A counterfactual copy: the workspace as it would be had these
            system, user or assistant messages been registered with other text
            (exact state, hash and event log of that history). Allowed only for
            blocks still in the prompt whose registration is followed by
            nothing but registrations of non-tool-result messages, so no engine
            decision (budget guard, archive, delete, restore) depended on the
            old text.

        Returns
        -------
        Workspace

        Raises
        ------
        WorkspaceArgumentError
            Bad ``store`` or ``substitute`` (wrong root, not a store, not text).
        UnknownBlockError, BlockStateError
            A substituted block does not exist or cannot be substituted.
        BudgetConfigError
            A substituted pinned text would not leave room for the management
            rendering.
        PayloadIntegrityError
            A live payload fails its checksum while being copied.
        """
        if substitute:
            self._apply_rewrite()  # a substitution plans on the log's current hashes
        plan = self._substitute_iv(substitute)
        target = self._fork_store_iv(store)
        new = copy.copy(self)
        # Records, events, tuples and the renderer are immutable or pure caches;
        # every container is copied so the two workspaces evolve apart.
        for name, value in list(vars(new).items()):
            if type(value) in (list, dict):
                setattr(new, name, value.copy())
        new._children = {k: list(v) for k, v in self._children.items()}
        new._log_fh = None
        new.store = target
        if target is not self.store:
            for key, uid in self._payload_owner.items():
                ref = self._unit_payload(uid)
                target.put(key, self._fetch(key, ref.sha256))
        if plan:
            new._substitute(plan)
        return new

    def _fork_store_iv(self, store: Any) -> PayloadStore:
        if store is None:
            if not isinstance(self.store, MemoryStore):
                raise WorkspaceArgumentError(
                    "store",
                    None,
                    f"must be given to fork a workspace whose payloads are in {self.store!r}",
                    f"pass store=MemoryStore({self.store.root!r}) (payloads are copied into "
                    "it) or this store itself (shared)",
                )
            return MemoryStore(self.store.root)
        if not isinstance(store, PayloadStore):
            raise WorkspaceArgumentError(
                "store",
                store,
                "must implement the PayloadStore protocol",
                "use DiskStore or MemoryStore",
            )
        if store.root != self.store.root:
            raise WorkspaceArgumentError(
                "store",
                store,
                f"must have the root {self.store.root!r} of the workspace it copies (got "
                f"{store.root!r}); payload paths are part of every handle and token count",
                "create the copy's store with the same root",
            )
        return store

    def _substitute_iv(self, substitute: Any) -> list[tuple[int, Block, str, int]]:
        """Check a substitution and plan it: (event index, block, text, message
        tokens) in log order."""
        if substitute is None:
            return []
        if not isinstance(substitute, Mapping):
            raise WorkspaceArgumentError(
                "substitute", substitute, "must map block IDs to text", "e.g. {'B7': 'new text'}"
            )
        wanted: dict[str, tuple[Block, str]] = {}
        for bid, text in substitute.items():
            b = self.block(bid)
            text = _text_iv("substitute", text)
            if b.type not in (BlockType.SYSTEM, BlockType.USER, BlockType.ASSISTANT):
                raise BlockStateError(
                    b.id,
                    f"is a {b.type.value}; only system, user and assistant messages can be "
                    "substituted",
                    "substitute plain messages only",
                )
            if not b.in_prompt:
                raise BlockStateError(
                    b.id, f"is {b.status.value}, not in the prompt", "fork before acting on it"
                )
            wanted[b.id] = (b, text)
        if not wanted:
            return []
        # Walk the log back to the registrations; everything on the way must be a
        # registration whose outcome cannot depend on the substituted texts.
        plan: list[tuple[int, Block, str, int]] = []
        k = len(self._events)
        while len(plan) < len(wanted):
            k -= 1
            ev = self._events[k] if k >= 0 else None
            if ev is None or ev.op == "init":
                missing = sorted(set(wanted) - {p[1].id for p in plan})
                raise BlockStateError(
                    missing[0],
                    "has no registration event in this workspace's log (it was loaded from a "
                    "snapshot)",
                    "substitute in a workspace built by registration",
                )
            if ev.op != "register" or ev.args.get("message", {}).get("role") == "tool":
                found = {p[1].id for p in plan}
                first = min((u for u in wanted if u not in found), key=lambda u: wanted[u][0].seq)
                what = "the tool result registered" if ev.op == "register" else f"the {ev.op}"
                raise BlockStateError(
                    first,
                    f"cannot be substituted: {what} at event {ev.seq} came after its "
                    "registration and may depend on its size",
                    "fork before that event or substitute later blocks only",
                )
            hit = wanted.get(ev.result)
            if hit is not None:
                b, text = hit
                cost = message_tokens({"role": b.role, "content": text}, self.tokenizer)
                plan.append((k, b, text, cost))
        plan.reverse()
        extra = sum(c - b.tokens for _, b, _, c in plan if b.status is Status.PINNED)
        if extra > 0:
            self._check_floor(extra_pinned=extra, what="the substituted pinned text")
        return plan

    def _substitute(self, plan: list[tuple[int, Block, str, int]]) -> None:
        """Apply a checked substitution to this (freshly forked) workspace."""
        deltas: list[int] = []
        for _, b, text, cost in plan:
            data = text.encode("utf-8")
            msg = {"role": b.role, "content": text}
            nb = replace(b, content=text, size=len(data), sha256=sha256_hex(data), tokens=cost)
            before = self._acc
            self._set_record(nb)
            deltas.append((self._acc - before) % _HASH_MOD)
            s = b.seq
            old = self._pos_cost[s - 1]
            if b.type is BlockType.SYSTEM:
                self._sys_cost += cost - old
            else:
                self._conv_cost += cost - old
            if b.status is Status.PINNED:
                self._pinned_cost += cost - b.tokens
            self._pos_msgs[s - 1] = (msg,)
            self._pos_cost[s - 1] = cost
            self._pos_key[s - 1] = self._position_key(nb)
            self._set_urow(b.id)
        self._touch()
        # The log of that history is the same events with the new texts, every
        # state hash from the first substituted registration on shifted by the
        # record digests' difference (the hash is a sum of record digests). It is
        # rewritten when first read: a simulation that never reads the old
        # events never pays for it.
        marks = tuple((k, text, d) for (k, _, text, _), d in zip(plan, deltas, strict=True))
        self._rewrite = (plan[0][0], len(self._events), marks)

    def _apply_rewrite(self) -> None:
        if self._rewrite is None:
            return
        start, end, marks = self._rewrite
        events, state = self._events, self._event_state
        delta, i = 0, 0
        for k in range(start, end):
            ev = events[k]
            args = ev.args
            while i < len(marks) and marks[i][0] == k:
                args = dict(args, message=dict(args["message"], content=marks[i][1]))
                delta = (delta + marks[i][2]) % _HASH_MOD
                i += 1
            turn, acc = state[k]
            acc = (acc + delta) % _HASH_MOD
            state[k] = (turn, acc)
            events[k] = Event(
                ev.seq, ev.op, args, ev.ok, ev.result, ev.effects, self._hash_of(turn, acc)
            )
        self._rewrite = None

    # ============================================================ events
    def _log(
        self, op: str, args: dict[str, Any], ok: bool, result: str, effects: dict[str, Any]
    ) -> None:
        ev = Event(
            self._event_base + len(self._events), op, args, ok, result, effects, self.state_hash()
        )
        self._events.append(ev)
        self._event_state.append((self._turn, self._acc))
        if self._log_fh is not None:
            self._log_fh.write(ev.to_json() + "\n")
            self._log_fh.flush()

    def close(self) -> None:
        """Close the event log file (if any)."""
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def replay(
        cls,
        events: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
        *,
        store: PayloadStore | None = None,
        tokenizer: Tokenizer | None = None,
        verify: bool = True,
    ) -> Workspace:
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
        root = cfg.pop("store_root", "mem://archive")
        ws = cls(
            cfg["budget"],
            tokenizer=tokenizer if tokenizer is not None else cfg["tokenizer"],
            store=store if store is not None else MemoryStore(root),
            hard_limit=cfg["hard_limit"],
            task_tools=cfg["task_tools"],
            protocol=cfg["protocol"],
            dashboard=DashboardConfig(**cfg["dashboard"]),
            include_read_path_tool=cfg.get("include_read_path_tool", False),
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

    # ============================================================ save / load
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the full state as JSON, crash-safely (temp file, fsync, rename).

        Archived bytes stay in the payload store; :meth:`load` checks them.
        """
        doc = {
            "format": _SNAPSHOT_FORMAT,
            "version": _SNAPSHOT_VERSION,
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
    ) -> Workspace:
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
        if not isinstance(doc, dict) or doc.get("format") != _SNAPSHOT_FORMAT:
            raise WorkspaceArgumentError("path", str(path), "is not a vista-workspace snapshot")
        cfg = dict(doc["config"])
        root = cfg.pop("store_root")
        if store is None:
            store = DiskStore(root) if os.path.isdir(root) else MemoryStore(root)
        ws = cls(
            cfg["budget"],
            tokenizer=tokenizer if tokenizer is not None else cfg["tokenizer"],
            store=store,
            hard_limit=cfg["hard_limit"],
            task_tools=cfg["task_tools"],
            protocol=cfg["protocol"],
            dashboard=DashboardConfig(**cfg["dashboard"]),
            include_read_path_tool=cfg.get("include_read_path_tool", False),
        )
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


# ----------------------------------------------------------------- helpers


def _num(block_id: str) -> int:
    return int(block_id[1:])


def _id_summary(ids: list[str], limit: int = 8) -> str:
    """IDs in position order as at most ``limit`` items (runs of consecutive
    blocks as ranges), then ``+N more``; cheap on long lists: each run's end is
    found by bisection."""
    parts: list[str] = []
    i, n = 0, len(ids)
    groups = [k for k, u in enumerate(ids) if u[0] != "B"]  # a group ends a run
    g = 0
    while i < n and len(parts) < limit:
        uid = ids[i]
        if uid[0] != "B":
            parts.append(uid)
            i += 1
            continue
        while g < len(groups) and groups[g] < i:
            g += 1
        # Between two groups, block numbers strictly increase with position, so
        # the run of consecutive numbers from i is a prefix: bisect its end.
        first = int(uid[1:])
        lo, hi = i, (groups[g] if g < len(groups) else n) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(ids[mid][1:]) - first == mid - i:
                lo = mid
            else:
                hi = mid - 1
        parts.append(uid if lo == i else f"{uid}-{ids[lo]}")
        i = lo + 1
    if i < n:
        parts.append(f"+{n - i} more")
    return ",".join(parts)


def _block_number(block_id: Any) -> int | None:
    if (
        isinstance(block_id, str)
        and len(block_id) > 1
        and block_id[0] == "B"
        and block_id[1:].isascii()
        and block_id[1:].isdigit()
        and block_id[1] != "0"
    ):
        return int(block_id[1:])
    return None


def _tool_call_message(content: str | None, calls: Sequence[ToolCall]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [c.to_openai() for c in calls]}


def _text_iv(name: str, value: Any, *, max_chars: int | None = None) -> str:
    if not isinstance(value, str):
        raise WorkspaceArgumentError(name, value, "must be a string", f"pass {name} as text")
    if max_chars is not None and len(value) > max_chars:
        raise WorkspaceArgumentError(
            name, value, f"must be at most {max_chars} characters", "keep it short"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WorkspaceArgumentError(
            name,
            value[max(0, exc.start - 10) : exc.end + 10],
            f"must be valid Unicode text (unpaired surrogate at index {exc.start})",
            "decode the source with errors='replace'",
        ) from None
    return value


def _content_iv(content: Any, role: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if (
                not isinstance(part, Mapping)
                or part.get("type") != "text"
                or not isinstance(part.get("text"), str)
            ):
                raise WorkspaceArgumentError(
                    "content",
                    content,
                    f"part {i} must be a {{'type': 'text', 'text': str}} part",
                    "only text content is supported",
                )
            texts.append(part["text"])
        return "".join(texts)
    raise WorkspaceArgumentError(
        "content", content, f"of a {role} message must be a string, None or text parts"
    )


def _tool_calls_iv(tool_calls: Any) -> tuple[ToolCall, ...]:
    if (
        not isinstance(tool_calls, Sequence)
        or isinstance(tool_calls, (str, bytes))
        or not tool_calls
    ):
        raise WorkspaceArgumentError(
            "tool_calls", tool_calls, "must be a non-empty list of OpenAI tool calls"
        )
    out: list[ToolCall] = []
    seen: set[str] = set()
    for i, call in enumerate(tool_calls):
        if isinstance(call, ToolCall):
            out.append(call)
            continue
        fn = call.get("function") if isinstance(call, Mapping) else None
        cid = call.get("id") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(cid, str) or not cid:
            raise WorkspaceArgumentError(
                "tool_calls",
                tool_calls,
                f"item {i} must look like {{'id': str, 'type': 'function', 'function': "
                "{'name': str, 'arguments': str}}",
            )
        name = fn.get("name")
        args = fn.get("arguments", "")
        if not isinstance(name, str) or not name:
            raise WorkspaceArgumentError(
                "tool_calls", tool_calls, f"item {i} needs a function name"
            )
        if isinstance(args, Mapping):
            args = canonical_json(dict(args))  # normalise pre-parsed arguments to the wire form
        if not isinstance(args, str):
            raise WorkspaceArgumentError(
                "tool_calls", tool_calls, f"item {i} arguments must be a JSON string"
            )
        _text_iv("arguments", args)
        if cid in seen:
            raise WorkspaceArgumentError("tool_calls", tool_calls, f"repeats call id {cid!r}")
        seen.add(cid)
        out.append(ToolCall(cid, name, args))
    return tuple(out)


def _workspace_iv(
    budget: Any,
    hard_limit: Any,
    task_tools: Any,
    protocol: Any,
    dashboard: Any,
    include_read_path_tool: Any,
    store: Any,
) -> dict[str, Any]:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise BudgetConfigError("budget", budget, "must be a positive integer number of tokens")
    if hard_limit is None:
        hard_limit = 2 * budget
    if isinstance(hard_limit, bool) or not isinstance(hard_limit, int) or hard_limit < budget:
        raise WorkspaceArgumentError(
            "hard_limit",
            hard_limit,
            f"must be an integer >= budget ({budget})",
            "leave it None for 2 * budget",
        )
    if not isinstance(protocol, bool):
        raise WorkspaceArgumentError("protocol", protocol, "must be True or False")
    if not isinstance(include_read_path_tool, bool):
        raise WorkspaceArgumentError(
            "include_read_path_tool", include_read_path_tool, "must be True or False"
        )
    if dashboard is None:
        dashboard = DashboardConfig()
    if not isinstance(dashboard, DashboardConfig):
        raise WorkspaceArgumentError("dashboard", dashboard, "must be a DashboardConfig")
    if store is not None and not isinstance(store, PayloadStore):
        raise WorkspaceArgumentError(
            "store",
            store,
            "must implement the PayloadStore protocol",
            "use DiskStore or MemoryStore",
        )
    if isinstance(task_tools, (str, bytes)) or not isinstance(task_tools, Sequence):
        raise WorkspaceArgumentError("task_tools", task_tools, "must be a list of tool schemas")
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, t in enumerate(task_tools):
        fn = t.get("function") if isinstance(t, Mapping) else None
        name = fn.get("name") if isinstance(fn, Mapping) else None
        if not isinstance(t, Mapping) or t.get("type") != "function" or not isinstance(name, str):
            raise WorkspaceArgumentError(
                "task_tools",
                task_tools,
                f"item {i} must be an OpenAI tool schema {{'type': 'function', 'function': "
                "{'name': ...}}",
            )
        if name in CONTEXT_TOOL_NAMES or name == READ_PATH_TOOL or name in names:
            raise WorkspaceArgumentError(
                "task_tools", name, "must not repeat a name or reuse a context tool's name"
            )
        names.add(name)
        tools.append(json.loads(json.dumps(t)))
    return {
        "budget": budget,
        "hard_limit": hard_limit,
        "task_tools": tuple(tools),
        "protocol": protocol,
        "dashboard": dashboard,
        "include_read_path_tool": include_read_path_tool,
    }


