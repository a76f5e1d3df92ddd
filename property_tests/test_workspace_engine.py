"""Behaviour of the reference workspace engine, one paper statement per test
(Methodology: eq. workspace-render, "Workspace invariants", "Context Stream",
"Structure preservation", eq. overflow, eq. archive-contract, "Hierarchical
recovery"; Implementation Details: Algorithm 1, dashboard format, tool
definitions; "Does the dashboard scale?")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    ARCHIVE_TOOL,
    DELETE_TOOL,
    ERROR_PREFIX,
    PROTOCOL_TEXT,
    BudgetConfigError,
    DashboardConfig,
    DiskStore,
    LedgerRow,
    MemoryStore,
    PayloadIntegrityError,
    Status,
    ToolFailure,
    ToolOutcome,
    Workspace,
    count_request_tokens,
    error_text,
    get_tokenizer,
    handle_text,
    is_error_text,
    message_tokens,
    protocol_problems,
)
from vistalab.workspace._dashboard import DashboardRenderer


def _call(cid, name="search", args='{"q": 1}'):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def _ws(budget=6000, **kw):
    kw.setdefault("tokenizer", "approx")
    ws = Workspace(budget, **kw)
    ws.register_system("You are a test agent.")
    ws.register_user("Task: find the number.")
    return ws


def _check(ws):
    r = ws.render()
    assert r.tokens <= ws.budget
    assert count_request_tokens(r.messages, r.tools, ws.tokenizer) == r.tokens
    assert protocol_problems(r.messages) == []
    return r


# ------------------------------------------------------------------ dashboard


def test_dashboard_matches_the_papers_instance():
    """Implementation Details, "Dashboard format": the compact instance's bar,
    split line, header, rule and rows reproduce the paper character for character."""
    r = DashboardRenderer(get_tokenizer("approx"), DashboardConfig(compact=True))
    head = r._head(
        used=79_400, budget=128_000, overhead=6_200, conversation=71_900, dashboard=1_300
    )
    rows = [
        ("B1", 120, 8, "user_message", "pinned"),
        ("B2", 18_400, 7, "tool_call", "archived"),
        ("B3", 2_150, 6, "assistant_message", "visible"),
        ("B5", 14_800, 3, "tool_call", "visible"),
        ("B6", 9_300, 2, "tool_call", "visible"),
        ("B9", 1_070, 0, "assistant_message", "visible"),
    ]
    body, _ = r._body([LedgerRow(i, t, a, ty, 0, "-", s) for i, t, a, ty, s in rows], [])
    paper = """<context_workspace_status>
## Context Budget
[############--------] 62%  (~79,400 / 128,000 tokens)
  overhead ~6,200 | conversation ~71,900 | dashboard ~1,300

## Context Blocks  (Age = root-turn distance; 0r newest)
ID     ~Tok   Age  Type               Status
------------------------------------------------
B1       120   8r  user_message       pinned
B2    18,400   7r  tool_call          archived
B3     2,150   6r  assistant_message  visible
B5    14,800   3r  tool_call          visible
B6     9,300   2r  tool_call          visible
B9     1,070   0r  assistant_message  visible
"""
    assert head + body == paper


def test_full_renderer_adds_level_and_parent():
    """Implementation Details: the full renderer prints the Level and Parent columns."""
    ws = _ws()
    ws.register_tool_call([_call("c1")])
    ws.register_tool_result("c1", "x" * 40)
    d = ws.render().dashboard
    assert "ID     ~Tok   Age  Type               Level  Parent  Status" in d
    assert re.search(r"^B4\s+\d+\s+0r  tool_result\s+0\s+B3\s+visible$", d, re.M)
    assert d.startswith("<context_workspace_status>") and d.endswith("</context_workspace_status>")


def _dashboard_costs(config, checkpoints=(40, 100, 200, 300)):
    ws = _ws(budget=60_000, dashboard=config)
    cost = {}
    for i in range(1, max(checkpoints) + 1):
        ws.register_tool_call([_call(f"c{i}")])
        ws.register_tool_result(f"c{i}", f"result {i} " * 20)
        if i % 5 == 0:
            n = len(ws.blocks)
            ws.archive(f"B{n - 9}-B{n}", f"rounds {i - 4}-{i}")
        if i in checkpoints:
            cost[i] = ws.render().dashboard_tokens
    return cost


def test_dashboard_scales_with_archived_groups_folding():
    """"Does the dashboard scale?": with blocks archived into groups as they age,
    the dashboard's own cost stays bounded as registered blocks grow 7.5x
    (older archived groups fold into one line); without folding it grows linearly."""
    folded = _dashboard_costs(DashboardConfig())
    assert max(folded.values()) - min(folded.values()) <= 30, folded
    unfolded = _dashboard_costs(DashboardConfig(archived_rows=10_000))
    # Without folding every archived group keeps a row: ~3 tokens per registered block.
    assert unfolded[300] - unfolded[40] > 500, unfolded


# ------------------------------------------------------------------ structure


def test_archived_call_turns_results_into_ordinary_context():
    """ "Structure preservation": if a parent call is archived, its results
    (visible or placeholder) become ordinary context, never orphan tool messages."""
    ws = _ws()
    ws.register_tool_call([_call("c1"), _call("c2")], content="two lookups")
    ws.register_tool_result("c1", "alpha " * 30)
    ws.register_tool_result("c2", "beta " * 30)
    ws.archive("B5")  # result c2, parent visible: a tool message holding the handle
    r = _check(ws)
    tool_msgs = [m for m in r.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2"]
    assert tool_msgs[1]["content"].startswith("[archived B5 level=1")
    ws.archive("B3")  # now the call itself
    r = _check(ws)
    assert not [m for m in r.messages if m["role"] == "tool"]
    texts = [m["content"] for m in r.messages if m["role"] == "user"]
    assert any(
        t.startswith("[tool result B4 of search (call B3 not in context)]\nalpha") for t in texts
    )
    assert any(
        t.startswith("[tool result B5 of search (call B3 not in context)]\n[archived B5")
        for t in texts
    )


def test_deleted_result_and_pending_calls_keep_pairing():
    """Each tool call is answered exactly once: a deleted result leaves a
    tombstone, an unanswered call a stub; parallel calls stay together."""
    ws = _ws()
    ws.register_tool_call([_call("c1"), _call("c2"), _call("c3")])
    ws.register_tool_result("c1", "one")
    ws.delete("B4", "irrelevant")
    r = _check(ws)
    contents = {m["tool_call_id"]: m["content"] for m in r.messages if m["role"] == "tool"}
    assert contents == {
        "c1": "[B4 deleted]",
        "c2": "[no result registered for c2]",
        "c3": "[no result registered for c3]",
    }
    with pytest.raises(Exception, match="has unanswered tool calls"):
        ws.register_user("too early")


def test_group_members_keep_stub_tool_messages():
    """Archiving sibling results into a group keeps one handle and a stub per
    other member while their call stays visible."""
    ws = _ws()
    ws.register_tool_call([_call("c1"), _call("c2"), _call("c3")])
    for c in ("c1", "c2", "c3"):
        ws.register_tool_result(c, f"{c} " * 50)
    res = ws.archive("B4,B6", "two results")
    r = _check(ws)
    contents = [m["content"] for m in r.messages if m["role"] == "tool"]
    assert contents[0].startswith(f"[archived {res.unit_id} (B4,B6) level=1")
    assert contents[1].startswith("c2 c2") and contents[2] == "[B6 archived in G1]"


def test_protocol_checker_fails_on_broken_requests():
    """The protocol-validity checker is shown to fail on each broken shape."""
    a = {"role": "assistant", "content": None, "tool_calls": [_call("x"), _call("y")]}
    ok = [
        {"role": "user", "content": "q"},
        a,
        {"role": "tool", "tool_call_id": "x", "content": "1"},
        {"role": "tool", "tool_call_id": "y", "content": "2"},
    ]
    assert protocol_problems(ok) == []
    cases = {
        "does not follow a tool call": [{"role": "tool", "tool_call_id": "x", "content": "1"}],
        "were never answered": ok[:3],
        "answered more than once": ok + [{"role": "tool", "tool_call_id": "y", "content": "2"}],
        "before the calls": [ok[0], a, {"role": "user", "content": "hi"}, *ok[2:]],
        "did not call": ok[:2] + [{"role": "tool", "tool_call_id": "z", "content": "1"}],
        "arguments must be a JSON string": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "q", "type": "function", "function": {"name": "f", "arguments": {}}}
                ],
            },
            {"role": "tool", "tool_call_id": "q", "content": ""},
        ],
        "unknown role": [{"role": "robot", "content": "x"}],
    }
    for needle, msgs in cases.items():
        assert any(needle in p for p in protocol_problems(msgs)), needle


# ------------------------------------------------------------------ preflight


def test_overflow_switches_to_a_management_rendering_within_budget():
    """eq. overflow: when |C~_t| > B the agent gets the management rendering
    (dashboard, pinned blocks, no task output) within B, task tools are refused
    with a notice but their schemas stay; freeing room restores normal mode."""
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    ws = _ws(budget=3000, task_tools=tools)
    ws.register_tool_call([_call("c1")])
    ws.register_tool_result("c1", "y" * 9000)  # ~2,250 tokens: fits alone, not with the rest
    ws.register_tool_call([_call("c2")])
    ws.register_tool_result("c2", "z" * 4000)
    r = _check(ws)
    assert r.mode == "overflow" and r.candidate_tokens > 3000 >= r.tokens
    assert [t["function"]["name"] for t in r.tools] == ["search", ARCHIVE_TOOL, DELETE_TOOL]
    assert r.allowed_tools == (ARCHIVE_TOOL, DELETE_TOOL)
    assert "## OVERFLOW" in r.dashboard and "B4" in r.dashboard
    assert not any("yyyy" in str(m.get("content")) for m in r.messages)
    notice = ws.gate("search")
    assert notice is not None and notice.startswith("[refused] search is disabled")
    assert ws.gate(ARCHIVE_TOOL) is None
    assert ws.context_workspace_archive("B4", "the big export").endswith("/B4.txt")
    r = _check(ws)
    assert r.mode == "normal" and ws.gate("search") is None


def test_overflow_ledger_heading_says_what_the_rows_are():
    """Audit item 3 (paper, "Dashboard format": the ledger is one row per
    block by ID): the overflow ledger shows the largest visible units, capped
    by ``management_rows``, in ID (conversation) order, and its heading says
    exactly that (it used to say "Largest first:" above rows in ID order)."""
    from vistalab.workspace import DashboardConfig

    ws = Workspace(
        3000,
        tokenizer="approx",
        protocol=False,
        dashboard=DashboardConfig(management_rows=3),
    )
    ws.register_user("task", pinned=True)
    for i, n in enumerate([180, 40, 600, 20, 400, 240]):
        ws.register_user(f"m{i} " + "alpha beta " * n)
    r = ws.render()
    assert r.mode == "overflow"
    assert "Largest first" not in r.dashboard
    assert "Largest ones, by ID:" in r.dashboard
    rows = [ln.split()[0] for ln in r.dashboard.splitlines() if re.match(r"B\d+ ", ln)]
    sizes = {b.id: b.tokens for b in ws.blocks if b.status.value == "visible"}
    assert rows == sorted(rows, key=lambda u: int(u[1:]))  # conversation order
    assert set(rows) == set(sorted(sizes, key=lambda u: -sizes[u])[:3])  # the 3 largest


def test_budget_too_small_for_management_is_refused_at_configuration():
    """Preflight reserve: a budget that cannot hold the management rendering is
    refused when the workspace is built (or a pinned block registered), not
    discovered later as a deadlock."""
    with pytest.raises(
        BudgetConfigError,
        match=r"`budget` must be at least [\d,]+ tokens so the "
        r"overflow \(management\) rendering always fits",
    ):
        Workspace(300, tokenizer="approx")
    ws = Workspace(2000, tokenizer="approx")
    before = ws.state_hash()
    with pytest.raises(BudgetConfigError, match=r"register this user_message unpinned"):
        ws.register_user("p" * 6000, pinned=True)
    assert ws.state_hash() == before and ws.blocks == ()
    assert ws.management_floor() <= 2000


# ------------------------------------------------------------------ guard


def test_guard_admits_offloads_then_rejects():
    """Context Stream / Algorithm 1: admit fitting results; near the hard limit
    offload older visible raw results to recoverable placeholders; reject a new
    result that still cannot fit with a compact notice, pairing intact."""
    ws = _ws(budget=3000, hard_limit=4000)
    bodies = {}
    for i in range(1, 4):
        ws.register_tool_call([_call(f"c{i}")])
        bodies[i] = f"r{i} " * 600  # ~450 tokens each
        bid = ws.register_tool_result(f"c{i}", bodies[i])
        assert ws.events[-1].effects == {"admitted": True}
        assert ws.block(bid).status is Status.VISIBLE
    ws.register_tool_call([_call("c4")])
    ws.register_tool_result("c4", "n " * 4000)  # ~2,000 tokens: needs room
    eff = ws.events[-1].effects
    assert eff["admitted"] is True and eff["offloaded"][0] == "B4"
    assert ws.block("B4").status is Status.OFFLOADED
    assert ws.recover("B4") == bodies[1].encode()
    assert _check(ws).candidate_tokens <= 4000
    ws.register_tool_call([_call("c5")])
    bid = ws.register_tool_result("c5", "h" * 40_000)  # larger than the budget itself
    b = ws.block(bid)
    assert b.rejected and re.fullmatch(
        r"\[budget guard\] Tool result rejected: context ~[\d,]+ tokens, hard limit 4,000, this "
        r"result needs \+10,\d{3} \(largest admissible now ~[\d,]+\)\. Rerun it after freeing "
        r"context or with a narrower query\.",
        b.content,
    )
    r = _check(ws)
    assert sum(1 for m in r.messages if m.get("tool_call_id") == "c5") == (r.mode == "normal")


# ------------------------------------------------------------------ archive


def test_hierarchical_archive_and_recovery(tmp_path):
    """eq. archive-contract and "Hierarchical recovery": groups one level up,
    coarser groups of groups, exact bytes of any member by walking down, and
    restore opens one level (returning the earlier canonical hash)."""
    ws = _ws(store=DiskStore(tmp_path / "a"))
    ws.register_tool_call([_call("c1")])
    ws.register_tool_result("c1", "first,row\n1,2\n")
    ws.register_assistant("noted")
    g1 = ws.archive("B3,B4", "lookup 1")
    assert (g1.unit_id, g1.level, g1.members) == ("G1", 1, ("B3", "B4"))
    h_before = ws.state_hash()
    g2 = ws.archive("G1,B5", "everything so far")
    assert (g2.unit_id, g2.level) == ("G2", 2)
    payload = ws.read_path(g2.path)
    assert payload.startswith(b"VISTA-ARCHIVE 1 G2 level=2 members=2\n@@ G1 group ref=G1.txt")
    assert ws.read_path(g2.path, "member=B4") == b"first,row\n1,2\n"
    assert ws.read_path(g1.path, "lines=2-2").startswith(b"@@ B3 tool_call bytes=")
    assert ws.recover("B4") == b"first,row\n1,2\n"
    assert json.loads(ws.recover("B3"))["tool_calls"][0]["id"] == "c1"
    handle = next(m["content"] for m in ws.render().messages if "[archived G2" in str(m["content"]))
    assert re.match(
        rf"\[archived G2 \(B5,G1\) level=2 size={g2.size:,}B sha256={g2.sha256[:16]} "
        rf"path={re.escape(g2.path)}\] everything so far",
        handle,
    )
    ws.restore("G2")
    assert ws.state_hash() == h_before and ws.block("B5").status is Status.VISIBLE
    assert ws.block("B4").group == "G1"
    ws.restore("G1")
    assert ws.block("B4").content == "first,row\n1,2\n"
    assert sorted(os.listdir(tmp_path / "a")) == []


def test_handle_cost_is_measurable():
    """The handle format lives in one place, so its token cost can be measured."""
    ws = _ws()
    ws.register_assistant("a" * 400)
    res = ws.archive("B3", "summary")
    text = handle_text(
        "B3", level=1, path=res.path, size=res.size, sha256=res.sha256, replacement="summary"
    )
    cost = message_tokens({"role": "assistant", "content": text}, ws.tokenizer)
    assert ws.render().prompt_tokens["B3"] == cost
    assert res.freed_tokens == ws.block("B3").tokens - cost


@pytest.mark.parametrize(("budget", "mode"), [(2000, "overflow"), (60000, "normal")])
def test_per_unit_tokens_read_later_describe_the_rendered_state(budget, mode):
    """Eq. workspace-render: a rendering's ``block_tokens`` and ``prompt_tokens``
    (built when first read) are those of the state it rendered, however the
    workspace changed since, in every format, and they are ordinary dicts
    (JSON, pickle, ``dataclasses.replace`` and equality see the same entries)."""
    import copy
    import dataclasses
    import pickle

    ws = _ws(budget, tokenizer="cl100k_base")
    for i in range(12):
        ws.register_tool_call(
            [{"id": f"c{i}", "type": "function", "function": {"name": "q", "arguments": "{}"}}]
        )
        ws.register_tool_result(f"c{i}", "row, 12.5\n" * (5 + 9 * i))
    ws.archive("B4", "")
    ws.archive("B6-B9", "several")
    later = {f: ws.render(f) for f in ("openai", "anthropic", "responses", "gemini")}
    assert later["openai"].mode == mode
    now = {f: ws.render(f) for f in later}
    want = (dict(now["openai"].block_tokens), dict(now["openai"].prompt_tokens))
    assert "G1" in want[0] and want[0]["B4"] != want[1]["B4"]
    ws.restore("G1")
    ws.delete("B5", "done")
    ws.register_user("more " * 300)
    ws.archive("B3", "")
    assert ws.render().block_tokens != want[0]
    for f, r in later.items():
        assert (r.block_tokens, r.prompt_tokens) == want, f
        assert list(r.block_tokens) == list(want[0])  # position order
        assert type(r.block_tokens) is dict and r.block_tokens is r.block_tokens
        assert json.loads(json.dumps(r.prompt_tokens)) == want[1]
        assert r == now[f] and r.mode == now[f].mode
    fresh = ws.render()
    assert pickle.loads(pickle.dumps(fresh)) == fresh == copy.deepcopy(fresh)
    assert dataclasses.replace(fresh, turn=0).block_tokens == ws.render().block_tokens
    with pytest.raises(AttributeError, match="has no attribute 'block_count'"):
        fresh.block_count  # noqa: B018


def test_delete_removes_payloads_and_keeps_tombstones(tmp_path):
    """Deletion is explicit and permanent: payload files go, IDs are never reused."""
    ws = _ws(store=DiskStore(tmp_path / "a"))
    ws.register_assistant("one")
    ws.register_assistant("two")
    ws.archive("B3,B4")
    res = ws.delete("G1", "obsolete")
    assert res.blocks == ("B3", "B4") and res.payloads_removed == ("G1.txt",)
    assert os.listdir(tmp_path / "a") == []
    assert ws.register_assistant("three") == "B5"
    assert ws.context_workspace_archive("G1").startswith("Error: G1 no longer exists")


# ------------------------------------------------------------------ tools


def test_tool_schemas_openai_format_and_paper_docstrings():
    """Implementation Details, "Context tool definitions": OpenAI function-calling
    schemas carrying the paper's docstrings."""
    ws = _ws()
    tools = ws.tool_schemas()
    assert [t["type"] for t in tools] == ["function", "function"]
    arch, dele = (t["function"] for t in tools)
    assert arch["name"] == "context_workspace_archive"
    assert arch["parameters"]["required"] == ["block_id"]
    assert "Returns the payload file path for later recovery." in arch["description"]
    assert '"B10-B20"' in arch["parameters"]["properties"]["block_id"]["description"]
    assert dele["parameters"]["required"] == ["block_id", "reason"]
    assert "Deleted content cannot be recovered." in dele["description"]
    assert PROTOCOL_TEXT.startswith("CONTEXT MANAGEMENT PROTOCOL:")
    assert (
        ws.render()
        .messages[0]["content"]
        .endswith("<budget:token_budget>6000</budget:token_budget>")
    )


def test_dispatch_returns_error_strings_and_changes_nothing():
    """Agent-facing tools return strings; a bad call changes nothing."""
    ws = _ws()
    ws.register_assistant("x")
    h = ws.state_hash()
    assert ws.dispatch("context_workspace_archiv", "{}").startswith(
        "Error: Unknown context tool 'context_workspace_archiv'. Did you mean "
        "'context_workspace_archive'?"
    )
    assert ws.dispatch(ARCHIVE_TOOL, "{not json").startswith(
        "Error: arguments of context_workspace_archive are not valid JSON"
    )
    assert ws.dispatch(DELETE_TOOL, '{"block_id": "B3"}') == (
        "Error: context_workspace_delete takes block_id, reason; missing reason"
    )
    assert ws.dispatch(ARCHIVE_TOOL, '["B3"]') == (
        "Error: arguments of context_workspace_archive must be a JSON object"
    )
    assert ws.state_hash() == h
    assert ws.dispatch(ARCHIVE_TOOL, '{"block_id": "B3", "replacement": "x"}').endswith("/B3.txt")


CALLS = [
    ("context_workspace_archiv", "{}", ToolFailure.BAD_CALL),
    (ARCHIVE_TOOL, "{not json", ToolFailure.BAD_CALL),
    (DELETE_TOOL, '{"block_id": "B3"}', ToolFailure.BAD_CALL),
    (ARCHIVE_TOOL, '["B3"]', ToolFailure.BAD_CALL),
    (["x"], "{}", ToolFailure.BAD_CALL),
    (ARCHIVE_TOOL, '{"block_id": "B99"}', ToolFailure.REFUSED),
    (DELETE_TOOL, {"block_id": "B3-B2", "reason": "x"}, ToolFailure.REFUSED),
    (ARCHIVE_TOOL, {"block_id": "B3", "replacement": "x"}, None),
    (ARCHIVE_TOOL, '{"block_id": "B3"}', None),  # re-archive: a new replacement
    (DELETE_TOOL, {"block_id": "B4", "reason": "stale"}, None),
]


def test_call_tool_is_dispatch_with_a_typed_outcome():
    """Typed tool outcomes (DESIGN "results are named, frozen objects"): call_tool
    returns, call for call, the text dispatch returns on a twin workspace, with
    the failure kind: BAD_CALL before anything runs (nothing logged), REFUSED
    when the engine refuses (a failed event), None on success; both twins end in
    the same state."""
    a, b = _ws(), _ws()
    for ws in (a, b):
        ws.register_assistant("x")
        ws.register_assistant("y " * 50)
    for name, args, kind in CALLS:
        n_events = len(a.events)
        out = a.call_tool(name, args)
        assert isinstance(out, ToolOutcome) and out.failure is kind
        assert out.text == b.dispatch(name, args)
        assert out.ok is (kind is None) and is_error_text(out.text) is (kind is not None)
        assert out.text == (error_text(out.detail) if kind else out.text) and bool(out.detail) is (
            kind is not None
        )
        logged = len(a.events) - n_events
        assert logged == (0 if kind is ToolFailure.BAD_CALL else 1)
        if kind is ToolFailure.REFUSED:
            assert not a.events[-1].ok and a.events[-1].result == out.detail
    assert a.state_hash() == b.state_hash()


@given(st.text())
def test_error_text_round_trips(detail):
    """The agent-facing failure format has its parser beside its formatter:
    is_error_text recognises every error_text, and the detail comes back whole."""
    text = error_text(detail)
    assert is_error_text(text) and text.removeprefix(ERROR_PREFIX + " ") == detail


# ------------------------------------------------------------------ state


def test_events_hashes_and_replay(tmp_path):
    """Every registration and action is logged with the resulting canonical
    hash; a refused action logs the unchanged hash; the JSONL log replays."""
    log = tmp_path / "events.jsonl"
    ws = _ws(log_path=log)
    ws.register_tool_call([_call("c1")])
    ws.register_tool_result("c1", "payload")
    h = ws.state_hash()
    assert ws.context_workspace_archive("B1").startswith("Error: B1 is pinned")
    assert ws.events[-1].ok is False and ws.events[-1].state_hash == h
    ws.archive("B3,B4", "grouped")
    ws.read_path(ws.payload_path("G1.txt"), "bytes=0:10")
    ws.close()
    lines = log.read_text().splitlines()
    assert len(lines) == len(ws.events)
    assert [json.loads(x)["op"] for x in lines][:2] == ["init", "register"]
    again = Workspace.replay(log)
    assert again.state_hash() == ws.state_hash()
    assert all(e.state_hash for e in ws.events)


def test_hash_is_stable_across_processes():
    """The canonical hash does not depend on the process (hash seeds, dict order)."""
    code = (
        "from vistalab.workspace import Workspace\n"
        "ws = Workspace(5000, tokenizer='approx')\n"
        "ws.register_user('t'); ws.register_assistant('é' * 9)\n"
        "ws.archive('B2', 'r')\n"
        "print(ws.state_hash())\n"
    )
    outs = set()
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout.strip()
        )
    ws = Workspace(5000, tokenizer="approx")
    ws.register_user("t")
    ws.register_assistant("é" * 9)
    ws.archive("B2", "r")
    assert outs == {ws.state_hash()}


def test_save_load_round_trip_and_tamper_detection(tmp_path):
    """Crash-safe save (temp file, fsync, rename) and load that verifies the
    canonical hash and every payload checksum."""
    store = DiskStore(tmp_path / "a")
    ws = _ws(store=store)
    ws.register_tool_call([_call("c1")])
    ws.register_tool_result("c1", "data " * 30)
    ws.archive("B4", "archived result")
    snap = tmp_path / "state" / "ws.json"
    ws.save(snap)
    assert os.listdir(snap.parent) == ["ws.json"]
    # The store is beside the snapshot's folder, not in it: allowed explicitly.
    back = Workspace.load(snap, allow_store_under=tmp_path)
    assert back.state_hash() == ws.state_hash()
    assert back.render().messages == ws.render().messages
    assert back.register_assistant("next") == "B5"
    (tmp_path / "a" / "B4.txt").write_bytes(b"tampered")
    with pytest.raises(PayloadIntegrityError, match="checksum mismatch|the workspace recorded"):
        Workspace.load(snap, allow_store_under=tmp_path)


def test_memory_and_disk_render_identically(tmp_path):
    """The two stores are interchangeable: same root, same rendering and hash."""
    disk = DiskStore(tmp_path / "a")
    a, b = _ws(store=disk), _ws(store=MemoryStore(disk.root))
    for w in (a, b):
        w.register_assistant("z" * 300)
        w.archive("B3")
    assert a.render().messages == b.render().messages and a.state_hash() == b.state_hash()
