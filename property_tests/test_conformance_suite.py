"""The conformance suite's parts: the conversation and budget strategies, each
invariant checker failing on a broken request and passing a valid one, the
counterexample file, the door checks of ``check``, and vista-lab's own
``Workspace`` passing through its adapter (the paper's workspace invariants,
Methodology, "Workspace invariants" and "Structure preservation")."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vistalab.workspace import INVARIANTS, get_tokenizer

from vistalab._core import DomainError
from vistalab.conformance import (
    CHECKED,
    ManagerSignatureError,
    Violation,
    WorkspaceAdapter,
    as_counter,
    budget_problems,
    budgets,
    check,
    complete_pending,
    conversations,
    fidelity_problems,
    minimal_tail,
    pending_calls,
    pinned_floor,
    read_violation,
    recoverability_problems,
    request_problems,
    tail_trimmer,
)

COUNT = as_counter(None, "openai")


def _call(cid, name="f"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


USER = {"role": "user", "content": "hi"}
CALL = {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]}
RES_A = {"role": "tool", "tool_call_id": "a", "content": "x"}
RES_B = {"role": "tool", "tool_call_id": "b", "content": "y"}


# ----------------------------------------------------------------- strategies


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "responses"])
@settings(max_examples=40, database=None)
@given(data=st.data())
def test_generated_conversations_are_valid_requests(protocol, data):
    """Every conversation the strategy draws is a valid request, strictly, in
    its format, once the results of its pending calls (if it ends with some)
    arrive; so are its smallest valid tail and its pinned floor; every budget
    drawn is positive (budgets below the floor test refusals)."""
    conv = data.draw(conversations(protocol))
    pending = pending_calls(conv, protocol)

    def done(request):
        return complete_pending(request, protocol, pending)

    assert request_problems(done(conv), protocol, strict=True) == []
    assert fidelity_problems(conv, conv, protocol) == []
    count = as_counter(None, protocol)
    budget = data.draw(budgets(conv, count, protocol))
    assert budget >= 1
    assert request_problems(done(minimal_tail(conv, protocol)), protocol) == []
    assert request_problems(done(pinned_floor(conv, protocol)), protocol, strict=True) == []


def test_pending_calls_end_some_conversations():
    """A pending call at the end, and (Responses) reasoning before calls,
    occur in a default-seed run; the request with the pending call kept is
    valid once its result arrives, and without it the checker says so."""
    seen = _seen("responses", examples=80)
    assert any(pending_calls(c, "responses") for c in seen)
    assert any(it.get("type") == "reasoning" and it.get("encrypted_content")
               for c in seen for it in c)
    conv = next(c for c in seen if pending_calls(c, "responses"))
    assert request_problems(conv, "responses") != []  # unanswered as sent now
    assert request_problems(complete_pending(conv, "responses", pending_calls(
        conv, "responses")), "responses") == []


def _reuses_an_id(conv):
    ids = [c["id"] for m in conv for c in m.get("tool_calls") or ()]
    return len(ids) != len(set(ids))


FEATURES = {
    "parallel calls": lambda c: any(len(m.get("tool_calls") or ()) > 1 for m in c),
    "several rounds": lambda c: sum(m["role"] == "user" for m in c) > 1,
    "long result": lambda c: any(m["role"] == "tool" and len(m["content"] or "") > 1000
                                 for m in c),
    "empty result": lambda c: any(m["role"] == "tool" and m["content"] == "" for m in c),
    "content parts": lambda c: any(isinstance(m.get("content"), list) for m in c),
    "image part": lambda c: any(isinstance(m.get("content"), list)
                                and any(p["type"] == "image_url" for p in m["content"])
                                for m in c),
    "system prompt": lambda c: c[0]["role"] == "system",
    "call without text": lambda c: any(m.get("tool_calls") and m["content"] is None for m in c),
    "reused id once answered": _reuses_an_id,
    "pending call at the end": lambda c: bool(pending_calls(c, "openai")),
}


def _seen(protocol, examples=150):
    """The conversations one run of the suite hands a manager."""
    seen = []

    def spy(messages, budget, count):
        seen.append(copy.deepcopy(messages))
        return tail_trimmer(messages, budget, count)

    assert check(spy, protocol=protocol, examples=examples).ok
    return seen


def test_one_run_exercises_every_conversation_shape():
    """Each shape the suite promises (parallel calls, several rounds, long and
    empty results, content parts, an image, a system prompt, calls without
    text, an id reused once answered) occurs in one default-seed run."""
    seen = _seen("openai")
    missing = [name for name, has in FEATURES.items() if not any(has(c) for c in seen)]
    assert missing == []


def test_anthropic_runs_have_unique_ids_system_and_errors():
    seen = _seen("anthropic", examples=80)
    for conv in seen:
        ids = [b["id"] for m in conv["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_use"]
        assert len(ids) == len(set(ids))
    assert any(c["system"] is not None for c in seen)
    assert any(b.get("is_error") for c in seen for m in c["messages"]
               if isinstance(m["content"], list) for b in m["content"])


# ----------------------------------------------------------------- checkers


def test_budget_checker():
    conv = [USER]
    cost = COUNT(conv)
    assert budget_problems(conv, cost, COUNT) == []
    assert "by 1" in budget_problems(conv, cost - 1, COUNT)[0]


@pytest.mark.parametrize(
    "bad,rule",
    [
        ([RES_A], "does not follow a tool call"),
        ([USER, CALL, RES_A], "never answered"),
        ([USER, CALL, RES_A, RES_A, RES_B], "answered more than once"),
        ([USER, CALL, RES_A, USER, RES_B], "before the calls"),
        ([], "no messages"),
        ("not a list", "must be a list"),
    ],
)
def test_openai_protocol_checker_catches(bad, rule):
    """Structure preservation, OpenAI chat: each broken request is named."""
    assert any(rule in p for p in request_problems(bad, "openai")), request_problems(bad)


def test_openai_strict_rules():
    ok = [USER, CALL, RES_A, RES_B]
    assert request_problems(ok, "openai", strict=True) == []
    swapped = [USER, CALL, RES_B, RES_A]
    assert request_problems(swapped, "openai") == []
    assert any("order" in p for p in request_problems(swapped, "openai", strict=True))
    late_system = [USER, {"role": "system", "content": "s"}]
    assert any("system" in p for p in request_problems(late_system, "openai", strict=True))


def _anth(messages, system=None):
    return {"system": system, "messages": messages}


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
                                              "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": "x"}]}


@pytest.mark.parametrize(
    "bad,rule",
    [
        (_anth([USER, USER]), "two user turns"),
        (_anth([TOOL_USE, RESULT]), "first message must be a user"),
        (_anth([USER, TOOL_USE, USER]), "do not answer"),
        (_anth([USER, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "bad id!", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "bad id!"}]}]),
         "does not match"),
        (_anth([USER, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "f", "input": "x"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}]),
         "input must be an object"),
        (_anth([{"role": "user", "content": ""}]), "content must be a non-empty"),
        ([USER], "must be a {'system', 'messages'} object"),
    ],
)
def test_anthropic_protocol_checker_catches(bad, rule):
    """Anthropic Messages: alternation, first turn, pairing, id pattern, input."""
    problems = request_problems(bad, "anthropic")
    assert any(rule in p for p in problems), problems


def test_anthropic_valid_request_passes_and_strict_order():
    two = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "f", "input": {}}]}
    answers = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t2"}, {"type": "tool_result", "tool_use_id": "t1"}]}
    req = _anth([USER, two, answers], system="be brief")
    assert request_problems(req, "anthropic") == []
    assert any("order" in p for p in request_problems(req, "anthropic", strict=True))


def test_fidelity_checker():
    """Context Stream, regime (i): exact content, original order, declared stand-ins."""
    conv = [{"role": "system", "content": "s"}, USER, CALL, RES_A, RES_B]
    assert fidelity_problems(conv, conv[1:]) == []
    altered = copy.deepcopy(conv)
    altered[3]["content"] = "X"
    assert "altered" in fidelity_problems(conv, altered)[0]
    assert "order" in fidelity_problems(conv, [USER, conv[0]])[0]
    summary = {"role": "user", "content": "[summary]"}
    assert fidelity_problems(conv, [summary, USER]) != []
    assert fidelity_problems(conv, [summary, USER],
                             placeholder=lambda u: () if u is summary else None) == []


def test_recoverability_checker():
    """Archived bytes stay recoverable: exact bytes of an input, from recover(id)."""
    conv = [USER, CALL, RES_A, RES_B]
    stub = {"role": "tool", "tool_call_id": "a", "content": "[archived P1]"}
    out = [USER, CALL, stub, RES_B]

    def declares(u):
        return ("P1",) if u is stub else None

    assert recoverability_problems(conv, out, placeholder=declares,
                                   recover=lambda pid: b"x") == []
    assert "exact bytes" in recoverability_problems(conv, out, placeholder=declares,
                                                    recover=lambda pid: b"x!")[0]
    assert "no recover" in recoverability_problems(conv, out, placeholder=declares)[0]

    def lost(pid):
        raise KeyError(pid)

    assert "raised KeyError" in recoverability_problems(conv, out, placeholder=declares,
                                                        recover=lost)[0]


# ----------------------------------------------------------------- records and files


def test_report_names_the_invariants_of_the_workspace_vocabulary():
    report = check(tail_trimmer, examples=5)
    doc = report.to_dict()
    names = {inv.name for inv in INVARIANTS}
    assert set(CHECKED) <= names
    assert [i["name"] for i in doc["invariants"]] == list(CHECKED)
    assert all(i["statement"] and i["source"] for i in doc["invariants"])
    assert json.loads(json.dumps(doc)) == doc


def test_counterexample_file_round_trip(tmp_path):
    for protocol, conv in (("openai", [USER]),
                           ("anthropic", _anth([USER], system="s"))):
        v = Violation("budget", "over", 5, conv, conv, protocol=protocol, confirmed=True)
        back = read_violation(v.write(tmp_path / f"{protocol}.json"))
        assert back == v
    (tmp_path / "plain.json").write_text(json.dumps({"messages": [USER]}))
    with pytest.raises(DomainError, match="conformance"):
        read_violation(tmp_path / "plain.json")


# ----------------------------------------------------------------- door checks


def _trim(messages, budget, count):
    return messages


@pytest.mark.parametrize(
    "kwargs,param",
    [
        ({"protocol": "Gemini"}, "protocol"),
        ({"examples": 0}, "examples"),
        ({"examples": True}, "examples"),
        ({"seed": -1}, "seed"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"budgets": []}, "budgets"),
        ({"budgets": [0]}, "budgets"),
        ({"budgets": "100"}, "budgets"),
        ({"counter": 3}, "counter"),
        ({"strict": "yes"}, "strict"),
    ],
)
def test_check_refuses_bad_arguments(kwargs, param):
    with pytest.raises(DomainError, match=f"`{param}`"):
        check(_trim, **kwargs)


def test_check_refuses_bad_managers():
    with pytest.raises(ManagerSignatureError, match="callable"):
        check(42)
    with pytest.raises(ManagerSignatureError, match="adapter instance"):
        check(WorkspaceAdapter(100_000))
    with pytest.raises(ManagerSignatureError, match="positional"):
        check(lambda a, b: a)


def test_counter_choices():
    """The counter: the default cl100k_base, any Tokenizer, a name, a callable."""
    conv = [USER]
    assert check(_trim, examples=3, counter=get_tokenizer("approx"),
                 budgets=[10_000]).counter.startswith("approx")
    assert check(_trim, examples=3, counter=lambda ms: 1, budgets=[1]).ok
    over = check(_trim, examples=3, counter=lambda ms: 10**6, budgets=[10])
    assert over.violation("budget") is not None
    assert as_counter("cl100k_base", "openai")(conv) == COUNT(conv)


# ----------------------------------------------------------------- the reference engine


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "responses"])
def test_workspace_adapter_passes(protocol):
    """vista-lab's own Workspace keeps every invariant on the sampled
    conversations (30 here; the 2,000-conversation run is the benchmark's),
    the pending one included: its management rendering keeps the batch still
    waiting for results (``keep_pending``)."""
    report = check(WorkspaceAdapter, protocol=protocol, examples=30, seed=3)
    assert report.ok, [v.to_dict() for v in report.violations]


class _NoDeclarations(WorkspaceAdapter):
    placeholder = None  # type: ignore[assignment]


class _WrongBytes(WorkspaceAdapter):
    def recover(self, block_id):
        return super().recover(block_id) + b"!"


@pytest.mark.slow
def test_workspace_adapter_declarations_matter():
    """Without its declarations the Workspace's dashboard is an undeclared
    message (fidelity); with a recover that returns other bytes, offloaded
    results are not recoverable."""
    assert check(_NoDeclarations, examples=5).violation("fidelity") is not None
    report = check(_WrongBytes, examples=30, seed=0)
    v = report.violation("recoverability")
    assert v is not None and "exact bytes" in v.message


def test_a_summarising_trimmer_declares_its_summary():
    """Fidelity exempts what a manager declares: a trimmer that puts a summary
    in place of what it cut passes once it carries a ``placeholder``
    attribute, and fails without it."""
    summary_text = "[summary of earlier turns]"

    def summarise(messages, budget, count):
        kept = tail_trimmer(messages, budget, count)
        note = {"role": "system", "content": summary_text}
        return [note, *kept] if count([note, *kept]) <= budget else kept

    undeclared = check(summarise, examples=20)
    assert undeclared.violation("fidelity") is not None

    def declared(messages, budget, count):
        return summarise(messages, budget, count)

    declared.placeholder = lambda unit: () if unit.get("content") == summary_text else None
    assert check(declared, examples=20).ok
