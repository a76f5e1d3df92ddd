"""Nothing is ever lost in a shared archive folder (audit item 2; DESIGN.md
rule 9, the paper's archive contract: the exact bytes stay recoverable from the
payload path): a payload file that exists with other bytes, and that this
store or workspace did not write, is never overwritten; the same bytes again
are fine; a workspace loaded from its snapshot still owns its payloads."""

from __future__ import annotations

import json

import pytest
from vistalab.workspace import (
    DiskStore,
    MemoryStore,
    PayloadConflictError,
    ToolFailure,
    Workspace,
)

from ._data import TRACES


def _filled(store, word: str) -> Workspace:
    ws = Workspace(100_000, tokenizer="approx", store=store)
    ws.register_user("task")
    ws.register_user(f"{word} " * 300)
    ws.register_user("next")
    ws.register_user(f"{word}{word} " * 200)
    return ws


def test_cli_replay_refuses_to_overwrite_a_users_file(tmp_path, capsys):
    """Audit item 2, from the CLI: the user's own ``G1.txt`` in the archive
    folder survives a replay that would archive G1 there; the replay stops with
    one line on stderr naming the key, the folder and the fix, exit 2."""
    from vistalab.cli import main

    folder = tmp_path / "arch2"
    folder.mkdir()
    (folder / "G1.txt").write_text("my notes")
    argv = ["workspace", "replay", str(TRACES / "ops_agent.json"), "--budget", "3000"]
    assert main([*argv, "--archive-dir", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'G1.txt'" in err and str(folder.resolve()) in err
    assert "already exists with other bytes" in err and "fresh archive folder" in err
    assert (folder / "G1.txt").read_text() == "my notes"


def test_cli_rerun_into_the_same_folder_is_fine(tmp_path, capsys):
    """Audit item 2: rerunning the same trace into one folder writes the same
    bytes under the same keys, which is accepted (idempotent)."""
    from vistalab.cli import main

    argv = ["workspace", "replay", str(TRACES / "ops_agent.json"), "--budget", "3000"]
    argv += ["--archive-dir", str(tmp_path / "a"), "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)["state_hash"]
    files = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    assert files
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["state_hash"] == first
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()} == files


@pytest.mark.parametrize("shared_instance", [False, True])
def test_second_workspace_on_a_folder_cannot_destroy_the_firsts_payload(
    tmp_path, shared_instance
):
    """Audit item 2, through the API: two workspaces on DiskStore("shared")
    (two store objects, or one shared) both archive B4 with different bytes.
    The second is refused with PayloadConflictError (an OSError, so the tool
    path reports a STORE failure and changes nothing), and the first
    workspace's snapshot still loads with every payload verified."""
    first_store = DiskStore(tmp_path / "shared")
    a = _filled(first_store, "alpha")
    a.archive("B4")
    a.save(tmp_path / "a.json")
    b = _filled(first_store if shared_instance else DiskStore(tmp_path / "shared"), "beta")
    before = b.state_hash()
    with pytest.raises(PayloadConflictError, match=r"'B4.txt' in .*shared already exists") as e:
        b.archive("B4")
    assert isinstance(e.value, OSError) and e.value.key == "B4.txt"
    out = b.call_tool("context_workspace_archive", {"block_id": "B4"})
    assert out.failure is ToolFailure.STORE and "load the workspace that owns" in out.text
    assert b.state_hash() == before and b.events[-1].op == "register"  # nothing logged
    again = Workspace.load(tmp_path / "a.json", store=DiskStore(tmp_path / "shared"))
    assert again.state_hash() == a.state_hash()
    assert again.read_path(again.payload_path("B4.txt")).startswith(b"alphaalpha")


def test_memory_store_shared_by_two_workspaces_keeps_both(tmp_path):
    """Audit item 2 for MemoryStore: a store shared by two workspaces never
    lets the second replace the first's payload."""
    store = MemoryStore()
    a, b = _filled(store, "alpha"), _filled(store, "beta")
    a.archive("B4")
    with pytest.raises(PayloadConflictError, match="'B4.txt'"):
        b.archive("B4")
    assert a.read_path(a.payload_path("B4.txt")).startswith(b"alphaalpha")


def test_adopted_identical_payload_is_never_removed(tmp_path):
    """Audit item 2: a workspace that finds its exact bytes already stored
    (a rerun) uses them, and does not remove them when it restores the block,
    since the run that wrote them may still need them."""
    a = _filled(DiskStore(tmp_path / "s"), "alpha")
    a.archive("B2")
    a.save(tmp_path / "a.json")
    b = _filled(DiskStore(tmp_path / "s"), "alpha")
    b.archive("B2")
    b.restore("B2")
    assert (tmp_path / "s" / "B2.txt").exists()
    Workspace.load(tmp_path / "a.json", store=DiskStore(tmp_path / "s"))


def test_loaded_workspace_owns_its_payloads_after_a_crash(tmp_path):
    """Audit item 2 with crash recovery: a workspace archives units past its
    last save, then dies; loaded from that save it registers and archives the
    same IDs with other bytes, which replaces its own unsaved leftovers."""
    store = DiskStore(tmp_path / "s")
    ws = _filled(store, "alpha")
    ws.archive("B2")
    ws.save(tmp_path / "ws.json")
    ws.register_user("gamma " * 300)  # B5, archived after the save, then a crash
    ws.archive("B5")
    ws.archive("B3,B4")  # G1 past the saved group counter
    del ws
    back = Workspace.load(tmp_path / "ws.json", store=DiskStore(tmp_path / "s"))
    back.register_user("delta " * 250)
    back.archive("B5")
    back.archive("B4,B5")
    assert back.read_path(back.payload_path("B5.txt")).startswith(b"delta")
    back.restore("B2")  # its own payload: removed at the next save as before
    back.save(tmp_path / "ws.json")
    assert not (tmp_path / "s" / "B2.txt").exists()


def test_disk_store_put_rule(tmp_path):
    """Audit item 2 at the store: a DiskStore object replaces only what it
    wrote or claimed; a foreign file with other bytes is refused, the same
    bytes are accepted."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "B1.txt").write_bytes(b"theirs")
    store = DiskStore(tmp_path / "s")
    with pytest.raises(PayloadConflictError, match=r"'B1.txt'.*6 bytes.*fresh archive folder"):
        store.put("B1.txt", b"mine")
    assert store.get("B1.txt") == b"theirs"
    assert store.put("B1.txt", b"theirs").size == 6
    store.put("B2.txt", b"one")
    store.put("B2.txt", b"two")  # its own write: replaced as before
    assert store.get("B2.txt") == b"two"
    other = DiskStore(tmp_path / "s")
    other.claim(["B2.txt"])
    other.put("B2.txt", b"three")
    assert other.get("B2.txt") == b"three"
