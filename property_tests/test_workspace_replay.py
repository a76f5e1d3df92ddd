"""Trace replay and the ``vista-lab workspace`` CLI (paper, Implementation
Details: Algorithm 1 run turn by turn over a recorded conversation, the
dashboard shown each turn; Methodology, "Workspace invariants": |C_t| <= B,
eq. overflow mode switch; the event log replays to the same canonical hash)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from vistalab.examples import traces
from vistalab.workspace import (
    MemoryStore,
    TraceError,
    Workspace,
    WorkspaceError,
    load_trace,
    replay_trace,
)

from vistalab.cli import main

TRACES = Path(traces.__file__).parent  # the sample traces, shipped as vistalab.examples.traces
OPS = TRACES / "ops_agent.json"
WEATHER = TRACES / "parallel_weather.jsonl"
ORPHAN = TRACES / "malformed_orphan_tool.json"


def test_replay_reports_each_turn_within_budget():
    """Algorithm 1 over a recorded trace: a rendering before every assistant
    message, each within B, protocol-valid, switching to overflow and back.
    The second batch's first result is rejected while its sibling call waits
    (the management rendering keeps the waiting batch, and with that result it
    would pass B), so overflow begins a turn later; with keep_pending=False
    (the Coq engine model's rendering) it is admitted."""
    res = replay_trace(OPS, budget=3000, tokenizer="cl100k_base")
    modes = [t.mode for t in res.turns]
    assert modes == ["normal", "normal", "normal", "overflow", "normal", "normal"]
    old = replay_trace(OPS, budget=3000, tokenizer="cl100k_base", keep_pending=False)
    assert [t.mode for t in old.turns] == [
        "normal", "normal", "overflow", "overflow", "normal", "normal"]
    assert all(t.tokens <= 3000 and not t.protocol_problems for t in res.turns)
    assert [t.message_index for t in res.turns] == [2, 4, 7, 10, 14, None]
    over = res.turns[3]
    assert over.candidate_tokens > 3000 and "## OVERFLOW" in over.dashboard
    ops = [(e["op"], e["ok"]) for t in res.turns for e in t.events]
    assert ("archive", True) in ops and ("read", True) in ops and ("delete", False) in ops
    again = Workspace.replay(res.workspace.events, store=MemoryStore(res.workspace.store.root))
    assert again.state_hash() == res.state_hash


class _FullStore(MemoryStore):
    def put(self, key, data):
        raise OSError(28, "No space left on device")


def test_store_failure_stops_the_replay_naming_the_message():
    """A context call whose store write fails (ToolFailure.STORE) stops the replay
    with one message naming the trace index; the refused delete in the same trace
    (ToolFailure.REFUSED, the agent's mistake) does not stop it."""
    with pytest.raises(WorkspaceError, match=r"^replaying message \d+: the archive store "
                       r"failed \(No space left on device\); nothing changed\.") as err:
        replay_trace(OPS, budget=3000, tokenizer="approx", store=_FullStore())
    assert not isinstance(err.value, TraceError) and "Error:" not in str(err.value)
    res = replay_trace(OPS, budget=3000, tokenizer="approx")
    assert ("delete", False) in [(e["op"], e["ok"]) for t in res.turns for e in t.events]


def test_context_tool_calls_in_a_trace_are_executed():
    """An assistant call to context_workspace_archive is executed on the
    workspace and answered with the engine's own result (the payload path)."""
    res = replay_trace(OPS, budget=3000, tokenizer="approx")
    ws = res.workspace
    answers = {
        b.tool_call_id: b.content for b in ws.blocks if b.tool_call_id in ("call_4", "call_5")
    }
    assert answers == {"call_4": "mem://archive/B6.txt", "call_5": "mem://archive/G1.txt"}
    read = [e for t in res.turns for e in t.events if e["op"] == "read"]
    first_three_lines = b"".join(ws.recover("B6").splitlines(keepends=True)[:3])
    assert [e["effects"]["size"] for e in read] == [len(first_three_lines), len(ws.recover("B7"))]


def test_jsonl_trace_with_actions_groups_and_restore():
    res = replay_trace(WEATHER, budget=4000, tokenizer="approx")
    ws = res.workspace
    assert "G1" in ws.groups and "G2" not in ws.groups  # G2 restored: G1 is top level again
    assert ws.block("B2").status.value == "visible"
    assert res.messages == 6 and res.actions == 3


@pytest.mark.parametrize(
    "items,msg",
    [
        (
            [
                {"role": "user", "content": "x"},
                {"role": "tool", "tool_call_id": "q", "content": "y"},
            ],
            r"message 1: tool result for 'q' does not answer a pending call",
        ),
        ([{"role": "narrator", "content": "x"}], r"message 0: has role 'narrator'"),
        (
            [{"role": "tool", "content": "x"}],
            r"message 0: is a tool message without a string "
            r"tool_call_id",
        ),
        ([{"action": "archiv", "block_id": "B1"}], r"message 0: unknown action 'archiv'"),
        (
            [{"action": "delete", "block_id": "B1"}],
            r"message 0: action 'delete' needs string "
            r"field\(s\) reason",
        ),
        (["hello"], r"message 0: must be an object with 'role' or 'action', got str"),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": "b",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "c"},
            ],
            r"message 2: cannot register a user message: B2 "
            r"has unanswered tool calls",
        ),
    ],
)
def test_malformed_traces_name_the_message_index(items, msg):
    with pytest.raises(TraceError, match=msg):
        replay_trace(items, budget=5000, tokenizer="approx")


def test_trace_file_formats(tmp_path):
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    (tmp_path / "a.json").write_text(json.dumps(msgs))
    (tmp_path / "b.json").write_text(json.dumps({"messages": msgs}))
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    assert (
        load_trace(tmp_path / "a.json")
        == load_trace(tmp_path / "b.json")
        == load_trace(tmp_path / "c.jsonl")
        == msgs
    )
    (tmp_path / "bad.jsonl").write_text(json.dumps(msgs[0]) + "\n{oops\n")
    with pytest.raises(TraceError, match=r"bad.jsonl: line 2 is not valid JSON"):
        load_trace(tmp_path / "bad.jsonl")
    (tmp_path / "empty.json").write_text("  ")
    with pytest.raises(TraceError, match="is empty"):
        load_trace(tmp_path / "empty.json")
    with pytest.raises(TraceError, match="cannot read the trace"):
        load_trace(tmp_path / "missing.json")


# ------------------------------------------------------------------ CLI


def test_cli_replay_json(capsys):
    """`vista-lab workspace replay TRACE --json`: a turns list with mode, tokens,
    budget, dashboard and events, plus the final state_hash."""
    assert main(["workspace", "replay", str(OPS), "--budget", "3000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["state_hash"]) == 64
    for t in doc["turns"]:
        assert {"mode", "tokens", "budget", "dashboard", "events"} <= set(t)
        assert t["tokens"] <= t["budget"] == 3000
    assert doc["turns"][3]["mode"] == "overflow"
    assert all(v for k, v in doc["checks"].items() if isinstance(v, bool))
    ev = doc["turns"][1]["events"][1]
    assert ev["args"]["message"] == {
        "role": "tool",
        "content_chars": len(load_trace(OPS)[3]["content"]),
        "tool_call_id": "call_1",
    }


def test_cli_replay_text_and_archive_dir(tmp_path, capsys):
    d = tmp_path / "arch"
    log = tmp_path / "events.jsonl"
    assert (
        main(
            [
                "workspace",
                "replay",
                str(OPS),
                "--budget",
                "3000",
                "--archive-dir",
                str(d),
                "--tokenizer",
                "approx",
                "--log",
                str(log),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "=== turn 3 (before message 7): mode=normal" in out
    assert "which keeps the pending calls' batch" in out  # the guard's rejection
    assert "check log_replays_to_same_hash: ok" in out
    assert sorted(p.name for p in d.iterdir()) == ["B6.txt", "G1.txt"]
    # B6 holds the guard's notice: the result it replaced (call_2's, while
    # call_3 waited) did not fit beside the kept batch
    assert (d / "B6.txt").read_bytes().startswith(b"[budget guard] Tool result rejected")
    assert Workspace.replay(log, store=MemoryStore(str(d.resolve()))).state_hash() in out


def test_cli_dashboard_prints_the_final_dashboard(capsys):
    assert main(["workspace", "dashboard", str(OPS), "--budget", "3000", "--compact"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<context_workspace_status>\n## Context Budget\n[")
    assert "ID     ~Tok   Age  Type               Status\n" + "-" * 48 in out
    assert re.search(r"^G1\s+[\d,]+\s+3r  group\s+archived$", out, re.M)


@pytest.mark.parametrize(
    "argv,msg",
    [
        (
            ["workspace", "replay", str(ORPHAN)],
            "malformed trace: message 2: tool result for 'nope'",
        ),
        (["workspace", "replay", str(OPS), "--budget", "ten"], "`--budget` must be a whole number"),
        (["workspace", "replay", str(OPS), "--budget", "50"], "`budget` must be at least"),
        (["workspace", "replay", str(OPS), "--tokenizer", "cl100"], "did you mean 'cl100k_base'"),
        (["workspace", "dashboard", str(OPS)], "required: --budget"),
        (["workspace", "replay", "/nonexistent.json"], "`TRACE` must be an existing file"),
    ],
)
def test_cli_errors_are_one_line_exit_2(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error:") and err.count("\n") == 1 and msg in err


def test_cli_state_hash_is_stable_across_processes():
    """The final canonical hash of a replay is identical in separate processes."""
    cmd = [
        sys.executable,
        "-m",
        "vistalab.cli",
        "workspace",
        "replay",
        str(WEATHER),
        "--json",
        "--tokenizer",
        "approx",
        "--budget",
        "4000",
    ]
    hashes = {
        json.loads(
            subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                check=True,
                env={"PYTHONHASHSEED": s, "PATH": ""},
            ).stdout
        )["state_hash"]
        for s in ("1", "2")
    }
    assert hashes == {replay_trace(WEATHER, budget=4000, tokenizer="approx").state_hash}
