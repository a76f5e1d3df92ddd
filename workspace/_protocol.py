"""The agent-facing contract: the protocol text, the two context tools' schemas
(OpenAI function-calling format) and a checker for protocol-valid message lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "PROTOCOL_TEXT",
    "budget_notice",
    "ARCHIVE_TOOL",
    "DELETE_TOOL",
    "READ_PATH_TOOL",
    "READ_TOOL_ALIAS",
    "CONTEXT_TOOL_NAMES",
    "ERROR_PREFIX",
    "error_text",
    "is_error_text",
    "context_tool_schemas",
    "protocol_problems",
]

#: The context-management protocol block, verbatim from the paper
#: (Implementation Details, "Context-management protocol").
PROTOCOL_TEXT = (
    "CONTEXT MANAGEMENT PROTOCOL:\n"
    "A <context_workspace_status> dashboard is shown every turn as a compact map of\n"
    "context blocks. Use context tools only when clearly needed. Do not archive,\n"
    "delete, or offload content solely because it is old, large, or listed in context\n"
    "metadata; leave content visible when the context budget is sufficient. Large\n"
    "payloads may be represented by placeholders; inspect originals only when needed.\n"
    "Use ordinary file/terminal/python tools, source metadata, and any in-context\n"
    "payload placeholders to inspect external evidence when details are needed. For\n"
    "structured data or calculations, use the source file, source tool, or query\n"
    "directly. Do not copy table, CSV, or JSON rows from the conversation into code."
)


def budget_notice(budget: int) -> str:
    """The budget notice that accompanies the protocol (paper, verbatim).

    Parameters
    ----------
    budget : int
        B, the context budget in tokens.

    Returns
    -------
    str
        The notice.
    """
    return (
        "You need to complete the task within the following context window size:\n"
        f"<budget:token_budget>{budget}</budget:token_budget>"
    )


ARCHIVE_TOOL = "context_workspace_archive"
DELETE_TOOL = "context_workspace_delete"
READ_PATH_TOOL = "read_path"
#: The MCP server's name for the same read (``context_workspace_read``); the
#: engine's tool path accepts it as another name of ``read_path``.
READ_TOOL_ALIAS = "context_workspace_read"
CONTEXT_TOOL_NAMES = (ARCHIVE_TOOL, DELETE_TOOL)

#: Every agent-facing answer to a failed tool call starts with this: the paper's
#: tools return strings, so the agent (or a recorder that sees only the
#: conversation) tells a failure by it. Code holding the engine's typed outcome
#: (``ToolOutcome``) uses its fields instead.
ERROR_PREFIX = "Error:"


def error_text(detail: str) -> str:
    """The agent-facing answer to a failed tool call whose reason is ``detail``.

    Parameters
    ----------
    detail : str
        Why the call failed, and the fix.

    Returns
    -------
    str
        ``"Error: " + detail``.
    """
    return f"{ERROR_PREFIX} {detail}"


def is_error_text(text: str) -> bool:
    """Whether an agent-facing tool answer reports a failure: the parser of
    :func:`error_text`, for answers known only as conversation text.

    Parameters
    ----------
    text : str
        A tool answer.

    Returns
    -------
    bool
    """
    return text.startswith(ERROR_PREFIX)


_ARCHIVE_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ARCHIVE_TOOL,
        "description": (
            "Replace one or more blocks with compact indexes. The original content is "
            "stored externally as a payload file. Operations are block-level: only listed "
            "block IDs are archived. Returns the payload file path for later recovery."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "block_id": {
                    "type": "string",
                    "description": (
                        'Block IDs, ranges, or group IDs, e.g. "B3", "B3,B4", "B10-B20", or "G2".'
                    ),
                },
                "replacement": {
                    "type": "string",
                    "description": "Short index text for the archived block(s).",
                    "default": "",
                },
            },
            "required": ["block_id"],
            "additionalProperties": False,
        },
    },
}

_DELETE_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": DELETE_TOOL,
        "description": (
            "Permanently remove one or more blocks. Deleted content cannot be recovered."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "block_id": {
                    "type": "string",
                    "description": "Block IDs, ranges, or group IDs.",
                },
                "reason": {
                    "type": "string",
                    "description": "Short reason why the content has no future task value.",
                },
            },
            "required": ["block_id", "reason"],
            "additionalProperties": False,
        },
    },
}

_READ_PATH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": READ_PATH_TOOL,
        "description": (
            "Read an archived payload by the path its handle shows. Returns the exact "
            "stored content, or the requested part of it."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Payload path from a handle."},
                "selector": {
                    "type": "string",
                    "description": (
                        'Optional part to read: "bytes=0:4096" (0-based, end exclusive), '
                        '"lines=10-20" (1-based, inclusive) or "member=B7" (one block of a '
                        "group)."
                    ),
                    "default": "",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
}


def context_tool_schemas(*, include_read_path: bool = False) -> list[dict[str, Any]]:
    """The context tools in OpenAI function-calling format (fresh copies).

    ``include_read_path`` adds a ``read_path`` tool for agent loops that have
    no ordinary file tool; the paper's recovery is an ordinary file read.

    Parameters
    ----------
    include_read_path : bool
        Also return the ``read_path`` tool (default False).

    Returns
    -------
    list of dict
        ``context_workspace_archive``, ``context_workspace_delete`` and, if asked,
        ``read_path``.
    """
    import copy

    tools = [_ARCHIVE_SCHEMA, _DELETE_SCHEMA]
    if include_read_path:
        tools.append(_READ_PATH_SCHEMA)
    return copy.deepcopy(tools)


def _is_content(content: Any, *, parts: str) -> bool:
    """A string, or a non-empty list of content parts (objects with a string
    ``type``; only ``text`` parts with a string ``text`` when ``parts="text"``),
    as the chat completions API accepts."""
    if isinstance(content, str):
        return True
    if not isinstance(content, list) or not content:
        return False
    for p in content:
        if not isinstance(p, Mapping) or not isinstance(p.get("type"), str):
            return False
        if p["type"] == "text" and not isinstance(p.get("text"), str):
            return False
        if parts == "text" and p["type"] != "text":
            return False
    return True


def protocol_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Everything that makes ``messages`` an invalid OpenAI chat request.

    Checks: known roles; every ``tool`` message sits in the run of tool
    messages directly after the assistant message that called it and names
    one of its call IDs; each call is answered exactly once (parallel calls
    of one assistant message all answered before any other message); tool
    calls are well formed with IDs unique within their message (a later
    message may reuse an answered call's ID, as provider APIs accept).
    Returns an empty list if valid.

    Parameters
    ----------
    messages : sequence of mapping
        An OpenAI chat request's messages.

    Returns
    -------
    list of str
        One line per problem, naming the message index; ``[]`` if valid.
    """
    problems: list[str] = []
    pending: dict[str, int] = {}  # call id -> index of the calling assistant message
    answered: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"message {i}: unknown role {role!r}")
            continue
        if role == "tool":
            cid = m.get("tool_call_id")
            if not pending and not answered:
                problems.append(f"message {i}: tool message {cid!r} does not follow a tool call")
            elif cid in answered:
                problems.append(f"message {i}: call {cid!r} answered more than once")
            elif cid not in pending:
                problems.append(
                    f"message {i}: tool message answers {cid!r}, which the preceding "
                    "assistant message did not call"
                )
            else:
                del pending[cid]
                answered.add(cid)
            if not _is_content(m.get("content"), parts="text"):
                problems.append(
                    f"message {i}: tool message content must be a string or text parts"
                )
            continue
        if pending:
            problems.append(
                f"message {i}: {role} message before the calls "
                f"{sorted(pending)} of message {min(pending.values())} were answered"
            )
            pending.clear()
        answered.clear()
        calls = m.get("tool_calls")
        if calls:
            if role != "assistant":
                problems.append(f"message {i}: only assistant messages may carry tool_calls")
                continue
            seen_ids: set[str] = set()  # an id may be reused once its call was answered
            for call in calls:
                cid = call.get("id")
                fn = call.get("function") or {}
                if not isinstance(cid, str) or not cid:
                    problems.append(f"message {i}: tool call without an id")
                    continue
                if cid in seen_ids:
                    problems.append(f"message {i}: duplicate tool call id {cid!r}")
                seen_ids.add(cid)
                if call.get("type") != "function" or not isinstance(fn.get("name"), str):
                    problems.append(f"message {i}: call {cid!r} is not a function call with a name")
                if not isinstance(fn.get("arguments"), str):
                    problems.append(f"message {i}: call {cid!r} arguments must be a JSON string")
                pending[cid] = i
        elif not _is_content(m.get("content"), parts="text" if role == "system" else "any"):
            problems.append(
                f"message {i}: {role} message content must be a string or content parts"
            )
    if pending:
        problems.append(f"end of request: calls {sorted(pending)} were never answered")
    return problems
