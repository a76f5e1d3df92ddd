"""The conformance suite catches each invariant broken on purpose, with a minimal
counterexample, and passes a correct trimmer (the paper's workspace invariants,
Methodology, "Workspace invariants" and "Structure preservation"; statements in
``vistalab.workspace.INVARIANTS``).

Each counterexample is re-checked here by code that shares nothing with the
suite's checkers (a hand-written orphan finder, a direct token recount, a list
comparison), and is shown minimal: no message (or tool call with its answer)
can be removed from it without the failure going away.
"""

from __future__ import annotations

import copy
import itertools
import json

import pytest
from vistalab.workspace import count_request_tokens, get_tokenizer
from vistalab.workspace._accounting import opaque_part_text

from vistalab.conformance import CHECKED, check, minimal_tail, tail_trimmer

EXAMPLES = 60  # bounded: each test finds its bug within a few dozen conversations

_TOK = get_tokenizer("cl100k_base")


def _recount(messages):
    """Tokens by the workspace's documented accounting, content parts joined
    here (text parts by newlines, other parts as their opaque stand-in line)."""
    flat = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("content"), list):
            m["content"] = "\n".join(
                p["text"] if p["type"] == "text" else opaque_part_text(p) for p in m["content"]
            )
        flat.append(m)
    return count_request_tokens(flat, (), _TOK)


def _orphans(messages):
    """Tool messages whose call is not in the assistant message opening their run."""
    bad, open_calls = [], set()
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m["tool_call_id"] not in open_calls:
                bad.append(i)
            open_calls.discard(m["tool_call_id"])
        else:
            open_calls = {c["id"] for c in m.get("tool_calls") or ()}
    return bad


# ----------------------------------------------------------------- broken managers


def orphaning_trimmer(messages, budget, count):
    """Keeps the newest messages that fit, one message at a time (blind to calls)."""
    kept = []
    for m in reversed(messages):
        if count([m, *kept]) > budget:
            break
        kept.insert(0, m)
    return kept


def truncating_trimmer(messages, budget, count):
    """Cuts the longest message's text until the request fits."""
    out = copy.deepcopy(messages)
    while count(out) > budget:
        longest = max(
            (m for m in out if isinstance(m.get("content"), str) and m["content"]),
            key=lambda m: len(m["content"]), default=None,
        )
        if longest is None:
            break
        longest["content"] = longest["content"][: len(longest["content"]) // 2]
    return out


def overshooting_trimmer(messages, budget, count):
    """A correct trimmer that believes it has one token more than it has."""
    return tail_trimmer(messages, budget + 1, count)


def reordering_trimmer(messages, budget, count):
    """A correct trimmer that moves the system prompt after the conversation."""
    out = tail_trimmer(messages, budget, count)
    return [m for m in out if m["role"] != "system"] + [m for m in out if m["role"] == "system"]


def alternation_breaker(request, budget, count):
    """Anthropic: drops assistant turns from the oldest on until the request fits."""
    msgs = list(request["messages"])
    while count({"system": request["system"], "messages": msgs}) > budget:
        idx = next((i for i, m in enumerate(msgs) if m["role"] == "assistant"), None)
        if idx is None:
            break
        del msgs[idx]
    return {"system": request["system"], "messages": msgs}


def crashing_trimmer(messages, budget, count):
    """Fails on an empty tool result."""
    for m in messages:
        if m["role"] == "tool" and m["content"] == "":
            raise ValueError("empty tool result")
    return tail_trimmer(messages, budget, count)


class _Flip:
    """Nondeterministic: every other call keeps the system prompt out."""

    n = 0

    def __call__(self, messages, budget, count):
        _Flip.n += 1
        out = tail_trimmer(messages, budget, count)
        return out if _Flip.n % 2 else [m for m in out if m["role"] != "system"]


def nondeterministic_trimmer(messages, budget, count):
    return _Flip()(messages, budget, count)


# ----------------------------------------------------------------- minimality


def _removals(conversation):
    """OpenAI conversations one deletion smaller that the strategies could
    also generate (written here, apart from the suite's own minimiser): drop
    the system prompt, a round that is not the last (user message up to the
    next user message), a tool-call step (the call message and its results),
    or one of several parallel calls with its result."""
    msgs = conversation
    if msgs and msgs[0]["role"] == "system":
        yield msgs[1:]
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    for a, b in itertools.pairwise(users):
        yield msgs[:a] + msgs[b:]
    for i, m in enumerate(msgs):
        ids = [c["id"] for c in m.get("tool_calls") or ()]
        if not ids:
            continue
        end = i + 1 + len(ids)
        yield msgs[:i] + msgs[end:]
        for cid in ids if len(ids) > 1 else ():
            out = copy.deepcopy(msgs)
            out[i]["tool_calls"] = [c for c in out[i]["tool_calls"] if c["id"] != cid]
            yield [n for n in out if n.get("tool_call_id") != cid or n["role"] != "tool"
                   or n is out[i]]


def _still_fails(manager, violation):
    """Whether the manager still breaks the same invariant on each smaller
    conversation (at the same budget)."""
    from vistalab.conformance._runner import as_counter, as_manager, evaluate

    mgr, count = as_manager(manager), as_counter(None, "openai")
    found = []
    for smaller in _removals(violation.conversation):
        floor = count(minimal_tail(smaller))
        if violation.budget < floor:
            continue
        found.append(violation.invariant in evaluate(mgr, smaller, violation.budget, count,
                                                     "openai"))
    return found


# ----------------------------------------------------------------- the tests


def test_correct_trimmer_passes_both_formats():
    """A protocol-aware tail trimmer keeps every invariant on the sampled
    conversations (checked: EXAMPLES conversations per format)."""
    for protocol in ("openai", "anthropic"):
        report = check(tail_trimmer, protocol=protocol, examples=EXAMPLES, seed=1)
        assert report.ok, [v.to_dict() for v in report.violations]
        assert report.conversations == EXAMPLES
        assert report.checked == CHECKED


def test_orphaning_trimmer_breaks_protocol_minimally():
    """Structure preservation: a message-by-message trimmer orphans a tool result."""
    report = check(orphaning_trimmer, examples=EXAMPLES)
    v = report.violation("protocol.orphan-result")
    assert v is not None and v.confirmed
    assert _orphans(v.output), v.output  # independent re-check
    # one step, below the pinned floor: the result stays while its call goes
    assert [m["role"] for m in v.conversation] == ["user", "assistant", "tool"]
    assert not any(_still_fails(orphaning_trimmer, v))


def test_truncating_trimmer_breaks_fidelity():
    """Context Stream, regime (i): a visible message must keep its exact content."""
    report = check(truncating_trimmer, examples=EXAMPLES)
    v = report.violation("fidelity")
    assert v is not None and v.confirmed
    originals = [json.dumps(m, sort_keys=True) for m in v.conversation]
    assert any(json.dumps(m, sort_keys=True) not in originals for m in v.output)
    assert len(v.conversation) <= 3
    assert not any(_still_fails(truncating_trimmer, v))


def test_overshooting_trimmer_breaks_budget_by_one_token():
    """|C_t| <= B: one token over is caught, at the boundary the suite draws."""
    report = check(overshooting_trimmer, examples=EXAMPLES)
    v = report.violation("budget")
    assert v is not None and v.confirmed
    assert _recount(v.output) == v.budget + 1  # independent recount
    assert report.violation("protocol") is None and report.violation("fidelity") is None
    assert not any(_still_fails(overshooting_trimmer, v))


def test_reordering_trimmer_breaks_fidelity_order():
    """Fidelity includes the original order."""
    report = check(reordering_trimmer, examples=EXAMPLES)
    v = report.violation("fidelity")
    assert v is not None and v.confirmed and "order" in v.message
    roles_in = [m["role"] for m in v.conversation]
    roles_out = [m["role"] for m in v.output]
    assert roles_out != [r for r in roles_in if r in roles_out][: len(roles_out)]
    assert roles_in == ["system", "user"]
    assert not any(_still_fails(reordering_trimmer, v))


def test_alternation_breaker_breaks_anthropic_protocol():
    """Anthropic Messages: roles must alternate; dropping an assistant turn
    leaves two user turns together (and orphans its tool results)."""
    report = check(alternation_breaker, protocol="anthropic", examples=EXAMPLES)
    v = report.violation("protocol")
    assert v is not None and v.confirmed
    roles = [m["role"] for m in v.output["messages"]]
    assert any(a == b for a, b in itertools.pairwise(roles)), roles  # independent re-check
    assert len(v.conversation["messages"]) <= 3


def test_crashing_trimmer_is_reported_not_raised():
    """The crash invariant: the suite reports the exception on a minimal input."""
    report = check(crashing_trimmer, examples=EXAMPLES)
    v = report.violation("crash")
    assert v is not None and v.confirmed and "ValueError" in v.message
    with pytest.raises(ValueError):
        crashing_trimmer(copy.deepcopy(v.conversation), v.budget, len)
    tools = [m for m in v.conversation if m["role"] == "tool"]
    assert len(tools) == 1 and len(v.conversation) == 3
    assert not any(_still_fails(crashing_trimmer, v))


def test_nondeterministic_trimmer_breaks_determinism():
    """The same input must give the same output."""
    report = check(nondeterministic_trimmer, examples=EXAMPLES)
    v = report.violation("determinism")
    assert v is not None
    assert v.output["first"] != v.output["second"]
    assert [m["role"] for m in v.conversation] == ["system", "user"]


def test_same_seed_same_report():
    """Randomness is passed: the seed fixes the conversations and the report."""
    def keep_all(messages, budget, count):
        return messages

    a = check(keep_all, examples=20, seed=7).to_dict()
    b = check(keep_all, examples=20, seed=7).to_dict()
    assert a == b and not a["ok"]
