"""The budget guard applied when a tool result is registered."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._accounting import REPLY_PRIMING, message_tokens
from ._handles import PENDING_RULE, SHORTEST_REJECTION, rejection_text
from ._preflight import PreflightLayer
from ._records import (
    Block,
    Status,
)
from ._store import sha256_hex
from ._validate import _num

__all__ = ["GuardLayer"]


class GuardLayer(PreflightLayer):
    """The budget guard on tool results: admit, offload older raw results, or
    reject with a notice (the result's block ID stays answered either way)."""

    def _guard(self, b: Block) -> dict[str, Any]:
        """Admit, offload older raw results, or reject ``b`` (just registered).

        With ``keep_pending``, while calls of ``b``'s batch are still pending,
        the management rendering shows the batch whole (its call block, its
        results so far, placeholders for the rest), so an admitted ``b`` must
        also leave the management floor within the budget; else ``b`` is
        rejected (its notice fits the room the call's registration reserved).
        The batch's earlier results are never offloaded meanwhile: the batch
        stays whole until its last result arrives (batch atomicity)."""
        out = self._guard_hard(b)
        if (
            out.get("admitted")
            and self._pending_tail_start() is not None
            and self.management_floor() > self.budget
        ):
            new_cost = self._pos_cost[b.seq - 1]
            cap = self._result_cap(b.parent)
            current = self._candidate_total() - new_cost
            room = self.budget - (self.management_floor() - new_cost)
            full = rejection_text(
                current=current, limit=self.budget, attempted=new_cost, cap=cap, rule=PENDING_RULE
            )
            notice = self._fitting_notice(b, full, room)
            rejected = self._reject(
                b, new_cost, cap, self.budget, decided_by="pending", notice=notice
            )
            if out.get("offloaded"):
                rejected["offloaded"] = out["offloaded"]
            return rejected
        return out

    def _fitting_notice(self, b: Block, full: str, room: int) -> str:
        """The longest of ``full``, a short notice and the shortest one whose
        tool message fits ``room`` tokens: the notice of a result of a batch
        still waiting for results, which the management rendering keeps
        (``keep_pending``). The call's registration reserved room for the
        shortest notice per call, so the floor stays within the budget."""
        for text in (full, f"{SHORTEST_REJECTION}: no room beside the pending calls"):
            msg = {"role": "tool", "tool_call_id": b.tool_call_id, "content": text}
            if message_tokens(msg, self.tokenizer) <= room:
                return text
        return SHORTEST_REJECTION

    def _guard_hard(self, b: Block) -> dict[str, Any]:
        """The per-result cap and the hard limit (see :meth:`_guard`)."""
        new_cost = self._pos_cost[b.seq - 1]
        cap = self._result_cap(b.parent)
        if new_cost > cap:
            return self._reject(b, new_cost, cap, self.hard_limit, decided_by="cap")
        total = self._candidate_total()
        if total <= self.hard_limit:
            return {"admitted": True}
        # Plan on exact message costs (oldest raw results first), then check
        # the exact total, which also sees the ledger rows change. The plan is
        # the shortest run of eligible results, in the order below, whose
        # offload gains add up to the excess; the gain tree finds its end in
        # O(log n) (eligible: visible, unrejected tool results other than b).
        last = b.seq - 1  # b's position, excluded
        tail = self._pending_tail_start()
        if tail is not None:  # the pending batch stays whole (see _guard)
            last = min(last, tail)
        if self.cache_prefix:
            # Results the overflow rendering does not show go first (oldest
            # first among them): offloading them rewrites no position of the
            # prefix the agent sees, which a provider's prompt cache holds.
            cut = min(self._prefix_cut_estimate(), last)
            runs = [(cut, last), (0, cut)]
        else:
            runs = [(0, last)]
        tree = self._gains_before(b.seq - 1)
        offloaded: list[str] = []
        excess = total - self.hard_limit
        while True:
            plan: list[tuple[int, int]] = []  # position ranges whose eligible results go
            gain = 0
            while runs:
                lo, hi = runs[0]
                j, got = tree.first_reaching(lo, hi, excess - gain)
                gain += got
                if j is not None:
                    plan.append((lo, j + 1))
                    runs[0] = (j + 1, hi)
                    break
                plan.append((lo, hi))
                runs.pop(0)
            if gain < excess:
                out = self._reject(
                    b, new_cost, cap, self.hard_limit, total=total, decided_by="hard_limit"
                )
                if offloaded:
                    out["offloaded"] = offloaded
                return out
            for seq in [p + 1 for lo, hi in plan for p in tree.positions(lo, hi)]:
                x = self._blocks[seq - 1]
                self._offload(x)
                offloaded.append(x.id)
            total = self._candidate_total()
            if total <= self.hard_limit:
                return {"admitted": True, "offloaded": offloaded}
            excess = total - self.hard_limit

    def _gains_before(self, end: int) -> Any:
        """The offload-gain tree, current for the positions before ``end`` (the
        result being guarded, which the plan never reads): that result's own
        gain, due since it was placed, stays due, so a result that is then
        rejected (and so never eligible) is never counted for it."""
        due = self._gain_due
        if not due or due[-1] < end:
            return self._gains()
        held = due.pop()
        try:
            return self._gains()
        finally:
            due.append(held)

    def _result_cap(self, parent: str | None) -> int:
        """The largest result (message tokens) a normal rendering of B tokens
        could hold beside the fixed costs, the call ``parent`` and the smallest
        dashboard. A larger one is useless to admit: the agent could only
        archive it unseen."""
        parent_cost = self._pos_cost[_num(parent) - 1] if parent else 0
        return self.budget - (
            self._fixed_tools
            + REPLY_PRIMING
            + self._protocol_cost
            + self._pinned_cost
            + parent_cost
            + self._dash_floor
        )

    def _offload(self, x: Block) -> None:
        self._move_out(x, Status.OFFLOADED)  # durable before the content leaves the prompt
        self._refresh([x.seq])
        self._touch()

    def _reject(
        self,
        b: Block,
        new_cost: int,
        cap: int,
        limit: int,
        *,
        total: int | None = None,
        decided_by: str,
        at_least: bool = False,
        notice: str | None = None,
    ) -> dict[str, Any]:
        """Register the rejection notice in place of ``b``. ``decided_by`` is
        ``"cap"`` (the per-result cap: the result could never fit a normal
        rendering) or ``"hard_limit"`` (offloading older results could not bring
        the candidate under the hard limit); the effects record it with ``cap``
        so a report states the rule that actually refused the result, or
        ``"pending"`` (the management rendering that keeps the pending batch
        would pass the budget; ``notice`` is then the text chosen to fit)."""
        current = (total if total is not None else self._candidate_total()) - new_cost
        if notice is None:
            notice = rejection_text(
                current=current, limit=limit, attempted=new_cost, cap=cap, at_least=at_least
            )
            if self._pending_tail_start() is not None:
                # The kept batch holds this notice: one that fits its room
                # (a full cap or hard-limit notice is longer than the
                # shortest one the floor reserved).
                room = self.budget - (self.management_floor() - self._pos_cost[b.seq - 1])
                notice = self._fitting_notice(b, notice, room)
        data = notice.encode("utf-8")
        # The position's messages (a visible result of no group, its notice in
        # place of its text) are counted first, so the record is made once,
        # with its cost (tokens are not hashed); the refresh takes them.
        msgs = self._wrap_tool_text(b, notice)
        cost = sum(message_tokens(m, self.tokenizer) for m in msgs)
        rec = replace(
            b, content=notice, size=len(data), sha256=sha256_hex(data), rejected=True, tokens=cost
        )
        self._set_record(rec)
        self._refresh_one(rec, (msgs, cost))
        self._touch()
        return {
            "admitted": False,
            "rejected": True,
            "attempted_tokens": new_cost,
            "current_tokens": current,
            "limit": limit,
            "cap": cap,
            "decided_by": decided_by,
            # Only for a result refused before it was counted to its end.
            **({"attempted_at_least": True} if at_least else {}),
        }
