"""Anthropic server tools: a ``server_tool_use`` (or ``mcp_tool_use``) block and
its result block sit in the same assistant turn, stay together and in order,
and are not answered by a user tool_result (Anthropic server tools; block
shapes of the ``anthropic`` SDK's ``ServerToolUseBlockParam`` and siblings).

The engine registers them inside their assistant message, renders them back
byte for byte with ``render(format="anthropic")`` and archives or restores the
message whole; the checker flags a request that separates a use from its
result under ``protocol.server-tool-split``; the conformance generator draws
them.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from vistalab.workspace import Workspace, anthropic_problems
from vistalab.workspace._errors import TraceError

from vistalab.conformance import check, conversations, request_problems, tail_trimmer
from vistalab.conformance._ids import classify

_RESULTS = {"web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
            "bash_code_execution_tool_result", "mcp_tool_result"}

CONV = {"system": "Be brief.", "messages": [
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me search."},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
         "input": {"query": "paris weather"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "url": "https://example.com/w", "title": "Weather",
             "encrypted_content": "EqgfCioIARgB", "page_age": "1 day"}]},
        {"type": "server_tool_use", "id": "srvtoolu_02", "name": "code_execution",
         "input": {"code": "print(1+1)"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_02",
         "content": {"type": "code_execution_result", "stdout": "2\n", "stderr": "",
                     "return_code": 0, "content": []}},
        {"type": "mcp_tool_use", "id": "mcptoolu_03", "name": "lookup", "server_name": "wiki",
         "input": {"q": "Paris"}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_03", "is_error": False,
         "content": [{"type": "text", "text": "Capital of France"}]},
        {"type": "text", "text": "It is sunny."},
        {"type": "tool_use", "id": "toolu_04", "name": "save", "input": {"x": 1}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_04",
                                  "content": "ok"}]},
]}


def _dump(obj):
    return json.dumps(obj, ensure_ascii=False)


def _split(conv, i=1, drop=None, move=None):
    c = copy.deepcopy(conv)
    content = c["messages"][i]["content"]
    if drop is not None:
        del content[drop]
    if move is not None:
        content.insert(0, content.pop(move))
    return c


def test_the_example_is_a_valid_request():
    assert anthropic_problems(CONV) == []
    assert request_problems(CONV, "anthropic") == []


def test_the_engine_renders_server_tools_back_byte_identical():
    ws = Workspace(10_000)
    ws.register_messages(CONV)
    req = ws.render(format="anthropic").as_request()
    assert _dump(req["messages"][1]) == _dump(CONV["messages"][1])
    assert anthropic_problems(req) == []


def test_archive_and_restore_keep_use_and_result_together():
    ws = Workspace(10_000)
    ids = ws.register_messages(CONV)
    ws.archive(ids[2])  # the assistant turn (ids: system, user, assistant, result)
    req = ws.render(format="anthropic").as_request()
    types = [b.get("type") for m in req["messages"] for b in m["content"]]
    assert not {"server_tool_use", "mcp_tool_use", *_RESULTS} & set(types)
    assert anthropic_problems(req) == []
    ws.restore(ids[2])
    req = ws.render(format="anthropic").as_request()
    assert _dump(req["messages"][1]) == _dump(CONV["messages"][1])


def test_save_and_load_keep_the_originals(tmp_path):
    ws = Workspace(10_000)
    ws.register_messages(CONV)
    before = _dump(ws.render(format="anthropic").as_request()["messages"])
    path = tmp_path / "ws.json"
    ws.save(path)
    back = Workspace.load(path)
    assert _dump(back.render(format="anthropic").as_request()["messages"]) == before


def test_a_server_block_in_a_user_turn_is_refused():
    bad = {"messages": [{"role": "user", "content": [CONV["messages"][1]["content"][2]]}]}
    with pytest.raises(TraceError, match="belongs in an assistant turn"):
        Workspace(10_000).register_messages(bad)


@pytest.mark.parametrize("name,conv", [
    ("result without its use", _split(CONV, drop=1)),
    ("use without its result", _split(CONV, drop=2)),
    ("result before its use", _split(CONV, move=2)),
    ("result moved to the user turn", {**CONV, "messages": [
        *_split(CONV, drop=2)["messages"][:2],
        {"role": "user", "content": [*CONV["messages"][2]["content"],
                                     CONV["messages"][1]["content"][2]]}]}),
])
def test_the_checker_flags_a_split_pair(name, conv):
    problems = anthropic_problems(conv)
    assert problems, name
    assert "protocol.server-tool-split" in {classify("protocol", p) for p in problems}, problems


@given(conversations("anthropic"))
def test_generated_server_tools_pair_up(conv):
    # (a conversation may end with a pending call: only the pairing rule is asserted)
    assert not [p for p in request_problems(conv, "anthropic")
                if classify("protocol", p) == "protocol.server-tool-split"]
    for m in conv["messages"]:
        if m["role"] != "assistant" or not isinstance(m["content"], list):
            continue
        types = [b["type"] for b in m["content"]]
        for j, t in enumerate(types):
            if t in ("server_tool_use", "mcp_tool_use"):
                assert types[j + 1] in _RESULTS
                assert m["content"][j + 1]["tool_use_id"] == m["content"][j]["id"]


def test_the_generator_draws_every_server_tool():
    seen: set[str] = set()

    @settings(max_examples=100)  # derandomized (ci profile): a fixed sample
    @given(conversations("anthropic"))
    def collect(conv):
        for m in conv["messages"]:
            if isinstance(m["content"], list):
                seen.update(b["type"] for b in m["content"])

    collect()
    assert _RESULTS <= seen, _RESULTS - seen


def use_dropper(request, budget, count):
    """Drops every server_tool_use block and keeps its result."""
    out = copy.deepcopy(tail_trimmer(request, budget, count))
    for m in out["messages"]:
        if m["role"] == "assistant" and isinstance(m["content"], list):
            m["content"] = [b for b in m["content"] if b.get("type") != "server_tool_use"]
    return out


def test_a_manager_keeping_results_without_their_use_is_caught_twice():
    report = check(use_dropper, protocol="anthropic", examples=40, seed=3)
    ids = {v.check for v in report.violations}
    assert {"protocol.server-tool-split", "closure.undefined-id"} <= ids, ids


def test_the_engine_never_splits_a_server_tool():
    from vistalab.conformance import WorkspaceAdapter

    report = check(WorkspaceAdapter, protocol="anthropic", examples=40, seed=5)
    assert [(v.check, v.message) for v in report.violations] == []
