"""Validation at the door for the engine's public calls, and the small ID
helpers every engine module shares."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from vistalab._core import MAX_JSON_DEPTH, DomainError, check_depth
from vistalab._core._paths import output_file

from ._accounting import (
    canonical_json,
    opaque_part_text,
)
from ._dashboard import DashboardConfig
from ._errors import (
    BudgetConfigError,
    WorkspaceArgumentError,
)
from ._protocol import (
    CONTEXT_TOOL_NAMES,
    READ_PATH_TOOL,
)
from ._records import (
    ToolCall,
)
from ._store import PayloadStore

#: Longest replacement (index) text accepted for an archive handle.
MAX_REPLACEMENT_CHARS = 2000
#: Most tool calls one assistant message may carry. Providers' parallel calls
#: number a handful to a few hundred; the cap bounds what one message costs to
#: register and answer (each call is a pending entry and, until answered, a
#: placeholder message in every normal rendering).
MAX_TOOL_CALLS = 16_384

# ----------------------------------------------------------------- helpers


def _num(block_id: str) -> int:
    return int(block_id[1:])


def _id_summary(ids: list[str], limit: int = 8) -> str:
    """IDs in position order as at most ``limit`` items (runs of consecutive
    blocks as ranges), then ``+N more``; cheap on long lists: each run's end is
    found by bisection."""
    parts: list[str] = []
    i, n = 0, len(ids)
    groups = [k for k, u in enumerate(ids) if u[0] != "B"]  # a group ends a run
    g = 0
    while i < n and len(parts) < limit:
        uid = ids[i]
        if uid[0] != "B":
            parts.append(uid)
            i += 1
            continue
        while g < len(groups) and groups[g] < i:
            g += 1
        # Between two groups, block numbers strictly increase with position, so
        # the run of consecutive numbers from i is a prefix: bisect its end.
        first = int(uid[1:])
        lo, hi = i, (groups[g] if g < len(groups) else n) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(ids[mid][1:]) - first == mid - i:
                lo = mid
            else:
                hi = mid - 1
        parts.append(uid if lo == i else f"{uid}-{ids[lo]}")
        i = lo + 1
    if i < n:
        parts.append(f"+{n - i} more")
    return ",".join(parts)


def _block_number(block_id: Any) -> int | None:
    if (
        isinstance(block_id, str)
        and len(block_id) > 1
        and block_id[0] == "B"
        and block_id[1:].isascii()
        and block_id[1:].isdigit()
        and block_id[1] != "0"
    ):
        return int(block_id[1:])
    return None


def _tool_call_message(content: str | None, calls: Sequence[ToolCall]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [c.to_openai() for c in calls]}


#: The largest object pymalloc serves from its arenas (CPython's small-object limit).
_SMALL_OBJECT_BYTES = 512


def own_text(value: str) -> str:
    """``value`` as a string of the engine's own when it is a small object
    (the same string otherwise).

    A short string kept from a caller's parsed messages lies in the allocator
    arenas ``json.loads`` filled with that whole history: one kept string pins
    an arena of the caller's freed dicts, which then stays resident. A private
    copy (one allocation, made among the engine's own records) lets those
    arenas go back to the operating system once the caller drops its list.
    Large strings are allocated on their own and are kept as they are.
    """
    if type(value) is str and sys.getsizeof(value) <= _SMALL_OBJECT_BYTES:
        return "".join((value, ""))
    return value


def _text_iv(name: str, value: Any, *, max_chars: int | None = None) -> str:
    if not isinstance(value, str):
        raise WorkspaceArgumentError(name, value, "must be a string", f"pass {name} as text")
    if max_chars is not None and len(value) > max_chars:
        raise WorkspaceArgumentError(
            name, value, f"must be at most {max_chars} characters", "keep it short"
        )
    if value.isascii():  # ASCII holds no surrogate; skip the copy
        return value
    # A piece at a time (bounded memory; a str slice never splits a code point).
    # UTF-32 rejects unpaired surrogates exactly as UTF-8 does and is the cheapest
    # strict encoder: no variable-width output (about 4x faster than UTF-8 on CJK).
    for at in range(0, len(value), _PIECE):
        try:
            value[at : at + _PIECE].encode("utf-32-le")
        except UnicodeEncodeError as exc:
            bad = at + exc.start
            raise WorkspaceArgumentError(
                name,
                value[max(0, bad - 10) : bad + 10],
                f"must be valid Unicode text (unpaired surrogate at index {bad})",
                "decode the source with errors='replace'",
            ) from None
    return value


#: Characters of a long text checked (encoded) at a time.
_PIECE = 1 << 16


def _content_iv(content: Any, role: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, Mapping):
                raise WorkspaceArgumentError(
                    "content",
                    content,
                    f"part {i} must be a content part (an object with a 'type')",
                    "pass {'type': 'text', 'text': ...} parts",
                )
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise WorkspaceArgumentError(
                        "content", content, f"text part {i} must have a string 'text'"
                    )
                texts.append(part["text"])
            else:
                texts.append(opaque_part_text(part))
        return "\n".join(texts)
    raise WorkspaceArgumentError(
        "content", content, f"of a {role} message must be a string, None or content parts"
    )


#: The providers' documented rule for a function (tool) name: OpenAI's function
#: ``name`` ("a-z, A-Z, 0-9, underscores and dashes, maximum length of 64") and the
#: Anthropic Messages API's tool ``name`` (``^[a-zA-Z0-9_-]{1,64}$``). A name outside
#: it is refused at registration: a request carrying it would be refused by both.
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def tool_name_iv(parameter: str, name: Any) -> str:
    """``name`` if it matches :data:`TOOL_NAME`, else :class:`WorkspaceArgumentError`
    naming ``parameter`` (the value shown bounded)."""
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        raise WorkspaceArgumentError(
            parameter,
            name,
            "must match ^[a-zA-Z0-9_-]{1,64}$ (the OpenAI and Anthropic rule for tool names)",
            "use letters, digits, '_' and '-', at most 64 of them, e.g. 'read_file'",
        )
    return name


def _tool_calls_iv(tool_calls: Any) -> tuple[ToolCall, ...]:
    if (
        type(tool_calls) is not list
        and type(tool_calls) is not tuple
        and (not isinstance(tool_calls, Sequence) or isinstance(tool_calls, (str, bytes)))
    ) or not tool_calls:
        raise WorkspaceArgumentError(
            "tool_calls", tool_calls, "must be a non-empty list of OpenAI tool calls"
        )
    if len(tool_calls) > MAX_TOOL_CALLS:
        raise WorkspaceArgumentError(
            "tool_calls",
            f"a list of {len(tool_calls):,} calls",
            f"must hold at most {MAX_TOOL_CALLS:,} calls (MAX_TOOL_CALLS) in one assistant message",
            "split the calls over several assistant turns (answer each batch first)",
        )
    out: list[ToolCall] = []
    seen: set[str] = set()
    for i, call in enumerate(tool_calls):
        if isinstance(call, ToolCall):
            tool_name_iv(f"tool_calls item {i} name", call.name)
            out.append(call)
            continue
        mapping = type(call) is dict or isinstance(call, Mapping)
        fn = call.get("function") if mapping else None
        cid = call.get("id") if mapping else None
        if (
            (type(fn) is not dict and not isinstance(fn, Mapping))
            or not isinstance(cid, str)
            or not cid
        ):
            raise WorkspaceArgumentError(
                "tool_calls",
                tool_calls,
                f"item {i} must look like {{'id': str, 'type': 'function', 'function': "
                "{'name': str, 'arguments': str}}",
            )
        name = fn.get("name")
        args = fn.get("arguments", "")
        if not isinstance(name, str) or not name:
            raise WorkspaceArgumentError(
                "tool_calls", tool_calls, f"item {i} needs a function name"
            )
        if isinstance(args, Mapping):
            check_depth("tool_calls", args, error=WorkspaceArgumentError)
            args = canonical_json(dict(args))  # normalise pre-parsed arguments to the wire form
        if not isinstance(args, str):
            raise WorkspaceArgumentError(
                "tool_calls", tool_calls, f"item {i} arguments must be a JSON string"
            )
        _text_iv("arguments", args)
        # Brackets inside strings do not nest, so a text with few brackets is
        # shallow enough without the character scan.
        if args.count("{") + args.count("[") > MAX_JSON_DEPTH:
            check_depth("arguments", args, error=WorkspaceArgumentError)
        _text_iv("tool_calls id", cid)
        tool_name_iv(f"tool_calls item {i} name", name)
        if cid in seen:
            raise WorkspaceArgumentError("tool_calls", tool_calls, f"repeats call id {cid!r}")
        seen.add(cid)
        # Function names repeat across a session: one interned string each.
        out.append(ToolCall(
            own_text(cid), sys.intern(own_text(name)) if type(name) is str else name,
            own_text(args)))
    return tuple(out)


def _workspace_iv(
    budget: Any,
    hard_limit: Any,
    task_tools: Any,
    protocol: Any,
    dashboard: Any,
    include_read_path_tool: Any,
    store: Any,
) -> dict[str, Any]:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise BudgetConfigError("budget", budget, "must be a positive integer number of tokens")
    if hard_limit is None:
        hard_limit = 2 * budget
    if isinstance(hard_limit, bool) or not isinstance(hard_limit, int) or hard_limit < budget:
        raise WorkspaceArgumentError(
            "hard_limit",
            hard_limit,
            f"must be an integer >= budget ({budget})",
            "leave it None for 2 * budget",
        )
    if not isinstance(protocol, bool):
        raise WorkspaceArgumentError("protocol", protocol, "must be True or False")
    if not isinstance(include_read_path_tool, bool):
        raise WorkspaceArgumentError(
            "include_read_path_tool", include_read_path_tool, "must be True or False"
        )
    if dashboard is None:
        dashboard = DashboardConfig()
    if not isinstance(dashboard, DashboardConfig):
        raise WorkspaceArgumentError("dashboard", dashboard, "must be a DashboardConfig")
    if store is not None and not isinstance(store, PayloadStore):
        raise WorkspaceArgumentError(
            "store",
            store,
            "must implement the PayloadStore protocol",
            "use DiskStore or MemoryStore",
        )
    if isinstance(task_tools, (str, bytes)) or not isinstance(task_tools, Sequence):
        raise WorkspaceArgumentError("task_tools", task_tools, "must be a list of tool schemas")
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, t in enumerate(task_tools):
        fn = t.get("function") if isinstance(t, Mapping) else None
        name = fn.get("name") if isinstance(fn, Mapping) else None
        if not isinstance(t, Mapping) or t.get("type") != "function" or not isinstance(name, str):
            raise WorkspaceArgumentError(
                "task_tools",
                task_tools,
                f"item {i} must be an OpenAI tool schema {{'type': 'function', 'function': "
                "{'name': ...}}",
            )
        tool_name_iv(f"task_tools item {i} name", name)
        if name in CONTEXT_TOOL_NAMES or name == READ_PATH_TOOL or name in names:
            raise WorkspaceArgumentError(
                "task_tools", name, "must not repeat a name or reuse a context tool's name"
            )
        names.add(name)
        tools.append(json.loads(json.dumps(t)))
    return {
        "budget": budget,
        "hard_limit": hard_limit,
        "task_tools": tuple(tools),
        "protocol": protocol,
        "dashboard": dashboard,
        "include_read_path_tool": include_read_path_tool,
    }


def output_file_iv(name: str, text: str, *, parents: bool) -> str:
    """``text`` (already a non-empty text path) as a file the engine may write:
    the project's door check (:func:`vistalab._core._paths.output_file`: not a
    folder, FIFO or device, not under /proc, /sys or /dev, in a writable
    folder, or with ``parents`` one that can be created), its refusal raised
    as :class:`WorkspaceArgumentError` naming ``name``."""
    try:
        output_file(name, text, parents=parents)
    except DomainError as exc:
        raise WorkspaceArgumentError(exc.parameter, exc.value, exc.rule, exc.fix) from None
    return text


def log_path_iv(log_path: Any) -> str | None:
    """``log_path`` as a text path, or None; booleans, numbers (``True`` would
    open file descriptor 1), bytes, NUL bytes and empty strings are refused, and
    so is a path the log cannot be appended to (a folder, a FIFO, /proc, a
    missing folder: :func:`output_file_iv`)."""
    if log_path is None:
        return None
    text = os.fspath(log_path) if isinstance(log_path, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text or "\x00" in text:
        raise WorkspaceArgumentError(
            "log_path",
            log_path,
            "must be a file path (a non-empty str or PathLike without NUL bytes) or None",
            "pass e.g. log_path='events.jsonl'",
        )
    return output_file_iv("log_path", text, parents=False)
