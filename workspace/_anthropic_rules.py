"""The Anthropic Messages API's request rules (:func:`anthropic_problems`):
what the engine's guard and the conformance suite check an Anthropic request
against (Anthropic Messages API reference, 'messages', tool use and extended
thinking; server tools, :mod:`._server_tools`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vistalab._core import check_depth, short_repr

from ._errors import WorkspaceArgumentError
from ._server_tools import SERVER_BLOCKS, server_tool_problems

__all__ = ["anthropic_problems"]

#: The Messages API's rule for a tool (and ``tool_use``) name.
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: The Messages API's pattern for a ``tool_use`` id.
_ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]+")


def _has_text(text: Any) -> bool:
    """A text block's text has non-whitespace characters (the Messages API's rule)."""
    return isinstance(text, str) and bool(text.strip())


def anthropic_problems(request: Mapping[str, Any]) -> list[str]:
    """Everything that makes ``request`` an invalid Anthropic Messages request.

    Checks: roles are user/assistant, alternate, and start with user; no
    empty turn, no empty or whitespace-only text block; every tool_use is answered by exactly one
    tool_result in the immediately following user turn, and tool results lead
    that turn; no tool_result elsewhere; thinking blocks only in assistant
    turns, before that turn's tool_use blocks; every server tool use
    (``server_tool_use``, ``mcp_tool_use``) answered by exactly one result block
    later in its own assistant turn, and no server tool block in a user turn;
    tool_use ids unique and
    matching the API's pattern ``^[A-Za-z0-9_-]+$``, each with a ``name``
    matching ``^[a-zA-Z0-9_-]{1,64}$`` and an object ``input``; every tool
    schema's ``name`` matching it too; every block an object with a ``type``;
    at most four ``cache_control`` breakpoints; nesting at most
    :data:`vistalab._core.MAX_JSON_DEPTH` deep. Returns an empty list if valid.

    Parameters
    ----------
    request : mapping
        ``{"system": ..., "messages": [...]}`` (``tools`` optional).

    Returns
    -------
    list of str
        One line per problem; ``[]`` if valid.

    Raises
    ------
    WorkspaceArgumentError
        ``request`` is not a mapping, or is nested too deeply.
    """
    if not isinstance(request, Mapping):
        raise WorkspaceArgumentError("request", request, "must be an Anthropic Messages "
                                     "request (a mapping with 'messages')",
                                     "pass e.g. workspace.render(format='anthropic')"
                                     ".as_request()")
    check_depth("request", request, error=WorkspaceArgumentError)
    problems: list[str] = []
    msgs = request.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return ["request has no messages"]
    seen: set[str] = set()
    pending: list[str] = []
    system = request.get("system")
    if system is not None and not isinstance(system, (str, list)):
        problems.append("system must be a string or a list of text blocks")
        system = None
    sys_blocks = system if isinstance(system, list) else []
    if any(not isinstance(b, Mapping) for b in sys_blocks):
        problems.append("system: every block must be an object")
    breakpoints = sum(1 for b in sys_blocks if isinstance(b, Mapping) and b.get("cache_control"))
    for i, m in enumerate(msgs):
        if not isinstance(m, Mapping):
            problems.append(f"message {i}: must be an object")
            continue
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant"):
            problems.append(f"message {i}: role {role!r} is not user or assistant")
            continue
        if i == 0 and role != "user":
            problems.append("message 0: the first message must be a user turn")
        if i > 0 and isinstance(msgs[i - 1], Mapping) and msgs[i - 1].get("role") == role:
            problems.append(f"message {i}: two {role} turns in a row")
        if not isinstance(content, list) or not content:
            problems.append(f"message {i}: content must be a non-empty list of blocks")
            continue
        if any(not isinstance(b, Mapping) for b in content):
            problems.append(f"message {i}: every block must be an object with a 'type'")
            content = [b for b in content if isinstance(b, Mapping)]
        breakpoints += sum(1 for b in content if b.get("cache_control"))
        types = [b.get("type") for b in content]
        for j, b in enumerate(content):
            if b.get("type") == "text" and not _has_text(b.get("text")):
                problems.append(f"message {i} block {j}: empty text block (or whitespace only)")
        if role == "assistant":
            if "tool_result" in types:
                problems.append(f"message {i}: tool_result in an assistant turn")
            uses = [b for b in content if b.get("type") == "tool_use"]
            if uses:
                first_use = types.index("tool_use")
                late = [
                    j
                    for j, t in enumerate(types)
                    if t in ("thinking", "redacted_thinking") and j > first_use
                ]
                if late:
                    problems.append(f"message {i}: thinking block(s) {late} after a tool_use")
            problems += server_tool_problems(i, content)
            for b in uses:
                bid = b.get("id")
                if not isinstance(bid, str) or not _ANTHROPIC_ID.fullmatch(bid):
                    problems.append(f"message {i}: tool_use id {short_repr(bid, 60)} does not "
                                    "match ^[A-Za-z0-9_-]+$")
                elif bid in seen:
                    problems.append(f"message {i}: duplicate tool_use id {bid!r}")
                if not isinstance(b.get("name"), str) or not _TOOL_NAME.fullmatch(b["name"]):
                    problems.append(f"message {i}: tool_use {short_repr(bid, 60)} name "
                                    f"{short_repr(b.get('name'), 60)} does not match "
                                    "^[a-zA-Z0-9_-]{1,64}$")
                if not isinstance(b.get("input"), Mapping):
                    problems.append(f"message {i}: tool_use {short_repr(bid, 60)} input must be "
                                    f"an object, not {type(b.get('input')).__name__}")
                if isinstance(bid, str):
                    seen.add(bid)
            if pending:
                problems.append(f"message {i}: tool_use {pending} never answered")
            pending = [b.get("id") for b in uses if isinstance(b.get("id"), str)]
        else:
            if any(t in ("thinking", "redacted_thinking", "tool_use") for t in types):
                problems.append(f"message {i}: thinking/tool_use block in a user turn")
            if any(t in SERVER_BLOCKS for t in types):
                problems.append(f"message {i}: server tool block in a user turn (the API "
                                "returns a server tool's use and result in its assistant turn)")
            results = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
            n_lead = next((j for j, t in enumerate(types) if t != "tool_result"), len(types))
            if len(results) != n_lead:
                problems.append(f"message {i}: tool_result blocks must come first in the turn")
            if sorted(results, key=str) != sorted(pending, key=str):
                problems.append(
                    f"message {i}: tool results {results} do not answer the preceding "
                    f"tool_use ids {pending} exactly once"
                )
            pending = []
    if pending:
        problems.append(f"last turn: tool_use {pending} never answered")
    if not isinstance(msgs[-1], Mapping) or msgs[-1].get("role") != "user":
        problems.append("the last turn must be a user turn (the model replies to it)")
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        problems.append("tools must be a list of tool schemas")
    for t, tool in enumerate(tools if isinstance(tools, list) else []):
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            problems.append(f"tools item {t}: name {short_repr(name, 60)} does not match "
                            "^[a-zA-Z0-9_-]{1,64}$")
    if breakpoints > 4:
        problems.append(f"{breakpoints} cache_control breakpoints (at most 4)")
    return problems
