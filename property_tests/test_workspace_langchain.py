"""The LangChain adapter (issue 14, item 5), driven by a scripted chat model:
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


def test_scripted_agent_loop_through_the_adapter():
    """Issue 14 item 5: a plain LangChain loop (runnable | model, tools by
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
    outputs = {}
    while True:
        ai = chain.invoke(history)
        history.append(ai)
        if not ai.tool_calls:
            break
        for call in ai.tool_calls:
            out = tools[call["name"]].invoke(call["args"])
            outputs[call["id"]] = out
            history.append(ToolMessage(out, tool_call_id=call["id"]))

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
