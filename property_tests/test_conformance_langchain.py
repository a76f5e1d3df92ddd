"""End to end on a real peer: the conformance suite finds, by itself, that
langchain-core's ``trim_messages`` (default ``strategy="last"``) can return a
``ToolMessage`` whose assistant call was cut away -- a request providers reject
(the paper's "Structure preservation", Methodology; invariant ``protocol``).

The adapter is deliberately small and lives here; the study of the ecosystem
(every peer, every setting) is ``vista-lab conformance --study``.
"""

from __future__ import annotations

import pytest

from vistalab.conformance import check

lc_messages = pytest.importorskip("langchain_core.messages")


def langchain_trim(messages, budget, count):
    """``trim_messages(strategy="last")`` on LangChain messages converted from
    the OpenAI dicts; messages it keeps are mapped back to the very dicts they
    came from, and its token counter is the suite's, so neither the format
    round trip nor a different tokenizer can cause a finding."""
    lc = lc_messages.convert_to_messages(messages)
    original = {id(m): d for m, d in zip(lc, messages, strict=True)}

    def back(ms):
        return [original[id(m)] if id(m) in original
                else lc_messages.convert_to_openai_messages([m])[0] for m in ms]

    kept = lc_messages.trim_messages(
        lc, max_tokens=budget, token_counter=lambda ms: count(back(ms)), strategy="last"
    )
    return back(kept)


def test_trim_messages_orphaned_tool_message_is_found():
    """The suite's minimal counterexample: one tool-call step, and a budget below
    the pinned floor that fits the step's result but not its call (where the
    manager should refuse, it sends an orphaned tool message)."""
    report = check(langchain_trim, examples=60, seed=0)
    v = report.violation("protocol.orphan-result")
    assert v is not None and v.confirmed
    # re-checked here: the output opens with a tool message (nothing it could answer)
    assert v.output[0]["role"] == "tool"
    assert v.output[0] in v.conversation
    call_ids = {c["id"] for m in v.output for c in m.get("tool_calls") or ()}
    assert v.output[0]["tool_call_id"] not in call_ids
    assert [m["role"] for m in v.conversation] == ["user", "assistant", "tool"]
    assert {w.check for w in report.violations_of("budget")} <= {"budget.empty"}
    assert report.violation("fidelity") is None
