"""The OpenAI Responses input items, in and out of the workspace.

Items (OpenAI API reference, Responses, ``input``;
platform.openai.com/docs/api-reference/responses/create): ``message`` items
(``role`` system, developer, user or assistant; ``content`` a string or parts:
``input_text``, ``input_image``, ``input_file``, ``output_text``, ``refusal``),
``function_call`` (``call_id``, the item ``id``, ``name``, ``arguments`` a
JSON string), ``function_call_output`` (``call_id``, ``output``) and
``reasoning`` (item ``id``, ``summary`` parts, ``encrypted_content``). A
reasoning item is sent back with the items it produced (OpenAI reasoning
guide, "Keeping reasoning items in context", platform.openai.com/docs/guides/reasoning).

The engine projects a run of model items (reasoning, assistant messages and
function calls: one model turn) onto one assistant message, its calls the
message's ``tool_calls``, so a reasoning item is one block with the calls it
preceded: it is kept, archived, restored and counted with them, and never
left beside a call it did not produce. Each other item becomes one message.
The codec (the workspace's :class:`AnthropicCodec` table, under its own key
space, by block) keeps each registered block's original items, so a visible
block renders back as exactly the items registered (``encrypted_content`` and item
ids included); anything else (handles, notices, placeholders, the dashboard)
is written as items by :func:`openai_to_responses`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._errors import TraceError
from ._validate import _content_iv

__all__ = [
    "RESPONSES_PROJECTION_RULES",
    "is_responses",
    "responses_to_openai",
    "openai_to_responses",
]

#: Item types only the Responses format uses (their presence decides the format).
_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})
_MODEL_TYPES = frozenset({"reasoning", "function_call"})
_JOIN = "\n\n"

#: What the engine stores and counts for each Responses item.
RESPONSES_PROJECTION_RULES: dict[str, str] = {
    "message": "a chat message of its role (developer as system); its parts as the engine "
    "joins OpenAI chat parts (text parts by a newline, an image or file part as the "
    "engine's opaque-part notice, counted as media)",
    "reasoning": "'<reasoning>\\n' + the summary texts + '\\n</reasoning>' in the model "
    "turn's assistant content (encrypted_content and the item id are kept by the codec, "
    "not counted)",
    "function_call": "a tool call of the model turn's assistant message (id = call_id; "
    "the item id is kept by the codec)",
    "function_call_output": "a tool message (tool_call_id = call_id); output parts "
    "projected as message parts",
    "model turn": "consecutive reasoning, assistant message and function_call items are "
    "one assistant message (one block)",
}


def is_responses(items: Any) -> bool:
    """Whether ``items`` (a list) holds a Responses item: an object whose
    ``type`` is message, function_call, function_call_output or reasoning.

    Parameters
    ----------
    items : object
        A message or item list.

    Returns
    -------
    bool
    """
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        return False
    return any(_is_item(m) for m in items)


#: The content part types of a Responses message item (OpenAI API reference,
#: Responses, "input" items).
_PART_TYPES = frozenset({"input_text", "input_image", "input_file", "output_text",
                         "refusal"})


def _is_item(m: Any) -> bool:
    """A Responses item. A ``type: "message"`` object is one only when its content
    is a text or Responses parts: an Anthropic SDK ``Message`` (``type``
    "message" too, with ``model`` and ``stop_reason``, content in Anthropic
    blocks such as ``text`` and ``tool_use``) is an Anthropic assistant turn."""
    if not isinstance(m, Mapping) or m.get("type") not in _ITEM_TYPES:
        return False
    if m.get("type") != "message":
        return True
    if "stop_reason" in m and "model" in m:
        return False
    content = m.get("content")
    return isinstance(content, str) or (
        isinstance(content, Sequence)
        and all(isinstance(p, Mapping) and p.get("type") in _PART_TYPES for p in content))


def _is_model(item: Mapping[str, Any]) -> bool:
    return item.get("type") in _MODEL_TYPES or (
        item.get("type", "message") == "message" and item.get("role") == "assistant"
    )


def _part_text(p: Any, where: str) -> str:
    if not isinstance(p, Mapping):
        raise TraceError(None, f"{where}: a content part must be an object")
    kind = p.get("type")
    if kind in ("input_text", "output_text", "summary_text"):
        text = p.get("text")
        if not isinstance(text, str):
            raise TraceError(None, f"{where}: {kind} part without a string 'text'")
        return text
    if kind == "refusal":
        return str(p.get("refusal", ""))
    if kind == "input_image":
        url = p.get("image_url")
        return f"[image: {url if isinstance(url, str) else p.get('file_id')}]"
    if kind == "input_file":
        return f"[file: {p.get('filename') or p.get('file_id') or p.get('file_url')}]"
    raise TraceError(
        None,
        f"{where}: unsupported content part type {kind!r} (expected input_text, output_text, "
        "refusal, input_image or input_file)",
    )


def _chat_part(p: Any, where: str) -> dict[str, Any]:
    """A Responses content part as the OpenAI chat part the engine counts."""
    if not isinstance(p, Mapping):
        raise TraceError(None, f"{where}: a content part must be an object")
    kind = p.get("type")
    if kind == "input_image":
        url = p.get("image_url")
        return {"type": "image_url", "image_url": {
            "url": url if isinstance(url, str) else f"file:{p.get('file_id')}"}}
    if kind == "input_file":
        return {"type": "file", "file": {k: p[k] for k in ("filename", "file_id", "file_data")
                                          if k in p}}
    return {"type": "text", "text": _part_text(p, where)}


def _content_text(content: Any, where: str, role: str) -> str:
    """Message content as the engine's text: a string as it is, parts as the
    engine joins OpenAI chat parts (text parts by a newline, an image or file
    part as its opaque notice, counted as the engine counts media)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TraceError(None, f"{where}: content must be a string or a list of parts")
    parts = [_chat_part(p, f"{where} part {j}") for j, p in enumerate(content)]
    return _content_iv(parts, role) or ""


def _model_turn(run: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, it in enumerate(run):
        kind = it.get("type", "message")
        if kind == "reasoning":
            summary = it.get("summary") or []
            if not isinstance(summary, list):
                raise TraceError(None, f"{where} item {j}: reasoning 'summary' must be a list")
            body = "\n".join(_part_text(s, f"{where} item {j}") for s in summary)
            texts.append(f"<reasoning>\n{body}\n</reasoning>" if body else "<reasoning/>")
        elif kind == "function_call":
            cid, name, args = it.get("call_id"), it.get("name"), it.get("arguments")
            if not isinstance(cid, str) or not isinstance(name, str):
                raise TraceError(None, f"{where} item {j}: function_call needs string "
                                 "'call_id' and 'name'")
            if not isinstance(args, str):
                raise TraceError(None, f"{where} item {j}: function_call 'arguments' must be "
                                 "a JSON string")
            calls.append({"id": cid, "type": "function",
                          "function": {"name": name, "arguments": args}})
        else:
            text = _content_text(it.get("content", ""), f"{where} item {j}", "assistant")
            if text:
                texts.append(text)
    msg: dict[str, Any] = {"role": "assistant", "content": _JOIN.join(texts) if texts else None}
    if calls:
        msg["tool_calls"] = calls
    elif msg["content"] is None:
        msg["content"] = ""
    return msg


def responses_to_openai(items: Sequence[Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Project Responses input items onto the engine's OpenAI chat messages.

    Parameters
    ----------
    items : sequence of dict
        Responses input items (an item without ``type`` is a message item).

    Returns
    -------
    list of (dict, list of dict)
        Each OpenAI message with the original items it stands for: each model
        turn (a run of reasoning, assistant message and function_call items)
        one assistant message, each ``function_call_output`` a tool message,
        each other message item a message of its role (see
        :data:`RESPONSES_PROJECTION_RULES`).

    Raises
    ------
    TraceError
        An item that is not an object, of an unknown type, or malformed
        (naming the item).
    """
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    i, n = 0, len(items)
    while i < n:
        it = items[i]
        if not isinstance(it, Mapping):
            raise TraceError(i, f"must be an object, got {type(it).__name__}")
        kind = it.get("type", "message")
        if kind not in _ITEM_TYPES:
            raise TraceError(i, f"has type {kind!r} (expected one of "
                             f"{', '.join(sorted(_ITEM_TYPES))})")
        if _is_model(it):
            j = i
            while j < n and isinstance(items[j], Mapping) and _is_model(items[j]):
                j += 1
            run = [dict(x) for x in items[i:j]]
            msg = _model_turn(run, f"item {i}")
            originals = run
            i = j
        elif kind == "function_call_output":
            cid = it.get("call_id")
            if not isinstance(cid, str):
                raise TraceError(i, "function_call_output without a string 'call_id'")
            msg = {"role": "tool", "tool_call_id": cid,
                   "content": _content_text(it.get("output", ""), f"item {i}", "tool")}
            originals = [dict(it)]
            i += 1
        else:
            role = it.get("role")
            if role not in ("system", "developer", "user"):
                raise TraceError(i, f"message item has role {role!r} (expected system, "
                                 "developer, user or assistant)")
            msg = {"role": "system" if role == "developer" else role,
                   "content": _content_text(it.get("content", ""), f"item {i}", role)}
            originals = [dict(it)]
            i += 1
        out.append((msg, originals))
    return out


def _items_of(m: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One rendered chat message whose original items are not known (a notice,
    the dashboard, a handle, a stub result) as Responses items; a ``None``
    content is the empty text (never the string ``"null"``), and an assistant
    message without text gives no message item, only its calls."""
    role = m.get("role")
    content = m.get("content")
    text = content if isinstance(content, str) else (
        "" if content is None else json.dumps(content, ensure_ascii=False))
    if role == "tool":
        return [{"type": "function_call_output", "call_id": m.get("tool_call_id"),
                 "output": text}]
    if role == "assistant":
        out: list[dict[str, Any]] = []
        if text:
            out.append({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]})
        for c in m.get("tool_calls") or ():
            fn = c.get("function") or {}
            out.append({"type": "function_call", "call_id": c.get("id"),
                        "name": fn.get("name"), "arguments": fn.get("arguments")})
        return out
    return [{"type": "message", "role": role, "content": text}]


def _tool_schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    fn = tool.get("function") or {}
    out: dict[str, Any] = {"type": "function", "name": fn.get("name")}
    if fn.get("description"):
        out["description"] = fn["description"]
    out["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
    return out


def openai_to_responses(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
    *,
    originals: Callable[[Mapping[str, Any]], list[dict[str, Any]] | None] | None = None,
) -> dict[str, Any]:
    """An engine rendering (OpenAI messages) as a Responses request.

    A message registered from Responses items comes back as those items (a
    model turn with its reasoning before its calls, ``encrypted_content`` and
    item ids as registered); any other message (the protocol notice, handles,
    notices, placeholders answering calls, the dashboard) is written as a
    message item, ``function_call`` items or a ``function_call_output``.

    Parameters
    ----------
    messages : sequence of mapping
        The rendering's OpenAI chat messages.
    tools : sequence of mapping
        Tool schemas (OpenAI chat format), converted to Responses function tools.
    originals : callable, optional
        A rendered message's original items, or None (the workspace looks the
        message's block up in its codec; only a visible, unchanged block has
        them).

    Returns
    -------
    dict
        ``{"input": [...], "tools": [...]}``.
    """
    items: list[dict[str, Any]] = []
    for m in messages:
        orig = originals(m) if originals is not None else None
        items.extend(orig if orig is not None else _items_of(m))
    request: dict[str, Any] = {"input": items}
    if tools:
        request["tools"] = [_tool_schema(t) for t in tools]
    return request
