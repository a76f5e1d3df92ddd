"""Deliberately broken engines (used only by the tests): each breaks one of the
paper's workspace invariants in one small way, so the differential test can be
shown to find it (paper, Methodology: "Workspace invariants", "Structure
preservation"). Each is a subclass of the reference engine that changes one
transition, the way a real regression would."""

from __future__ import annotations

from typing import Any

from vistalab.workspace import Workspace
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
