"""The LangChain adapter, driven by a scripted chat model:
an ordinary LangChain tool loop adopts the workspace in a few lines and the
paper's loop holds (Algorithm 1: dashboard every turn, budget B, task tools
refused in overflow, archive to exact payloads)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from vistalab.workspace import (  # noqa: E402
    LangChainWorkspace,
    ProtocolOrderError,
    Workspace,
    protocol_problems,
)


class ScriptedChatModel(BaseChatModel):
    """Replies from a fixed script and records every message list it was given."""

    script: list[AIMessage]
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.script[len(self.seen) - 1]
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _call(i: int, name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": f"c{i}", "name": name, "args": args}])


@tool
def fetch(page: int) -> str:
    """Fetch one page of the log."""
    return f"page {page} line\n" * 300



def _run_agent(chain, tools, history: list) -> dict:
    """The agent loop of a LangChain app: invoke the chain, run each tool call and
    append its ToolMessage, until the model answers; returns each call's output."""
    outputs = {}
    while True:
        ai = chain.invoke(history)
        history.append(ai)
        if not ai.tool_calls:
            return outputs
        for call in ai.tool_calls:
            out = tools[call["name"]].invoke(call["args"])
            outputs[call["id"]] = out
            history.append(ToolMessage(out, tool_call_id=call["id"]))

def test_scripted_agent_loop_through_the_adapter():
    """a plain LangChain loop (runnable | model, tools by
    name) gets the workspace with three lines: every model input is the
    rendering (within B, protocol-valid, dashboard last); a task tool is
    refused while the context overflows; the archive tool moves the exact
    bytes out; the answer ends the loop."""
    ws = Workspace(3000, tokenizer="approx")
    ctx = LangChainWorkspace(ws)  # the three adoption lines
    tools = {t.name: t for t in ctx.wrap_tools([fetch]) + ctx.context_tools()}
    model = ScriptedChatModel(
        script=[
            _call(1, "fetch", page=1),
            _call(2, "fetch", page=2),
            _call(3, "fetch", page=3),
            _call(4, "fetch", page=4),  # refused: the context overflows
            _call(5, "context_workspace_archive", block_id="B4", replacement="page 1"),
            _call(6, "fetch", page=4),
            AIMessage("The error is on page 3."),
        ],
        seen=[],
    )
    chain = ctx.as_runnable() | model

    history: list[BaseMessage] = [SystemMessage("You read logs."), HumanMessage("Find the error.")]
    outputs = _run_agent(chain, tools, history)

    assert history[-1].content == "The error is on page 3."
    assert len(model.seen) == 7
    modes = []
    for seen in model.seen:
        plain = convert_to_openai_messages(seen)
        assert protocol_problems(plain) == []
        assert plain[-1]["content"].startswith("<context_workspace_status>")
        modes.append("## OVERFLOW" in plain[-1]["content"])
    assert outputs["c4"].startswith("[refused] fetch is disabled")
    assert True in modes and modes[0] is False
    assert outputs["c5"].endswith("B4.txt")
    assert ws.recover("B4") == fetch.invoke({"page": 1}).encode()
    assert outputs["c6"] == fetch.invoke({"page": 4})
    assert ws.render().tokens <= 3000


def test_edited_history_is_refused():
    """The workspace grows by appends: an edited earlier message is refused
    with an error that names its index and the fix."""
    ctx = LangChainWorkspace(Workspace(3000, tokenizer="approx"))
    ctx.sync([HumanMessage("task"), AIMessage("step")])
    with pytest.raises(ProtocolOrderError, match="history message 1 differs"):
        ctx.sync([HumanMessage("task"), AIMessage("another step")])


def test_pre_model_hook_gives_the_rendering():
    """LangGraph's pre_model_hook contract: the model input is the rendering,
    the graph's own history is untouched."""
    ctx = LangChainWorkspace(Workspace(3000, tokenizer="approx"))
    state = {"messages": [HumanMessage("task")]}
    out = ctx.pre_model_hook(state)
    assert list(out) == ["llm_input_messages"]
    assert out["llm_input_messages"][-1].content.startswith("<context_workspace_status>")
    assert len(state["messages"]) == 1


def test_scripted_agent_without_a_file_tool_recovers_through_read_path():
    """Audit item 4 (paper: recovery is read_path(h, q); Implementation Details,
    context tools): a LangChain agent without a file tool gets the engine's
    read tool from ``context_tools()`` when the workspace exposes it
    (``include_read_path_tool=True``, so its schema is counted in the budget),
    archives a page and reads part of it back byte-exact through the engine's
    one tool path; a bad read comes back as the engine's error text."""
    ws = Workspace(3000, tokenizer="approx", include_read_path_tool=True)
    ctx = LangChainWorkspace(ws)
    offered = ctx.wrap_tools([fetch]) + ctx.context_tools()
    assert [t.name for t in offered] == [
        "fetch",
        "context_workspace_archive",
        "context_workspace_delete",
        "read_path",
    ]
    (engine_schema,) = (t for t in ws.tools if t["function"]["name"] == "read_path")
    assert offered[-1].description == engine_schema["function"]["description"]
    tools = {t.name: t for t in offered}
    path = f"{ws.store.root}/B3.txt"  # B1 task, B2 the call, B3 its result
    model = ScriptedChatModel(
        script=[
            _call(1, "fetch", page=1),
            _call(2, "context_workspace_archive", block_id="B3", replacement="page 1"),
            _call(3, "read_path", path=path, selector="lines=2-3"),
            _call(4, "read_path", path="/etc/passwd"),
            AIMessage("Page 1 repeats one line."),
        ],
        seen=[],
    )
    chain = ctx.as_runnable() | model
    history: list[BaseMessage] = [HumanMessage("Read page 1, then free it.")]
    outputs = _run_agent(chain, tools, history)
    assert outputs["c2"] == path
    page = fetch.invoke({"page": 1})
    assert outputs["c3"] == "".join(page.splitlines(keepends=True)[1:3])
    assert outputs["c4"].startswith("Error:") and "outside the archive folder" in outputs["c4"]
    for seen in model.seen:
        assert protocol_problems(convert_to_openai_messages(seen)) == []
    assert ws.render().tokens <= 3000


def test_read_tool_follows_the_workspace_and_the_mcp_name_works():
    """Audit item 4: ``context_tools()`` offers the read tool only when the
    workspace counts its schema (``read=True`` otherwise names the fix);
    ``dispatch`` accepts the MCP server's name ``context_workspace_read`` for
    the same read, and without the option explains how to enable it."""
    from vistalab.workspace import WorkspaceArgumentError

    plain = Workspace(3000, tokenizer="approx")
    ctx = LangChainWorkspace(plain)
    assert [t.name for t in ctx.context_tools()] == [
        "context_workspace_archive",
        "context_workspace_delete",
    ]
    with pytest.raises(WorkspaceArgumentError, match=r"`read`.*include_read_path_tool=True"):
        ctx.context_tools(read=True)
    assert "include_read_path_tool=True" in plain.dispatch("context_workspace_read", {"path": "x"})
    ws = Workspace(3000, tokenizer="approx", include_read_path_tool=True)
    ws.register_user("task")
    ws.register_user("alpha\nbeta\n" * 50)
    path = ws.context_workspace_archive("B2")
    got = ws.dispatch("context_workspace_read", {"path": path, "selector": "lines=2-2"})
    assert got == "beta\n"
    assert [t.name for t in LangChainWorkspace(ws).context_tools(read=False)] == [
        "context_workspace_archive",
        "context_workspace_delete",
    ]
