"""Prompt-cache friendliness: the cacheable-prefix measure,
the management rendering that keeps the conversation prefix (eq. overflow: the
content of C_t in overflow is the engine's choice, within B, context tools
only), the guard's prefix-preserving offload order, and the shares on the
67-message session trace against the pre-change rendering."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from vistalab.workspace import (
    Workspace,
    cacheable_prefix_tokens,
    count_request_tokens,
    get_tokenizer,
    message_tokens,
    protocol_problems,
    replay_trace,
    tools_tokens,
)

from ._data import TRACES

TRACE = TRACES / "long_session.json"


def _call(cid):
    return {"id": cid, "type": "function", "function": {"name": "cat", "arguments": "{}"}}


def _ws(budget=3000, **kw):
    ws = Workspace(budget, tokenizer="approx", **kw)
    ws.register_system("You are a test agent.")
    ws.register_user("Task: find the number.")
    return ws


def _grow(ws, n, size):
    for i in range(n):
        ws.register_tool_call([_call(f"c{i}")])
        ws.register_tool_result(f"c{i}", f"r{i} " * size)


def test_cacheable_prefix_counts_the_shared_leading_messages():
    """The measure: tool schemas plus the leading messages both requests share
    byte for byte, dashboards (last message) excluded; 0 for the first
    request; it drops at the first message that differs (it can fail)."""
    tok = get_tokenizer("approx")
    tools = ({"type": "function", "function": {"name": "f"}},)
    a = {"role": "user", "content": "task"}
    b = {"role": "assistant", "content": "step one"}
    c = {"role": "assistant", "content": "step two"}
    dash = {"role": "user", "content": "<dashboard 1>"}
    prev = SimpleNamespace(messages=(a, b, dash), tools=tools)
    cur = SimpleNamespace(
        messages=(a, b, c, {"role": "user", "content": "<dashboard 2>"}), tools=tools
    )
    shared = tools_tokens(tools, tok) + message_tokens(a, tok) + message_tokens(b, tok)
    assert cacheable_prefix_tokens(None, cur, tok) == 0
    assert cacheable_prefix_tokens(prev, cur, tok) == shared
    edited = SimpleNamespace(messages=(a, {**b, "content": "step 1"}, c, dash), tools=tools)
    assert cacheable_prefix_tokens(prev, edited, tok) == shared - message_tokens(b, tok)
    other_tools = SimpleNamespace(messages=cur.messages, tools=())
    assert cacheable_prefix_tokens(prev, other_tools, tok) == 0


def test_management_rendering_keeps_the_conversation_prefix():
    """Eq. overflow with cache_prefix (the default): the management rendering is
    the protocol, the longest leading run of the normal rendering's
    conversation that fits, the pinned blocks after it, and the dashboard;
    within B, recounted exactly, protocol-valid; cache_prefix=False keeps the
    minimal form (protocol, pinned, dashboard)."""
    for cache_prefix in (True, False):
        ws = _ws(cache_prefix=cache_prefix)
        _grow(ws, 3, 300)
        before = ws.render()
        assert before.mode == "normal"
        ws.register_tool_call([_call("big")])
        ws.register_tool_result("big", "z " * 3200)
        r = ws.render()
        assert r.mode == "overflow" and r.tokens <= 3000
        assert count_request_tokens(r.messages, r.tools, ws.tokenizer) == r.tokens
        assert protocol_problems(r.messages) == []
        body = list(r.messages[:-1])
        if cache_prefix:
            assert len(body) > 3
            assert body == list(before.messages[: len(body)])  # the cached prefix survives
        else:
            assert [m["content"] for m in body[1:]] == [
                "You are a test agent.",
                "Task: find the number.",
            ]


def test_prefix_stops_before_a_call_waiting_for_results():
    """A tool-call position whose results are not all registered is never put in
    the management prefix (its tool messages would be missing). With
    keep_pending=False (the Coq model's rendering with keep_pending off) nothing of it is shown;
    the default keeps it after the prefix (test_workspace_pending.py)."""
    ws = _ws(keep_pending=False)
    _grow(ws, 2, 100)
    ws.register_tool_call([_call("x"), _call("y")])
    ws.register_tool_result("x", "q " * 4300)
    r = ws.render()
    assert r.mode == "overflow"
    assert protocol_problems(r.messages) == []
    assert not any(m.get("tool_call_id") in ("x", "y") for m in r.messages)


def test_guard_offloads_results_beyond_the_shown_prefix_first():
    """Budget guard (Algorithm 1) with cache_prefix: raw results the overflow
    rendering does not show are offloaded before those in its prefix, so the
    cached prefix is not rewritten; cache_prefix=False offloads oldest first."""
    offloaded = {}
    for cache_prefix in (True, False):
        ws = _ws(budget=3000, hard_limit=4000, cache_prefix=cache_prefix)
        _grow(ws, 10, 260)
        ws.register_tool_call([_call("n")])
        ws.register_tool_result("n", "n " * 3000)
        offloaded[cache_prefix] = ws.events[-1].effects.get("offloaded")
        assert ws.render().tokens <= 3000
    assert offloaded[False][0] == "B4"  # the oldest raw result
    assert offloaded[True] and "B4" not in offloaded[True]


@pytest.mark.slow
def test_session_trace_shares_beat_the_pre_change_rendering():
    """On the 67-message session trace (cl100k_base): with the
    prefix-keeping management rendering the token-weighted cacheable share is
    higher than the pre-change rendering's at the overflowing budgets and
    equal where nothing overflows; every request within budget and valid."""
    assert len(json.loads(TRACE.read_text())) == 67
    for budget in (8_000, 16_000, 32_000, 128_000):
        new = replay_trace(TRACE, budget=budget)
        old = replay_trace(TRACE, budget=budget, cache_prefix=False)
        for res in (new, old):
            assert all(t.tokens <= budget and not t.protocol_problems for t in res.turns)
        if any(t.mode == "overflow" for t in new.turns):
            assert new.cacheable_share > old.cacheable_share + 0.05, budget
        else:
            assert new.cacheable_share == pytest.approx(old.cacheable_share)
        assert new.turns[0].cacheable_tokens == 0
        assert all(0 <= t.cacheable_tokens <= t.tokens for t in new.turns)
