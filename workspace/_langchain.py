"""LangChain adapter: an existing LangChain / LangGraph agent adopts the
workspace as its message-list hook, in place of ``trim_messages``. Needs
``langchain-core`` (imported when the adapter is built).

Why this hook: every LangChain agent, from a hand-written loop to LangGraph's
``create_react_agent``, ends in "messages -> chat model"; a runnable on that
list (``trim_messages`` is the stock one) or the ``pre_model_hook`` is the one
place all of them share, so one adapter serves them all without patching a
model class. Usage::

    ctx = LangChainWorkspace(Workspace(128_000, store=DiskStore("archive")))
    tools = ctx.wrap_tools(my_tools) + ctx.context_tools()
    # (context_tools() adds read_path when the Workspace was built with
    # include_read_path_tool=True: agents without a file tool recover through it)
    model = chat_model.bind_tools(tools)
    chain = ctx.as_runnable() | model                  # history in, reply out
    # or: create_react_agent(chat_model, tools, pre_model_hook=ctx.pre_model_hook)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vistalab._core import check_depth

from ._errors import ProtocolOrderError, WorkspaceArgumentError

__all__ = ["LangChainWorkspace"]


class LangChainWorkspace:
    """A workspace behind LangChain's message list.

    The agent's full history (LangChain messages, growing by appends) is
    registered incrementally; what goes to the model is the workspace's
    rendering (within budget, with the dashboard), converted back to
    LangChain messages.

    Parameters
    ----------
    workspace : Workspace
        The workspace; its budget, tokenizer and store apply.

    Raises
    ------
    MissingExtraError
        ``langchain-core`` is not installed (``pip install 'vista-lab[agents]'``).
    """

    def __init__(self, workspace: Any) -> None:
        from vistalab._core import import_optional

        import_optional("langchain_core", "the LangChain adapter")
        self.workspace = workspace
        self._seen: list[dict[str, Any]] = []  # history registered so far (OpenAI form)

    # ------------------------------------------------------------ messages
    def sync(self, history: Sequence[Any]) -> list[str]:
        """Register the messages of ``history`` not registered yet (Section
        "Context Stream": the stream only grows by appends).

        Parameters
        ----------
        history : sequence
            The conversation's LangChain messages (or message dicts), the whole
            list so far: it may only have grown by appends since the last call.

        Returns
        -------
        list of str
            The block IDs of the newly registered messages.

        Raises
        ------
        WorkspaceArgumentError
            If ``history`` is not a list of LangChain messages.
        ProtocolOrderError
            ``history`` no longer starts with what was registered (a message
            was edited or removed): the workspace only grows by appends.
        """
        from langchain_core.messages import convert_to_openai_messages

        if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
            raise WorkspaceArgumentError("history", history, "must be a list of messages",
                                         "pass the conversation's message list")
        check_depth("history", history, error=WorkspaceArgumentError)
        try:
            plain = convert_to_openai_messages(list(history))
        except (NotImplementedError, ValueError, TypeError, KeyError) as exc:
            raise WorkspaceArgumentError("history", history, "must hold LangChain messages "
                                         f"(or message dicts) ({' '.join(str(exc).split())[:120]})",
                                         "pass e.g. [HumanMessage('hi')]") from None
        n = len(self._seen)
        if plain[:n] != self._seen:
            first = next(
                (i for i, (a, b) in enumerate(zip(plain, self._seen, strict=False)) if a != b),
                len(plain),
            )
            raise ProtocolOrderError(
                f"history message {first} differs from what the workspace registered; the "
                "workspace grows by appends only (archive or delete through its tools instead "
                "of editing the history)"
            )
        ids = [self.workspace.register_message(m) for m in plain[n:]]
        self._seen = plain
        return ids

    def messages(self, history: Sequence[Any]) -> list[Any]:
        """``sync(history)``, then the rendering as LangChain messages.

        Parameters
        ----------
        history : sequence
            The conversation's LangChain messages (or message dicts), the whole
            list so far: it may only have grown by appends since the last call.

        Returns
        -------
        list
            The rendering's messages (within budget, with the dashboard) as
            LangChain message objects.

        Raises
        ------
        WorkspaceArgumentError
            If ``history`` is not a list of LangChain messages.
        ProtocolOrderError
            ``history`` no longer starts with what was registered (a message
            was edited or removed): the workspace only grows by appends.
        """
        from langchain_core.messages import convert_to_messages

        self.sync(history)
        return list(convert_to_messages(self.workspace.render().as_request()["messages"]))

    def as_runnable(self) -> Any:
        """A ``Runnable`` from the history (a list, or a dict with ``messages``)
        to the rendered message list; put it in front of the chat model.

        Returns
        -------
        langchain_core.runnables.RunnableLambda
            ``vista_workspace``, calling :meth:`messages` on its input (an input
            of another shape is refused with ``WorkspaceArgumentError``).
        """
        from langchain_core.runnables import RunnableLambda

        def hook(value: Any) -> list[Any]:
            history = value.get("messages") if isinstance(value, Mapping) else value
            if not isinstance(history, Sequence) or isinstance(history, str):
                raise WorkspaceArgumentError(
                    "input", value, "must be a message list or a dict with 'messages'"
                )
            return self.messages(history)

        return RunnableLambda(hook, name="vista_workspace")

    def pre_model_hook(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """LangGraph ``create_react_agent(pre_model_hook=...)``: the model sees the
        rendering (``llm_input_messages``); the graph's history is left as is.

        Parameters
        ----------
        state : Mapping
            The graph state, with its ``messages``.

        Returns
        -------
        dict
            ``{"llm_input_messages": self.messages(state["messages"])}``.

        Raises
        ------
        WorkspaceArgumentError
            If ``state`` is not a mapping with ``messages``.
        """
        if not isinstance(state, Mapping) or "messages" not in state:
            raise WorkspaceArgumentError("state", state, "must be a LangGraph state with "
                                         "'messages'", "pass the graph state")
        return {"llm_input_messages": self.messages(state["messages"])}

    # ------------------------------------------------------------ tools
    def context_tools(self, *, read: bool | None = None) -> list[Any]:
        """The paper's context tools as LangChain tools, bound to the workspace.

        Every call goes through the engine's one tool path (a bad call comes
        back as the engine's error text, never as an exception in the loop).

        Parameters
        ----------
        read : bool or None
            Also give the agent the engine's ``read_path`` tool (exact payload
            bytes by the path a handle shows, optionally ``bytes=``, ``lines=``
            or ``member=``), for agents without a file tool of their own.
            None (default) follows the workspace: offered exactly when it was
            built with ``include_read_path_tool=True``, the option that puts the
            tool's schema in the rendering, so the tools bound to the model are
            the tools the budget counts. In the paper recovery is an ordinary
            file read, so it is not on by default.

        Returns
        -------
        list of langchain_core.tools.StructuredTool
            ``context_workspace_archive`` and ``context_workspace_delete`` (Section
            "Meta Context Tool"), then ``read_path`` when offered.

        Raises
        ------
        WorkspaceArgumentError
            ``read=True`` on a workspace without ``include_read_path_tool``
            (its schema would not be counted in the budget), or ``read`` not a
            bool or None.
        """
        from langchain_core.tools import StructuredTool

        from ._mcp import _ARCHIVE_DOC, _DELETE_DOC
        from ._protocol import READ_PATH_TOOL

        ws = self.workspace
        exposed = bool(ws.config().get("include_read_path_tool"))
        if read is not None and not isinstance(read, bool):
            raise WorkspaceArgumentError("read", read, "must be True, False or None")
        if read and not exposed:
            raise WorkspaceArgumentError(
                "read",
                read,
                "needs a workspace built with include_read_path_tool=True (the tool's schema "
                "is then part of every rendering and counted in the budget)",
                "build Workspace(..., include_read_path_tool=True), or leave read=None",
            )

        def context_workspace_archive(block_id: str, replacement: str = "") -> str:
            return str(ws.context_workspace_archive(block_id, replacement))

        def context_workspace_delete(block_id: str, reason: str) -> str:
            return str(ws.context_workspace_delete(block_id, reason))

        tools = [
            StructuredTool.from_function(context_workspace_archive, description=_ARCHIVE_DOC),
            StructuredTool.from_function(context_workspace_delete, description=_DELETE_DOC),
        ]
        if read is None and exposed or read:
            (schema,) = (
                t["function"] for t in ws.tool_schemas() if t["function"]["name"] == READ_PATH_TOOL
            )

            def read_path(path: str, selector: str = "") -> str:
                return str(ws.dispatch(READ_PATH_TOOL, {"path": path, "selector": selector}))

            # The engine's own schema (name, description, parameters): what the
            # model is given is what the rendering counts.
            tools.append(
                StructuredTool(
                    name=READ_PATH_TOOL,
                    description=schema["description"],
                    args_schema=schema["parameters"],
                    func=read_path,
                )
            )
        return tools

    def wrap_tools(self, tools: Sequence[Any]) -> list[Any]:
        """The agent's own tools, gated: in overflow mode a call returns the
        engine's refusal notice instead of running (eq. overflow).

        Parameters
        ----------
        tools : sequence of langchain_core.tools.BaseTool
            The agent's tools.

        Returns
        -------
        list of langchain_core.tools.StructuredTool
            One per tool, same name, description and arguments, gated by the
            workspace.

        Raises
        ------
        WorkspaceArgumentError
            If an element is not a LangChain tool.
        """
        from langchain_core.tools import BaseTool, StructuredTool

        out = []
        for tool in tools:
            if not isinstance(tool, BaseTool):
                raise WorkspaceArgumentError(
                    "tools", tool, "must be LangChain tools (BaseTool)", "wrap functions with @tool"
                )
            out.append(
                StructuredTool(
                    name=tool.name,
                    description=tool.description,
                    args_schema=tool.args_schema if tool.args_schema is not None else {},
                    func=self._gated(tool),
                )
            )
        return out

    def _gated(self, tool: Any) -> Any:
        def run(**kwargs: Any) -> Any:
            refusal = self.workspace.gate(tool.name)
            if refusal is not None:
                return refusal
            return tool.invoke(kwargs)

        return run
