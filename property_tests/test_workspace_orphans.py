"""Crash restarts: a payload file written by a run that was killed before it
saved (unreferenced by the snapshot, numbered past it) is moved aside when the
snapshot is loaded, reported, and never collides with a later block of its ID."""

from __future__ import annotations

import pytest
from vistalab.workspace import DiskStore, PayloadConflictError, Workspace


def _call(n: int) -> list[dict]:
    return [{"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]


def _crash_then_two_runs(tmp_path, *, reported: bool = True) -> Workspace:
    state, archive = tmp_path / "state.json", tmp_path / "archive"
    ws = Workspace(50_000, tokenizer="approx", store=DiskStore(archive), protocol=False)
    ws.register_user("task")
    ws.save(state)
    # Run 1 archives B3 and is killed before it saves (nothing else happens).
    run1 = Workspace.load(state, store=DiskStore(archive))
    run1.register_tool_call(_call(1))
    run1.register_tool_result("c1", "the killed run's result")
    run1.archive("B3")
    assert (archive / "B3.txt").exists()
    del run1
    # Run 2 registers past B3 without archiving it, and saves.
    run2 = Workspace.load(state, store=DiskStore(archive))
    moved = [p.rsplit("/", 1)[-1].split(".")[0] for p in run2.set_aside_payloads]
    assert moved == (["B3"] if reported else [])
    for n in (2, 3):
        run2.register_tool_call(_call(n))
        run2.register_tool_result(f"c{n}", f"run 2's result {n}")
    run2.save(state)
    # Run 3 archives B3 (run 2's own block of that ID).
    return Workspace.load(state, store=DiskStore(archive))


def test_killed_runs_payload_is_set_aside_and_the_id_stays_usable(tmp_path):
    run3 = _crash_then_two_runs(tmp_path)
    assert run3.set_aside_payloads == ()
    res = run3.archive("B3")
    assert run3.read_path(res.path) == b"run 2's result 2"
    aside = list((tmp_path / "archive" / ".orphaned").iterdir())
    assert [p.read_bytes() for p in aside] == [b"the killed run's result"]  # kept, not lost


def test_checker_fails_when_orphans_stay_in_place(tmp_path, monkeypatch):
    """The engine before this rule (orphans claimed in place, forgotten at the next
    load): the third run can never archive B3."""
    monkeypatch.delattr(DiskStore, "set_aside")
    run3 = _crash_then_two_runs(tmp_path, reported=False)
    with pytest.raises(PayloadConflictError):
        run3.archive("B3")


def test_replay_never_moves_a_live_workspaces_payloads(tmp_path):
    """Replaying a loaded workspace's log on its own folder claims the newer
    payloads (same bytes) instead of moving them aside under the live workspace."""
    state, archive = tmp_path / "state.json", tmp_path / "archive"
    ws = Workspace(50_000, tokenizer="approx", store=DiskStore(archive), protocol=False)
    ws.register_user("task")
    ws.save(state)
    live = Workspace.load(state, store=DiskStore(archive))
    live.register_assistant("later")
    live.archive("B2")
    again = Workspace.replay(live.events, store=DiskStore(archive))
    assert again.state_hash() == live.state_hash()
    assert live.read_path(live.payload_path("B2.txt")) == b"later"
    assert not (archive / ".orphaned").exists()
