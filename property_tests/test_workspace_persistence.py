"""Crash-consistent persistence (paper, eq. archive-contract:
archived payloads stay exactly recoverable): deferred payload removal, a
verifying ``load``, ``salvage`` with an exact loss list, temp-file cleanup,
non-regular payloads, the directory-fd store and the loaded workspace's log."""

from __future__ import annotations

import errno
import json
import os
import threading

import pytest
from vistalab.workspace import (
    DiskStore,
    MemoryStore,
    PayloadIntegrityError,
    SnapshotError,
    SnapshotWriteError,
    ToolFailure,
    Workspace,
    WorkspaceArgumentError,
    WorkspaceError,
    _persist,
)


def _call(cid: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": "fetch", "arguments": "{}"}}


def _ws(tmp_path, n: int = 4) -> Workspace:
    ws = Workspace(20_000, tokenizer="approx", store=DiskStore(tmp_path / "archive"))
    ws.register_system("system prompt")
    ws.register_user("the task")
    for i in range(n):  # B3, B5, ... calls; B4, B6, ... results
        ws.register_tool_call([_call(f"c{i}")])
        ws.register_tool_result(f"c{i}", f"result {i} " * 40)
    return ws


def test_restore_after_save_keeps_the_saved_state_loadable(tmp_path):
    """The issue's reproduction: archive, save, restore; the saved state still
    loads (the payload stays until a state that no longer needs it is saved)."""
    ws = _ws(tmp_path)
    s = tmp_path / "state.json"
    ws.archive("B4")
    ws.save(s)
    ws.restore("B4")
    assert ws.store.contains("B4.txt")
    assert Workspace.load(s).state_hash() == json.loads(s.read_text())["state_hash"]
    ws.save(s)
    assert not ws.store.contains("B4.txt")  # released once the new state is durable
    assert Workspace.load(s).state_hash() == ws.state_hash()


def test_delete_before_any_save_removes_payloads_at_once(tmp_path):
    """With no snapshot that could point at it, a deleted payload goes at once."""
    ws = _ws(tmp_path)
    ws.archive("B4")
    ws.delete("B4", "stale")
    assert not ws.store.contains("B4.txt")


def _edit(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "edit,msg",
    [
        (
            lambda d: d["blocks"][3].__setitem__("content", "edited"),
            r"block B4 has content that does not match",
        ),
        (
            lambda d: d["blocks"][1].__setitem__("content", "x" * 50_000),
            r"block B2 has content that does not match",
        ),
        (lambda d: d["blocks"][2].pop("status"), r"block 3 lacks the field 'status'"),
        (lambda d: d["blocks"][2].__setitem__("status", "sideways"), r"block B3 has a bad field"),
        (
            lambda d: d["blocks"][2].__setitem__("level", "one"),
            r"block 3 field 'level' has a bad value",
        ),
        (lambda d: d.__setitem__("version", 99), r"has version 99; this engine reads version 1"),
        (lambda d: d.pop("turn"), r"the file lacks the field 'turn'"),
        (lambda d: d["blocks"][3].__setitem__("parent", "B9"), r"block B4 has a bad parent"),
        (lambda d: d["groups"][0].__setitem__("members", ["B99"]), r"group G1 has a bad member"),
        (lambda d: d["blocks"][4].__setitem__("turn", 2), r"do not reproduce the saved state_hash"),
    ],
)
def test_load_checks_every_field_and_names_the_record(tmp_path, edit, msg):
    """Edited or damaged snapshots raise one SnapshotError naming the record and
    the problem: never KeyError, TypeError or an AssertionError at render."""
    ws = _ws(tmp_path)
    ws.archive("B6,B8")
    s = tmp_path / "state.json"
    ws.save(s)
    _edit(s, edit)
    with pytest.raises(SnapshotError, match=msg):
        Workspace.load(s)


def test_salvage_lists_exactly_what_was_lost_and_the_rest_works(tmp_path):
    """A missing group payload and an edited visible block: salvage tombstones
    exactly those units, lists them, and the result renders, recovers the
    intact units and replays its own log."""
    ws = _ws(tmp_path, 5)
    ws.archive("B6,B8")  # G1
    ws.archive("B10")
    s = tmp_path / "state.json"
    ws.save(s)
    os.unlink(tmp_path / "archive" / "G1.txt")
    _edit(s, lambda d: d["blocks"][3].__setitem__("content", "edited"))
    with pytest.raises(SnapshotError, match="block B4"):
        Workspace.load(s)
    got = Workspace.salvage(s)
    assert Workspace.load(s, repair=True).lost == got.lost
    lost = {(x.unit, x.blocks, x.key) for x in got.lost}
    assert lost == {("B4", ("B4",), ""), ("G1", ("B6", "B8"), "G1.txt")}
    assert "missing" in next(x.problem for x in got.lost if x.unit == "G1")
    w = got.workspace
    assert w.recover("B10") == ("result 3 " * 40).encode()
    assert w.render().tokens <= w.budget
    assert {b.id for b in w.blocks if b.status.value == "deleted"} == {"B4", "B6", "B8"}
    again = Workspace.replay(w.events, store=DiskStore(tmp_path / "archive"))
    assert again.state_hash() == w.state_hash()


def test_loaded_workspace_log_replays(tmp_path):
    """The log of a loaded workspace starts with its snapshot and replays to
    the same hash through later actions."""
    ws = _ws(tmp_path)
    ws.archive("B4,B6")
    s = tmp_path / "state.json"
    ws.save(s)
    w = Workspace.load(s)
    w.restore("G1")
    w.archive("B8", "later")
    w.register_user("more")
    assert w.events[0].op == "init" and w.events[0].seq == len(ws.events)
    again = Workspace.replay(w.events, store=DiskStore(tmp_path / "archive"))
    assert again.state_hash() == w.state_hash()


@pytest.mark.parametrize("kind", ["dir", "fifo"])
def test_non_regular_payloads_are_refused_without_hanging(tmp_path, kind):
    """A payload replaced by a folder or a FIFO is refused at once (O_NONBLOCK
    plus fstat), by load, read_path and recover alike."""
    ws = _ws(tmp_path)
    ws.archive("B4")
    s = tmp_path / "state.json"
    ws.save(s)
    p = tmp_path / "archive" / "B4.txt"
    p.unlink()
    os.mkdir(p) if kind == "dir" else os.mkfifo(p)
    errors: list[str] = []

    def attempt() -> None:
        for call in (
            lambda: Workspace.load(s),
            lambda: ws.recover("B4"),
            lambda: ws.read_path(str(p)),
        ):
            try:
                call()
            except PayloadIntegrityError as exc:
                errors.append(str(exc))

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "a read blocked on a non-regular payload"
    want = "a directory" if kind == "dir" else "a FIFO"
    assert len(errors) == 3 and all(f"is not a regular file (it is {want})" in e for e in errors)


def test_fifo_given_as_the_snapshot_is_refused_at_once(tmp_path):
    """A FIFO passed as the snapshot path is refused without opening it for a writer."""
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotError, match=r"is not a regular file \(a FIFO\)"):
        Workspace.load(fifo)


def test_temp_files_are_removed_when_the_store_and_snapshot_are_opened(tmp_path):
    """Temp files of interrupted writes are cleaned on open; payloads are kept."""
    ws = _ws(tmp_path)
    ws.archive("B4")
    s = tmp_path / "state.json"
    ws.save(s)
    junk = [
        tmp_path / "archive" / f".B9.txt.{'a' * 32}.tmp",
        tmp_path / f".state.json.{'b' * 32}.tmp",
    ]
    for j in junk:
        j.write_bytes(b"partial")
    store = DiskStore(tmp_path / "archive")
    assert store.removed_temp_files == (junk[0].name,)
    Workspace.load(s, store=store)
    assert not any(j.exists() for j in junk) and store.keys() == ["B4.txt"]


def test_swapped_symlink_cannot_redirect_writes(tmp_path):
    """The store writes through its directory fd: renaming the folder and
    putting a symlink in its place sends no payload to the symlink's target."""
    ws = _ws(tmp_path)
    folder = tmp_path / "archive"
    os.rename(folder, tmp_path / "moved")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", folder)
    ws.archive("B4")
    assert os.listdir(tmp_path / "elsewhere") == []
    assert "B4.txt" in os.listdir(tmp_path / "moved")


class _FullStore(MemoryStore):
    def put(self, key, data):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_enospc_during_archive_is_a_refusal_string_and_changes_nothing():
    """Agent tools always return a string: a full disk while archiving comes
    back as a refusal, with the state, store and log unchanged."""
    ws = Workspace(20_000, tokenizer="approx", store=_FullStore())
    ws.register_user("task")
    ws.register_assistant("x " * 200)
    before, n_events = ws.state_hash(), len(ws.events)
    out = ws.context_workspace_archive("B2")
    assert out.startswith("Error: the archive store failed (No space left on device)")
    assert ws.state_hash() == before and len(ws.events) == n_events
    typed = ws.call_tool("context_workspace_archive", {"block_id": "B2"})
    assert typed.failure is ToolFailure.STORE and typed.text == out
    assert ws.state_hash() == before and len(ws.events) == n_events
    assert ws.dispatch(["x"], "{}").startswith("Error: ")
    assert Workspace.replay(ws.events).state_hash() == before


@pytest.mark.parametrize("bad", [True, 0, 1, 4.5, b"log", "", "a\x00b"])
def test_log_path_must_be_a_path(tmp_path, bad):
    """``log_path=True`` would open file descriptor 1: bools, numbers, bytes,
    empty and NUL-containing paths are refused, for Workspace and load."""
    with pytest.raises(WorkspaceArgumentError, match="`log_path` must be a file path"):
        Workspace(4000, log_path=bad)
    ws = Workspace(4000, tokenizer="approx")
    s = tmp_path / "s.json"
    ws.save(s)
    with pytest.raises(WorkspaceArgumentError, match="`log_path` must be a file path"):
        Workspace.load(s, log_path=bad)


@pytest.mark.parametrize("bad", [None, 3, True, "a\x00b", ""])
def test_disk_store_root_is_checked_at_the_door(bad):
    """``DiskStore(None)`` and a NUL in the root are refused at once, naming the parameter."""
    with pytest.raises(WorkspaceArgumentError, match="`directory` must be"):
        DiskStore(bad)


# ---------------------------------------------------------------------------
# Audit item 4: persistence paths are checked at the door; a failed write is a
# project error naming the path (and still an OSError)
# ---------------------------------------------------------------------------


def _bad_outputs(tmp_path):
    (tmp_path / "ws2").mkdir()
    (tmp_path / "file.json").write_text("{}")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    return [
        (tmp_path / "ws2", "must be a file path, not a folder"),
        ("/proc/x.json", "must not be under /proc"),
        (tmp_path / "file.json" / "x.json", "must be in a folder"),
        (fifo, r"must be a file path, not a named pipe"),
    ]


def test_save_refuses_unusable_paths_at_the_door(tmp_path):
    """Audit item 4: a folder, a kernel pseudo file system, a path under a file and a
    FIFO given to save are refused before anything is written, with the project's
    argument error naming `path` and the value (not a raw IsADirectoryError naming a
    temp file); nothing is left in the folder."""
    ws = _ws(tmp_path)
    for bad, rule in _bad_outputs(tmp_path):
        before = sorted(os.listdir(tmp_path))
        with pytest.raises(WorkspaceArgumentError, match=rf"`path` {rule}") as e:
            ws.save(bad)
        assert e.value.parameter == "path" and str(bad) in str(e.value)
        assert ".tmp" not in str(e.value) and sorted(os.listdir(tmp_path)) == before


def test_save_still_creates_missing_parent_folders(tmp_path):
    """Audit item 4: the door keeps save's behaviour of creating missing parents."""
    ws = _ws(tmp_path)
    target = tmp_path / "new" / "deeper" / "ws.json"
    ws.save(target)
    # Its store is not under the snapshot's folder: allowed explicitly.
    assert Workspace.load(target, allow_store_under=tmp_path).state_hash() == ws.state_hash()


def test_a_failed_save_names_the_path_keeps_oserror_and_the_old_snapshot(tmp_path, monkeypatch):
    """Audit item 4: a write that fails after the door (a full disk) raises
    SnapshotWriteError: a WorkspaceError naming `path` and the cause, still an OSError
    with the errno; the previous snapshot and the payloads it needs are intact."""
    ws = _ws(tmp_path)
    ws.archive("B4")
    s = tmp_path / "state.json"
    ws.save(s)
    saved = s.read_bytes()
    ws.restore("B4")  # releases B4.txt, removed only after the next durable save

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_persist, "atomic_write", full)
    with pytest.raises(SnapshotWriteError, match=r"No space left on device") as e:
        ws.save(s)
    err = e.value
    assert isinstance(err, WorkspaceError) and isinstance(err, OSError)
    assert err.errno == errno.ENOSPC and err.path == str(s) and str(s) in str(err)
    assert s.read_bytes() == saved and (tmp_path / "archive" / "B4.txt").exists()
    monkeypatch.undo()
    assert Workspace.load(s).state_hash() != ws.state_hash()  # the old state, loadable


def test_log_path_is_checked_at_the_door(tmp_path):
    """Audit item 4 (same gap): a folder or /proc log_path given to Workspace or
    Workspace.load is refused naming `log_path`, not a raw IsADirectoryError."""
    ws = _ws(tmp_path)
    s = tmp_path / "state.json"
    ws.save(s)
    for bad, rule in [(tmp_path / "archive", "must be a file path, not a folder"),
                      ("/proc/x.jsonl", "must not be under /proc"),
                      (tmp_path / "nope" / "log.jsonl", "must be in an existing folder")]:
        with pytest.raises(WorkspaceArgumentError, match=rf"`log_path` {rule}"):
            Workspace(4000, tokenizer="approx", log_path=bad)
        with pytest.raises(WorkspaceArgumentError, match=rf"`log_path` {rule}"):
            Workspace.load(s, log_path=bad)


@pytest.mark.parametrize("kind", ["folder", "missing", "fifo"])
def test_load_and_salvage_name_the_snapshot_path(tmp_path, kind):
    """Audit item 4: load and salvage of an unusable snapshot path raise the project's
    SnapshotError naming the path (they already did; pinned here)."""
    bad = tmp_path / "s.json"
    if kind == "folder":
        bad.mkdir()
    elif kind == "fifo":
        os.mkfifo(bad)
    for call in (Workspace.load, Workspace.salvage):
        with pytest.raises(SnapshotError, match=rf"snapshot {bad}: the file ") as e:
            call(bad)
        assert e.value.path == str(bad)
