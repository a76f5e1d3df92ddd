"""An untrusted snapshot never acts outside its folder: a store_root elsewhere
is refused before any file is touched (no folder opened, no temp file removed),
unless the caller allows it; pseudo file systems are refused as store roots; a
store removes only the temp files its own writes leave."""

from __future__ import annotations

import json
import os

import pytest
from vistalab.workspace import (
    DiskStore,
    PayloadIntegrityError,
    SnapshotError,
    Workspace,
    WorkspaceArgumentError,
)


def _saved(tmp_path):
    folder = tmp_path / "run"
    ws = Workspace(50_000, tokenizer="approx", store=DiskStore(folder / "archive"),
                   protocol=False)
    ws.register_user("task")
    ws.register_assistant("text")
    ws.archive("B2")
    ws.save(folder / "state.json")
    return folder / "state.json"


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    bait = victim / ".notes.txt.0123456789abcdef0123456789abcdef.tmp"
    bait.write_text("the user's own file, named like a temp file")
    (victim / "B2.txt").write_text("someone's file")
    return victim, {p.name: p.read_bytes() for p in victim.iterdir()}


def test_foreign_store_root_is_refused_before_anything_is_touched(tmp_path):
    state = _saved(tmp_path)
    victim, before = _victim(tmp_path)
    doc = json.loads(state.read_text())
    doc["config"]["store_root"] = str(victim)
    state.write_text(json.dumps(doc))
    with pytest.raises(SnapshotError, match="outside .*nothing was opened"):
        Workspace.load(state)
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before
    assert not (victim / ".orphaned").exists()
    # The caller may allow it explicitly (then the store's own rules apply:
    # the user's temp-named file is still not the store's to remove).
    with pytest.raises(PayloadIntegrityError, match="checksum mismatch|the workspace recorded"):
        Workspace.load(state, allow_store_under=tmp_path)  # B2.txt there is not its payload
    assert (victim / ".notes.txt.0123456789abcdef0123456789abcdef.tmp").exists()


def test_own_store_root_loads_by_default(tmp_path):
    state = _saved(tmp_path)
    ws = Workspace.load(state)
    assert ws.read_path(ws.payload_path("B2.txt")) == b"text"


def test_symlinked_store_root_pointing_out_is_refused(tmp_path):
    state = _saved(tmp_path)
    victim, before = _victim(tmp_path)
    link = state.parent / "elsewhere"
    os.symlink(victim, link)
    doc = json.loads(state.read_text())
    doc["config"]["store_root"] = str(link)
    state.write_text(json.dumps(doc))
    with pytest.raises(SnapshotError, match="outside"):
        Workspace.load(state)
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before


def test_invalid_snapshot_is_refused_before_its_store_is_opened(tmp_path):
    state = _saved(tmp_path)
    archive = state.parent / "archive"
    tmp_file = archive / ".B9.txt.0123456789abcdef0123456789abcdef.tmp"
    tmp_file.write_bytes(b"x")
    doc = json.loads(state.read_text())
    doc["blocks"][0]["id"] = "B7"
    state.write_text(json.dumps(doc))
    with pytest.raises(SnapshotError, match="block 1"):
        Workspace.load(state)
    assert tmp_file.exists()  # the store was never opened, so nothing was cleaned


@pytest.mark.parametrize("root", ["/proc/self", "/sys/kernel", "/dev"])
def test_pseudo_file_systems_are_refused_as_store_roots(root):
    if not os.path.exists(root):
        pytest.skip(f"{root} does not exist here")
    with pytest.raises(WorkspaceArgumentError, match="pseudo file"):
        DiskStore(root)


def test_store_removes_only_its_own_temp_files(tmp_path):
    (tmp_path / ".B3.txt.0123456789abcdef0123456789abcdef.tmp").write_bytes(b"torn")
    mine = tmp_path / ".report.pdf.0123456789abcdef0123456789abcdef.tmp"
    mine.write_bytes(b"the user's")
    store = DiskStore(tmp_path)
    assert store.removed_temp_files == (".B3.txt.0123456789abcdef0123456789abcdef.tmp",)
    assert mine.exists()
