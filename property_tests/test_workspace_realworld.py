"""What real tool-calling agents send: reused call ids once
answered, the ID forms agents write, re-archiving to the next level, content
parts, image parts and legacy function calling (paper, Implementation Details:
context tool definitions and the workspace loop)."""

from __future__ import annotations

import json

import pytest
from vistalab.workspace import (
    BlockStateError,
    MemoryStore,
    ProtocolOrderError,
    TraceError,
    Workspace,
    count_request_tokens,
    load_trace,
    message_tokens,
    protocol_problems,
    replay_trace,
)
from vistalab.workspace._accounting import OPAQUE_PART_TOKENS

from vistalab.cli import main

from ._data import TRACES

REUSED = TRACES / "reused_call_ids.json"


def _call(cid: str, name: str = "fetch", args: str = "{}") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def _ws(n_results: int = 8) -> Workspace:
    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    for i in range(n_results):  # B2k = call, B2k+1 = result
        ws.register_tool_call([_call(f"c{i}")])
        ws.register_tool_result(f"c{i}", f"result {i} " * 30)
    return ws


def test_sample_trace_with_reused_call_ids_replays_with_every_self_check_true(capsys):
    """The sample trace reuses answered call ids, uses ``b3``, ``B8-B7``,
    ``B4 to B5``, ``B16:B17``, re-archives a block and a group, carries an image
    part and a legacy function call; the CLI replay's self-checks all hold."""
    assert main(["workspace", "replay", str(REUSED), "--budget", "20000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    checks = {k: v for k, v in doc["checks"].items() if isinstance(v, bool)}
    assert checks and all(checks.values()), doc["checks"]
    ws = replay_trace(REUSED, budget=20_000).workspace
    answers = [
        b.content
        for b in ws.blocks
        if b.parent and ws.block(b.parent).call_names[0] == "context_workspace_archive"
    ]
    assert answers and not [a for a in answers if a.startswith("Error")], answers
    assert ws.block("B3").level == 2 and ws.groups["G1"].level == 2
    assert set(ws.groups) == {"G1", "G2", "G3"}


@pytest.mark.parametrize(
    "spec,unit,members",
    [
        ("b7", "B7", ("B7",)),
        ("B6:B7", "G1", ("B6", "B7")),
        ("B4 to B5", "G1", ("B4", "B5")),
        ("B8-B7", "G1", ("B7", "B8")),
        ("B9 TO b10", "G1", ("B9", "B10")),
    ],
)
def test_id_forms_agents_write_work_through_the_archive_tool(spec, unit, members):
    """Lowercase IDs, ``:`` and ``to`` ranges and descending ranges archive the
    same blocks as their canonical form."""
    ws = _ws()
    out = ws.dispatch("context_workspace_archive", {"block_id": spec})
    assert out == f"{ws.store.root}/{unit}.txt"
    got = ws.groups[unit].members if unit[0] == "G" else (unit,)
    assert got == members


def test_rearchiving_moves_a_block_and_a_group_to_the_next_level():
    """The paper's engine moves an archived unit to the next level when it is
    archived again; the payload bytes stay, the handle shows the new level and
    the log still replays to the same hash."""
    ws = _ws()
    ws.archive("B3", "first")
    ws.archive("B4,B5")
    r1 = ws.archive("B3")
    assert (r1.level, ws.block("B3").replacement) == (2, "first")
    r2 = ws.archive("G1", "coarser")
    assert r2.level == 2 and ws.groups["G1"].replacement == "coarser"
    assert any("[archived B3 level=2" in (m["content"] or "") for m in ws.render().messages)
    assert ws.recover("B3") == ("result 0 " * 30).encode()
    again = Workspace.replay(ws.events)
    assert again.state_hash() == ws.state_hash() == ws.recompute_state_hash()


def test_reused_call_id_pairs_by_order_and_renders_protocol_valid():
    """A call id may be reused once answered; results pair with the latest call;
    reusing a still-pending id is impossible (a new call waits for answers)."""
    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    a = ws.register_tool_call([_call("x")])
    ra = ws.register_tool_result("x", "first")
    b = ws.register_tool_call([_call("x")])
    rb = ws.register_tool_result("x", "second")
    assert ws.block(ra).parent == a and ws.block(rb).parent == b
    assert protocol_problems(ws.render().messages) == []
    with pytest.raises(ProtocolOrderError, match="already answered"):
        ws.register_tool_result("x", "third")
    ws.register_tool_call([_call("y")])
    with pytest.raises(ProtocolOrderError, match="unanswered tool calls"):
        ws.register_tool_call([_call("y")])
    with pytest.raises(Exception, match="repeats call id"):
        Workspace(20_000, tokenizer="approx").register_tool_call([_call("z"), _call("z")])


def test_content_parts_join_with_newlines_and_images_become_opaque_stand_ins():
    """Text parts are joined with a newline; a non-text part becomes a stand-in
    line with its type, size, checksum and the documented token estimate."""
    ws = Workspace(20_000, tokenizer="approx")
    img = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    bid = ws.register_message(
        {"role": "user", "content": [{"type": "text", "text": "a"}, img, "b"]}
    )
    text = ws.block(bid).content
    first, opaque, last = text.split("\n")
    assert (first, last) == ("a", "b")
    assert opaque.startswith("[opaque image_url part: ") and f"~{OPAQUE_PART_TOKENS} tok" in opaque
    # The estimate is charged once per part, on top of the text, and rendering stays exact.
    plain = message_tokens(
        {"role": "user", "content": text.replace("[opaque", "(opaque")}, ws.tokenizer
    )
    assert ws.block(bid).tokens >= plain + OPAQUE_PART_TOKENS - 2
    r = ws.render()
    assert count_request_tokens(r.messages, r.tools, ws.tokenizer) == r.tokens


def test_legacy_function_call_and_function_role_register_as_a_paired_call():
    """``function_call`` / ``function`` messages become a tool call with id
    ``fc_B<n>`` and its result; the rendering uses the modern form."""
    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    call = ws.register_message(
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    )
    res = ws.register_message({"role": "function", "name": "f", "content": "42"})
    assert ws.block(call).call_ids == (f"fc_{call}",) and ws.block(res).parent == call
    assert protocol_problems(ws.render().messages) == []
    with pytest.raises(ProtocolOrderError, match="answers no pending call"):
        ws.register_message({"role": "function", "name": "g", "content": "x"})
    assert Workspace.replay(ws.events).state_hash() == ws.state_hash()


def test_deleting_a_call_reports_the_token_change_honestly():
    """Deleting a call whose results stay makes them plain context (a prefix);
    the tool never reports a negative saving as 'freed'."""
    ws = _ws(2)
    out = ws.dispatch("context_workspace_delete", {"block_id": "B2", "reason": "stale"})
    assert "freed ~-" not in out and out.startswith("Deleted B2 (1 blocks, ")


def test_malformed_trace_still_names_the_message_index():
    """A function message without a name and an unknown role are refused with
    the message index and the rule."""
    with pytest.raises(TraceError, match=r"message 1.*function message without a string name"):
        load_trace([{"role": "user", "content": "x"}, {"role": "function", "content": "y"}])
    with pytest.raises(TraceError, match=r"message 0.*has role 'robot'"):
        load_trace([{"role": "robot", "content": "x"}])
    with pytest.raises(BlockStateError):
        _ws(1).archive("B1")
    assert isinstance(MemoryStore().root, str)


def test_a_trace_without_recorded_answers_to_context_calls_still_pairs_by_order():
    """When a trace omits its answer to a context call and later reuses that
    call id for an ordinary tool, the later result is registered, not skipped."""
    items = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c0", "fetch")]},
        {"role": "tool", "tool_call_id": "c0", "content": "data " * 50},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c0", "context_workspace_archive", '{"block_id": "B3"}')],
        },
        {"role": "assistant", "content": None, "tool_calls": [_call("c0", "fetch")]},
        {"role": "tool", "tool_call_id": "c0", "content": "more data"},
        {"role": "assistant", "content": "done"},
    ]
    r = replay_trace(items, budget=20_000, tokenizer="approx")
    ws = r.workspace
    assert ws.block("B3").status.value == "archived" and not ws.pending_calls
    assert ws.block("B7").content == "more data" and ws.block("B7").parent == "B6"
    assert all(not t.protocol_problems for t in r.turns)
