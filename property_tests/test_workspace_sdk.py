"""The provider SDKs' own objects at the workspace's doors ("Implementation
Details": the agent loop registers each model reply and tool result).

An agent loop written with the OpenAI Python SDK (``ChatCompletionMessage``,
``ChatCompletionMessageToolCall``) or the Anthropic SDK (``Message``,
``TextBlock``, ``ToolUseBlock``) runs against ``Workspace`` unchanged, and ends
in the same state (same canonical ``state_hash``) as the same loop written with
plain dicts. The SDK objects are real ones, built locally (no network).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

openai_chat = pytest.importorskip("openai.types.chat")
anthropic_types = pytest.importorskip("anthropic.types")

from vistalab.workspace import (  # noqa: E402
    Workspace,
    WorkspaceArgumentError,
    WorkspaceService,
    replay_trace,
)
from vistalab.workspace._sdk import plain_sdk  # noqa: E402
from vistalab.workspace._validate import _tool_calls_iv  # noqa: E402

ChatCompletionMessage = openai_chat.ChatCompletionMessage
ToolCall = openai_chat.ChatCompletionMessageToolCall
Function = openai_chat.chat_completion_message_tool_call.Function

#: A scripted model: each turn calls some tools (name, arguments) or answers in
#: text; the tool outputs are long enough that the budget guard has work to do.
SCRIPT: list[list[tuple[str, dict[str, Any]]] | str] = [
    [("search", {"q": "vista"}), ("search", {"q": "context"})],
    [("context_workspace_archive", {"block_id": "B4", "replacement": "search hits, archived"})],
    [("read_file", {"path": "notes.md"})],
    "The answer is 42.",
]


def run_tool(name: str, args: dict[str, Any]) -> str:
    return f"{name}({json.dumps(args, sort_keys=True)}) -> " + "result line\n" * 40


def _workspace() -> Workspace:
    return Workspace(2500, tokenizer="approx")


# --------------------------------------------------------------------------- OpenAI


def _openai_reply(turn: int) -> Any:
    """``response.choices[0].message`` of turn ``turn``, as the SDK builds it."""
    step = SCRIPT[turn]
    if isinstance(step, str):
        return ChatCompletionMessage(role="assistant", content=step)
    calls = [ToolCall(id=f"call_{turn}_{i}", type="function",
                      function=Function(name=name, arguments=json.dumps(args)))
             for i, (name, args) in enumerate(step)]
    return ChatCompletionMessage(role="assistant", content=None, tool_calls=calls)


def _openai_loop(as_dicts: bool) -> Workspace:
    """The README's loop, written against the SDK's attribute API (``call.id``,
    ``call.function.name``); ``as_dicts`` hands the engine ``model_dump()`` dicts
    instead of the objects, everything else equal."""
    ws = _workspace()
    ws.register_system("You are a careful research agent.")
    ws.register_user("Find the answer.")
    for turn in range(len(SCRIPT)):
        ws.render()
        reply = _openai_reply(turn)
        if not reply.tool_calls:
            ws.register_message(reply.model_dump() if as_dicts else reply)
            break
        calls = reply.tool_calls
        ws.register_tool_call([c.model_dump() for c in calls] if as_dicts else calls,
                              content=reply.content)
        for call in calls:
            name, args = call.function.name, call.function.arguments
            out = ws.gate(name)
            if out is None:
                out = (ws.dispatch(name, args) if name.startswith("context_workspace")
                       else run_tool(name, json.loads(args)))
            ws.register_tool_result(call.id, out)
    return ws


def test_openai_sdk_loop_runs_unchanged():
    """ChatCompletionMessage and ChatCompletionMessageToolCall objects are accepted by
    register_tool_call and register_message, and the run ends in the same state as
    the dict-based run (same blocks, events and canonical state_hash)."""
    with_objects, with_dicts = _openai_loop(False), _openai_loop(True)
    assert with_objects.state_hash() == with_dicts.state_hash()
    assert [b.id for b in with_objects.blocks] == [b.id for b in with_dicts.blocks]
    ops = [(e.op, e.ok) for e in with_objects.events]
    assert ("archive", True) in ops  # the agent's own context tool ran through dispatch
    assert with_objects.blocks[-1].content == "The answer is 42."
    json.dumps([e.args for e in with_objects.events])  # the log holds plain data only


def test_openai_message_with_tool_calls_registers_as_one_message():
    """register_message(ChatCompletionMessage with tool_calls) is register_tool_call."""
    ws = _workspace()
    ws.register_user("task")
    bid = ws.register_message(_openai_reply(0))
    block = ws.block(bid)
    assert block.call_ids == ("call_0_0", "call_0_1")
    assert block.call_names == ("search", "search")


def test_validator_alone_refuses_sdk_objects():
    """The door step is what accepts them: the tool-call validator by itself refuses
    an SDK object (so the loop test above can fail)."""
    with pytest.raises(WorkspaceArgumentError, match="item 0 must look like"):
        _tool_calls_iv(_openai_reply(0).tool_calls)


# ------------------------------------------------------------------------ Anthropic


def _anthropic_reply(turn: int) -> Any:
    """The SDK's ``Message`` of turn ``turn``."""
    step = SCRIPT[turn]
    blocks: list[Any]
    if isinstance(step, str):
        blocks = [anthropic_types.TextBlock(type="text", text=step)]
    else:
        blocks = [anthropic_types.TextBlock(type="text", text="Let me look.")]
        blocks += [anthropic_types.ToolUseBlock(type="tool_use", id=f"toolu_{turn}_{i}",
                                                name=name, input=args)
                   for i, (name, args) in enumerate(step)]
    return anthropic_types.Message(
        id=f"msg_{turn}", type="message", role="assistant", model="scripted", content=blocks,
        stop_reason="end_turn" if isinstance(step, str) else "tool_use", stop_sequence=None,
        usage=anthropic_types.Usage(input_tokens=1, output_tokens=1))


def _anthropic_loop(as_dicts: bool) -> Workspace:
    """The usual Anthropic loop: append ``{"role": "assistant", "content":
    response.content}`` (the SDK's blocks), then one user turn of tool_result blocks."""
    ws = _workspace()
    ws.register_messages([{"role": "user", "content": "Find the answer."}],
                         system="You are a careful research agent.")
    for turn in range(len(SCRIPT)):
        ws.render(format="anthropic")
        response = _anthropic_reply(turn)
        content = ([b.model_dump(exclude_none=True) for b in response.content] if as_dicts
                   else response.content)
        ws.register_messages([{"role": "assistant", "content": content}])
        uses = [b for b in response.content if b.type == "tool_use"]
        if not uses:
            break
        results = []
        for block in uses:
            out = ws.gate(block.name)
            if out is None:
                out = (ws.dispatch(block.name, block.input)
                       if block.name.startswith("context_workspace")
                       else run_tool(block.name, block.input))
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": out})
        ws.register_messages([{"role": "user", "content": results}])
    return ws


def test_anthropic_sdk_loop_runs_unchanged():
    """Anthropic TextBlock / ToolUseBlock objects inside the loop's own message
    dicts are accepted by register_messages; same final state as with dicts, and the
    Anthropic rendering gives back the blocks as the SDK wrote them."""
    with_objects, with_dicts = _anthropic_loop(False), _anthropic_loop(True)
    assert with_objects.state_hash() == with_dicts.state_hash()
    assert ("archive", True) in [(e.op, e.ok) for e in with_objects.events]
    rendered = with_objects.render(format="anthropic").messages
    assert rendered == with_dicts.render(format="anthropic").messages
    last = [m for m in rendered if m["role"] == "assistant"][-1]
    assert [(b["type"], b["text"]) for b in last["content"]] == [("text", "The answer is 42.")]


def test_anthropic_message_object_in_a_message_list():
    """A whole SDK ``Message`` (with its id, model, usage) stands for the assistant turn."""
    reply = _anthropic_reply(0)
    ws, ref = _workspace(), _workspace()
    tail = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b.id, "content": "ok"}
        for b in reply.content if b.type == "tool_use"]}]
    ws.register_messages([{"role": "user", "content": "task"}, reply, *tail])
    ref.register_messages([{"role": "user", "content": "task"},
                           {"role": "assistant",
                            "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                           *tail])
    assert ws.state_hash() == ref.state_hash()


# -------------------------------------------------------- replay, MCP, attribute shape


def _openai_trace(as_dicts: bool) -> list[Any]:
    trace: list[Any] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for turn in range(len(SCRIPT)):
        reply = _openai_reply(turn)
        trace.append(reply.model_dump() if as_dicts else reply)
        for call in reply.tool_calls or ():
            trace.append({"role": "tool", "tool_call_id": call.id,
                          "content": run_tool(call.function.name, {})})
    return trace


def test_trace_replay_from_python_takes_sdk_objects():
    """replay_trace (and load_trace) of an in-memory trace holding SDK messages."""
    a = replay_trace(_openai_trace(False), budget=2500, tokenizer="approx")
    b = replay_trace(_openai_trace(True), budget=2500, tokenizer="approx")
    assert a.state_hash == b.state_hash and len(a.turns) == len(b.turns)


def test_mcp_harness_register_takes_sdk_objects():
    """WorkspaceService.register (the MCP harness's door) with SDK messages."""
    pytest.importorskip("mcp")
    a, b = WorkspaceService(_workspace()), WorkspaceService(_workspace())
    assert a.register(_openai_trace(False)) == b.register(_openai_trace(True))
    assert a.workspace.state_hash() == b.workspace.state_hash()


def test_attribute_shape_without_model_dump():
    """Objects with the SDK's attributes but no model_dump (e.g. a loop's own
    namespaces, an older SDK) are read the same way."""
    call = SimpleNamespace(id="c1", type="function",
                           function=SimpleNamespace(name="search", arguments="{}"))
    ws, ref = _workspace(), _workspace()
    for w, msg in ((ws, SimpleNamespace(role="assistant", content=None, tool_calls=[call])),
                   (ref, {"role": "assistant", "content": None, "tool_calls": [
                       {"id": "c1", "type": "function",
                        "function": {"name": "search", "arguments": "{}"}}]})):
        w.register_user("task")
        w.register_message(msg)
        w.register_tool_result("c1", "out")
    assert ws.state_hash() == ref.state_hash()


def test_plain_input_is_passed_through_untouched():
    """Plain data comes back as the very same object (the validators see and name
    what the caller passed), also when it is malformed."""
    for value in ({"role": "user", "content": "x"}, [{"role": "user"}], ("a", 1), "text",
                  None, 3, [[[[[[[[[[[]]]]]]]]]]], {"tool_calls": [{"id": None}]}):
        assert plain_sdk(value) is value


def test_broken_model_dump_is_refused_naming_the_parameter():
    class Broken:
        role = "assistant"

        def model_dump(self, **kwargs: Any) -> Any:
            raise RuntimeError("boom")

    class NotADict:
        def model_dump(self, **kwargs: Any) -> Any:
            return ["not", "a", "dict"]

    ws = _workspace()
    with pytest.raises(WorkspaceArgumentError, match=r"message.*model_dump\(\) works.*boom"):
        ws.register_message(Broken())
    with pytest.raises(WorkspaceArgumentError, match=r"tool_calls.*returns a dict.*list"):
        ws.register_tool_call([NotADict()])
    assert ws.blocks == ()
