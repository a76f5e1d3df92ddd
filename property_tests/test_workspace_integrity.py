"""Payload integrity against the store itself (paper, "Meta Context Tool": the handle keeps
path, level, size and a sha256 checksum; reads verify the checksum and fail loudly on
mismatch; eq. archive-contract). The engine hashes the exact payload bytes itself when it
archives, and checks every read against that hash, so a store that writes other bytes, or
vouches for them, cannot make a corrupted payload pass."""

from __future__ import annotations

import pytest
from vistalab.workspace import (
    MemoryStore,
    PayloadInfo,
    PayloadIntegrityError,
    Workspace,
    sha256_hex,
)


class _LyingStore(MemoryStore):
    """``put`` stores a corrupted copy and reports the corrupted copy's size and hash, as a
    store whose write path mangles data would (its own checks all pass)."""

    def put(self, key: str, data: bytes) -> PayloadInfo:
        bad = bytes(data[:-1]) + (b"?" if data[-1:] != b"?" else b"!") if data else b"?"
        self._blobs[key] = bad
        return PayloadInfo(key, f"{self.root}/{key}", len(bad), sha256_hex(bad))


class _VouchingStore(_LyingStore):
    """Also returns whatever it holds from ``get``, ignoring the checksum it is handed."""

    def get(self, key: str, *, sha256: str | None = None) -> bytes:
        return super().get(key)


def _workspace(store) -> Workspace:
    ws = Workspace(4000, store=store)
    ws.register_user("Task: keep the evidence.")
    ws.register_user("evidence one: the river rose 3.2 m")
    ws.register_user("evidence two: the bridge closed at 14:05")
    ws.register_user("evidence three: traffic moved north")
    return ws


@pytest.mark.parametrize("store_cls", [_LyingStore, _VouchingStore])
def test_a_store_that_writes_other_bytes_fails_loudly_on_recovery(store_cls):
    """Meta Context Tool / eq. archive-contract: the handle's checksum is the engine's hash of
    the exact bytes that left the prompt; recovering from a store that wrote other bytes (and
    reported their hash, or skips its own check) raises PayloadIntegrityError on every path
    (read_path, recover, restore, a group member) and the failed restore changes nothing."""
    ws = _workspace(store_cls())
    original = ws.recover("B2")
    res = ws.archive("B2")
    assert res.sha256 == sha256_hex(original) and res.size == len(original)
    assert ws.block("B2").payload.sha256 == sha256_hex(original)
    assert f"sha256={sha256_hex(original)[:16]}" in ws.render().messages[2]["content"]
    with pytest.raises(PayloadIntegrityError, match=r"'B2.txt': checksum mismatch"):
        ws.read_path(res.path)
    with pytest.raises(PayloadIntegrityError, match=r"checksum mismatch"):
        ws.recover("B2")
    state = ws.state_hash()
    with pytest.raises(PayloadIntegrityError, match=r"checksum mismatch"):
        ws.restore("B2")
    assert ws.state_hash() == state and ws.block("B2").status.value == "archived"
    group = ws.archive("B3-B4", "evidence two and three")
    with pytest.raises(PayloadIntegrityError, match=r"'G1.txt': checksum mismatch"):
        ws.read_path(group.path, "member=B3")
    assert ws.read_path_tool(group.path).startswith("Error: payload 'G1.txt': checksum mismatch")


def test_an_honest_store_passes_the_same_checks():
    """The control: with a conforming store the same calls return the exact bytes."""
    ws = _workspace(MemoryStore())
    original = ws.recover("B2")
    res = ws.archive("B2")
    assert ws.read_path(res.path) == original == ws.recover("B2")
    group = ws.archive("B3-B4", "")
    assert ws.read_path(group.path, "member=B3") == b"evidence two: the bridge closed at 14:05"
    ws.restore("B2")
    assert ws.recover("B2") == original


def test_offloaded_results_are_checked_too():
    """Budget guard: a raw result the guard moves out is recorded with the engine's own hash,
    so its corrupted copy is refused as well."""
    ws = Workspace(3000, hard_limit=4000, store=_LyingStore())
    ws.register_user("Task.")
    for i in range(1, 5):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ws.register_tool_call([call])
        ws.register_tool_result(f"c{i}", f"r{i} " * 600 if i < 4 else "n " * 4000)
    off = [b for b in ws.blocks if b.status.value == "offloaded_placeholder"]
    assert off, "the guard must have offloaded a result"
    b = off[0]
    assert b.payload.sha256 == b.sha256  # the block's own hash of its exact bytes
    with pytest.raises(PayloadIntegrityError, match=r"checksum mismatch"):
        ws.recover(b.id)
