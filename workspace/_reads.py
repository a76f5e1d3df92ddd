"""Reads: exact payload bytes by path and selector, and recovery of any live
block by walking the archive hierarchy down (checksums verified at each level)."""

from __future__ import annotations

from typing import Any

from ._actions import ActionsLayer
from ._atomic import atomic
from ._errors import (
    BlockStateError,
    PayloadIntegrityError,
    WorkspaceArgumentError,
)
from ._handles import (
    parse_group_payload,
)
from ._records import (
    Status,
    block_payload_bytes,
)
from ._spec import (
    ByteRange,
    LineRange,
    MemberSelector,
    apply_range,
    format_id_ranges,
    parse_selector,
)
from ._state import locked
from ._store import sha256_hex

__all__ = ["ReadLayer"]


class ReadLayer(ActionsLayer):
    """Payload reads (the paper's read_path) and block recovery."""

    @atomic
    def read_path(self, path: str, selector: Any = None) -> bytes:
        """Exact bytes of a payload (or the selected part), checksum verified.

        ``selector``: None (whole payload, the paper's read_path(h, {})),
        ``"bytes=START:STOP"``, ``"lines=FIRST-LAST"`` or ``"member=B7"``
        (one block of a group, found by walking nested groups down).

        Parameters
        ----------
        path : str
            The payload path a handle shows (or a bare store key, ``G1.txt``).
        selector : str, ByteRange, LineRange, MemberSelector or None
            The part to read; None reads the whole payload.

        Returns
        -------
        bytes
            The exact bytes.

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
        data = self._fetch(key, ref.sha256, ref.size)
        if sel is None:
            return data
        if isinstance(sel, (ByteRange, LineRange)):
            return apply_range(data, sel)
        assert isinstance(sel, MemberSelector)
        return self._member_bytes(owner, key, data, sel.block_id)

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
                return self._fetch(e.ref, e.sha256, e.size)
            if e.unit_id[0] == "G" and block_id in {f"B{s}" for s in self._leaves(e.unit_id)}:
                sub = self._fetch(e.ref, e.sha256, e.size)
                return self._member_bytes(e.unit_id, e.ref, sub, block_id)
        raise WorkspaceArgumentError(
            "selector",
            f"member={block_id}",
            f"names a block that is not in {uid}",
            f"{uid} holds {format_id_ranges([f'B{s}' for s in self._leaves(uid)])}",
        )

    @locked
    def recover(self, block_id: str) -> bytes:
        """The exact original bytes of any live block, wherever they are now.

        Visible blocks are encoded from the prompt; archived ones are read
        from the store by walking from the top-level handle down the
        hierarchy (checksums verified at every level). Deleted blocks raise.

        Parameters
        ----------
        block_id : str
            One block, ``B<n>`` (a member of a group is found inside it).

        Returns
        -------
        bytes
            The block's exact original bytes (its message text, or for a tool
            call its calls as JSON).

        Raises
        ------
        UnknownBlockError
            No such block.
        BlockStateError
            The block was deleted.
        PayloadIntegrityError
            A payload on the way down is missing or fails its checksum.
        """
        b = self.block(block_id)
        if b.status is Status.DELETED:
            raise BlockStateError(b.id, "was deleted; its content cannot be recovered")
        if b.in_prompt:
            return block_payload_bytes(b.type, b.content, b.tool_calls)
        top = self._top_unit(b)
        ref = self._unit_payload(top)
        return self._read(self.payload_path(ref.key), MemberSelector(b.id))
