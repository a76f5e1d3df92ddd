"""The workspace state W_t and its bookkeeping: records, the canonical hash,
configuration, payload I/O and the event log (the layers above are its only writers)."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from vistalab._core import VistaLabError

from ._accounting import (
    REPLY_PRIMING,
    message_tokens,
    tools_tokens,
)
from ._atomic import Txn
from ._bulk import bulk_build
from ._dashboard import DashboardConfig, DashboardRenderer, LedgerRow
from ._disk_store import foreign_payload_problem, sized_get
from ._errors import (
    BudgetConfigError,
    PayloadConflictError,
    StorageError,
    UnknownBlockError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import Event, EventColumns, EventLogFile, event_state, logged_event
from ._formats import AnthropicCodec
from ._frozen import FrozenDict, freeze
from ._hashing import HASH_MOD, Digests, accumulate, record_hash, state_hash_of
from ._ledger import Ledger
from ._positions import PositionMessages, same_rendering
from ._protocol import (
    PROTOCOL_TEXT,
    budget_notice,
    context_tool_schemas,
)
from ._records import (
    Block,
    Group,
    PayloadRef,
    Status,
    block_payload_bytes,
    record_digest,
)
from ._results import Candidate
from ._seqtree import PrefixTree
from ._store import (
    MemoryStore,
    PayloadStore,
    sha256_hex,
    verify_payload,
)
from ._tokenizers import Tokenizer, get_tokenizer
from ._validate import _block_number, _num, _workspace_iv, log_path_iv

__all__ = ["StateCore", "locked", "MUTABLE_STATE"]

#: What a rollback keeps (not derived from the records): identity, the log,
#: payload ownership (fixed up from the journal) and the wire originals.
_KEEP_ON_ROLLBACK = frozenset(
    {
        "_lock",
        "_txn",
        "store",
        "_log_fh",
        "_events",
        "_event_base",
        "_rewrite",
        "_own_keys",
        "_adopted_keys",
        "_doomed",
        "_saved",
        "_codec",
        "set_aside_payloads",
    }
)

#: Containers of a workspace that change after construction; ``fork`` copies
#: exactly these (plus the ledger, the position trees, the record digests, the
#: call-children lists and the lock).
MUTABLE_STATE = (
    "_blocks",
    "_groups",
    "_pending",
    "_call_owner",
    "_answered",
    "_children",
    "_payload_owner",
    "_pos_msgs",
    "_pos_cost",
    "_pos_key",
    "_cont",
    "_pinned_seqs",
    "_chunks",
    "_msg_chunks",
    "_group_tokens",
    "_group_span",
    "_gprompt",
    "_events",
    "_doomed",
    "_own_keys",
    "_adopted_keys",
    "_anth_used",
    "_anth_renames",
    "_placeholder_memo",
    "_age_getters",
)

_SelfT = TypeVar("_SelfT", bound="StateCore")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def locked(fn: Callable[Concatenate[_SelfT, _P], _R]) -> Callable[Concatenate[_SelfT, _P], _R]:
    """Run the method under the workspace's re-entrant lock (every public
    mutation and rendering holds it, so threads see whole transitions)."""

    @functools.wraps(fn)
    def wrapper(self: _SelfT, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return fn(self, *args, **kwargs)

    return wrapper


#: The effects most events have (nothing, or an admitted tool result), one
#: read-only dict each shared by every such event instead of a dict per event
#: (two dicts per tool-call turn); they serialise and compare as plain dicts.
_NO_EFFECTS = FrozenDict()
_ADMITTED = FrozenDict(admitted=True)


def _shared_effects(effects: dict[str, Any]) -> dict[str, Any]:
    """``effects``, or the shared read-only dict equal to it (same JSON)."""
    if not effects:
        return _NO_EFFECTS
    if len(effects) == 1 and effects.get("admitted") is True:
        return _ADMITTED
    return effects


class StateCore:
    """W_t itself: the records, the incremental hash, the configuration, payload
    I/O and the event log. Only the transition layers above write these fields."""

    def __init__(  # noqa: PLR0915 - the state's one constructor
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
        cache_prefix: bool = True,
        keep_pending: bool = True,
        check_model: bool | str | os.PathLike[str] = False,
    ) -> None:
        # check_model is taken by Workspace.__new__ (it picks the checked class,
        # ._check); the state itself does not depend on it.
        del check_model
        self._lock = threading.RLock()
        self._txn: Txn | None = None  # the operation in progress (see _atomic)
        if not isinstance(cache_prefix, bool):
            raise WorkspaceArgumentError("cache_prefix", cache_prefix, "must be True or False")
        #: The management rendering keeps the longest conversation prefix that
        #: fits (True) or shows only protocol, pinned blocks and dashboard.
        self.cache_prefix: bool = cache_prefix
        if not isinstance(keep_pending, bool):
            raise WorkspaceArgumentError("keep_pending", keep_pending, "must be True or False")
        #: The management rendering keeps the tool-call block whose calls are
        #: still pending, with its results so far and the pending placeholders
        #: (True), or stops before it (False, the Coq engine model's rendering).
        self.keep_pending: bool = keep_pending
        log_path = log_path_iv(log_path)
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
        self._tools: tuple[dict[str, Any], ...] = tuple(
            freeze(t)
            for t in self._task_tools
            + tuple(context_tool_schemas(include_read_path=self._include_read_path))
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
        # tool_call block -> its result blocks: one result as its ID string,
        # several as a list, none as no entry (see _results_of).
        self._children: dict[str, str | list[str]] = {}
        self._payload_owner: dict[str, str] = {}  # store key -> unit id
        self._user_seen = False
        # Original Anthropic blocks behind projected messages (derived wire
        # detail, never hashed): visible blocks render back byte-identical.
        self._codec = AnthropicCodec()
        # Anthropic tool_use ids (derived, never hashed): the ids used and the
        # calls renamed over the first _anth_done blocks, extended as blocks come.
        self._anth_done = 0
        self._anth_used: set[str] = set()
        self._anth_renames: dict[tuple[str, str], str] = {}
        # Payload keys released since the last save, and whether a snapshot of
        # this workspace exists (then released payloads wait for the next save).
        self._doomed: set[str] = set()
        self._saved = False
        # Payload keys this workspace may replace and remove (it wrote them, or
        # its loaded snapshot owns them), and keys it found already holding the
        # exact bytes it meant to write (kept, never removed: another run may
        # need them). Nothing else in the store is ever overwritten.
        self._own_keys: set[str] = set()
        self._adopted_keys: set[str] = set()
        #: Payload files ``load`` moved aside (unreferenced by its snapshot,
        #: numbered past it: left by a run that crashed before saving).
        self.set_aside_payloads: tuple[str, ...] = ()

        # Incremental canonical hash: sum of record digests (order is in the records).
        self._digests = Digests()
        self._acc = 0
        self._config_digest = record_digest(self._config_for_hash())

        # Render caches (derived, never hashed).
        self._pos_msgs = PositionMessages()
        self._pos_cost: list[int] = []
        self._pos_key: list[tuple[Any, ...] | bytes | str] = []
        # Per-position indexes kept by _set_position (the position caches' one
        # writer), so no turn walks every block ever registered:
        # prompt cost of each position (0 while pinned: the floor pays for it),
        # searched for the longest prefix that fits the overflow rendering;
        self._pos_tree = PrefixTree()
        # offload gain (its cost minus its placeholder's) of each visible,
        # unrejected tool result, searched by the budget guard;
        self._gain_tree = PrefixTree()
        # positions whose gain is due (0-based, in the order they became due):
        # a gain costs a tokenizer pass over the result's placeholder, which
        # only a guard that must offload reads, so it is counted then
        # (LayoutLayer._gains), and a session that never overflows never pays it;
        self._gain_due = array("i")  # 4-byte positions
        # Tree updates a long _refresh defers to its end (None: apply at once).
        self._tree_batch: (
            tuple[list[tuple[int, int | None]], list[tuple[int, int | None]]] | None
        ) = None
        # whether a position continues the unit before it (its first message is
        # a tool message answering the call above it), a byte each;
        self._cont = bytearray()
        # pinned positions, ascending; and the messages of each run of
        # _CHUNK positions, joined (dropped when one of them changes).
        self._pinned_seqs: list[int] = []
        self._chunks: dict[int, tuple[dict[str, Any], ...]] = {}
        # The chunks that may hold a message, ascending: every chunk with a
        # position that renders one, and perhaps a few found empty since (a
        # rendering drops them). Archived groups leave long runs of positions
        # that render nothing, so a rendering visits the chunks it returns.
        self._msg_chunks: list[int] = []
        # The run of positions after the last whole chunk, joined as far as the
        # last rendering read it: (its first position, the positions read,
        # their messages); a new position extends it, a changed one drops it.
        self._tail_msgs: tuple[int, int, tuple[dict[str, Any], ...]] | None = None
        self._sys_cost = 0  # positions of system blocks (overhead)
        self._conv_cost = 0  # every other position
        self._group_tokens: dict[str, int] = {}
        self._group_span: dict[str, tuple[int, int]] = {}  # first, newest leaf seq
        # Running sum of the pending placeholders' tokens: (the _pending it
        # describes, its size, the sum); see PreflightLayer._pending_cost.
        self._pending_sum: tuple[dict[str, str], int, int] | None = None
        # Tokens bounding a rejection notice (PreflightLayer._notice_reserve).
        self._notice_bound: int | None = None
        # Placeholder tokens per pending call id (PreflightLayer._placeholder_cost).
        self._placeholder_memo: dict[str, int] = {}
        # The latest calling block's call id -> index (see RegisterLayer._call_slot).
        self._slot_cache: tuple[str, dict[str, int]] | None = None
        # Top units remembered while no parent changes (see _tops_memo; None outside).
        self._top_memo: dict[str, str] | None = None
        self._version = 0
        self._candidate_cache: Candidate | None = None
        # Per ledger chunk, its rows' age pickers (see PreflightLayer._candidate).
        self._age_getters: dict[int, tuple[Any, ...]] = {}
        self._pinned_cost = 0
        # Incremental preflight (additive tokenizers, no folded rows): the ledger
        # body costs the sum of its rows' cached pieces plus one age piece per
        # row, so the ledger's sums give |C~_t| without walking the units.
        self._ledger = Ledger(
            self._renderer.age_piece, keep=self.dashboard_config.archived_rows, indexed=True
        )
        self._total_cache: tuple[int, int] | None = None  # (version, |C~_t|)
        # The fold of the archived rows (see PreflightLayer._folding); replaced,
        # never mutated, so a fork may share it.
        self._fold_cache: tuple[Any, ...] | None = None
        self._gprompt: dict[str, int] = {}  # top-level group -> prompt tokens of its leaves

        self._fixed_tools = tools_tokens(self._tools, self.tokenizer)
        self._protocol_msg: dict[str, Any] | None = None
        self._protocol_cost = 0
        if self.protocol:
            text = PROTOCOL_TEXT + "\n\n" + budget_notice(self.budget)
            self._protocol_msg = FrozenDict(role="system", content=text)
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

        # Event log (columns; an entry read is built as its Event).
        self._events = EventColumns()
        # A substituted fork's log rewrite, applied when the old events are read:
        # (first event, end, [(event, new content, digest change)]).
        self._rewrite: tuple[int, int, tuple[tuple[int, str, int], ...]] | None = None
        self._event_base = 0
        self._log_fh: EventLogFile | None = None
        try:
            if log_path is not None:
                self._log_fh = EventLogFile(log_path)
            self._log("init", {"config": self.config()}, True, "", {})
        except OSError as exc:
            self.close()
            raise StorageError("Workspace", exc.strerror or str(exc), errno=exc.errno) from exc

    # ============================================================ config
    def config(self) -> dict[str, Any]:
        """The construction parameters as plain data (recorded in the ``init`` event).

        Returns
        -------
        dict
            ``budget``, ``hard_limit``, the tokenizer's name, the task tools, the
            dashboard layout and the other constructor options.
        """
        return {
            "budget": self.budget,
            "hard_limit": self.hard_limit,
            "tokenizer": self.tokenizer.name,
            "task_tools": [dict(t) for t in self._task_tools],
            "protocol": self.protocol,
            "dashboard": self.dashboard_config.to_plain(),
            "include_read_path_tool": self._include_read_path,
            "store_root": self.store.root,
            # Recorded only when off, so logs written before the option replay
            # to the same hashes.
            **({} if self.cache_prefix else {"cache_prefix": False}),
            **({} if self.keep_pending else {"keep_pending": False}),
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
        """Upper bound on the smallest management rendering; must stay <= budget.

        Returns
        -------
        int
            Tokens of the row-less management rendering with every pinned block
            and, with ``keep_pending``, the tool-call block whose calls are still
            pending with its results so far, a placeholder for each pending
            call and room for the guard's rejection notice in its place (what
            the budget must always hold).
        """
        return (
            self._fixed_tools
            + REPLY_PRIMING
            + self._protocol_cost
            + self._pinned_cost
            + self._mgmt_dash_bound
            + self._pending_tail_need()
        )

    def _pending_tail_need(self) -> int:
        """Tokens the management rendering reserves for the tool-call batch
        still waiting for results (``keep_pending``; 0 here, see
        PreflightLayer)."""
        return 0

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
        txn = self._txn
        if isinstance(rec, Block):
            old = self._blocks[rec.seq - 1]
            if txn is not None and rec.id not in txn.records and rec.seq <= txn.n_blocks:
                txn.records[rec.id] = old
            self._blocks[rec.seq - 1] = rec
            pos = self._pos_msgs
            if old is not rec and rec.seq <= len(pos) and pos.unread(rec.seq - 1, old):
                # The position renders the old record's messages: the new one
                # stands in for it if it renders the same, else they are built now.
                if same_rendering(old, rec):
                    pos[rec.seq - 1] = rec
                else:
                    pos[rec.seq - 1]  # noqa: B018 - reading builds them
        else:
            if txn is not None and rec.id not in txn.records:
                txn.records[rec.id] = self._groups.get(rec.id)
            self._groups[rec.id] = rec
        if hashed:
            digest = record_hash(rec)
            was = self._digests.swap(rec, digest)
            self._acc = (self._acc - was + digest) % HASH_MOD

    @locked
    def state_hash(self) -> str:
        """Canonical sha256 of W_t: blocks, groups, payload checksums, turn and config.

        Stable across processes and platforms (canonical JSON). The store's
        location and the ID counters are not part of it, so archiving a unit
        and restoring it gives back the same hash (the paper's Q_undo).

        Returns
        -------
        str
            Hex sha256 of the canonical state.
        """
        return self._hash_of(self._turn, self._acc)

    def _hash_of(self, turn: int, acc: int) -> str:
        return state_hash_of(self._config_digest, turn, acc)

    def recompute_state_hash(self) -> str:
        """The canonical hash recomputed from scratch (checks the incremental one).

        Returns
        -------
        str
            Hex sha256; equal to :meth:`state_hash` unless the state is corrupt.
        """
        with self._lock:
            return self._hash_of(self._turn, accumulate([*self._blocks, *self._groups.values()]))

    # ============================================================ accessors
    @property
    @locked
    def blocks(self) -> tuple[Block, ...]:
        """Every registered block in order, tombstones included."""
        return tuple(self._blocks)

    @property
    @locked
    def groups(self) -> dict[str, Group]:
        """Live archive groups by ID."""
        return dict(self._groups)

    @property
    @locked
    def events(self) -> tuple[Event, ...]:
        """The event log so far (``init`` first).

        Each entry is built from the log's columns when this is read (about
        2 microseconds an event): read one turn's events with
        :meth:`events_since` (``event_count`` taken before the turn)."""
        self._apply_rewrite()
        with bulk_build():  # one event object built per entry, none of them cyclic
            return tuple(self._events)

    @property
    def event_count(self) -> int:
        """Sequence number the next event will get (the log's length)."""
        return self._event_base + len(self._events)

    @locked
    def events_since(self, seq: int) -> tuple[Event, ...]:
        """Events with sequence number ``>= seq`` (without copying the older log).

        Parameters
        ----------
        seq : int
            The first sequence number wanted (``len(ws.events)`` from earlier).

        Returns
        -------
        tuple of Event
            The events since then, in order.
        """
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
    @locked
    def pending_calls(self) -> tuple[str, ...]:
        """Tool-call IDs still waiting for a registered result."""
        return tuple(self._pending)

    @locked
    def block(self, block_id: str) -> Block:
        """The block record for ``B<n>``.

        Parameters
        ----------
        block_id : str
            ``B<n>``.

        Returns
        -------
        Block
            Its record (type, status, turn, content while in the prompt, ...).

        Raises
        ------
        UnknownBlockError
            No such block.
        """
        n = _block_number(block_id)
        if n is None or n > len(self._blocks):
            raise UnknownBlockError(str(block_id), self._no_block_detail())
        return self._blocks[n - 1]

    def payload_path(self, key: str) -> str:
        """Display path of a store key.

        Parameters
        ----------
        key : str
            A store key (``B7.txt``, ``G2.json``).

        Returns
        -------
        str
            The path a handle shows (the store's root, then the key).
        """
        return f"{self.store.root}/{key}"

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The context tools in OpenAI function-calling format (fresh copies).

        Returns
        -------
        list of dict
            ``context_workspace_archive``, ``context_workspace_delete`` and, with
            ``include_read_path_tool``, ``read_path``.
        """
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

    def _touch(self) -> None:
        self._version += 1

    def _top_unit(self, b: Block) -> str:
        """The top-level unit holding ``b``. Inside :meth:`_tops_memo` each
        group's chain of parents is walked once (re-archiving nests groups
        one level per call, so chains grow with the session)."""
        if b.group is None:
            return b.id
        memo = self._top_memo
        gid = b.group
        if memo is not None:
            hit = memo.get(gid)
            if hit is not None:
                return hit
        seen = [gid]
        while True:
            p = self._groups[gid].parent
            if p is None:
                break
            if memo is not None:
                hit = memo.get(p)
                if hit is not None:
                    gid = hit
                    break
            gid = p
            seen.append(gid)
        if memo is not None:
            for g in seen:
                memo[g] = gid
        return gid

    @contextlib.contextmanager
    def _tops_memo(self) -> Iterator[None]:
        """Remember top units while no group's parent changes (a resolution, a
        refresh): every lookup after the first of a group is O(1)."""
        if self._top_memo is not None:  # nested: the outer memo stays valid
            yield
            return
        self._top_memo = {}
        try:
            yield
        finally:
            self._top_memo = None

    def _leaves(self, unit_id: str) -> list[int]:
        """The block positions under ``unit_id``, in member order (iterative:
        nesting depth is unbounded)."""
        if unit_id.startswith("B"):
            return [_num(unit_id)]
        out: list[int] = []
        stack = [iter(self._groups[unit_id].members)]
        while stack:
            m = next(stack[-1], None)
            if m is None:
                stack.pop()
            elif m[0] == "B":
                out.append(_num(m))
            else:
                stack.append(iter(self._groups[m].members))
        return out

    def _unit_payload(self, uid: str) -> PayloadRef:
        if uid[0] == "G":
            return self._groups[uid].payload
        p = self._blocks[_num(uid) - 1].payload
        assert p is not None
        return p

    # ============================================================ payload I/O
    def _put(self, key: str, data: bytes) -> PayloadRef:
        """Store ``data`` under ``key``; the reference records the engine's own
        size and sha256 of these exact bytes, never what the store reports, so a
        store that writes other bytes cannot vouch for them (reads then fail)."""
        ref = PayloadRef(key, len(data), sha256_hex(data))
        adopt = False
        existed = self.store.contains(key)
        if key not in self._own_keys and key not in self._adopted_keys:
            # Not ours: the store may hold another workspace's payload (or a
            # user's file) under this name; refuse rather than overwrite it.
            if existed:
                problem = foreign_payload_problem(self.store, key, data)
                if problem:
                    raise PayloadConflictError(key, self.store.root, problem)
                adopt = True
        txn = self._txn
        if txn is not None and not existed:
            txn.created.append(key)  # removed again if the operation rolls back
        self.store.put(key, data)  # returns only when durable
        owners = self._adopted_keys if adopt else self._own_keys
        if txn is not None and key not in owners:
            (txn.adopted_added if adopt else txn.own_added).add(key)
        owners.add(key)
        if key in self._doomed:  # live again (a block's payload bytes never change)
            self._doomed.discard(key)
            if txn is not None:
                txn.doomed_removed.add(key)
        if txn is not None and key in txn.deletes:
            txn.deletes.remove(key)
        return ref

    def _move_out(self, b: Block, status: Status, **changes: Any) -> PayloadRef:
        """Store block ``b``'s payload bytes under ``<id>.txt`` (durable first), then
        record ``b`` as ``status`` at level 1 with its content dropped and ``changes``
        applied, owning that payload. The caller refreshes the rows it affects."""
        key = f"{b.id}.txt"
        ref = self._put(key, block_payload_bytes(b.type, b.content, b.tool_calls))
        self._set_record(replace(b, status=status, level=1, content=None, payload=ref, **changes))
        self._payload_owner[key] = b.id
        return ref

    def _release(self, key: str) -> None:
        """A payload the live state no longer needs. It leaves the store at once
        only if no saved snapshot can point at it; otherwise at the next ``save``,
        after a state that no longer needs it is durable (a crash in between
        leaves the last saved state loadable)."""
        if self._saved:
            if self._txn is not None and key not in self._doomed:
                self._txn.doomed_added.add(key)
            self._doomed.add(key)
        else:
            self._remove_payload(key)

    def _remove_payload(self, key: str) -> None:
        """Delete a released payload from the store, if this workspace owns it
        (an adopted one, which another run may need, stays). Inside an
        operation the deletion waits for its commit (see ``_atomic``)."""
        if key in self._own_keys:
            if self._txn is not None:
                self._txn.deletes.append(key)
                return
            self.store.delete(key)
            self._own_keys.discard(key)

    # ============================================================ transactions
    #: Rebuilds every derived field from records (the persistence layer's).
    _install: Callable[[Mapping[str, Any], list[Block], list[Group]], None]

    def _begin_txn(self) -> Txn:
        return Txn(
            len(self._blocks),
            self._turn,
            self._group_seq,
            self._user_seen,
            self._acc,  # hashed only by a rollback's check (see _rebuild)
        )

    def _results_of(self, bid: str) -> tuple[str, ...] | list[str]:
        """The IDs of the result blocks answering tool-call block ``bid``, in
        block order. Most calls have one result, held as that block's own ID
        string (shared with its record) rather than a list of its own."""
        kids = self._children.get(bid)
        if kids is None:
            return ()
        return (kids,) if isinstance(kids, str) else kids

    def _add_result(self, parent: str, bid: str) -> None:
        """Result block ``bid`` (the newest) answers tool-call block ``parent``."""
        kids = self._children
        prev = kids.get(parent)
        if prev is None:
            kids[parent] = bid
        elif isinstance(prev, str):
            kids[parent] = [prev, bid]
        else:
            prev.append(bid)

    def _pending_put(self, cid: str, bid: str) -> None:
        """Call ``cid`` of block ``bid`` now waits for its result (logged in
        the operation's transaction, see :class:`Txn`)."""
        txn = self._txn
        if txn is not None and cid not in txn.pending_undo:
            txn.pending_undo[cid] = self._pending.get(cid)
        self._pending[cid] = bid

    def _pending_pop(self, cid: str) -> None:
        """Call ``cid`` is answered: it waits no more (logged like _pending_put)."""
        txn = self._txn
        if txn is not None and cid not in txn.pending_undo:
            txn.pending_undo[cid] = self._pending.get(cid)
        del self._pending[cid]

    def _pending_before(self, txn: Txn, blocks: list[Block]) -> dict[str, str]:
        """The pending calls as they were when ``txn`` began: the current ones
        with the operation's changes undone, in their owner's call order (the
        order they were registered in; an answer undone is put back in its
        place). ``blocks`` are the records as they were."""
        pending = dict(self._pending)
        for cid, prev in txn.pending_undo.items():
            if prev is None:
                pending.pop(cid, None)
            else:
                pending[cid] = prev
        owners = set(pending.values())
        if len(owners) == 1:
            owner = owners.pop()
            calls = blocks[_num(owner) - 1].call_ids
            if set(pending) <= set(calls):
                pending = {cid: owner for cid in calls if cid in pending}
        return pending

    def _commit_txn(self, txn: Txn) -> None:
        """The operation is logged: make its deferred payload deletions. One that
        fails (the file stays) is retried at the next ``save``."""
        for key in txn.deletes:
            if key in self._payload_owner or key not in self._own_keys:
                continue
            try:
                self.store.delete(key)
            except (OSError, VistaLabError):
                self._doomed.add(key)
                continue
            self._own_keys.discard(key)

    def _abort_txn(self, txn: Txn) -> None:
        """Undo what the operation did: the records and scalars as they were, every
        derived field rebuilt from them, payload files it created removed."""
        if txn.rolled_back:
            return
        txn.rolled_back = True
        if txn.changed(self):
            self._rebuild(txn)
        for key in reversed(txn.created):
            try:
                self.store.delete(key)
            except (OSError, VistaLabError):  # stays, still ours: a later put may replace it
                continue
            self._own_keys.discard(key)
            self._adopted_keys.discard(key)
        self._own_keys -= txn.own_added - set(txn.created)
        self._adopted_keys -= txn.adopted_added
        self._doomed -= txn.doomed_added
        self._doomed |= txn.doomed_removed
        txn.records.clear()
        txn.created.clear()
        txn.deletes.clear()

    def _rebuild(self, txn: Txn) -> None:
        blocks = self._blocks[: txn.n_blocks]
        groups = dict(self._groups)
        for rid, old in txn.records.items():
            if rid[0] == "B":
                blocks[old.seq - 1] = old
            elif old is None:
                groups.pop(rid, None)
            else:
                groups[rid] = old
        answered = {}
        for cid, bid in self._answered.items():
            if _num(bid) <= txn.n_blocks:
                answered[cid] = bid
                continue
            for b in reversed(blocks):  # a reused call id: its earlier answer
                if b.tool_call_id == cid:
                    answered[cid] = b.id
                    break
        fresh = type(self)(
            self.budget,
            tokenizer=self.tokenizer,
            store=self.store,
            hard_limit=self.hard_limit,
            task_tools=self._task_tools,
            protocol=self.protocol,
            dashboard=self.dashboard_config,
            include_read_path_tool=self._include_read_path,
            cache_prefix=self.cache_prefix,
            keep_pending=self.keep_pending,
        )
        fresh._events.clear()
        doc = {
            "turn": txn.turn,
            "group_seq": txn.group_seq,
            "user_seen": txn.user_seen,
            "pending": self._pending_before(txn, blocks),
            "answered": answered,
        }
        fresh._install(doc, blocks, sorted(groups.values(), key=lambda g: _num(g.id)))
        before = self._hash_of(txn.turn, txn.acc)
        if fresh.state_hash() != before:  # pragma: no cover - an engine bug
            raise AssertionError(f"rollback rebuilt {fresh.state_hash()}, not {before}")
        version = self._version
        for name, value in vars(fresh).items():
            if name not in _KEEP_ON_ROLLBACK:
                setattr(self, name, value)
        self._version = max(version, self._version) + 1

    def _fetch(self, key: str, sha256: str, size: int | None = None) -> bytes:
        """The payload's bytes, verified here against the checksum the engine
        recorded (the store's own check is not relied on). The stores of this
        package are given the recorded ``size`` too, so they compare a file's
        length with it before reading a byte (a huge or sparse file put in a
        payload's place is refused, not read whole)."""
        if size is not None and sized_get(self.store):
            data = self.store.get(key, size=size)  # type: ignore[call-arg]
        else:
            data = self.store.get(key)
        return verify_payload(key, data, sha256)

    @contextlib.contextmanager
    def _failure_logged(self, action: str, args: dict[str, Any]) -> Iterator[None]:
        """A refused action is logged (ok=False, with the reason) and re-raised; the
        state is untouched, so the log still replays to the same hash."""
        try:
            yield
        except WorkspaceError as exc:
            if self._txn is not None:  # the refusal is logged against the state before it
                self._abort_txn(self._txn)
            self._log(action, args, False, str(exc), {})
            raise

    # ============================================================ events
    def _log(
        self, op: str, args: dict[str, Any], ok: bool, result: str, effects: dict[str, Any]
    ) -> None:
        ev = logged_event(
            self._event_base + len(self._events),
            op,
            args,
            ok,
            result,
            _shared_effects(effects),
            (self._config_digest, self._turn, self._acc),
        )
        if self._log_fh is not None:  # written first: a failed write leaves the log as it was
            self._log_fh.append(ev.to_json())
        self._events.append(ev)

    @locked
    def close(self) -> None:
        """Close the event log file (if any)."""
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _apply_rewrite(self) -> None:
        if self._rewrite is None:
            return
        start, end, marks = self._rewrite
        events = self._events
        delta, i = 0, 0
        for k in range(start, end):
            ev = events[k]
            args = ev.args
            while i < len(marks) and marks[i][0] == k:
                args = dict(args, message=dict(args["message"], content=marks[i][1]))
                delta = (delta + marks[i][2]) % HASH_MOD
                i += 1
            turn, acc = event_state(ev)
            acc = (acc + delta) % HASH_MOD
            events[k] = logged_event(
                ev.seq,
                ev.op,
                args,
                ev.ok,
                ev.result,
                ev.effects,
                (self._config_digest, turn, acc),
            )
        self._rewrite = None
