"""Every check id of the conformance suite catches its own bug, and the pinned
prefix rule (the system prompt is pinned; below the pinned floor a manager
refuses) is honoured by correct managers and enforced on broken ones.

Each broken manager below is a correct trimmer (the suite's ``tail_trimmer``)
with one deliberate bug; the test asserts that the report names the bug's own
check id (:data:`vistalab.conformance.CHECKS`), with a counterexample re-checked
by hand here where the property is simple to state independently.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings

from vistalab.conformance import (
    CHECKS,
    BudgetTooSmall,
    as_counter,
    check,
    check_info,
    conversations,
    pinned_floor,
    request_problems,
    tail_trimmer,
)
from vistalab.conformance._ids import FALLBACK, classify
from vistalab.conformance._shapes import complete_pending, pending_calls

EXAMPLES = 40


def _ids(report):
    return {v.check for v in report.violations}


# ----------------------------------------------------------------- broken managers


def overshooting(messages, budget, count):
    return tail_trimmer(messages, budget + 1, count)


def empty_below_floor(messages, budget, count):
    """Sends an empty request instead of refusing."""
    try:
        return tail_trimmer(messages, budget, count)
    except BudgetTooSmall:
        return {"system": None, "messages": []} if isinstance(messages, dict) else []


def refuses_early(messages, budget, count):
    """Refuses one token too early (at the floor itself)."""
    return tail_trimmer(messages, budget - 1, count)


def drops_system(messages, budget, count):
    """Drops the system prompt to make room (the pre-pinned behaviour)."""
    if isinstance(messages, dict):
        return tail_trimmer({**messages, "system": None}, budget, count)
    return tail_trimmer([m for m in messages if m["role"] != "system"], budget, count)


def unknown_role(messages, budget, count):
    return [{**m, "role": "human"} if m["role"] == "user" else m
            for m in tail_trimmer(messages, budget, count)]


def orphaning(messages, budget, count):
    """Keeps the newest messages that fit, one message at a time (blind to calls)."""
    system = [m for m in messages if m["role"] == "system"]
    kept = []
    for m in reversed([m for m in messages if m["role"] != "system"]):
        if count(system + [m, *kept]) > budget:
            break
        kept.insert(0, m)
    if not kept:
        raise BudgetTooSmall(budget)
    return system + kept


def dangling(messages, budget, count):
    """Drops the results of the last tool call."""
    out = tail_trimmer(messages, budget, count)
    while out and out[-1]["role"] == "tool":
        out.pop()
    return out


def orphan_or_dangling(messages, budget, count):
    """Two bugs of one invariant: orphans results on some inputs, leaves calls
    unanswered on others."""
    if len(messages) % 2:
        return orphaning(messages, budget, count)
    return dangling(messages, budget, count)


def duplicate_turn(request, budget, count):
    """Anthropic: sends the last tool round twice (a repeated tool_use id)."""
    out = tail_trimmer(request, budget, count)
    msgs = out["messages"]
    for i in range(len(msgs) - 1):
        uses = [b for b in msgs[i]["content"] if isinstance(msgs[i]["content"], list)
                and b.get("type") == "tool_use"] if msgs[i]["role"] == "assistant" else []
        if uses:
            return {**out, "messages": msgs[: i + 2] + msgs[i : i + 2] + msgs[i + 2 :]}
    return out


def dotted_ids(request, budget, count):
    """Anthropic: renames tool ids to a form the API refuses (a dot)."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    for m in out["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else ():
            if b.get("type") == "tool_use":
                b["id"] = b["id"].replace("_", ".")
            if b.get("type") == "tool_result":
                b["tool_use_id"] = b["tool_use_id"].replace("_", ".")
    return out


def alternation_breaker(request, budget, count):
    """Anthropic: drops assistant turns from the oldest on until the request fits."""
    msgs = list(request["messages"])
    while count({"system": request["system"], "messages": msgs}) > budget:
        idx = next((i for i, m in enumerate(msgs) if m["role"] == "assistant"), None)
        if idx is None:
            break
        del msgs[idx]
    return {"system": request["system"], "messages": msgs}


def whitespace_block(request, budget, count):
    """Anthropic: appends a whitespace-only text block to the last user turn."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    last = out["messages"][-1]
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    last["content"] = [*content, {"type": "text", "text": " \n"}]
    return out


def late_system(messages, budget, count):
    out = tail_trimmer(messages, budget, count)
    sys_msgs = [m for m in out if m["role"] == "system"]
    rest = [m for m in out if m["role"] != "system"]
    return rest[:1] + sys_msgs + rest[1:]


def assistant_start(messages, budget, count):
    """Starts the tail at the assistant message of the last tool round when it
    is cheaper (valid for OpenAI, refused by the strict templates)."""
    system = [m for m in messages if m["role"] == "system"]
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            tail = system + messages[i:]
            if all(n["role"] != "user" for n in messages[i:]) and count(tail) <= budget:
                return tail
    return tail_trimmer(messages, budget, count)


def prefill(messages, budget, count):
    return [*tail_trimmer(messages, budget - 5, count),
            {"role": "assistant", "content": "Sure"}]


def reversed_results(messages, budget, count):
    out = tail_trimmer(messages, budget, count)
    res, i = [], 0
    while i < len(out):
        if out[i]["role"] == "tool":
            j = i
            while j < len(out) and out[j]["role"] == "tool":
                j += 1
            res += list(reversed(out[i:j]))
            i = j
        else:
            res.append(out[i])
            i += 1
    return res


def truncating(messages, budget, count):
    out = copy.deepcopy(tail_trimmer(messages, budget + 10_000, count))
    for m in out:
        if m["role"] == "tool" and isinstance(m.get("content"), str) and len(m["content"]) > 1:
            m["content"] = m["content"][:-1]
    return out if count(out) <= budget else tail_trimmer(messages, budget, count)


def reordering(messages, budget, count):
    out = tail_trimmer(messages, budget, count)
    return [m for m in out if m["role"] != "system"] + [m for m in out if m["role"] == "system"]


def _archiving(recover_kind):
    """A trimmer that replaces every non-empty string tool result by a declared
    placeholder ``[payload P<i>]``; ``recover`` is right, wrong, missing or raising."""
    store = {}

    def manager(messages, budget, count):
        out = []
        for m in messages:
            if m["role"] == "tool" and isinstance(m.get("content"), str) and m["content"]:
                pid = f"P{len(store)}"
                store[pid] = m["content"].encode()
                m = {**m, "content": f"[payload {pid}]"}
            out.append(m)
        return tail_trimmer(out, budget, count)

    def placeholder(unit):
        text = unit.get("content")
        if isinstance(text, str) and text.startswith("[payload P"):
            return (text[len("[payload "):-1],)
        return None

    def recover(pid):
        if recover_kind == "raises":
            raise KeyError(pid)
        data = store[pid]
        return data + b"!" if recover_kind == "wrong" else data

    manager.placeholder = placeholder
    if recover_kind != "missing":
        manager.recover = recover
    return manager


def batch_splitter(messages, budget, count):
    """Keeps a parallel batch in part: drops the last call of every batch of
    several, with its result (each kept call is still answered)."""
    out, dropped = [], set()
    for m in tail_trimmer(messages, budget, count):
        calls = m.get("tool_calls") or []
        if len(calls) > 1:
            dropped.add(calls[-1]["id"])
            m = {**m, "tool_calls": calls[:-1]}
        elif m["role"] == "tool" and m["tool_call_id"] in dropped:
            dropped.discard(m["tool_call_id"])
            continue
        out.append(m)
    return out


def thinking_stripper(request, budget, count):
    """Anthropic: strips thinking and redacted_thinking blocks (to save tokens)
    and keeps the tool_use turns they belong to."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    for m in out["messages"]:
        if m["role"] == "assistant" and isinstance(m["content"], list):
            m["content"] = [b for b in m["content"]
                            if b.get("type") not in ("thinking", "redacted_thinking")]
    return out


def commentary_stripper(request, budget, count):
    """Anthropic: drops the text blocks of tool_use turns and keeps their
    signed thinking blocks (a rewritten turn with its old signature)."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    for m in out["messages"]:
        content = m["content"]
        if m["role"] == "assistant" and isinstance(content, list) and any(
                b.get("type") == "tool_use" for b in content):
            m["content"] = [b for b in content if b.get("type") != "text"]
    return out


_SERVER_RESULTS = ("web_search_tool_result", "web_fetch_tool_result",
                   "code_execution_tool_result", "bash_code_execution_tool_result",
                   "mcp_tool_result")


def server_result_mover(request, budget, count):
    """Anthropic: moves each server tool result block out of its assistant turn
    to the end of the next user turn (as if it were a client tool_result)."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    msgs = out["messages"]
    for i, m in enumerate(msgs[:-1]):
        if m["role"] == "assistant" and isinstance(m["content"], list):
            moved = [b for b in m["content"] if b.get("type") in _SERVER_RESULTS]
            if moved and isinstance(msgs[i + 1]["content"], list):
                m["content"] = [b for b in m["content"] if b not in moved]
                msgs[i + 1]["content"] = msgs[i + 1]["content"] + moved
    return out


def pending_dropper(messages, budget, count):
    """Drops unanswered calls at the end (a 'repair' that evicts pending calls)."""
    out = tail_trimmer(messages, budget, count)
    if isinstance(out, dict):
        msgs = list(out["messages"])
        if msgs and msgs[-1]["role"] == "assistant" and len(msgs) > 1:
            msgs.pop()
        return {**out, "messages": msgs}
    out = list(out)
    if out and out[-1].get("tool_calls") and len(out) > 1 and out[-2]["role"] != "system":
        out.pop()
    return out


def _model_runs(items):
    """Responses: (start, end) of each run of model items."""
    from vistalab.conformance._responses import _runs

    return _runs(items)


def responses_batch_splitter(items, budget, count):
    """Responses: keeps a parallel batch in part (drops its last function_call
    and that call's output, so every kept call is still answered)."""
    out = tail_trimmer(items, budget, count)
    drop = set()
    for a, b in _model_runs(out):
        calls = [k for k in range(a, b) if out[k].get("type") == "function_call"]
        if len(calls) > 1:
            drop.add(calls[-1])
            cid = out[calls[-1]]["call_id"]
            j = next((k for k in range(b, len(out)) if out[k].get("call_id") == cid), None)
            if j is not None:
                drop.add(j)
    return [it for k, it in enumerate(out) if k not in drop]


def reasoning_stripper(items, budget, count):
    """Responses: drops reasoning items (keeps the calls they produced)."""
    return [it for it in tail_trimmer(items, budget, count) if it.get("type") != "reasoning"]


def reasoning_orphaner(items, budget, count):
    """Responses: drops the calls of turns that carry reasoning, with their
    outputs, and keeps the reasoning item alone."""
    out = tail_trimmer(items, budget, count)
    drop = set()
    for a, b in _model_runs(out):
        if any(out[k].get("type") == "reasoning" for k in range(a, b)):
            for k in range(a, b):
                if out[k].get("type") == "function_call":
                    drop.add(k)
                    drop.update(j for j in range(b, len(out))
                                if out[j].get("call_id") == out[k]["call_id"]
                                and out[j].get("type") == "function_call_output")
    return [it for k, it in enumerate(out) if k not in drop]


def call_dropper(items, budget, count):
    """Responses: drops the function_call items of the oldest model turn with
    calls and keeps their outputs."""
    out = tail_trimmer(items, budget, count)
    for a, b in _model_runs(out):
        calls = [k for k in range(a, b) if out[k].get("type") == "function_call"]
        if calls and b < len(out):
            return [it for k, it in enumerate(out) if k not in calls]
    return out


def responses_pending_dropper(items, budget, count):
    """Responses: drops unanswered function_call items at the end."""
    out = list(tail_trimmer(items, budget, count))
    while out and out[-1].get("type") == "function_call" and len(out) > 2:
        out.pop()
    return out


def crashing(messages, budget, count):
    for m in messages:
        if m["role"] == "tool" and m["content"] == "":
            raise ValueError("empty tool result")
    return tail_trimmer(messages, budget, count)


class _Flip:
    n = 0

    def __call__(self, messages, budget, count):
        _Flip.n += 1
        out = tail_trimmer(messages, budget, count)
        return out if _Flip.n % 2 else list(reversed(out))


def nondeterministic(messages, budget, count):
    return _Flip()(messages, budget, count)


# (check id, manager, protocol, strict): each manager breaks (at least) its check
CASES = [
    ("budget.over", overshooting, "openai", False),
    ("budget.empty", empty_below_floor, "openai", False),
    ("budget.empty", empty_below_floor, "anthropic", False),
    ("budget.refused", refuses_early, "openai", False),
    ("pinned.dropped", drops_system, "openai", False),
    ("pinned.dropped", drops_system, "anthropic", False),
    ("protocol.shape", unknown_role, "openai", False),
    ("protocol.orphan-result", orphaning, "openai", False),
    ("protocol.dangling-call", dangling, "openai", False),
    ("protocol.duplicate-id", duplicate_turn, "anthropic", False),
    ("protocol.id-pattern", dotted_ids, "anthropic", False),
    ("protocol.alternation", alternation_breaker, "anthropic", False),
    ("protocol.empty-text", whitespace_block, "anthropic", False),
    ("protocol.strict-system-late", late_system, "openai", True),
    ("protocol.strict-first-user", assistant_start, "openai", True),
    ("protocol.strict-last-role", prefill, "openai", True),
    ("protocol.strict-result-order", reversed_results, "openai", True),
    ("fidelity.altered", truncating, "openai", False),
    ("fidelity.reordered", reordering, "openai", False),
    ("recoverability.lost", _archiving("wrong"), "openai", False),
    ("recoverability.no-recover", _archiving("missing"), "openai", False),
    ("recoverability.raised", _archiving("raises"), "openai", False),
    ("batch.split", batch_splitter, "openai", False),
    ("coupling.reasoning-dropped", thinking_stripper, "anthropic", False),
    ("coupling.signed-rewritten", commentary_stripper, "anthropic", False),
    ("closure.undefined-id", orphaning, "openai", False),
    ("pending.evicted", pending_dropper, "openai", False),
    ("pending.evicted", pending_dropper, "anthropic", False),
    ("batch.split", responses_batch_splitter, "responses", False),
    ("coupling.reasoning-dropped", reasoning_stripper, "responses", False),
    ("coupling.signed-rewritten", responses_batch_splitter, "responses", False),
    ("protocol.reasoning-split", reasoning_orphaner, "responses", False),
    ("protocol.server-tool-split", server_result_mover, "anthropic", False),
    ("closure.undefined-id", call_dropper, "responses", False),
    ("protocol.orphan-result", call_dropper, "responses", False),
    ("pending.evicted", responses_pending_dropper, "responses", False),
    ("crash.raised", crashing, "openai", False),
    ("determinism.differs", nondeterministic, "openai", False),
]


def test_every_check_id_has_a_broken_manager():
    assert {c for c, *_ in CASES} == {c.id for c in CHECKS}


@pytest.mark.parametrize("cid,manager,protocol,strict", CASES,
                         ids=[f"{c}-{p}" for c, _, p, _ in CASES])
def test_broken_manager_is_caught_by_its_check(cid, manager, protocol, strict):
    report = check(manager, protocol=protocol, examples=EXAMPLES, seed=3, strict=strict)
    v = report.violation(cid)
    assert v is not None, (cid, [(w.check, w.message) for w in report.violations])
    assert v.invariant == check_info(cid).invariant
    assert v.confirmed, v.to_dict()
    if cid == "budget.empty":
        count = as_counter(None, protocol)
        assert v.budget < count(pinned_floor(v.conversation, protocol))  # refusal territory


def test_strict_checks_need_strict():
    report = check(prefill, examples=EXAMPLES, seed=3)
    assert not any(check_info(c).strict for c in _ids(report))


def test_two_bugs_of_one_invariant_are_both_reported():
    # 300 examples: at 120 this seed's search stopped after the first bug on one
    # tree and not on another (the draws after a find depend on the run).
    report = check(orphan_or_dangling, examples=300, seed=3)
    protocol = {v.check for v in report.violations_of("protocol")}
    assert {"protocol.orphan-result", "protocol.dangling-call"} <= protocol, protocol


# ----------------------------------------------------------------- correct managers


def keep_everything(messages, budget, count):
    """Keeps the whole conversation when it fits, else the longest tail."""
    return messages if count(messages) <= budget else tail_trimmer(messages, budget, count)


def keep_everything_system_free(messages, budget, count):
    """Drops the system prompt when that is what it takes (pinned='none')."""
    try:
        return tail_trimmer(messages, budget, count)
    except BudgetTooSmall:
        return tail_trimmer([m for m in messages if m["role"] != "system"], budget, count)


def aliasing(request, budget, count):
    """Anthropic, correct, with one content list shared by two places of its
    output (a shallow copy of the kept turns)."""
    out = tail_trimmer(request, budget, count)
    msgs = [dict(m) for m in out["messages"]]
    return {"system": out["system"], "messages": msgs, "_alias": msgs[0]["content"]}


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("manager", [tail_trimmer, keep_everything],
                         ids=["tail_trimmer", "keep_everything"])
def test_correct_managers_pass(manager, protocol, strict):
    report = check(manager, protocol=protocol, examples=EXAMPLES, seed=5, strict=strict)
    assert report.ok, [(v.check, v.message) for v in report.violations]


def test_a_manager_that_may_drop_the_system_prompt_passes_with_pinned_none():
    assert check(keep_everything_system_free, examples=EXAMPLES, seed=5, pinned="none").ok
    report = check(keep_everything_system_free, examples=EXAMPLES, seed=5)
    assert "pinned.dropped" in _ids(report)


def test_tail_trimmer_refuses_below_the_floor_and_not_above():
    count = as_counter(None, "openai")
    conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"}, {"role": "user", "content": "sum 2+2"}]
    floor = count(pinned_floor(conv))
    assert pinned_floor(conv) == [conv[0], conv[3]]
    assert tail_trimmer(conv, floor, count) == [conv[0], conv[3]]
    with pytest.raises(BudgetTooSmall):
        tail_trimmer(conv, floor - 1, count)


def test_shared_sub_objects_are_not_mistaken_for_deep_nesting():
    """A correct output whose messages share a content list passes (no false
    'nested too deep' error)."""
    from vistalab._core._limits import value_depth

    shared = [{"type": "text", "text": "x"}]
    assert value_depth([{"content": shared}, {"content": shared}], 100) == 4
    loop = []
    loop.append(loop)
    assert value_depth(loop, 100) > 100  # a real cycle is still refused
    report = check(aliasing, protocol="anthropic", examples=EXAMPLES, seed=5)
    assert report.ok, [(v.check, v.message) for v in report.violations]


@settings(max_examples=60, deadline=None)
@given(conversations("anthropic"))
def test_anthropic_conversations_have_no_whitespace_text(conv):
    """The Messages API refuses empty or whitespace-only text blocks; the
    generator makes none, and the checker accepts what it makes."""
    blocks = [b for m in conv["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    texts += [m["content"] for m in conv["messages"] if isinstance(m["content"], str)]
    assert all(t.strip() for t in texts), texts
    assert conv["system"] is None or conv["system"].strip()
    # a conversation that ends with pending calls is valid once their results arrive
    completed = complete_pending(conv, "anthropic", pending_calls(conv, "anthropic"))
    assert request_problems(completed, "anthropic", strict=True) == []


def test_the_checker_flags_whitespace_text():
    req = {"system": None, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi"}, {"type": "text", "text": "\r\n"}]}]}
    problems = request_problems(req, "anthropic")
    assert problems and classify("protocol", problems[0]) == "protocol.empty-text"


def test_classification_is_total_and_stays_in_its_invariant():
    for c in CHECKS:
        assert c.id.split(".")[0] == c.invariant
    assert set(FALLBACK) == {c.invariant for c in CHECKS}
    assert classify("protocol", "something new") == "protocol.shape"


def test_report_json_names_the_check_ids(tmp_path):
    report = check(orphaning, examples=EXAMPLES, seed=3)
    doc = report.to_dict()
    assert doc["pinned"] == "system"
    broken = {c for inv in doc["invariants"] for c in inv["broken_checks"]}
    assert "protocol.orphan-result" in broken
    v = report.violation("protocol.orphan-result")
    path = v.write(tmp_path / "v.json")
    from vistalab.conformance import read_violation

    back = read_violation(path)
    assert back.check == "protocol.orphan-result" and back.pinned == "system"
    assert json.loads(open(path).read())["conformance"]["check"] == "protocol.orphan-result"


def test_the_guide_lists_every_check():
    """docs/guide/conformance.md's table is CHECKS (skips outside the repo)."""
    from pathlib import Path

    guide = Path(__file__).resolve().parents[1] / "docs" / "guide" / "conformance.md"
    if not guide.is_file():
        pytest.skip("the docs are not shipped in the wheel")
    text = guide.read_text()
    for c in CHECKS:
        assert f"| `{c.id}` | {c.statement} | {c.source} |" in text, c.id


def test_the_guide_example_trimmer_passes():
    def my_trimmer(messages, budget, count):
        system = [m for m in messages if m["role"] == "system"]
        rest = [m for m in messages if m["role"] != "system"]
        for i, m in enumerate(rest):
            if m["role"] == "user" and count(system + rest[i:]) <= budget:
                return system + rest[i:]
        raise BudgetTooSmall(budget)

    def empty_instead(messages, budget, count):
        try:
            return my_trimmer(messages, budget, count)
        except BudgetTooSmall:
            return []

    assert check(my_trimmer, examples=EXAMPLES, seed=2).ok
    assert "budget.empty" in _ids(check(empty_instead, examples=EXAMPLES, seed=2))
