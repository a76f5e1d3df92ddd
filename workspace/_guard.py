"""The budget guard applied when a tool result is registered."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._accounting import (
    REPLY_PRIMING,
    message_tokens,
)
from ._handles import (
    offload_text,
    rejection_text,
)
from ._preflight import PreflightLayer
from ._records import (
    Block,
    BlockType,
    Status,
)
from ._store import sha256_hex
from ._validate import _num

__all__ = ["GuardLayer"]


class GuardLayer(PreflightLayer):
    """The budget guard on tool results: admit, offload older raw results, or
    reject with a notice (the result's block ID stays answered either way)."""

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
            return self._reject(b, new_cost, cap, self.hard_limit, decided_by="cap")
        total = self._candidate_total()
        if total <= self.hard_limit:
            return {"admitted": True}
        # Plan on exact message costs (oldest raw results first), then check
        # the exact total, which also sees the ledger rows change.
        candidates = [
            x
            for x in self._blocks
            if x.type is BlockType.TOOL_RESULT
            and x.status is Status.VISIBLE
            and not x.rejected
            and x.seq != b.seq
        ]
        if self.cache_prefix:
            # Results the overflow rendering does not show go first (oldest
            # first among them): offloading them rewrites no position of the
            # prefix the agent sees, which a provider's prompt cache holds.
            cut = self._prefix_cut_estimate()
            candidates.sort(key=lambda x: (x.seq <= cut, x.seq))
        eligible = iter(candidates)
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
                out = self._reject(
                    b, new_cost, cap, self.hard_limit, total=total, decided_by="hard_limit"
                )
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
    ) -> dict[str, Any]:
        """Register the rejection notice in place of ``b``. ``decided_by`` is
        ``"cap"`` (the per-result cap: the result could never fit a normal
        rendering) or ``"hard_limit"`` (offloading older results could not bring
        the candidate under the hard limit); the effects record it with ``cap``
        so a report states the rule that actually refused the result."""
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
            "cap": cap,
            "decided_by": decided_by,
        }
