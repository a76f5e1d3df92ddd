"""Fork: an independent copy of a workspace without re-tokenising it, and the
counterfactual copy with some plain messages' texts substituted."""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Self

from ._accounting import (
    message_tokens,
)
from ._errors import (
    BlockStateError,
    WorkspaceArgumentError,
)
from ._hashing import HASH_MOD
from ._records import (
    Block,
    BlockType,
    Status,
)
from ._state import MUTABLE_STATE, locked
from ._store import MemoryStore, PayloadStore, sha256_hex
from ._tools import ToolLayer
from ._validate import _text_iv

__all__ = ["ForkLayer"]


class ForkLayer(ToolLayer):
    """Copies of the workspace (plain and substituted)."""

    @locked
    def fork(
        self,
        *,
        store: PayloadStore | None = None,
        substitute: Mapping[str, str] | None = None,
    ) -> Self:
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
        # Records, events, tuples, the tokenizer and the renderer are immutable
        # or pure caches and stay shared; the containers that index them are
        # named in MUTABLE_STATE and copied, so the two workspaces evolve apart.
        for name in MUTABLE_STATE:
            setattr(new, name, getattr(self, name).copy())
        new._children = {
            k: v if type(v) is str else list(v) for k, v in self._children.items()
        }
        new._ledger = self._ledger.copy()
        new._fold_cache = None  # its folded-rows ledger caches; rebuilt on demand
        new._pos_tree, new._gain_tree = self._pos_tree.copy(), self._gain_tree.copy()
        new._gain_due = self._gain_due[:]
        new._digests = self._digests.copy()
        new._codec = self._codec.copy()
        new._lock = threading.RLock()
        new._log_fh = None
        new.store = target
        if target is not self.store:  # no snapshot points into the copy's store
            new._saved, new._doomed = False, set()
        if target is not self.store:
            for key, uid in self._payload_owner.items():
                ref = self._unit_payload(uid)
                target.put(key, self._fetch(key, ref.sha256, ref.size))
            new._own_keys, new._adopted_keys = set(self._payload_owner), set()
        else:
            # One store, two workspaces: the payloads stay the parent's to
            # replace or remove; the fork may write the same bytes again, and a
            # payload under a new ID that the parent already wrote with other
            # bytes is refused, not overwritten.
            new._own_keys, new._adopted_keys = set(), self._own_keys | self._adopted_keys
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
            deltas.append((self._acc - before) % HASH_MOD)
            if b.status is Status.PINNED:
                self._pinned_cost += cost - b.tokens
            self._set_position(nb, (msg,), cost, self._position_key(nb))
            self._set_urow(b.id)
        self._touch()
        # The log of that history is the same events with the new texts, every
        # state hash from the first substituted registration on shifted by the
        # record digests' difference (the hash is a sum of record digests). It is
        # rewritten when first read: a simulation that never reads the old
        # events never pays for it.
        marks = tuple((k, text, d) for (k, _, text, _), d in zip(plan, deltas, strict=True))
        self._rewrite = (plan[0][0], len(self._events), marks)
