"""The pending invariant in the engine: an unanswered call is never evicted or
summarised away (``keep_pending``, the default). The management rendering
keeps the tool-call batch still waiting for results, whole, and stays within
the budget and protocol-valid; the floor reserves its room, the guard and the
actions keep it."""

from __future__ import annotations

import json

import pytest
from vistalab.workspace import BlockStateError, BudgetConfigError, Workspace

from vistalab.conformance import request_problems


def _call(cid: str, args: str = "{}") -> dict:
    return {"id": cid, "type": "function", "function": {"name": "fetch", "arguments": args}}


def _text(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def _overflowing(**kw) -> Workspace:
    """A workspace in overflow whose newest batch (c3, c4) has c3 answered and
    c4 pending."""
    ws = Workspace(3000, **kw)
    ws.register_system("You are careful.")
    ws.register_user("Find the refunds.")
    for cid in ("c1", "c2"):
        ws.register_tool_call([_call(cid)])
        ws.register_tool_result(cid, _text(450, cid))
    ws.register_tool_call([_call("c3"), _call("c4")])
    ws.register_tool_result("c3", _text(300, "c3"))
    return ws


def _calls(messages) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or ()]


@pytest.mark.parametrize("cache_prefix", [True, False])
def test_management_rendering_keeps_the_pending_batch(cache_prefix):
    ws = _overflowing(cache_prefix=cache_prefix)
    r = ws.render()
    assert r.mode == "overflow" and r.tokens <= ws.budget
    assert _calls(r.messages)[-2:] == ["c3", "c4"]
    tools = [(m["tool_call_id"], m["content"][:3]) for m in r.messages if m["role"] == "tool"]
    assert tools[-2:] == [("c3", "c30"), ("c4", "[no")]  # its result, then the placeholder
    assert request_problems([dict(m) for m in r.messages], "openai") == []
    a = ws.render(format="anthropic")
    uses = [b["id"] for m in a.messages if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]
    assert uses[-2:] == ["c3", "c4"]


def test_the_model_rendering_stops_before_the_pending_batch():
    """keep_pending=False (the Coq engine model's rendering with keep_pending off) drops the batch:
    what the default guards against."""
    r = _overflowing(keep_pending=False).render()
    assert r.mode == "overflow" and "c4" not in _calls(r.messages)


def test_a_call_the_budget_cannot_keep_is_refused_at_its_floor():
    """register_tool_call accepts exactly when call_floor fits the budget (the
    floor's digits move with the budget, so each budget is asked), and an
    accepted call's management rendering fits."""
    big = [_call("c1", json.dumps({"q": _text(300)}))]
    probe = Workspace(100_000)
    probe.register_user("Go.")
    need = probe.call_floor(big)
    assert need > probe.management_floor()
    seen = set()
    for budget in range(need - 12, need + 4):
        ws = Workspace(budget)
        ws.register_user("Go.")
        fits = ws.call_floor(big) <= budget
        seen.add(fits)
        if fits:
            ws.register_tool_call(big)
            assert ws.render().tokens <= budget
        else:
            with pytest.raises(BudgetConfigError, match="tool_calls"):
                ws.register_tool_call(big)
            assert ws.blocks[-1].role == "user"  # nothing registered
    assert seen == {True, False}
    assert Workspace(need, keep_pending=False).call_floor(big) < need


def test_the_guard_rejects_a_result_the_pending_batch_cannot_hold():
    """A result that would push the kept batch past the budget (while its
    sibling waits) is rejected; the batch's earlier results are not offloaded."""
    ws = Workspace(2600, hard_limit=100_000)
    ws.register_user("Find the refunds.")
    ws.register_tool_call([_call("c1"), _call("c2"), _call("c3")])
    ws.register_tool_result("c1", _text(180, "a"))
    out = ws.register_tool_result("c2", _text(400, "b"))
    ev = ws.events[-1]
    assert ev.effects.get("decided_by") == "pending", (out, ev.effects)
    assert "pending calls kept" in ws.blocks[-1].content
    assert all(b.status.value == "visible" for b in ws.blocks[2:])
    r = ws.render()
    assert r.tokens <= ws.budget and _calls(r.messages) == ["c1", "c2", "c3"]
    assert ws.management_floor() <= ws.budget


@pytest.mark.parametrize("slack", [0, 9, 20, 39])
@pytest.mark.parametrize("huge", [True, False])
def test_a_cap_rejection_inside_a_pending_batch_keeps_the_floor(slack, huge):
    """A result over the per-result cap, while its siblings wait, is rejected
    with a notice the kept batch has room for: the floor (which reserved the
    shortest notice per call) stays within the budget. A full cap notice is
    longer; at a budget within ~40 tokens of the call's floor it pushed the
    floor past the budget. ``huge`` takes the path that stops counting at the
    cap (the result is far over it)."""
    calls = [_call(f"call_{i}") for i in range(3)]
    probe = Workspace(100_000, protocol=False)
    probe.register_user("task")
    budget = probe.call_floor(calls) + slack
    ws = Workspace(budget, protocol=False)
    ws.register_user("task")
    ws.register_tool_call(calls)
    assert ws.management_floor() <= budget
    ws.register_tool_result("call_0", "x " * (budget * (40 if huge else 2)))
    assert ws.events[-1].effects.get("decided_by") == "cap", ws.events[-1].effects
    assert ws.blocks[-1].rejected
    assert ws.management_floor() <= budget, (ws.management_floor(), budget)
    ws.register_tool_result("call_1", "fine")
    assert ws.management_floor() <= budget


def test_a_pending_batch_is_archived_whole_only():
    ws = _overflowing()
    with pytest.raises(BlockStateError, match="still waiting"):
        ws.archive("B8", "one of the batch")
    ws.register_tool_result("c4", "done")
    ws.archive("B7-B9", "the batch")  # whole, once complete


def test_the_prefix_does_not_end_in_an_assistant_message_before_the_batch():
    """The kept batch's turn stays exactly as registered: a management prefix
    ending in an assistant message would merge with it (Anthropic merges
    consecutive assistant messages), so the prefix stops before that message."""
    ws = Workspace(3000)
    ws.register_user("Go.")
    ws.register_assistant("On it.")
    ws.register_user(_text(1200, "big"))
    ws.register_tool_call([_call("c1")])
    r = ws.render(format="anthropic")
    assert r.mode == "overflow"
    turn = next(m for m in r.messages if any(
        b.get("type") == "tool_use" for b in m["content"] if isinstance(m["content"], list)))
    assert [b["type"] for b in turn["content"]] == ["tool_use"]
    assert not any("On it." in json.dumps(dict(m)) for m in r.messages)
