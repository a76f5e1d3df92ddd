"""Anthropic server tools in the engine's Anthropic format.

A server tool (web search, web fetch, code execution, an MCP connector tool)
runs on Anthropic's side: the assistant message the API returns holds the
``server_tool_use`` (or ``mcp_tool_use``) block and, later in the same message,
the result block that answers it (``web_search_tool_result``,
``code_execution_tool_result``, ...; ``mcp_tool_result``). No user
``tool_result`` answers it. So the engine keeps both inside the assistant
message they came in (one unit: archived, trimmed or dropped as a whole, as
Methodology, 'Structure preservation' asks of a call and its result), projects
them to text for counting (:data:`SERVER_PROJECTION_RULES`) and renders the
original blocks back byte for byte through the codec. Block and field names
follow the Anthropic Messages API (``anthropic.types.ServerToolUseBlockParam``,
``WebSearchToolResultBlockParam``, ``CodeExecutionToolResultBlockParam``,
``BashCodeExecutionToolResultBlockParam``, ``WebFetchToolResultBlockParam``;
``anthropic.types.beta.BetaMCPToolUseBlockParam``,
``BetaRequestMCPToolResultBlockParam``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import TraceError

__all__ = [
    "SERVER_USE_BLOCKS",
    "SERVER_RESULT_BLOCKS",
    "SERVER_BLOCKS",
    "SERVER_PROJECTION_RULES",
    "server_tool_problems",
]

#: Blocks that start a server-side tool call (they define an id).
SERVER_USE_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
#: Blocks that carry a server-side tool's result (their ``tool_use_id`` names a use).
SERVER_RESULT_BLOCKS = frozenset({
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "mcp_tool_result",
})
SERVER_BLOCKS = SERVER_USE_BLOCKS | SERVER_RESULT_BLOCKS
#: What the engine stores and counts for each server tool block (the original
#: block is kept by the codec and rendered back unchanged).
SERVER_PROJECTION_RULES: dict[str, str] = {
    "server_tool_use": "'<server_tool_use id=ID name=NAME>' + compact JSON of input + "
    "'</server_tool_use>' in the assistant content; mcp_tool_use the same with "
    "server=SERVER_NAME",
    "*_tool_result": "'<TYPE tool_use_id=ID>' + compact JSON of content + '</TYPE>' in the "
    "assistant content (web_search, web_fetch, code_execution, bash_code_execution, "
    "text_editor_code_execution, tool_search, mcp)",
}


def _json(value: Any, where: str, field: str) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError) as exc:
        raise TraceError(None, f"{where}: {field} must be plain JSON ({exc})") from None


def project_server_block(b: Mapping[str, Any], where: str) -> str:
    """The text the engine counts for one server tool block.

    Parameters
    ----------
    b : mapping
        A block whose ``type`` is in :data:`SERVER_BLOCKS`.
    where : str
        Where it is, for the error.

    Returns
    -------
    str
        Its projection (:data:`SERVER_PROJECTION_RULES`).

    Raises
    ------
    TraceError
        A use without a string ``id`` and ``name`` or an object ``input``; a
        result without a string ``tool_use_id``.
    """
    t = b.get("type")
    if t in SERVER_USE_BLOCKS:
        if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str):
            raise TraceError(None, f"{where}: {t} needs string 'id' and 'name'")
        if not isinstance(b.get("input"), Mapping):
            raise TraceError(None, f"{where}: {t} 'input' must be an object (got "
                             f"{type(b.get('input')).__name__})")
        server = f" server={b['server_name']}" if t == "mcp_tool_use" else ""
        return (f"<{t} id={b['id']} name={b['name']}{server}>"
                f"{_json(b['input'], where, 'input')}</{t}>")
    if not isinstance(b.get("tool_use_id"), str):
        raise TraceError(None, f"{where}: {t} needs a string 'tool_use_id'")
    return f"<{t} tool_use_id={b['tool_use_id']}>{_json(b.get('content'), where, 'content')}</{t}>"


def server_tool_problems(i: int, content: Sequence[Mapping[str, Any]]) -> list[str]:
    """The server tool pairing rule for assistant message ``i``: each
    ``server_tool_use``/``mcp_tool_use`` is answered by exactly one result block
    later in the same message, and each result block answers a use before it
    in that message (the API returns them together; a result elsewhere, or a
    use without its result, is a request the API did not produce).

    Parameters
    ----------
    i : int
        The message's index.
    content : sequence of mapping
        Its blocks.

    Returns
    -------
    list of str
        One problem per broken pair, ``[]`` when all pair up.
    """
    problems = []
    open_uses: dict[Any, int] = {}
    answered: set[Any] = set()
    for j, b in enumerate(content):
        t = b.get("type")
        if t in SERVER_USE_BLOCKS:
            open_uses[b.get("id")] = j
        elif t in SERVER_RESULT_BLOCKS:
            uid = b.get("tool_use_id")
            if uid not in open_uses or uid in answered:
                problems.append(f"message {i} block {j}: server tool result {t} for "
                                f"{str(uid)[:60]!r} follows no unanswered server tool use "
                                "of its message")
            answered.add(uid)
    for uid, j in open_uses.items():
        if uid not in answered:
            problems.append(f"message {i} block {j}: server tool use {str(uid)[:60]!r} has no "
                            "result block after it in its message")
    return problems
